"""Copies: to another device, to another dtype, or to new memory."""
from .. import backend
from ..autograd import Function


class ToDevice(Function):
    """y = x on another device.   dL/dx = dL/dy moved back."""

    @staticmethod
    def forward(ctx, x, device):
        ctx.source = backend.device_of(x)
        return backend.asarray(backend.to_numpy(x) if ctx.source != "cpu" else x, device=device)

    @staticmethod
    def backward(ctx, dout):
        host = backend.to_numpy(dout)
        return backend.asarray(host, device=ctx.source), None


class Cast(Function):
    """y = x as another dtype.   dL/dx = dL/dy cast back (none for integer inputs)."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, dout):
        return dout.astype(ctx.dtype), None


class Clone(Function):
    """y = a copy of x.   dL/dx = dL/dy."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, dout):
        return (dout,)
