"""Activation and dropout layers (no parameters): each calls its function in ``minigrad.functional``."""
from .. import checks, functional as F
from .module import Module


def _no_inplace(name, inplace):
    if inplace:
        raise NotImplementedError(f"{name}(inplace=True) is not implemented in minigrad: leave inplace=False "
                                  "(the result is the same, computed into a new tensor)")


class ReLU(Module):
    """y = max(x, 0)."""

    def __init__(self, inplace=False):
        super().__init__()
        _no_inplace("ReLU", inplace)

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


class GELU(Module):
    """y = x * Phi(x), Phi the standard normal CDF (the exact erf form, torch's default)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class Softmax(Module):
    """y = softmax(x) over ``dim`` (None: torch's legacy implicit choice, with a warning)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim, _stacklevel=5)     # the warning points at the caller's line, as torch

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """y = log(softmax(x)) over ``dim``, computed stably (pair it with nn.NLLLoss)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.log_softmax(x, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Identity(Module):
    """y = x (a placeholder layer; any arguments are accepted and ignored, as torch)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (by default all but the batch dimension)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        checks.tensors("Flatten", input=x)
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """Zeroes each element with probability p while training (scaled by 1/(1-p)); identity in eval()."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        _no_inplace("Dropout", inplace)
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"
