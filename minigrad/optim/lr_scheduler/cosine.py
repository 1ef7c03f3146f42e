"""Cosine schedules (annealing, with warm restarts) and the Transformer's warm-up schedules."""
import math

from ...checks import positive_int
from .base import LRScheduler


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2: half a cosine
    from base_lr down to eta_min over T_max epochs (and back up after, as PyTorch's).

    Written as PyTorch does, from the previous rate:
        lr_t = eta_min + (lr_{t-1} - eta_min) * (1 + cos(pi t / T_max)) / (1 + cos(pi (t - 1) / T_max))
    except at the bottom of each period, where that ratio is 0 / 0 and the rate climbs by
    (base_lr - eta_min) * (1 - cos(pi / T_max)) / 2.
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        positive_int("CosineAnnealingLR", "T_max", T_max)
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.initial:
            return self.current_lrs()
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for lr, base in zip(self.current_lrs(), self.base_lrs)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - low) + low for lr in self.current_lrs()]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter, 2017): lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2,
    where T_cur counts the epochs since the last restart and the i-th period lasts T_i = T_0 * T_mult^i.

    ``step(epoch)`` may be given a fractional epoch (``epoch + batch / batches``), as in PyTorch.
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive integer, got {T_0!r}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an integer >= 1, got {T_mult!r}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        cosine = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]

    def step(self, epoch=None):
        """Next epoch (T_cur + 1, restarting at T_i), or jump to ``epoch`` (may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts.step: epoch must be >= 0, got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:   # the restart n before epoch: T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self.set_lrs(self.get_lr())


class NoamLR(LRScheduler):
    """The warm-up schedule of "Attention Is All You Need" (Vaswani et al., 2017, section 5.3):

        lr = base_lr * factor * d_model^-0.5 * min(s^-0.5, s * warmup_steps^-1.5),   s = max(last_epoch, 1)

    linear warm-up for ``warmup_steps`` steps, then decay as 1/sqrt(s).  The paper
    uses base_lr = 1 (the optimizer's lr multiplies the schedule) and factor = 1.
    Step it once per batch.  (The name "Noam" is tensor2tensor's and the Annotated
    Transformer's; PyTorch has no such class: LambdaLR computes the same.)
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
