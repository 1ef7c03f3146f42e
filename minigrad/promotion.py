"""dtype rules where PyTorch's differ from NumPy's.

    promote(a, b)            the operands of +, -, *, /, ** cast as PyTorch would (NumPy would
                             make int tensor + float tensor float64)
    same_dtype(op, **named)  PyTorch refuses float32 @ float64 (and float32 weights on float64
                             input) instead of computing quietly in float64; so does minigrad
"""
from . import autograd
from .dtypes import get_default_dtype


def promote(a, b, division=False):
    """PyTorch's type promotion where NumPy's differs: an integer tensor meeting a float tensor takes
    that tensor's dtype (NumPy: float64); meeting a Python float, or divided, the default dtype."""
    Tensor = autograd.Tensor
    a_int = isinstance(a, Tensor) and a._data.dtype.kind in "iub"
    b_int = isinstance(b, Tensor) and b._data.dtype.kind in "iub"
    if not (a_int or b_int):
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


def same_dtype(op, error=RuntimeError, **tensors):
    """Raise, as PyTorch does, when the floating tensors given differ in dtype (float32 weights on
    float64 input would otherwise quietly compute in float64): name them and the fix."""
    dtypes = {name: t.dtype for name, t in tensors.items() if t is not None and getattr(t, "dtype", None) is not None
              and t.dtype.kind == "f"}
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{name} {dtype}" for name, dtype in dtypes.items())
        raise error(f"{op}: expected the same dtype, got {listed}. Cast one side "
                    "(model.double() or x.float()), as PyTorch requires too")
