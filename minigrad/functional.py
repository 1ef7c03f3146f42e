"""Functional forms of the layers and the losses (imported as ``F``, as in PyTorch).

Each function checks its arguments and calls one Function from
``minigrad.functions`` (or composes a few Tensor operations).
"""
import math
import warnings

from .torch_compat import absent
from . import backend, checks
from .torch_compat.arguments import array_of
from . import functions as fn
from .creation import cat, stack, where  # noqa: F401  (re-exported for F.cat etc.)
from .masks import attention_bias, causal_mask
from .torch_compat.promotion import same_dtype
from .tensor import Tensor


# ------------------------------------------------------------------ activations
def relu(input, inplace=False):
    checks.tensors("relu", input=input)
    _torch_only_arguments("relu", inplace=inplace)
    return fn.ReLU.apply(input)


def tanh(input):
    checks.tensors("tanh", input=input)
    return fn.Tanh.apply(input)


def sigmoid(input):
    checks.tensors("sigmoid", input=input)
    return fn.Sigmoid.apply(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum exp(x) over ``dim`` (pass it: without it torch's legacy rule picks one, with a warning);
    dtype: cast the input first (as torch)."""
    checks.tensors("softmax", input=input)
    input = input if dtype is None else input.type(dtype)
    return input.softmax(_softmax_dim("softmax", input, dim, _stacklevel))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) over ``dim``, computed stably."""
    checks.tensors("log_softmax", input=input)
    input = input if dtype is None else input.type(dtype)
    return input.log_softmax(_softmax_dim("log_softmax", input, dim, _stacklevel))


def _softmax_dim(name, x, dim, stacklevel):
    """torch's implicit choice when dim is omitted: 0 for 0-, 1- and 3-dimensional inputs, else 1."""
    if dim is not None:
        return checks.dim(name, dim, x.ndim)
    dim = 0 if x.ndim in (0, 1, 3) else 1
    warnings.warn(f"{name}: implicit dimension choice (dim={dim}, as torch does) is deprecated; "
                  "pass dim= explicitly", stacklevel=stacklevel)
    return dim


def gelu(input, approximate="none"):
    """GELU of a Tensor: x * Phi(x) with the exact erf (PyTorch's default ``approximate="none"``), or
    approximate="tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), composed from primitives (GPT-2's form)."""
    checks.tensors("gelu", input=input)
    x = input
    if approximate == "tanh":
        return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)).tanh())
    if approximate != "none":
        raise ValueError(f'gelu: approximate must be "none" or "tanh", got {approximate!r}')
    return fn.GELU.apply(x)


