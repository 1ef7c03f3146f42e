"""Activation and dropout layers (no parameters)."""
from .. import functional as F
from .module import Module


class ReLU(Module):
    """y = max(x, 0)."""

    def forward(self, x):
        return F.relu(x)


class Tanh(Module):
    """y = tanh(x)."""

    def forward(self, x):
        return F.tanh(x)


class Sigmoid(Module):
    """y = 1 / (1 + exp(-x))."""

    def forward(self, x):
        return F.sigmoid(x)


class Softmax(Module):
    """y = softmax(x) over ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Dropout(Module):
    """Zeroes each element with probability p while training (scaled by 1/(1-p)); identity in eval()."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"
