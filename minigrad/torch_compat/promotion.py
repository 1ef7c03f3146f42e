"""dtype rules where PyTorch's differ from NumPy's.

    promote(a, b)            the operands of +, -, *, /, ** cast as PyTorch would (NumPy would
                             make int tensor + float tensor float64, float32 * np.float64(2) float64,
                             and a 0-d float64 tensor would set a float32 tensor's dtype)
    weak(value)              a NumPy scalar as the Python number it holds (PyTorch treats NumPy
                             scalars as it treats Python numbers: they never set a tensor's dtype)
    same_dtype(op, **named)  PyTorch refuses float32 @ float64 (and float32 weights on float64
                             input) instead of computing quietly in float64; so does minigrad

NumPy before 2.0 (before NEP 50) also lets a Python number set the dtype of a 0-d array:
there, float32 0-d * 0.5 and 0 + float32 0-d are float64.  On those versions (and only
there: ``backend.NUMBERS_SET_0D_DTYPES``) a number next to a 0-d float tensor is handed over
as a scalar of the tensor's dtype.
"""
import numbers

from .. import autograd, backend
from ..dtypes import get_default_dtype

CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}     # bool < integer < floating point


PLAIN = (int, float, bool)                      # Python numbers: no conversion needed


def weak(value):
    """np.float64(0.5) -> 0.5, np.int64(3) -> 3, np.bool_(True) -> True; anything else as it is."""
    if type(value) in PLAIN or isinstance(value, autograd.TensorBase):
        return value                                                # the common cases, first
    if not isinstance(value, numbers.Number):
        return value
    return value.item() if hasattr(value, "item") else value      # NumPy's scalar types are Numbers


def promote(a, b, division=False):
    """PyTorch's type promotion where NumPy's differs: an integer tensor meeting a float tensor takes
    that tensor's dtype (NumPy: float64); meeting a Python float, or divided, the default dtype."""
    Tensor = autograd.TensorBase
    a_tensor = isinstance(a, Tensor)
    if a_tensor and type(b) is float and a._data.dtype.kind == "f" and not backend.NUMBERS_SET_0D_DTYPES:
        return a, b                                    # x * 0.5, the commonest: NumPy keeps x's dtype, as PyTorch
    b_tensor = isinstance(b, Tensor)
    if not (a_tensor or type(a) in PLAIN) or not (b_tensor or type(b) in PLAIN):
        a, b = weak(a), weak(b)                        # a NumPy scalar (rare): as its Python number
    if a_tensor and b_tensor and a._data.dtype != b._data.dtype and (a._data.ndim == 0) != (b._data.ndim == 0):
        a, b = _zero_dim_follows(a, b)
    a_int = a_tensor and a._data.dtype.kind in "iub"
    b_int = b_tensor and b._data.dtype.kind in "iub"
    if not (a_int or b_int):
        if backend.NUMBERS_SET_0D_DTYPES and a_tensor != b_tensor:
            return _number_as_0d_dtype(a, b, a_tensor)
        return a, b                                    # the common case: floats, or a float and a number
    if a_int and isinstance(b, Tensor) and b.dtype.kind == "f":
        return a.type(b.dtype), b
    if b_int and isinstance(a, Tensor) and a.dtype.kind == "f":
        return a, b.type(a.dtype)
    numbers_only = all(isinstance(v, Tensor) and v.dtype.kind in "iub" or isinstance(v, int) for v in (a, b))
    if isinstance(a, float) or isinstance(b, float) or (division and numbers_only):
        a = a.type(get_default_dtype()) if a_int else a
        b = b.type(get_default_dtype()) if b_int else b
    return a, b


def _number_as_0d_dtype(a, b, a_is_tensor):
    """NumPy < 2: a Python number beside a 0-d float tensor, as a scalar of the tensor's dtype
    (NumPy 1 would compute in float64; PyTorch keeps the tensor's dtype)."""
    tensor, number = (a, b) if a_is_tensor else (b, a)
    if tensor._data.ndim != 0 or type(number) not in PLAIN:
        return a, b
    number = tensor._data.dtype.type(number)
    return (a, number) if a_is_tensor else (number, b)


def _zero_dim_follows(a, b):
    """A 0-d tensor meeting a tensor with dimensions takes its dtype, unless the 0-d one is of a
    higher category (a 0-d float64 with an int tensor gives float64): PyTorch's rule for 0-d tensors."""
    zero, dims = (a, b) if a.ndim == 0 else (b, a)
    if CATEGORY[zero.dtype.kind] > CATEGORY[dims.dtype.kind]:
        return a, b                                    # the rules below cast the other way
    zero = zero.type(dims.dtype)
    return (zero, b) if a.ndim == 0 else (a, zero)


def same_dtype(op, error=RuntimeError, **tensors):
    """Raise, as PyTorch does, when the floating tensors given differ in dtype (float32 weights on
    float64 input would otherwise quietly compute in float64): name them and the fix."""
    first = None                                       # the dtype of the first floating tensor given
    for t in tensors.values():
        dtype = getattr(t, "dtype", None)              # None for an absent bias, a number, a list
        if dtype is None or dtype.kind != "f":
            continue
        if first is None:
            first = dtype
        elif dtype != first:
            listed = ", ".join(f"{name} {t.dtype}" for name, t in tensors.items()
                               if getattr(t, "dtype", None) is not None and t.dtype.kind == "f")
            raise error(f"{op}: expected the same dtype, got {listed}. Cast one side "
                        "(model.double() or x.float()), as PyTorch requires too")
