"""ReduceLROnPlateau: lower the rate when a validation metric stops improving."""
import math

from .base import per_group


class ReduceLROnPlateau:
    """``scheduler.step(val_loss)`` once per epoch; after more than ``patience`` epochs without
    improvement, lr <- max(lr * factor, min_lr) in every group (a change smaller than eps is skipped),
    then ``cooldown`` epochs in which bad epochs are not counted.

    Improvement of a metric a over the best so far (mode "min"; "max" flips the signs):
        threshold_mode "rel":  a < best * (1 - threshold)        "abs":  a < best - threshold
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if not hasattr(optimizer, "param_groups"):
            raise TypeError(f"ReduceLROnPlateau: {type(optimizer).__name__} is not an Optimizer")
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0 (the rate is multiplied by it), got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.min_lrs = per_group("ReduceLROnPlateau: min_lr", optimizer, min_lr)
        self.last_epoch = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def is_better(self, value):
        if self.mode == "min" and self.threshold_mode == "rel":
            return value < self.best * (1.0 - self.threshold)
        if self.mode == "min":
            return value < self.best - self.threshold
        if self.threshold_mode == "rel":
            return value > self.best * (self.threshold + 1.0)
        return value > self.best + self.threshold

    def step(self, metrics):
        """Record one epoch's metric (a number or a one-element Tensor) and lower the rate if it plateaued."""
        value = float(metrics)
        self.last_epoch += 1
        if self.is_better(value):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new_lr = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        """The learning rates after the last ``step()``, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self):
        return {key: value for key, value in vars(self).items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
