"""Vector p-norms over ``dim`` (torch.norm, torch.linalg.vector_norm)."""
import math

from .. import backend
from ..autograd import Function
from .reductions import _axes, _restore


class Norm(Function):
    """y = (sum_i |x_i|^p)^(1/p) over dim, p >= 1;  p = inf: y = max_i |x_i|.

        dy/dx_i = sign(x_i) |x_i|^(p-1) / y^(p-1)          (p = 2: x_i / y;  p = 1: sign(x_i))
        p = inf:  dy/dx_i = sign(x_i) / k at the k entries with |x_i| = y, else 0
    Where y = 0 the gradient is 0 (the subgradient PyTorch takes).
    """

    @staticmethod
    def forward(ctx, x, p, dim, keepdim):
        if not (p == math.inf or p >= 1):
            raise ValueError(f"norm: p must be >= 1 or inf, got {p}")
        xp = backend.array_module(x)
        axes = _axes(dim, x.ndim)
        size = xp.abs(x)
        if p == math.inf:
            y = size.max(axis=axes, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, dtype=x.dtype)
        elif p == 2:
            y = xp.sqrt((x * x).sum(axis=axes, keepdims=True))
        elif p == 1:
            y = size.sum(axis=axes, keepdims=True)
        else:
            y = (size ** p).sum(axis=axes, keepdims=True) ** (1 / p)
        ctx.save_for_backward(x, y)
        ctx.p, ctx.axes, ctx.keepdim = p, axes, keepdim
        return y if keepdim else y.reshape([n for i, n in enumerate(y.shape) if i not in axes])

    @staticmethod
    def backward(ctx, dout):
        x, y = ctx.saved_tensors
        xp = backend.array_module(x)
        dout = _restore(dout, ctx.axes, ctx.keepdim)
        p, nonzero = ctx.p, y > 0
        safe_y = xp.where(nonzero, y, 1)
        if p == math.inf:
            at_max = (xp.abs(x) == y) & nonzero
            ties = xp.maximum(at_max.sum(axis=ctx.axes, keepdims=True), 1)
            dx = xp.sign(x) * at_max / ties                     # sign(x_i) / k at the maxima
        elif p == 2:
            dx = x / safe_y * nonzero                           # x_i / y
        elif p == 1:
            dx = xp.sign(x)                                     # sign(x_i)
        else:
            dx = xp.sign(x) * (xp.abs(x) / safe_y) ** (p - 1) * nonzero   # sign(x_i) (|x_i| / y)^(p-1)
        return dx * dout, None, None, None
