"""Learning-rate schedules, with the API of ``torch.optim.lr_scheduler``.

    scheduler = StepLR(optimizer, step_size=10, gamma=0.5)
    for epoch in range(epochs):
        train_one_epoch()            # optimizer.step() inside
        scheduler.step()             # then the schedule moves on

Each scheduler writes ``group["lr"]`` of every parameter group; ``last_epoch``
counts the calls to ``step()`` (named "epoch" as in PyTorch, though the
Transformer schedule is stepped once per batch).  The rates are computed in
closed form from ``base_lrs`` (the groups' lr when the scheduler was made).
"""
import math


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` -> one lr per parameter group."""

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError("resuming a scheduler (last_epoch != -1) needs 'initial_lr' in every param group")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()  # as PyTorch: the first step sets the rate of epoch 0

    def get_lr(self):
        raise NotImplementedError

    def step(self):
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        """The learning rates set by the last ``step()``, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self):
        """Every attribute except the optimizer (plain numbers and lists)."""
        return {key: value for key, value in vars(self).items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (last_epoch // step_size): decay by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class NoamLR(LRScheduler):
    """The schedule of "Attention Is All You Need" (Vaswani et al., 2017, section 5.3):

        lr = base_lr * factor * d_model^-0.5 * min(s^-0.5, s * warmup_steps^-1.5),   s = max(last_epoch, 1)

    linear warm-up for ``warmup_steps`` steps, then decay as 1/sqrt(s).  The paper
    uses base_lr = 1 (the optimizer's lr multiplies the schedule) and factor = 1.
    Step it once per batch.
    """

    def __init__(self, optimizer, d_model, warmup_steps=4000, factor=1.0, last_epoch=-1):
        self.d_model, self.warmup_steps, self.factor = d_model, warmup_steps, factor
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        s = max(self.last_epoch, 1)
        scale = self.factor * self.d_model ** -0.5 * min(s ** -0.5, s * self.warmup_steps ** -1.5)
        return [base * scale for base in self.base_lrs]


class WarmupInverseSqrtLR(LRScheduler):
    """The same shape scaled to peak at base_lr:  lr = base_lr * min(s / warmup, sqrt(warmup / s)),
    s = max(last_epoch, 1): linear warm-up to base_lr at s = warmup_steps, then decay as 1/sqrt(s)."""

    def __init__(self, optimizer, warmup_steps, last_epoch=-1):
        self.warmup_steps = warmup_steps
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        s = max(self.last_epoch, 1)
        scale = min(s / self.warmup_steps, math.sqrt(self.warmup_steps / s))
        return [base * scale for base in self.base_lrs]
