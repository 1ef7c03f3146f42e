"""Cyclical schedules: CyclicLR (Smith, 2017) and the one-cycle policy (Smith & Topin, 2018).

Both move the momentum opposite to the rate when ``cycle_momentum`` is on: SGD's
``momentum``, or Adam's beta1 (the first of ``betas``).
"""
import math

from .base import LRScheduler, per_group


def set_momentum(group, momentum):
    """Write a momentum into a group: beta1 for Adam-like optimizers, else "momentum"."""
    if "betas" in group:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def start_momentum_cycle(optimizer, base_momentum, max_momentum, name):
    """Check the optimizer has a momentum, and record each group's momentum range (PyTorch's keys)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(f"{name}: cycle_momentum=True needs an optimizer with momentum or betas "
                         f"(SGD, RMSprop, Adam, AdamW), got {type(optimizer).__name__}; or pass cycle_momentum=False")
    bases = per_group(f"{name}: base_momentum", optimizer, base_momentum)
    tops = per_group(f"{name}: max_momentum", optimizer, max_momentum)
    for group, base, top in zip(optimizer.param_groups, bases, tops):
        set_momentum(group, top)
        group["base_momentum"], group["max_momentum"] = base, top
    return bases, tops


class CyclicLR(LRScheduler):
    """The rate goes up and down between base_lr and max_lr in triangles (Smith, 2017):

        cycle = floor(1 + t / (up + down)),   x = 1 + t / (up + down) - cycle     (0 <= x < 1)
        h = x / r  if x <= r  else (x - 1) / (r - 1),   r = up / (up + down)     (0 -> 1 -> 0)
        lr = base_lr + (max_lr - base_lr) * h * scale
        momentum = max_momentum - (max_momentum - base_momentum) * h * scale

    scale: 1 ("triangular"), 1 / 2^(cycle - 1) ("triangular2"), gamma^t ("exp_range"), or
    scale_fn(cycle or t) (scale_mode "cycle" or "iterations").  Step it once per batch.
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' "
                             f"(or give scale_fn), got {mode!r}")
        base_lrs = per_group("CyclicLR: base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                group["lr"] = lr
        self.max_lrs = per_group("CyclicLR: max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        self.mode, self.gamma, self.scale_fn_custom = mode, gamma, scale_fn
        if scale_fn is None:        # the built-in modes fix the scale mode
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = start_momentum_cycle(
                optimizer, base_momentum, max_momentum, "CyclicLR")
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self.scale_fn_custom is not None:
            return self.scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x                                  # exp_range

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            height = x / self.step_ratio
        else:
            height = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * height * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                set_momentum(group, top - (top - base) * height * scale)
        return lrs

    def state_dict(self):
        """As the base class, without scale_fn (code, rebuilt with the scheduler)."""
        return {key: value for key, value in super().state_dict().items() if key != "scale_fn_custom"}


class OneCycleLR(LRScheduler):
    """The one-cycle policy (Smith & Topin, 2018), over total_steps (or epochs * steps_per_epoch) batches:

        phase 1, steps 0 .. pct_start * total - 1:   lr  initial_lr -> max_lr,  momentum  max -> base
        phase 2, to total - 1:                       lr  max_lr -> min_lr,      momentum  base -> max
    with initial_lr = max_lr / div_factor and min_lr = initial_lr / final_div_factor; each phase
    anneals along half a cosine ("cos": end + (start - end) (1 + cos(pi p)) / 2) or a line ("linear"),
    p going 0 -> 1.  three_phase: up, back down to initial_lr, then down to min_lr.
    Stepping more than total_steps times raises, as PyTorch's.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is None and (epochs is None or steps_per_epoch is None):
            raise ValueError("OneCycleLR: give total_steps, or both epochs and steps_per_epoch")
        if total_steps is None:
            for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(value, int) or value <= 0:
                    raise ValueError(f"OneCycleLR: {name} must be a positive integer, got {value!r}")
            total_steps = epochs * steps_per_epoch
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"OneCycleLR: total_steps must be a positive integer, got {total_steps!r}")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be a float between 0 and 1, got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        up_end = float(pct_start * total_steps) - 1
        if three_phase:   # (last step of the phase, lr from -> to, momentum from -> to)
            self.phases = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr",
                            "base_momentum", "max_momentum"),
                           (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, per_group("OneCycleLR: max_lr", optimizer, max_lr)):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            start_momentum_cycle(optimizer, base_momentum, max_momentum, "OneCycleLR")
        super().__init__(optimizer, last_epoch)

    def anneal(self, start, end, progress):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * progress) + 1)
        return (end - start) * progress + start

    def get_lr(self):
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {t} times, more than total_steps={self.total_steps}: "
                             f"make total_steps (or epochs * steps_per_epoch) cover the whole run")
        lrs = []
        for group in self.optimizer.param_groups:
            phase_start = 0.0
            for number, (phase_end, lr_from, lr_to, momentum_from, momentum_to) in enumerate(self.phases):
                if t <= phase_end or number == len(self.phases) - 1:
                    progress = (t - phase_start) / (phase_end - phase_start)
                    lrs.append(self.anneal(group[lr_from], group[lr_to], progress))
                    if self.cycle_momentum:
                        set_momentum(group, self.anneal(group[momentum_from], group[momentum_to], progress))
                    break
                phase_start = phase_end
        return lrs
