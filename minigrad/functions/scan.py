"""Running sums and reversals along one dimension (torch.cumsum, torch.flip)."""
from .. import backend
from ..autograd import Function


class CumSum(Function):
    """y_i = x_1 + ... + x_i along dim.   dL/dx_j = sum over i >= j of dL/dy_i: the running sum of dL/dy
    taken from the end."""

    @staticmethod
    def forward(ctx, x, dim):
        xp = backend.array_module(x)
        ctx.dim = dim
        return xp.cumsum(x, axis=dim)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        reversed_dout = xp.flip(dout, axis=ctx.dim)
        return xp.flip(xp.cumsum(reversed_dout, axis=ctx.dim), axis=ctx.dim), None   # sums from the end


class Flip(Function):
    """y = x reversed along ``dims``.   dL/dx = dL/dy reversed back."""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return backend.array_module(x).flip(x, axis=dims)

    @staticmethod
    def backward(ctx, dout):
        return backend.array_module(dout).flip(dout, axis=ctx.dims), None
