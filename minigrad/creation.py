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
import math

import numpy

from . import backend, checks
from .torch_compat import arguments
from . import functions as fn
from .tensor import Tensor, get_default_dtype, int64


def tensor(data, requires_grad=False, dtype=None, device=None):
    """A new leaf tensor holding a copy of ``data``: a number (a 0-d tensor), nested list, NumPy/CuPy
    array or Tensor.  Python floats become the default dtype; arrays keep theirs unless ``dtype`` is given."""
    try:
        leaf = None if isinstance(data, (dict, set)) else Tensor._new_leaf(data, requires_grad, dtype, device)
    except ValueError as error:
        if "inhomogeneous" not in str(error):
            raise
        raise ValueError(f"tensor: the nested lists are ragged (rows of different lengths), so they are not a "
                         f"tensor: pad them first (minigrad.text.pad_batch) ({error})") from None
    if leaf is None or leaf.dtype.kind in "USO":          # strings and objects are not numbers (as torch)
        error = TypeError if isinstance(data, (str, bytes, dict, set)) else ValueError     # torch's two types
        raise error(f"tensor: invalid data type {type(data).__name__} ({str(data)[:40]!r}); give numbers, "
                        "nested lists of numbers or an array of numbers (token ids: vocab.encode(tokens) first)")
    return leaf


def _new(op, make, shape, dtype, device, requires_grad):
    """A leaf holding make(xp, sizes, dtype, device), a new array (wrapped as it is: no copy)."""
    device = backend.normalize_device(device)
    dtype = get_default_dtype() if dtype is None else numpy.dtype(dtype)
    if op in ("rand", "randn", "normal") and dtype.kind != "f":
        raise TypeError(f"{op}: dtype {dtype} is not a floating dtype: random reals need float32 or float64 "
                        "(randint draws integers)")
    if not shape:
        raise TypeError(f"{op}() missing the size: give the sizes ({op}(2, 3) or {op}((2, 3))), or {op}(()) for a "
                        "0-d tensor")
    shape = checks.sizes(op, arguments.sizes(shape))
    try:
        data = make(backend.get_module(device), shape, dtype, device)
    except (MemoryError, ValueError) as error:       # NumPy: MemoryError, or "array is too big"
        if isinstance(error, ValueError) and "too big" not in str(error):
            raise
        raise checks.allocation_error(op, shape, error) from None
    return _leaf(data, requires_grad)


def _leaf(new_array, requires_grad):
    """A leaf tensor around an array made just for it (Tensor(array) would copy it)."""
    return Tensor._from_array(new_array).requires_grad_(requires_grad)


def zeros(*shape, dtype=None, device=None, requires_grad=False):
    return _new("zeros", lambda xp, s, d, dev: xp.zeros(s, dtype=d), shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False):
    return _new("ones", lambda xp, s, d, dev: xp.ones(s, dtype=d), shape, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None and isinstance(fill_value, (bool, int)) and not isinstance(fill_value, float):
        dtype = numpy.dtype(type(fill_value)) if isinstance(fill_value, bool) else int64
    return _new("full", lambda xp, s, d, dev: xp.full(s, fill_value, dtype=d), (size,), dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False):
    """Uniform on [0, 1); reproducible under ``manual_seed``."""
    return _new("rand", lambda xp, s, d, dev: backend.random_uniform(s, d, dev), shape, dtype, device, requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=False):
    """Standard normal; reproducible under ``manual_seed``."""
    return _new("randn", lambda xp, s, d, dev: backend.random_normal(s, d, dev), shape, dtype, device, requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None):
    """Integers in [low, high) as int64 (or ``dtype``); randint(high, size) draws from [0, high).

    Reproducible under ``manual_seed``."""
    if size is None:
        low, high, size = 0, low, high
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint: size must be a tuple of ints, got {size!r}; write randint(high, (n,)) or "
                        "randint(low, high, (n,))")
    size = checks.sizes("randint", size)
    if not low < high:
        raise RuntimeError(f"randint: random_ expects 'from' to be less than 'to', but got from={low} >= to={high}; "
                           "the integers are drawn from [low, high)")
    device = backend.normalize_device(device)
    return Tensor(backend.random_integers(low, high, size, device), dtype=dtype, device=device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end} with step {step}; the bounds and step "
                           "must be finite")
    if step == 0:
        raise RuntimeError(f"arange: step must be nonzero, got arange({start}, {end}, {step})")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign: arange({start}, "
                           f"{end}, {step}) would be empty; use a step of the other sign")
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if floats else int64
    device = backend.normalize_device(device)
    return _leaf(backend.get_module(device).arange(start, end, step, dtype=numpy.dtype(dtype)), requires_grad)


