"""dtypes under torch's names, and the default floating dtype.  A minigrad dtype is a NumPy dtype:
``x.dtype == minigrad.float`` works.

    minigrad.float  = float32      minigrad.double = float64      minigrad.half = float16
    minigrad.long   = int64        minigrad.int    = int32        minigrad.short = int16
    minigrad.bool   = bool         minigrad.uint8, int8
(bfloat16 and the complex dtypes do not exist: NumPy has no bfloat16, minigrad no complex gradients.)

The torch names ``float``, ``int`` and ``bool`` are defined last: above them the builtins keep their meaning.

Module-level state: ``_default_dtype``, process-wide as ``torch.set_default_dtype``'s.
"""
import numpy

float16 = numpy.dtype("float16")
float32 = numpy.dtype("float32")
float64 = numpy.dtype("float64")
int8 = numpy.dtype("int8")
int16 = numpy.dtype("int16")
int32 = numpy.dtype("int32")
int64 = numpy.dtype("int64")
uint8 = numpy.dtype("uint8")
bool_ = numpy.dtype("bool")

_default_dtype = float32


def set_default_dtype(d):
    """Set the floating dtype of new tensors made from Python floats (float32 by default)."""
    global _default_dtype
    dtype = numpy.dtype(d)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: expected a floating dtype, got {dtype}")
    _default_dtype = dtype


def get_default_dtype():
    """The floating dtype of new tensors made from Python floats."""
    return _default_dtype


# torch's legacy tensor types: x.type(torch.FloatTensor), x.type("torch.LongTensor"), x.type() -> the name
LEGACY_TYPES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "LongTensor": int64,
                "IntTensor": int32, "ShortTensor": int16, "CharTensor": int8, "ByteTensor": uint8,
                "BoolTensor": bool_}


def dtype_of_type(value):
    """The dtype a legacy type names (minigrad.FloatTensor, "torch.cuda.LongTensor"), else None."""
    name = value.rsplit(".", 1)[-1] if isinstance(value, str) else getattr(value, "__name__", None)
    return LEGACY_TYPES.get(name) if callable(value) or isinstance(value, str) else None


def type_name(dtype):
    """torch's name of a dtype's legacy tensor type: float32 -> "torch.FloatTensor"."""
    return next(f"torch.{name}" for name, d in LEGACY_TYPES.items() if d == dtype)


# torch's names (float, int and bool shadow the builtins from here on)
half = float16
float = float32
double = float64
short = int16
int = int32
long = int64
bool = bool_