# ------------------------------------------------------------------ layers
def linear(input, weight, bias=None):
    """y = x W^T + b,  x (..., in_features), W (out_features, in_features), b (out_features,)."""
    checks.tensors("linear", input=input, weight=weight, bias=bias)
    x = input
    checks.floating_input("linear", RuntimeError, x, weight)      # int64 ids: PyTorch raises RuntimeError too
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: input of shape {x.shape} has {x.shape[-1]} features in its last dimension, "
            f"but the weight {weight.shape} (out_features, in_features) expects in_features={weight.shape[1]}"
        )
    same_dtype("linear", input=x, weight=weight, bias=bias)
    return fn.Linear.apply(x, weight, bias)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` (V, D) picked by integer ids ``input`` (any shape) -> (*input.shape, D)."""
    checks.tensors("embedding", input=input, weight=weight)
    _torch_only_arguments("embedding", max_norm=max_norm, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
    return fn.Embedding.apply(weight, array_of(input), padding_idx)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p); identity when not training."""
    checks.tensors("dropout", input=input)
    _torch_only_arguments("dropout", inplace=inplace)
    if not training or p == 0.0:
        return input
    return fn.Dropout.apply(input, p)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, *, reference=False):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last dims ``normalized_shape``.

    reference: minigrad's own keyword, the reference tier (functions/normalization.py, the one to
    read); the fast tier (normalization_fast.py) takes each row's mean as one matrix product."""
    checks.tensors("layer_norm", input=input, weight=weight, bias=bias)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    same_dtype("layer_norm", input=input, weight=weight, bias=bias)
    return layer_norm_function(reference).apply(input, weight, bias, tuple(normalized_shape), eps)


def layer_norm_function(reference):
    """The LayerNorm Function of a tier: the reference (normalization.py) or the fast one."""
    return fn.LayerNorm if reference else fn.FastLayerNorm


# ------------------------------------------------------------------ losses
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Softmax cross entropy from logits (N, C) or (N, C, d1, ...) and integer targets (N, d1, ...).

    Arguments in torch's order; class weights (``weight``) are not implemented
    and the legacy ``size_average``/``reduce`` are refused (use ``reduction``).
    """
    checks.tensors("cross_entropy", input=input, target=target)
    _torch_only_arguments("cross_entropy", weight=weight, size_average=size_average, reduce=reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if target.dtype.kind == "f":
        return _cross_entropy_with_probabilities(input, target, label_smoothing, reduction)
    return fn.CrossEntropy.apply(input, array_of(target), ignore_index, label_smoothing, reduction)


def _cross_entropy_with_probabilities(input, target, label_smoothing, reduction):
    """Targets that are class probabilities (N, C, ...) of input's shape, as torch: the loss of row n is
    -sum_c p_nc log softmax(x_n)_c, p smoothed to p (1 - e) + e / C; "mean" divides by the rows."""
    if tuple(target.shape) != input.shape:
        raise TypeError(f"cross_entropy: targets are integer class indices, or class probabilities of the input's "
                        f"shape {input.shape}; got {target.dtype} of shape {tuple(target.shape)}: for class "
                        "indices use target.long()")
    same_dtype("cross_entropy", input=input, target=target)
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    losses = -(fn.LogSoftmax.apply(input, 1 if input.ndim > 1 else 0) * target).sum(1 if input.ndim > 1 else 0)
    return _reduced("cross_entropy", losses, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood from log-probabilities (N, C) or (N, C, d1, ...) (torch's argument order)."""
    checks.tensors("nll_loss", input=input, target=target)
    _torch_only_arguments("nll_loss", weight=weight, size_average=size_average, reduce=reduce)
    return fn.NLLLoss.apply(input, array_of(target), ignore_index, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """mean((input - target)^2), composed from primitives."""
    checks.tensors("mse_loss", input=input, target=target)
    _torch_only_arguments("mse_loss", size_average=size_average, reduce=reduce)
    if input.shape != target.shape:
        raise ValueError(f"mse_loss: input {input.shape} and target {target.shape} must have the same shape")
    return _reduced("mse_loss", (input - target) ** 2, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross entropy on logits, stable for any logit size (torch's argument order)."""
    checks.tensors("binary_cross_entropy_with_logits", input=input, target=target)
    _torch_only_arguments("binary_cross_entropy_with_logits", weight=weight, size_average=size_average,
                          reduce=reduce, pos_weight=pos_weight)
    same_dtype("binary_cross_entropy_with_logits", input=input, target=target)
    return fn.BCEWithLogits.apply(input, target, reduction)


def one_hot(tensor, num_classes=-1):
    """(…,) integer ids -> (…, num_classes) int64 tensor of 0/1, as torch (use .float() to multiply).

    num_classes=-1: one more than the largest id."""
    checks.tensors("one_hot", tensor=tensor)
    data = array_of(tensor)
    xp = backend.array_module(data)
    if data.dtype.kind not in "iu":
        raise TypeError(f"one_hot: expects integer class ids, got dtype {data.dtype}: use .long()")
    if num_classes == -1:
        num_classes = int(data.max()) + 1 if data.size else 0
    if data.size and (int(data.min()) < 0 or int(data.max()) >= num_classes):
        raise ValueError(f"one_hot: class ids must be in 0..{num_classes - 1}, got {int(data.min())}..{int(data.max())}")
    return Tensor._from_array((data[..., None] == xp.arange(num_classes)).astype("int64"))


_INSTEAD = {                # what to do instead of each torch argument minigrad does not implement
    "size_average": "it is deprecated in torch too; use reduction='mean'|'sum'|'none'",
    "reduce": "it is deprecated in torch too; use reduction='mean'|'sum'|'none'",
    "weight": "weight the unreduced loss (reduction='none') yourself",
    "pos_weight": "weight the unreduced loss (reduction='none') yourself",
    "inplace": "leave inplace=False (the same values, in a new tensor)",
    "max_norm": "renormalise the embedding rows yourself under no_grad()",
    "scale_grad_by_freq": "scale the weight's gradient yourself after backward()",
    "sparse": "minigrad's gradients are dense",
}


def _torch_only_arguments(name, **arguments):
    """Refuse torch arguments that minigrad does not implement (any value but None or False), rather than
    ignore them; each message says what to do instead (_INSTEAD)."""
    for argument, value in arguments.items():
        if value is None or value is False:
            continue
        error = TypeError if argument in ("size_average", "reduce") else NotImplementedError
        raise error(f"{name}: {argument}= is not implemented in minigrad: {_INSTEAD[argument]}")


# ------------------------------------------------------------------ attention
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                                 scale=None, enable_gqa=False, return_weights=False, reference=False):
    """softmax(Q K^T * scale + B) V over any leading (batch, head) dimensions, as PyTorch's.

    query (..., Tq, Dk), key (..., Tk, Dk), value (..., Tk, Dv) -> (..., Tq, Dv)
    attn_mask:  PyTorch's meaning: bool, True = MAY attend; or float, the bias B added to
                the scores (-inf = may not attend).  Broadcastable to (..., Tq, Tk).
    dropout_p:  dropout on the attention weights (pass 0.0 when not training)
    is_causal:  query i attends to keys j <= i only (not together with attn_mask, as in PyTorch)
    scale:      default 1 / sqrt(Dk)
    enable_gqa: key and value have fewer heads (dim -3) than query, each shared by a group of query heads
    minigrad's own keyword-only arguments:
    return_weights: also return the weights (..., Tq, Tk) (before dropout)
    reference:  run the reference tier (minigrad/functions/attention.py, the one to read)

    A query whose keys are all masked out gets a zero output and zero gradients
    (as PyTorch's); with no keys at all (Tk = 0) the output is zeros too.
    """
    checks.tensors("scaled_dot_product_attention", query=query, key=key, value=value)
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: an explicit attn_mask cannot be set when "
                           "is_causal=True (as in PyTorch); fold the causal mask into attn_mask")
    same_dtype("scaled_dot_product_attention", query=query, key=key, value=value)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if enable_gqa:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], dim=-3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], dim=-3)
    bias = None                                   # the mask as minigrad's one form: B added to the scores
    if is_causal:
        blocked = causal_mask(query.shape[-2], key.shape[-2], device=query.device)
        bias = attention_bias(blocked, query.dtype, "may not attend")
    elif attn_mask is not None:
        bias = attention_bias(attn_mask, query.dtype, "may attend",               # PyTorch's bool: True = attend
                              "scaled_dot_product_attention: attn_mask")
    attention = attention_function(query.shape[-2], key.shape[-2], reference)
    return attention.apply(query, key, value, bias, float(dropout_p), float(scale), bool(return_weights))


def attention_function(queries, keys, reference=False):
    """The attention Function for ``queries`` x ``keys`` scores on a tier.

    The reference (functions/attention.py) holds whole (Tq, Tk) matrices and is the one to read;
    the fast one (attention_fast.py) works in blocks, with the same numbers (tests/test_tiers.py).
    No keys (Tk = 0) leaves no blocks, and one query (decoding) makes (Tq, Tk) a single row that
    needs none: both go to the reference (one query: 15 us against 20 us a decoding call)."""
    one_row = keys == 0 or queries == 1
    return fn.ScaledDotProductAttention if reference or one_row else fn.FastScaledDotProductAttention


def split_heads(x, heads):
    """(N, T, E) -> (N, heads, T, E / heads): head h sees features h*Dh ... (h+1)*Dh - 1."""
    checks.tensors("split_heads", x=x)
    n, t, e = x.shape
    if t == 1:                  # one position (decoding): the permute would move only a size-1 axis
        return x.reshape(n, heads, 1, e // heads)
    return x.reshape(n, t, heads, e // heads).permute(0, 2, 1, 3)


def merge_heads(x):
    """(N, heads, T, Dh) -> (N, T, heads * Dh), the inverse of split_heads."""
    checks.tensors("merge_heads", x=x)
    n, h, t, d = x.shape
    if t == 1:                  # one position: as in split_heads, a reshape alone
        return x.reshape(n, 1, h * d)
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
        nonlinearity="tanh", *, reference=False):
    """One RNN layer, one direction, over a time-major sequence x (T, N, D).

    h0 (N, H) or None (zeros); lengths: N ints in [1, T] or None.  Returns (output (T, N, H), h_n (N, H)).
    reference=True runs the reference tier (functions/rnn.py: a loop over rnn_steps.rnn_step_forward
    and rnn_step_backward), False the fast tier (functions/rnn_fast.py); the tests prove them equal.
    """
    checks.tensors("rnn", input=x, h0=h0, weight_ih=weight_ih, weight_hh=weight_hh, bias_ih=bias_ih, bias_hh=bias_hh)
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"rnn: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
    same_dtype("rnn", ValueError, input=x, weight_ih=weight_ih)      # PyTorch raises ValueError here
    same_dtype("rnn", RuntimeError, input=x, h0=h0, weight_hh=weight_hh,     # and RuntimeError here
               bias_ih=bias_ih, bias_hh=bias_hh)
    mask = lengths_mask(lengths, x.shape[0], x.shape[1], x.device) if x.ndim == 3 else None
    function = fn.RNNFunction if reference else fn.FastRNNFunction   # the tier: the same numbers, read or fast
    return function.apply(x, h0, weight_ih, weight_hh, bias_ih, bias_hh, mask, reverse, nonlinearity)


def lstm(x, h0, c0, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None, reverse=False, *,
         reference=False):
    """One LSTM layer, one direction, over a time-major sequence x (T, N, D).

    h0, c0 (N, H) or None (zeros).  Returns (output (T, N, H), h_n (N, H), c_n (N, H)).
    reference=True runs the reference tier (functions/rnn.py: a loop over rnn_steps.lstm_step_forward
    and lstm_step_backward), False the fast tier (functions/rnn_fast.py); the tests prove them equal.
    """
    checks.tensors("lstm", input=x, h0=h0, c0=c0, weight_ih=weight_ih, weight_hh=weight_hh, bias_ih=bias_ih,
                   bias_hh=bias_hh)
    same_dtype("lstm", ValueError, input=x, weight_ih=weight_ih)      # PyTorch raises ValueError here
    same_dtype("lstm", RuntimeError, input=x, h0=h0, c0=c0, weight_hh=weight_hh,     # and RuntimeError here
               bias_ih=bias_ih, bias_hh=bias_hh)
    mask = lengths_mask(lengths, x.shape[0], x.shape[1], x.device) if x.ndim == 3 else None
    function = fn.LSTMFunction if reference else fn.FastLSTMFunction   # the tier: the same numbers, read or fast
    return function.apply(x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh, mask, reverse)


def gru(x, h0, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None, reverse=False,
        reset_after=True, *, reference=False):
    """One GRU layer, one direction, over a time-major sequence x (T, N, D).

    reset_after=True is PyTorch's GRU; False is the textbook form (reset gate before the matmul).
    Returns (output (T, N, H), h_n (N, H)).
    reference=True runs the reference tier (functions/rnn.py: a loop over rnn_steps.gru_step_forward
    and gru_step_backward), False the fast tier (functions/rnn_fast.py); the tests prove them equal.
    """
    checks.tensors("gru", input=x, h0=h0, weight_ih=weight_ih, weight_hh=weight_hh, bias_ih=bias_ih, bias_hh=bias_hh)
    same_dtype("gru", ValueError, input=x, weight_ih=weight_ih)      # PyTorch raises ValueError here
    same_dtype("gru", RuntimeError, input=x, h0=h0, weight_hh=weight_hh,     # and RuntimeError here
               bias_ih=bias_ih, bias_hh=bias_hh)
    mask = lengths_mask(lengths, x.shape[0], x.shape[1], x.device) if x.ndim == 3 else None
    function = fn.GRUFunction if reference else fn.FastGRUFunction   # the tier: the same numbers, read or fast
    return function.apply(x, h0, weight_ih, weight_hh, bias_ih, bias_hh, mask, reverse, reset_after)


# ------------------------------------------------------------------ more of torch.nn.functional (issue 13)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """mean(|input - target|), composed from primitives."""
    checks.tensors("l1_loss", input=input, target=target)
    _torch_only_arguments("l1_loss", size_average=size_average, reduce=reduce)
    return _reduced("l1_loss", (input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0 is l1_loss."""
    checks.tensors("smooth_l1_loss", input=input, target=target)
    _torch_only_arguments("smooth_l1_loss", size_average=size_average, reduce=reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    d = (input - target).abs()
    if beta == 0:
        return _reduced("smooth_l1_loss", d, reduction)
    return _reduced("smooth_l1_loss", where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): smooth_l1_loss times delta."""
    checks.tensors("huber_loss", input=input, target=target)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be > 0, got {delta}")
    d = (input - target).abs()
    return _reduced("huber_loss", where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence with ``input`` as log-probabilities:  target * (log target - input), 0 where target = 0.

    reduction: 'mean' over every element (torch's default, which is not the KL of
    a batch), 'batchmean' (sum / batch size: the true KL), 'sum' or 'none'.
    """
    checks.tensors("kl_div", input=input, target=target)
    _torch_only_arguments("kl_div", size_average=size_average, reduce=reduce)
    if log_target:
        pointwise = target.exp() * (target - input)
    else:
        safe = where(target > 0, target, 1.0)                   # log(1) = 0 where the target is 0
        pointwise = target * safe.log() - target * input        # xlogy(t, t) - t * input
    if reduction == "batchmean":
        return pointwise.sum() / (input.shape[0] if input.ndim else 1)
    return _reduced("kl_div", pointwise, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log p + (1 - t) log(1 - p)) from probabilities p (logs clamped at -100, as torch).
    On logits, binary_cross_entropy_with_logits is the stable form."""
    checks.tensors("binary_cross_entropy", input=input, target=target)
    _torch_only_arguments("binary_cross_entropy", weight=weight, size_average=size_average, reduce=reduce)
    same_dtype("binary_cross_entropy", input=input, target=target)
    return fn.BinaryCrossEntropy.apply(input, target, reduction)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p over dim, eps): unit vectors along dim."""
    checks.tensors("normalize", input=input)
    return input / input.norm(p, dim=dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / max(||x1|| ||x2||, eps) along dim (broadcasting x1 and x2)."""
    checks.tensors("cosine_similarity", x1=x1, x2=x2)
    dot = (x1 * x2).sum(dim)
    return dot / (x1.norm(dim=dim) * x2.norm(dim=dim)).clamp(min=eps)


def _reduced(name, loss, reduction):
    """``loss`` reduced as torch's ``reduction`` argument says: its mean, its sum, or itself ('none')."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative sizes, crop) the last len(pad) // 2 dimensions with ``value`` (default 0).

    pad = (last_before, last_after, second_last_before, second_last_after, ...), as torch.
    """
    checks.tensors("pad", input=input)
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is implemented, got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: {tuple(pad)} needs an even length of at most 2 * {input.ndim} (two per dimension)")
    value = 0 if value is None else value
    out = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        keep = slice(max(-before, 0), out.shape[dim] - max(-after, 0))      # negative sizes crop
        out = out[(slice(None),) * dim + (keep,)]
        pieces = []
        for size in (before, after):
            shape = list(out.shape)
            shape[dim] = max(size, 0)
            pieces.append(out.new_full(tuple(shape), value))
        out = cat([pieces[0], out, pieces[1]], dim)
    return out


def __getattr__(name):
    """Names of torch.nn.functional that minigrad leaves out on purpose: say so, and what to use."""
    return absent.explain("minigrad.functional", name)
