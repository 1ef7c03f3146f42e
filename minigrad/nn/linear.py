"""Linear (fully connected) layer."""
import math

from .. import functional as F
from ..creation import empty
from . import init
from .module import Module, Parameter


class Linear(Module):
    """y = x W^T + b.

    x: (..., in_features) -> y: (..., out_features)
    weight: (out_features, in_features), bias: (out_features,), both
    U(-1/sqrt(in_features), 1/sqrt(in_features)) as in PyTorch.
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty((out_features, in_features), dtype=dtype, device=device))
        self.bias = Parameter(empty((out_features,), dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
