"""dtypes under torch's names.  A minigrad dtype is a NumPy dtype: ``x.dtype == minigrad.float`` works.

    minigrad.float  = float32      minigrad.double = float64      minigrad.half = float16
    minigrad.long   = int64        minigrad.int    = int32        minigrad.short = int16
    minigrad.bool   = bool         minigrad.uint8, int8
(bfloat16 and the complex dtypes do not exist: NumPy has no bfloat16, minigrad no complex gradients.)
"""
import numpy

from .tensor import bool_, float16, float32, float64, int32, int64, long  # noqa: F401

float = float32
double = float64
half = float16
int = int32
short = int16 = numpy.dtype("int16")
int8 = numpy.dtype("int8")
uint8 = numpy.dtype("uint8")
bool = bool_
