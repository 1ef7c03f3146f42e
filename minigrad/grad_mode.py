"""Grad mode: whether Function.apply records the graph (autograd.py reads ``enabled``).

Module-level state: ``enabled``, process-wide as torch's grad mode, switched only by the
functions below (each a context manager and a decorator, with torch's names).
"""
import contextlib

enabled = True


def is_grad_enabled():
    """True when operations record the graph (as torch.is_grad_enabled)."""
    return enabled


class _GradMode(contextlib.ContextDecorator):
    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        global enabled
        self.previous = enabled
        enabled = self.enabled

    def __exit__(self, *exc):
        global enabled
        enabled = self.previous
        return False


def no_grad(function=None):
    """Context manager and decorator (``@no_grad()`` or bare ``@no_grad``, as PyTorch's): operations
    inside record no graph."""
    return _GradMode(False) if function is None else _GradMode(False)(function)


def enable_grad(function=None):
    """Context manager and decorator (with or without parentheses): record the graph even inside ``no_grad``."""
    return _GradMode(True) if function is None else _GradMode(True)(function)


def inference_mode(mode=True):
    """As ``no_grad()`` (minigrad has no separate inference tensors); inference_mode(False) records."""
    return _GradMode(not mode)


class set_grad_enabled(_GradMode):
    """set_grad_enabled(False) stops recording at once; in a ``with``, only until the block ends."""

    def __init__(self, mode):
        global enabled
        super().__init__(bool(mode))
        self.previous, enabled = enabled, bool(mode)

    def __enter__(self):
        global enabled
        enabled = self.enabled       # previous was kept when the switch was made
