"""Inverted dropout: zero each element with probability p, scale the rest by 1 / (1 - p)."""
from .. import backend
from ..autograd import Function


class Dropout(Function):
    """y = x * m / (1 - p),  m_i ~ Bernoulli(1 - p).   dy/dx = m / (1 - p).

    The mask comes from the generator seeded by ``minigrad.manual_seed``.
    """

    @staticmethod
    def forward(ctx, x, p):
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout: p must be in [0, 1), got {p}")
        keep = backend.random_bernoulli(x.shape, 1.0 - p, backend.device_of(x))
        scale = keep * (1.0 / (1.0 - p))
        scale = scale.astype(x.dtype)
        ctx.save_for_backward(scale)
        return x * scale

    @staticmethod
    def backward(ctx, dout):
        (scale,) = ctx.saved_tensors
        return dout * scale, None                  # dy/dx = m / (1 - p)
