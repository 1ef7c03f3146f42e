"""Functions that make new tensors, named as in PyTorch (minigrad.zeros, minigrad.randn, ...).

    from data         tensor
    filled            zeros, ones, full, empty, eye, zeros_like, ones_like, full_like, empty_like
    random            rand, randn, randint, randperm, rand_like, randn_like, randint_like
                      (reproducible under manual_seed; multinomial is a Tensor method)
    ranges            arange, linspace
    from NumPy        from_numpy
    from several      cat, stack, where, and split (cat's inverse)

The random ones draw from the backend's seeded generator, so the same seed
gives the same numbers on every device.
"""
import numpy

from . import backend
from . import functions as fn
from .tensor import Tensor, get_default_dtype, int64


def tensor(data, requires_grad=False, dtype=None, device=None):
    """A new leaf tensor holding ``data`` (see Tensor)."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def _new(make, shape, dtype, device, requires_grad):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    device = backend.normalize_device(device)
    dtype = get_default_dtype() if dtype is None else numpy.dtype(dtype)
    data = make(backend.get_module(device), shape, dtype, device)
    return Tensor(data, requires_grad=requires_grad, device=device)


def zeros(*shape, dtype=None, device=None, requires_grad=False):
    return _new(lambda xp, s, d, dev: xp.zeros(s, dtype=d), shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False):
    return _new(lambda xp, s, d, dev: xp.ones(s, dtype=d), shape, dtype, device, requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None and isinstance(fill_value, (bool, int)) and not isinstance(fill_value, float):
        dtype = numpy.dtype(type(fill_value)) if isinstance(fill_value, bool) else int64
    return _new(lambda xp, s, d, dev: xp.full(s, fill_value, dtype=d), (shape,), dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False):
    """Uniform on [0, 1); reproducible under ``manual_seed``."""
    return _new(lambda xp, s, d, dev: backend.random_uniform(s, d, dev), shape, dtype, device, requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=False):
    """Standard normal; reproducible under ``manual_seed``."""
    return _new(lambda xp, s, d, dev: backend.random_normal(s, d, dev), shape, dtype, device, requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None):
    """Integers in [low, high) as int64 (or ``dtype``); randint(high, size) draws from [0, high).

    Reproducible under ``manual_seed``."""
    if size is None:
        low, high, size = 0, low, high
    device = backend.normalize_device(device)
    return Tensor(backend.random_integers(low, high, tuple(size), device), dtype=dtype, device=device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if floats else int64
    device = backend.normalize_device(device)
    data = backend.get_module(device).arange(start, end, step, dtype=numpy.dtype(dtype))
    return Tensor(data, requires_grad=requires_grad, device=device)


def zeros_like(other, dtype=None, device=None, requires_grad=False):
    return zeros(other.shape, dtype=dtype or other.dtype, device=device or other.device,
                 requires_grad=requires_grad)


def ones_like(other, dtype=None, device=None, requires_grad=False):
    return ones(other.shape, dtype=dtype or other.dtype, device=device or other.device,
                requires_grad=requires_grad)


def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    return fn.Cat.apply(dim, *tensors)


def stack(tensors, dim=0):
    """Join tensors along a new dimension."""
    return fn.Stack.apply(dim, *tensors)


def split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def where(condition, input, other):
    """``input`` where ``condition`` (bool) is True, else ``other``; differentiable in both."""
    condition = condition.data if isinstance(condition, Tensor) else condition
    return fn.Where.apply(condition, input, other)


def empty(*shape, dtype=None, device=None, requires_grad=False):
    """A tensor for a layer to fill with its initialisation (zero-filled here, so never garbage)."""
    return zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad)


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


def LongTensor(*data):
    """torch's legacy constructor: LongTensor([1, 2]) holds the data as int64; LongTensor(2, 3) is a
    (2, 3) int64 tensor (zero-filled here, uninitialised in torch).  Prefer tensor(data, dtype=long)."""
    return _legacy_constructor("LongTensor", data, int64)


def FloatTensor(*data):
    """torch's legacy constructor, as LongTensor, for float32.  Prefer tensor(data, dtype=float32)."""
    return _legacy_constructor("FloatTensor", data, "float32")


def _legacy_constructor(name, data, dtype):
    if data and all(isinstance(n, int) and not isinstance(n, bool) for n in data):
        return zeros(*data, dtype=dtype)                      # sizes
    if len(data) != 1:
        raise TypeError(f"{name}: give one sequence of values, or the sizes as ints")
    return tensor(data[0], dtype=dtype)
