"""Layer normalization."""
from .. import functional as F
from ..creation import empty
from . import init
from .module import Module, Parameter


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last dims ``normalized_shape``.

    weight starts at 1 and bias at 0, as in PyTorch.  ``reference=True`` (minigrad's own keyword, kept as
    ``self.reference``) runs the reference tier, functions/normalization.py; the default is the fast one.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None,
                 *, reference=False):
        super().__init__()
        self.reference = reference
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
            init.ones_(self.weight)
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
                init.zeros_(self.bias)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps, reference=self.reference)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"
