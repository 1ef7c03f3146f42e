"""Optimizers, gradient clipping and learning-rate schedules, as in ``torch.optim``.

    opt = minigrad.optim.Adam(model.parameters(), lr=1e-3)
    loss.backward()
    minigrad.optim.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad()
"""
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .clip import clip_grad_norm_
from .lbfgs import LBFGS
from .lr_scheduler import (ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR,
                           ExponentialLR, LambdaLR, LinearLR, LRScheduler, MultiplicativeLR, MultiStepLR, NoamLR,
                           OneCycleLR, PolynomialLR, ReduceLROnPlateau, SequentialLR, StepLR,
                           WarmupInverseSqrtLR)
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from . import lr_scheduler
