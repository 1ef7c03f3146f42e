"""Softmax and log-softmax over one dimension, computed stably (max subtracted first)."""
from .. import backend
from ..autograd import Function

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the primitives and
# attention assignments ask students to write (softmax_forward, softmax_backward): `minigrad assignment make`
# builds their files from this one.


def _row_max(x, dim):
    """max over ``dim`` (kept), the shift that makes exp safe; 0 when ``dim`` is empty (nothing to shift)."""
    if x.shape[dim] == 0:
        return 0.0
    return x.max(axis=dim, keepdims=True)


def softmax_forward(x, dim=-1):
    """y_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j, over ``dim``.   x (..., C) -> y (..., C), cache.

    Subtracting m changes nothing but overflow: exp never sees a positive number.
    """
    xp = backend.array_module(x)
    # BEGIN SOLUTION
    # HINT: subtract the row's max (_row_max) before exp, then divide by the sum over dim
    e = xp.exp(x - _row_max(x, dim))
    y = e / e.sum(axis=dim, keepdims=True)
    # END SOLUTION
    return y, (y, dim)          # the backward needs only the output


def softmax_backward(dy, cache):
    """dy (..., C) -> dx (..., C).   Jacobian dy_i/dx_j = y_i (delta_ij - y_j), so
    dL/dx = y * (dL/dy - sum_j dL/dy_j y_j)."""
    y, dim = cache
    # BEGIN SOLUTION
    # HINT: every y_i depends on every x_j of its row: the Jacobian is diag(y) - y y^T; apply it to dy without building it
    inner = (dy * y).sum(axis=dim, keepdims=True)    # sum_j dL/dy_j y_j
    dx = y * (dy - inner)                            # y_i (dL/dy_i - inner)
    # END SOLUTION
    return dx


class Softmax(Function):
    """y = softmax(x) over ``dim``: the equations are softmax_forward / softmax_backward above."""

    @staticmethod
    def forward(ctx, x, dim):
        y, _ = softmax_forward(x, dim)
        ctx.save_for_backward(y)            # saved as the output itself: an in-place change of y is caught
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return softmax_backward(dout, (y, ctx.dim)), None


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
