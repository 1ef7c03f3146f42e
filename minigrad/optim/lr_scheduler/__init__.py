"""Learning-rate schedules, with the API of ``torch.optim.lr_scheduler``.

    scheduler = StepLR(optimizer, step_size=10, gamma=0.5)
    for epoch in range(epochs):
        train_one_epoch()            # optimizer.step() inside
        scheduler.step()             # then the schedule moves on

Each scheduler writes ``group["lr"]`` of every parameter group; ``last_epoch``
counts the calls to ``step()`` (named "epoch" as in PyTorch, though many
schedules are stepped once per batch).  Each docstring gives the closed form.

The files, by kind of schedule:
    base.py      LRScheduler: the base class (step, get_last_lr, state_dict)
    decay.py     StepLR, MultiStepLR, ExponentialLR, MultiplicativeLR, LambdaLR,
                 ConstantLR, LinearLR, PolynomialLR
    cosine.py    CosineAnnealingLR, CosineAnnealingWarmRestarts, and the Transformer's
                 warm-up schedules NoamLR, WarmupInverseSqrtLR (minigrad's names)
    cyclic.py    CyclicLR, OneCycleLR (they cycle the momentum too)
    plateau.py   ReduceLROnPlateau (steps on a validation metric)
    combine.py   SequentialLR, ChainedScheduler
"""
from .base import LRScheduler
from .combine import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts, NoamLR, WarmupInverseSqrtLR
from .cyclic import CyclicLR, OneCycleLR
from .decay import (ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR,
                    StepLR)
from .plateau import ReduceLROnPlateau
