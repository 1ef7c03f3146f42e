"""Softmax and log-softmax over one dimension, computed stably (max subtracted first)."""
from .. import backend
from ..autograd import Function


def _row_max(x, dim):
    """max over ``dim`` (kept), the shift that makes exp safe; 0 when ``dim`` is empty (nothing to shift)."""
    if x.shape[dim] == 0:
        return 0.0
    return x.max(axis=dim, keepdims=True)


class Softmax(Function):
    """y_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j.

    Jacobian dy_i/dx_j = y_i (delta_ij - y_j), so
    dL/dx = y * (dL/dy - sum_j dL/dy_j y_j).
    """

    @staticmethod
    def forward(ctx, x, dim):
        xp = backend.array_module(x)
        e = xp.exp(x - _row_max(x, dim))
        y = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        inner = (dout * y).sum(axis=ctx.dim, keepdims=True)   # sum_j dL/dy_j y_j
        return y * (dout - inner), None                       # y_i (dL/dy_i - inner)


class LogSoftmax(Function):
    """y_i = x_i - m - log sum_j exp(x_j - m).

    dy_i/dx_j = delta_ij - softmax(x)_j, so dL/dx = dL/dy - softmax(x) * sum_i dL/dy_i.
    """

    @staticmethod
    def forward(ctx, x, dim):
        xp = backend.array_module(x)
        shifted = x - _row_max(x, dim)
        y = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        xp = backend.array_module(y)
        total = dout.sum(axis=ctx.dim, keepdims=True)
        return dout - xp.exp(y) * total, None                 # dL/dy - softmax * sum dL/dy
