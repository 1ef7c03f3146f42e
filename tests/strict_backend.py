"""A test-only device, "strict": NumPy underneath, but with CuPy's manners.

CI has no GPU, yet code that works on NumPy arrays and breaks on CuPy arrays
is easy to write: ``numpy.exp(x)`` on device data, ``float(array)`` of a whole
array, a host array mixed into a device operation.  This module wraps NumPy so
that those mistakes raise here, on the CPU, as they would on a GPU:

    StrictArray   holds a NumPy array; refuses implicit conversion to NumPy
                  (``numpy.asarray(a)`` raises TypeError, use ``a.get()``);
                  operators and methods return StrictArrays; a raw
                  numpy.ndarray mixed into any operation raises TypeError.
                  Python and NumPy scalars are fine, as on CuPy.
    strict        the array module (``xp``) of the device: ``strict.exp``,
                  ``strict.matmul``, ``strict.add.at``, ... unwrap their
                  arguments, call NumPy, and wrap the results.
                  ``strict.asarray(numpy_array)`` is the explicit host -> device
                  copy (as ``cupy.asarray``).

conftest.py registers it with ``minigrad.backend.register_device("strict", strict, StrictArray)``.
"""
import numpy

_MESSAGE = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")


def _unwrap(value):
    """StrictArray -> its NumPy array (recursively in lists, tuples, dicts); raw NumPy arrays raise."""
    if isinstance(value, StrictArray):
        return value._array
    if isinstance(value, numpy.ndarray):
        raise TypeError(f"strict device: a host numpy.ndarray {value.shape} was mixed into a device "
                        "operation; move it to the device first (backend.asarray(..., device=...))")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def _wrap(value):
    """NumPy results -> StrictArrays.  NumPy scalars become 0-d arrays, as CuPy returns."""
    if isinstance(value, numpy.ndarray):
        return StrictArray(value)
    if isinstance(value, numpy.generic):
        return StrictArray(numpy.asarray(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v) for v in value)
    return value


def _call(function, args, kwargs):
    return _wrap(function(*_unwrap(args), **_unwrap(kwargs)))


class StrictArray:
    """A device array: NumPy inside, no implicit conversion outside."""

    __slots__ = ("_array",)
    __array_ufunc__ = None   # numpy.exp(a), host_array + a: NumPy gives up, so they raise
    __hash__ = None

    def __init__(self, array):
        assert isinstance(array, numpy.ndarray)
        self._array = array

    def __array__(self, *args, **kwargs):
        raise TypeError(_MESSAGE)

    def get(self):
        """A NumPy copy on the host (the only way out, as on CuPy)."""
        return self._array.copy()

    # attributes and methods (shape, dtype, reshape, sum, astype, ...) forward to NumPy
    def __getattr__(self, name):
        if name.startswith("__"):   # no __array_interface__ etc.: NumPy must not see the data
            raise AttributeError(name)
        attribute = getattr(self._array, name)
        if callable(attribute):
            return lambda *args, **kwargs: _call(attribute, args, kwargs)
        return _wrap(attribute)

    def __getitem__(self, index):
        return _wrap(self._array[_unwrap(index)])

    def __setitem__(self, index, value):
        self._array[_unwrap(index)] = _unwrap(value)

    def __len__(self):
        return len(self._array)

    def __iter__(self):
        return (_wrap(row) for row in self._array)

    def _scalar(self, convert):
        if self._array.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python scalars, got shape {self._array.shape}")
        return convert(self._array.reshape(()).item())

    def __bool__(self):
        return self._scalar(bool)

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __repr__(self):
        return "strict(" + repr(self._array) + ")"


def _binary(name):
    def method(self, other):
        return _wrap(getattr(self._array, name)(_unwrap(other)))
    return method


def _inplace(name):
    def method(self, other):
        getattr(self._array, name)(_unwrap(other))
        return self
    return method


def _unary(name):
    def method(self):
        return _wrap(getattr(self._array, name)())
    return method


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
            "lshift", "rshift"):
    setattr(StrictArray, f"__{_op}__", _binary(f"__{_op}__"))
    setattr(StrictArray, f"__r{_op}__", _binary(f"__r{_op}__"))
    setattr(StrictArray, f"__i{_op}__", _inplace(f"__i{_op}__"))
for _op in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(StrictArray, f"__{_op}__", _binary(f"__{_op}__"))
for _op in ("neg", "pos", "abs", "invert"):
    setattr(StrictArray, f"__{_op}__", _unary(f"__{_op}__"))


class _Proxy:
    """A NumPy module, submodule, function or ufunc seen from the strict device."""

    def __init__(self, target):
        self._target = target

    def __call__(self, *args, **kwargs):
        return _call(self._target, args, kwargs)

    def __getattr__(self, name):
        attribute = getattr(self._target, name)
        if isinstance(attribute, (type, numpy.dtype)) or not callable(attribute) and not hasattr(attribute, "__dict__"):
            return attribute   # dtypes (strict.float32), classes (strict.finfo), constants (strict.inf)
        return _Proxy(attribute)

    def __repr__(self):
        return f"strict proxy of {self._target!r}"


class _StrictModule(_Proxy):
    """The ``xp`` of the strict device."""

    __name__ = "strict"
    ndarray = StrictArray

    def __init__(self):
        super().__init__(numpy)

    @staticmethod
    def asarray(data, dtype=None):
        """Host data (lists, numbers, NumPy arrays) or a StrictArray -> a StrictArray (cupy.asarray)."""
        if isinstance(data, StrictArray):
            if dtype is None or numpy.dtype(dtype) == data.dtype:
                return data
            return StrictArray(data._array.astype(dtype))
        return StrictArray(numpy.array(_unwrap(data) if isinstance(data, (list, tuple)) else data, dtype=dtype))

    @staticmethod
    def array(data, dtype=None):
        """Like asarray, but always a copy (cupy.array)."""
        source = data.get() if isinstance(data, StrictArray) else data
        return _StrictModule.asarray(numpy.array(_unwrap(source) if isinstance(source, (list, tuple)) else source,
                                                 dtype=dtype))

    @staticmethod
    def where(condition, *values):
        """numpy.where, with CuPy's rule: the condition must be an array (cupy.where calls
        ``condition.astype``, so a Python or NumPy bool raises AttributeError there)."""
        if not isinstance(condition, StrictArray):
            raise AttributeError(f"strict device: where() needs an array condition, got "
                                 f"{type(condition).__name__} (CuPy raises 'has no attribute astype')")
        return _call(numpy.where, (condition,) + values, {})

    @staticmethod
    def asnumpy(array):
        return array.get() if isinstance(array, StrictArray) else numpy.asarray(array)


strict = _StrictModule()
