"""The encoder layer's inference fast path: TransformerEncoderLayer.forward without the graph.

PyTorch's TransformerEncoderLayer has a "fast path" too: in eval mode, when no gradient can
be wanted, it runs the whole layer as one native call instead of one autograd op at a time.
minigrad's does the same arithmetic as the layer's ordinary forward (read that one first,
minigrad/nn/transformer.py and multihead_attention.py): the same Functions' ``forward``
on the same arrays, in the same order, so the numbers are the same to the last bit
(tests/test_transformer_fast_path.py).  What it leaves out is what only a graph needs:
a Function.apply, a Tensor and a view record per operation, and the checks that the layer's
own shapes already settle.

Why: decoding one token at a time (batch 1, one new position per step, lesson 12's
generation) is per-call cost end to end.  A layer step of the ordinary forward makes about
20 Functions, each 2-3 us above its NumPy call; greedy decoding of the CausalLM of
benchmarks/bench_workloads.py went from 1.4x PyTorch's time to the figures in
benchmarks/results/20261127-issue22-session5.md.

When it runs (``applies``), as PyTorch's conditions: the layer is in eval mode (no dropout),
on the fast tier (``reference=False``), with a built-in activation (relu or gelu), a batched
input (N, T, E) or (T, N, E) with T > 0, every parameter of the input's dtype and device, and
no gradient wanted: grad mode off, or nothing (input, masks, parameters) requires grad.
Anything else takes the ordinary forward, which also raises every error a bad input deserves.
"""
import math

from .. import autograd
from .. import functional as F
from .. import functions as fn
from ..autograd import Context
from . import transformer          # the layer's _residual (read at call time: transformer imports this module)


def _forward(function, *args):
    """``function.forward`` on arrays, outside the graph: what Function.apply runs, minus the node."""
    return function.forward(Context(function, None, (False,) * len(args)), *args)


def _array(tensor):
    return None if tensor is None else tensor._data


def _parameters(layer):
    """Every parameter the fast path reads (None where the layer has none, as a bias=False one)."""
    attention = layer.self_attn
    return (attention.in_proj_weight, attention.in_proj_bias, attention.out_proj.weight, attention.out_proj.bias,
            layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias,
            layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias)


def applies(layer, src, src_mask, src_key_padding_mask, cache):
    """True when ``encoder_layer`` below gives what layer.forward would, with nothing lost (module docstring)."""
    attention = layer.self_attn
    if layer.training or layer.reference or attention.in_proj_weight is None:
        return False
    if layer.activation is not F.relu and layer.activation is not F.gelu:
        return False
    if src.ndim != 3 or src.shape[2] != attention.embed_dim or src.shape[1 if attention.batch_first else 0] == 0:
        return False
    if src_key_padding_mask is not None and cache is not None:
        return False                            # the ordinary forward says why it is refused
    grad_wanted = autograd.is_grad_enabled()
    masks = (src_mask, src_key_padding_mask)
    if grad_wanted and any(getattr(mask, "requires_grad", False) for mask in masks):
        return False
    if grad_wanted and src.requires_grad:
        return False
    data = src._data
    for parameter in _parameters(layer):
        if parameter is None:
            continue
        if type(parameter._data) is not type(data) or parameter._data.dtype != data.dtype:
            return False                        # the ordinary forward names the mismatch
        if grad_wanted and parameter.requires_grad:
            return False
    return True


def encoder_layer(layer, src, src_mask, src_key_padding_mask, is_causal, cache):
    """TransformerEncoderLayer.forward, when ``applies``: src (N, T, E) or (T, N, E) -> same shape, no graph.

    The layer's own ``_residual`` places the norms (pre-LN or post-LN), here on arrays."""
    def self_attention(x):
        return _self_attention(layer, x, src, src_mask, src_key_padding_mask, is_causal, cache)

    x = transformer._residual(src._data, lambda x: _layer_norm(layer.norm1, x), layer.norm_first, self_attention)
    x = transformer._residual(x, lambda x: _layer_norm(layer.norm2, x), layer.norm_first,
                              lambda x: _feed_forward(layer, x))
    return autograd.Tensor._from_array(x)


def _layer_norm(norm, x):
    function = F.layer_norm_function(norm.reference)                     # the norm's own tier
    return _forward(function, x, _array(norm.weight), _array(norm.bias), norm.normalized_shape, norm.eps)


def _linear(x, weight, bias):
    return _forward(fn.Linear, x, weight._data, _array(bias))


def _feed_forward(layer, x):
    """linear2(activation(linear1(x))) (dropout is off in eval mode)."""
    activation = fn.ReLU if layer.activation is F.relu else fn.GELU
    return _linear(_forward(activation, _linear(x, layer.linear1.weight, layer.linear1.bias)),
                   layer.linear2.weight, layer.linear2.bias)


def _self_attention(layer, x, src, attn_mask, key_padding_mask, is_causal, cache):
    """MultiheadAttention.forward(x, x, x, ...)[0] for one layer's self-attention, as that method
    computes it: packed projection, heads, the cache, one bias for the masks, attention, out_proj."""
    attention = layer.self_attn
    if not attention.batch_first:
        x = x.swapaxes(0, 1)                                     # (T, N, E) -> (N, T, E)
    n, tq, e = x.shape
    h, dh = attention.num_heads, attention.head_dim
    qkv = _linear(x, attention.in_proj_weight, attention.in_proj_bias)    # (N, T, 3E)
    q, k, v = (_split_heads(qkv[..., i * e:(i + 1) * e], h, dh) for i in range(3))   # (N, h, T, Dh)
    past = 0
    if cache is not None and "k" in cache:                       # decoding: earlier positions first
        past = cache["k"].shape[2]
        k = _forward(fn.Cat, 2, cache["k"]._data, k)
        v = _forward(fn.Cat, 2, cache["v"]._data, v)
    if cache is not None:
        cache["k"], cache["v"] = autograd.Tensor._from_array(k), autograd.Tensor._from_array(v)
    bias = attention._attention_bias(key_padding_mask, attn_mask, is_causal, n, tq, k.shape[2], past, False,
                                     src.device, src.dtype)
    scale = 1.0 / math.sqrt(dh)                                 # as F.scaled_dot_product_attention
    sdpa = F.attention_function(tq, k.shape[2])                  # F's choice of tier
    out = _forward(sdpa, q, k, v, _array(bias), 0.0, scale, False)                           # (N, h, T, Dh)
    out = _linear(_merge_heads(out), attention.out_proj.weight, attention.out_proj.bias)         # (N, T, E)
    return out if attention.batch_first else out.swapaxes(0, 1)


def _split_heads(x, h, dh):
    """(N, T, E) -> (N, h, T, Dh), F.split_heads on an array (a view: no Function to save here)."""
    n, t, _ = x.shape
    return x.reshape(n, t, h, dh).transpose(0, 2, 1, 3)


def _merge_heads(x):
    """(N, h, T, Dh) -> (N, T, h Dh), F.merge_heads on an array."""
    n, h, t, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(n, t, h * dh)
