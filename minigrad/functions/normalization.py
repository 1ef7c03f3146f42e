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
        mu = x.mean(axis=axes, keepdims=True)
        centered = x - mu
        var = (centered * centered).mean(axis=axes, keepdims=True)
        rstd = 1.0 / xp.sqrt(var + eps)
        x_hat = centered * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        ctx.axes, ctx.has_bias = axes, bias is not None
        y = x_hat if weight is None else x_hat * weight
        return y if bias is None else y + bias

    @staticmethod
    def backward(ctx, dout):
        x_hat, rstd, weight = ctx.saved_tensors
        axes = ctx.axes
        rows = tuple(range(dout.ndim - len(axes)))
        g = dout if weight is None else dout * weight                             # dL/dx_hat
        dx = rstd * (g - g.mean(axis=axes, keepdims=True)
                     - x_hat * (g * x_hat).mean(axis=axes, keepdims=True))        # dL/dx
        dweight = (dout * x_hat).sum(axis=rows) if weight is not None else None   # dL/dw
        dbias = dout.sum(axis=rows) if ctx.has_bias else None                     # dL/db
        return dx, dweight, dbias, None, None
