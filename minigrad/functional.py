"""Functional forms of the layers and the losses (imported as ``F``, as in PyTorch).

Each function checks its arguments and calls one Function from
``minigrad.functions`` (or composes a few Tensor operations).
"""
import math

from . import backend
from . import functions as fn
from .creation import cat, stack, where  # noqa: F401  (re-exported for F.cat etc.)
from .masks import causal_mask, combine_masks
from .tensor import Tensor


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


def gelu(x, approximate="none"):
    """GELU of a Tensor: x * Phi(x) with the exact erf (PyTorch's default ``approximate="none"``)."""
    if approximate != "none":
        raise ValueError(f'gelu: only the exact form approximate="none" is implemented, got {approximate!r}')
    return fn.GELU.apply(x)


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


# ------------------------------------------------------------------ attention
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0, scale=None,
                                 return_weights=False, is_causal=False):
    """softmax(Q K^T * scale) V over any leading (batch, head) dimensions.

    query (..., Tq, Dk), key (..., Tk, Dk), value (..., Tk, Dv) -> (..., Tq, Dv)
    mask:       bool, broadcastable to (..., Tq, Tk); True = may not attend
    dropout_p:  dropout on the attention weights (pass 0.0 when not training)
    scale:      default 1 / sqrt(Dk)
    is_causal:  add causal_mask(Tq, Tk) to ``mask``
    return_weights: also return the weights (..., Tq, Tk) (before dropout)
    """
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if is_causal:
        mask = combine_masks(mask, causal_mask(query.shape[-2], key.shape[-2], device=query.device))
    attention = fn.pick(fn.ScaledDotProductAttention, fn.FastScaledDotProductAttention)
    return attention.apply(query, key, value, _data(mask), float(dropout_p), float(scale), bool(return_weights))


def split_heads(x, heads):
    """(N, T, E) -> (N, heads, T, E / heads): head h sees features h*Dh ... (h+1)*Dh - 1."""
    n, t, e = x.shape
    return x.reshape(n, t, heads, e // heads).permute(0, 2, 1, 3)


def merge_heads(x):
    """(N, heads, T, Dh) -> (N, T, heads * Dh), the inverse of split_heads."""
    n, h, t, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(n, t, h * d)


# ------------------------------------------------------------------ recurrent layers
def lengths_mask(lengths, T, N, device):
    """A (T, N, 1) bool mask, True where t < lengths[n] (None when lengths is); checks 1 <= length <= T."""
    if lengths is None:
        return None
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    elif hasattr(lengths, "tolist"):
        lengths = lengths.tolist() if not hasattr(lengths, "get") else lengths.get().tolist()
    lengths = [int(n) for n in lengths]
    if len(lengths) != N:
        raise ValueError(f"lengths: expected one length per sequence, shape ({N},), got {len(lengths)} lengths")
    if any(n < 1 or n > T for n in lengths):
        raise ValueError(f"lengths: every length must be in [1, T] = [1, {T}] for an input of "
                         f"shape (T, N, D) with T = {T}, got {lengths}")
    xp = backend.get_module(device)
    steps = xp.arange(T).reshape(T, 1, 1)
    return steps < backend.asarray(lengths, device=device).reshape(1, N, 1)


def rnn(x, h0, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None, reverse=False,
        nonlinearity="tanh"):
    """One RNN layer, one direction, over a time-major sequence x (T, N, D).

    h0 (N, H) or None (zeros); lengths: N ints in [1, T] or None.  Returns (output (T, N, H), h_n (N, H)).
    Runs minigrad/functions/rnn_fast.py, or rnn.py under ``use_reference_kernels()``.
    """
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"rnn: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
    mask = lengths_mask(lengths, x.shape[0], x.shape[1], x.device) if x.ndim == 3 else None
    function = fn.pick(fn.RNNFunction, fn.FastRNNFunction)
    return function.apply(x, h0, weight_ih, weight_hh, bias_ih, bias_hh, mask, reverse, nonlinearity)


def lstm(x, h0, c0, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None, reverse=False):
    """One LSTM layer, one direction, over a time-major sequence x (T, N, D).

    h0, c0 (N, H) or None (zeros).  Returns (output (T, N, H), h_n (N, H), c_n (N, H)).
    """
    mask = lengths_mask(lengths, x.shape[0], x.shape[1], x.device) if x.ndim == 3 else None
    function = fn.pick(fn.LSTMFunction, fn.FastLSTMFunction)
    return function.apply(x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh, mask, reverse)


def gru(x, h0, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None, reverse=False,
        reset_after=True):
    """One GRU layer, one direction, over a time-major sequence x (T, N, D).

    reset_after=True is PyTorch's GRU; False is the textbook form (reset gate before the matmul).
    Returns (output (T, N, H), h_n (N, H)).
    """
    mask = lengths_mask(lengths, x.shape[0], x.shape[1], x.device) if x.ndim == 3 else None
    function = fn.pick(fn.GRUFunction, fn.FastGRUFunction)
    return function.apply(x, h0, weight_ih, weight_hh, bias_ih, bias_hh, mask, reverse, reset_after)
