"""Layer normalization over the last ``len(normalized_shape)`` dimensions."""
from .. import backend
from ..autograd import Function


class LayerNorm(Function):
    """Over the normalized dimensions (n elements per row):

        mu = mean(x),  var = mean((x - mu)^2),  r = 1 / sqrt(var + eps)
        x_hat = (x - mu) r,   y = x_hat * w + b

    Backward, with g = dL/dy * w  (dL/dx_hat):
        dL/dx = r * (g - mean(g) - x_hat * mean(g * x_hat))
        dL/dw = sum over rows of dL/dy * x_hat,   dL/db = sum over rows of dL/dy
    """

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_shape, eps):
        k = len(normalized_shape)
        if tuple(x.shape[x.ndim - k:]) != tuple(normalized_shape):
            raise ValueError(
                f"layer_norm: input of shape {tuple(x.shape)} does not end in normalized_shape "
                f"{tuple(normalized_shape)}"
            )
        xp = backend.array_module(x, weight, bias)
        axes = tuple(range(x.ndim - k, x.ndim))
        # the arrays made here are ours, so they are updated in place: fewer fresh buffers
        x_hat = x - x.mean(axis=axes, keepdims=True)                 # x - mu
        y = xp.multiply(x_hat, x_hat)                                # (x - mu)^2, then y's buffer
        rstd = 1.0 / xp.sqrt(y.mean(axis=axes, keepdims=True) + eps)
        x_hat *= rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        ctx.axes, ctx.has_bias = axes, bias is not None
        if weight is None and bias is None:
            return x_hat
        if weight is None:
            return xp.add(x_hat, bias, out=y)
        xp.multiply(x_hat, weight, out=y)
        if bias is not None:
            y += bias
        return y

    @staticmethod
    def backward(ctx, dout):
        x_hat, rstd, weight = ctx.saved_tensors
        axes = ctx.axes
        rows = tuple(range(dout.ndim - len(axes)))
        xp = backend.array_module(dout, x_hat)
        scratch = xp.multiply(dout, x_hat)
        dweight = scratch.sum(axis=rows) if weight is not None else None          # dL/dw
        dbias = dout.sum(axis=rows) if ctx.has_bias else None                     # dL/db
        g = dout * weight if weight is not None else dout.copy()                  # dL/dx_hat
        # dL/dx = r * (g - mean(g) - x_hat * mean(g * x_hat)), in place in g (a new array)
        xp.multiply(g, x_hat, out=scratch)
        xp.multiply(x_hat, scratch.mean(axis=axes, keepdims=True), out=scratch)
        g -= g.mean(axis=axes, keepdims=True)
        g -= scratch
        g *= rstd
        return g, dweight, dbias, None, None
