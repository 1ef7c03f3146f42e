"""Schedules made of schedules: one after another (SequentialLR) or all at once (ChainedScheduler)."""
from bisect import bisect_right

from .plateau import ReduceLROnPlateau


def check_schedulers(name, schedulers, optimizer):
    if len(schedulers) < 1:
        raise ValueError(f"{name}: give at least one scheduler")
    for number, scheduler in enumerate(schedulers):
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name}: scheduler {number} is a ReduceLROnPlateau, whose step() needs the metric; "
                             f"step it yourself beside the others")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{name}: scheduler {number} ({type(scheduler).__name__}) belongs to another "
                             f"optimizer; all must share one")


def nested_state(scheduler):
    state = {key: value for key, value in vars(scheduler).items() if key not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [inner.state_dict() for inner in scheduler._schedulers]
    return state


def load_nested_state(scheduler, state_dict):
    state = dict(state_dict)
    for inner, inner_state in zip(scheduler._schedulers, state.pop("_schedulers")):
        inner.load_state_dict(inner_state)
    scheduler.__dict__.update(state)


class SequentialLR:
    """Scheduler i runs from milestones[i - 1] to milestones[i] (a warm-up, then a decay, say).

    As PyTorch's: at construction every rate goes back to initial_lr and the first scheduler
    takes epoch 0 again; at a milestone the next scheduler starts from its own epoch 0.
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: {len(schedulers)} schedulers need {len(schedulers) - 1} milestones, "
                             f"got {len(milestones)}")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.optimizer = optimizer
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:        # undo the step each took when it was made
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first.initial = True
        first.step()
        first.initial = False
        self._last_lr = first.get_last_lr()

    def step(self):
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler.restart()                      # the next scheduler starts at its epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        return nested_state(self)

    def load_state_dict(self, state_dict):
        load_nested_state(self, state_dict)


class ChainedScheduler:
    """Step every scheduler in turn each epoch, so their factors multiply (ExponentialLR after a
    ConstantLR warm-up, say)."""

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer or schedulers[0].optimizer
        check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        return nested_state(self)

    def load_state_dict(self, state_dict):
        load_nested_state(self, state_dict)
