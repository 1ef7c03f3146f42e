"""LRScheduler: the base class of the learning-rate schedules."""


class LRScheduler:
    """Base class: a subclass defines ``get_lr()``, the rates of epoch ``last_epoch``, one per group.

    Most of PyTorch's schedules write that rate as the previous rate times a factor
    (``group["lr"] * gamma``), not from ``base_lrs`` in closed form: that is what lets
    two of them act on one optimizer (``ChainedScheduler``).  minigrad computes them the
    same way, so the rates equal PyTorch's to the last bit; the docstrings give the closed form.

    Construction takes the first step (``last_epoch`` -1 -> 0), as PyTorch's does; during
    it ``self.initial`` is True, so that a schedule resumed with ``last_epoch=k`` keeps
    the rates it finds instead of applying step k's factor a second time.
    """

    def __init__(self, optimizer, last_epoch=-1):
        if not hasattr(optimizer, "param_groups"):
            raise TypeError(f"{type(self).__name__}: {type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for number, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"{type(self).__name__}: resuming (last_epoch={last_epoch}) needs 'initial_lr' in "
                               f"param_groups[{number}]: load the optimizer's state_dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.initial = True
        self.step()                  # as PyTorch: the first step sets the rate of epoch 0
        self.initial = False

    def get_lr(self):
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def current_lrs(self):
        """The rates the optimizer holds now, one per parameter group."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self):
        """Move to the next epoch and write its rates into the optimizer (after ``optimizer.step()``)."""
        self.last_epoch += 1
        self.set_lrs(self.get_lr())

    def restart(self):
        """Epoch 0 again, from ``base_lrs`` (SequentialLR does this at a milestone)."""
        self.last_epoch = 0
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base
        self.initial = True
        self.set_lrs(self.get_lr())
        self.initial = False

    def set_lrs(self, lrs):
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = self.current_lrs()

    def get_last_lr(self):
        """The learning rates set by the last ``step()``, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self):
        """Every attribute except the optimizer (plain numbers and lists)."""
        return {key: value for key, value in vars(self).items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


def per_group(name, optimizer, value):
    """One value per parameter group: a list of that length, or one value repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} has {len(value)} values for {len(optimizer.param_groups)} parameter groups: "
                             f"give one value, or one per group")
        return list(value)
    return [value] * len(optimizer.param_groups)