def _like(make, input, dtype, device, requires_grad, *fill):
    """``make(input.shape, *fill)`` with input's dtype and device unless others are given (every ``*_like``)."""
    return make(input.shape, *fill, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False):
    return _like(ones, input, dtype, device, requires_grad)


def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    if tensors and isinstance(tensors[0], Tensor):
        dim = checks.dim("cat", dim, tensors[0].ndim)
    return fn.Cat.apply(dim, *tensors)


def stack(tensors, dim=0):
    """Join tensors along a new dimension."""
    if tensors and isinstance(tensors[0], Tensor):
        dim = checks.dim("stack", dim, tensors[0].ndim + 1)          # the new dim goes in [-ndim - 1, ndim]
    return fn.Stack.apply(dim, *tensors)


def split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def where(condition, input, other):
    """``input`` where ``condition`` (bool) is True, else ``other``; differentiable in both."""
    return fn.Where.apply(arguments.array_of(condition), input, other)


def empty(*shape, dtype=None, device=None, requires_grad=False):
    """A tensor for a layer to fill with its initialisation (zero-filled here, so never garbage)."""
    return _new("empty", lambda xp, s, d, dev: xp.zeros(s, dtype=d), shape, dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from start to end, both included."""
    checks.sizes("linspace", (steps,))                         # the number of steps: an int >= 0
    device = backend.normalize_device(device)
    return _leaf(backend.get_module(device).linspace(start, end, steps, dtype=dtype or get_default_dtype()),
                 requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The (n, m) identity matrix (m = n by default)."""
    checks.sizes("eye", (n,) if m is None else (n, m))
    device = backend.normalize_device(device)
    return _leaf(backend.get_module(device).eye(n, n if m is None else m, dtype=dtype or get_default_dtype()),
                 requires_grad)


def randperm(n, dtype=None, device=None):
    """A random permutation of 0..n-1 (int64), reproducible under ``manual_seed``."""
    checks.sizes("randperm", (n,))
    device = backend.normalize_device(device)
    order = backend.host_generator().permutation(n)
    return Tensor(order, dtype=dtype or "int64", device=device)


def from_numpy(ndarray):
    """A tensor holding a copy of a NumPy array, with its dtype (torch shares the memory; see TORCH_DIFFERENCES)."""
    return Tensor(ndarray, dtype=ndarray.dtype, device="cpu")


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor: a Tensor of that dtype and device as it is, anything else copied (torch
    shares a NumPy array's memory here; see TORCH_DIFFERENCES)."""
    if isinstance(data, Tensor):
        return data.to(device, dtype)
    return tensor(data, dtype=dtype, device=device)


def normal(mean, std, size, *, dtype=None, device=None, requires_grad=False):
    """Draws from N(mean, std^2) of shape ``size`` (d2l's torch.normal(0, 0.01, size=(n, m)));
    reproducible under ``manual_seed``.  mean and std are numbers here."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        raise NotImplementedError("minigrad.normal(mean, std, size): mean and std must be numbers here; for "
                                  "tensors write mean + std * minigrad.randn_like(mean)")
    return _new("normal", lambda xp, s, d, dev: backend.random_normal(s, d, dev, mean, std), size, dtype, device,
                requires_grad)


def bernoulli(input):
    """1 with probability input[i], else 0, elementwise (input holds probabilities); no gradient."""
    draws = backend.random_uniform(input.shape, input.dtype, input.device)
    return Tensor._from_array((draws < input._data).astype(input.dtype))


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return _like(full, input, dtype, device, requires_grad, fill_value)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return _like(empty, input, dtype, device, requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False):
    return _like(rand, input, dtype, device, requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):
    return _like(randn, input, dtype, device, requires_grad)


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
