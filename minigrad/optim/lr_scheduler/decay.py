"""Schedules that decay the rate by a factor: at fixed steps, every step, or along a line or polynomial."""
from collections import Counter

from ...checks import hyper_parameter, positive_int
from .base import LRScheduler, per_group


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (last_epoch // step_size): decay by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        positive_int("StepLR", "step_size", step_size)            # the schedule divides by it
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self.current_lrs()
        return [lr * self.gamma for lr in self.current_lrs()]


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= last_epoch): decay by gamma at each milestone
    (a milestone listed twice decays twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self.current_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self.current_lrs()]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** last_epoch: decay by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        hyper_parameter("ExponentialLR", "gamma", gamma)         # a negative factor flips the sign of lr
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.initial:
            return self.current_lrs()
        return [lr * self.gamma for lr in self.current_lrs()]


class MultiplicativeLR(LRScheduler):
    """lr_t = lr_{t-1} * lr_lambda(t): each epoch multiplies the rate by the function's value."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = per_group("MultiplicativeLR: lr_lambda", optimizer, lr_lambda)
        for function in self.lr_lambdas:
            if not callable(function):
                raise TypeError(f"MultiplicativeLR: lr_lambda should be a function, got {type(function).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.initial:
            return self.current_lrs()
        return [lr * factor(self.last_epoch) for lr, factor in zip(self.current_lrs(), self.lr_lambdas)]

    def restart(self):
        """Epoch 0 again; as PyTorch's (which has no closed form for it), from the current rate."""
        self.last_epoch = 0
        self.set_lrs(self.get_lr())

    def state_dict(self):
        """As the base class, without the functions (they are code, rebuilt with the scheduler)."""
        return {key: value for key, value in super().state_dict().items() if key != "lr_lambdas"}


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(last_epoch): any schedule written as a function of the step.

    lr_lambda: one function, or one per parameter group (the annotated Transformer's ``rate``).
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = per_group("LambdaLR: lr_lambda", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * factor(self.last_epoch) for base, factor in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self):
        """As the base class, without the functions (they are code, rebuilt with the scheduler)."""
        return {key: value for key, value in super().state_dict().items() if key != "lr_lambdas"}


class ConstantLR(LRScheduler):
    """lr = base_lr * factor for the first total_iters epochs, then base_lr (a constant warm-up)."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be between 0 and 1, got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self.current_lrs()]
        if self.last_epoch != self.total_iters:
            return self.current_lrs()
        return [lr * (1.0 / self.factor) for lr in self.current_lrs()]


class LinearLR(LRScheduler):
    """lr = base_lr * factor, the factor going linearly from start_factor to end_factor over
    total_iters epochs, then staying at end_factor (a linear warm-up with the defaults).

    Written as PyTorch does, as the ratio of step t's factor to step t-1's:
        f_t / f_{t-1} = 1 + (end - start) / (total_iters * start + (t - 1) * (end - start))
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: need 0 < start_factor <= 1 and 0 <= end_factor <= 1, "
                             f"got {start_factor}, {end_factor}")
        positive_int("LinearLR", "total_iters", total_iters)
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self.current_lrs()]
        if self.initial or self.last_epoch > self.total_iters:
            return self.current_lrs()
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in self.current_lrs()]


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(last_epoch, total_iters) / total_iters) ** power: down to 0 at total_iters.

    Written as PyTorch does, as the ratio of step t's value to step t-1's.
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.initial or self.last_epoch > self.total_iters:
            return self.current_lrs()
        t, total = self.last_epoch, self.total_iters
        ratio = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [lr * ratio for lr in self.current_lrs()]
