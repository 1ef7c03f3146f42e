"""Functional forms of the layers and the losses (imported as ``F``, as in PyTorch).

Each function checks its arguments and calls one Function from
``minigrad.functions`` (or composes a few Tensor operations).
"""
from . import backend
from . import functions as fn
from .tensor import Tensor, cat, stack, where  # noqa: F401  (re-exported for F.cat etc.)
from .attention import scaled_dot_product_attention  # noqa: F401  (minigrad/attention.py)
from .functions.gelu import gelu  # noqa: F401  (exact erf GELU, minigrad/functions/gelu.py)
from .functions.rnn import gru, lstm, rnn  # noqa: F401  (hand-written BPTT, minigrad/functions/rnn.py)


def _data(value):
    return value.data if isinstance(value, Tensor) else value


# ------------------------------------------------------------------ activations
def relu(x):
    return fn.ReLU.apply(x)


def tanh(x):
    return fn.Tanh.apply(x)


def sigmoid(x):
    return fn.Sigmoid.apply(x)


def softmax(x, dim=-1):
    return fn.Softmax.apply(x, dim)


def log_softmax(x, dim=-1):
    return fn.LogSoftmax.apply(x, dim)


# ------------------------------------------------------------------ layers
def linear(x, weight, bias=None):
    """y = x W^T + b,  x (..., in_features), W (out_features, in_features), b (out_features,)."""
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: input of shape {x.shape} has {x.shape[-1]} features in its last dimension, "
            f"but the weight {weight.shape} (out_features, in_features) expects in_features={weight.shape[1]}"
        )
    return fn.Linear.apply(x, weight, bias)


def embedding(ids, weight, padding_idx=None):
    """Rows of ``weight`` (V, D) picked by integer ``ids`` (any shape) -> (*ids.shape, D)."""
    return fn.Embedding.apply(weight, _data(ids), padding_idx)


def dropout(x, p=0.5, training=True):
    """Zero each element with probability p and scale the rest by 1/(1-p); identity when not training."""
    if not training or p == 0.0:
        return x
    return fn.Dropout.apply(x, p)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return fn.LayerNorm.apply(x, weight, bias, tuple(normalized_shape), eps)


# ------------------------------------------------------------------ losses
def cross_entropy(input, target, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Softmax cross entropy from logits (N, C) or (N, C, d1, ...) and integer targets (N, d1, ...)."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    return fn.CrossEntropy.apply(input, _data(target), ignore_index, label_smoothing, reduction)


def nll_loss(input, target, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood from log-probabilities (N, C) or (N, C, d1, ...)."""
    return fn.NLLLoss.apply(input, _data(target), ignore_index, reduction)


def mse_loss(input, target, reduction="mean"):
    """mean((input - target)^2), composed from primitives."""
    if isinstance(target, Tensor) and input.shape != target.shape:
        raise ValueError(f"mse_loss: input {input.shape} and target {target.shape} must have the same shape")
    squared = (input - target) ** 2
    if reduction == "mean":
        return squared.mean()
    if reduction == "sum":
        return squared.sum()
    if reduction == "none":
        return squared
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def binary_cross_entropy_with_logits(input, target, reduction="mean"):
    """Binary cross entropy on logits, stable for any logit size."""
    return fn.BCEWithLogits.apply(input, target, reduction)


def one_hot(ids, num_classes):
    """(…,) integer ids -> (…, num_classes) float tensor of 0/1 (no gradient)."""
    data = _data(ids)
    xp = backend.array_module(data)
    return Tensor._from_array((data[..., None] == xp.arange(num_classes)).astype("float32"))
