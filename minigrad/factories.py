"""More factories with torch's names: the ``*_like`` family, linspace, eye, randperm, from_numpy.

(Issue 14 gathers the factories in ``minigrad/creation.py``; these join them there.)
"""
from . import backend
from .creation import empty, full, rand, randint, randn
from .tensor import Tensor, get_default_dtype


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from start to end, both included."""
    device = backend.normalize_device(device)
    values = backend.get_module(device).linspace(start, end, steps, dtype=dtype or get_default_dtype())
    return Tensor(values, requires_grad=requires_grad, device=device)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The (n, m) identity matrix (m = n by default)."""
    device = backend.normalize_device(device)
    values = backend.get_module(device).eye(n, n if m is None else m, dtype=dtype or get_default_dtype())
    return Tensor(values, requires_grad=requires_grad, device=device)


def randperm(n, dtype=None, device=None):
    """A random permutation of 0..n-1 (int64), reproducible under ``manual_seed``."""
    device = backend.normalize_device(device)
    order = backend.host_generator().permutation(n)
    return Tensor(order, dtype=dtype or "int64", device=device)


def from_numpy(array):
    """A tensor holding a copy of a NumPy array, with its dtype (torch shares the memory; see TORCH_DIFFERENCES)."""
    return Tensor(array, dtype=array.dtype, device="cpu")


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return full(input.shape, fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return empty(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False):
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, dtype=None, device=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype, device=device or input.device)
