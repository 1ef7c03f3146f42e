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

from ..checks import hyper_parameter, positive_int


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
        positive_int("StepLR", "step_size", step_size)            # the schedule divides by it
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
        positive_int("NoamLR", "d_model", d_model)
        positive_int("NoamLR", "warmup_steps", warmup_steps)
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
        positive_int("WarmupInverseSqrtLR", "warmup_steps", warmup_steps)
        self.warmup_steps = warmup_steps
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        s = max(self.last_epoch, 1)
        scale = min(s / self.warmup_steps, math.sqrt(self.warmup_steps / s))
        return [base * scale for base in self.base_lrs]


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(last_epoch): any schedule written as a function of the step.

    lr_lambda: one function, or one per parameter group (the annotated Transformer's ``rate``).
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        groups = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
        if len(self.lr_lambdas) != groups:
            raise ValueError(f"LambdaLR: {len(self.lr_lambdas)} lr_lambdas for {groups} parameter groups")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * factor(self.last_epoch) for base, factor in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self):
        """As the base class, without the functions (they are code, rebuilt with the scheduler)."""
        return {key: value for key, value in super().state_dict().items() if key != "lr_lambdas"}


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** last_epoch: decay by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        hyper_parameter("ExponentialLR", "gamma", gamma)         # a negative factor flips the sign of lr
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2: half a cosine
    from base_lr down to eta_min over T_max epochs (torch's closed form)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        positive_int("CosineAnnealingLR", "T_max", T_max)
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = base_lr * factor, the factor going linearly from start_factor to end_factor over
    total_iters epochs, then staying at end_factor (a linear warm-up with the defaults)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: need 0 < start_factor <= 1 and 0 <= end_factor <= 1, "
                             f"got {start_factor}, {end_factor}")
        positive_int("LinearLR", "total_iters", total_iters)
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        progress = min(self.last_epoch, self.total_iters) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [base * factor for base in self.base_lrs]
