"""The Transformer layers' inference fast path: their forward without the graph.

PyTorch's TransformerEncoderLayer has a "fast path" too: in eval mode, when no gradient can
be wanted, it runs the whole layer as one native call instead of one autograd op at a time.
minigrad's (for TransformerEncoderLayer, and for TransformerDecoderLayer, which has none in
PyTorch) does the same arithmetic as the layer's ordinary forward (read that one first,
minigrad/nn/transformer.py and multihead_attention.py): the same Functions' ``forward``
on the same arrays, in the same order, so the numbers are the same to the last bit
(tests/test_transformer_fast_path.py).  What it leaves out is what only a graph needs:
a Function.apply, a Tensor and a view record per operation, and the checks that the layer's
own shapes already settle.

Why: decoding one token at a time (batch 1, one new position per step, lesson 12's
generation, lesson 10's translation) is per-call cost end to end.  A layer step of the ordinary
forward makes about 20 Functions (the decoder layer 30), each 2-3 us above its NumPy call;
greedy decoding of the CausalLM of benchmarks/bench_workloads.py went from 1.4x PyTorch's time
to the figures in benchmarks/results/20261127-issue22-session5.md, the translator's in
benchmarks/results/20261127-issue22-session6.md.

When it runs (``applies``, ``decoder_applies``), as PyTorch's conditions: the layer is in eval
mode (no dropout), on the fast tier (``reference=False``), with a built-in activation (relu or
gelu), a batched input (N, T, E) or (T, N, E) with T > 0 (the decoder's memory too, of the same
batch), every parameter of the input's dtype and device, and no gradient wanted: grad mode off,
or nothing (inputs, masks, parameters, cached keys and values) requires grad.  Anything else takes
the ordinary forward, which also raises every error a bad input deserves.
"""
import math

from .. import autograd
from .. import functional as F
from .. import functions as fn
from .graph_free import forward, no_gradient_wanted
from . import transformer          # the layer's _residual (read at call time: transformer imports this module)


def _array(tensor):
    return None if tensor is None else tensor._data


def _attention_parameters(attention):
    """A MultiheadAttention's packed projection and output projection (biases None when absent)."""
    return (attention.in_proj_weight, attention.in_proj_bias, attention.out_proj.weight, attention.out_proj.bias)


def _parameters(layer):
    """Every parameter the fast path reads (None where the layer has none, as a bias=False one)."""
    return _attention_parameters(layer.self_attn) + (
        layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias,
        layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias)


def _decoder_parameters(layer):
    """The decoder layer's: the encoder layer's, its attention to the memory and its third norm."""
    return _parameters(layer) + _attention_parameters(layer.multihead_attn) + (layer.norm3.weight, layer.norm3.bias)


def _fits(layer, x, attentions, dropouts):
    """The conditions on the layer and one input x that both layers share (module docstring)."""
    if layer.training or layer.reference or not isinstance(x, autograd.Tensor):
        return False                            # (an array where a Tensor belongs: the ordinary forward's case)
    if layer.activation is not F.relu and layer.activation is not F.gelu:
        return False
    for dropout in dropouts:                    # (a part switched back to training by hand)
        if dropout.training:
            return False
    for attention in attentions:
        if attention.in_proj_weight is None or attention.training or attention.reference:
            return False                        # separate q/k/v projections (kdim, vdim), or switched by hand
    e = attentions[0].embed_dim
    return x.ndim == 3 and x.shape[2] == e and x.shape[1 if attentions[0].batch_first else 0] > 0


def applies(layer, src, src_mask, src_key_padding_mask, cache):
    """True when ``encoder_layer`` below gives what layer.forward would, with nothing lost (module docstring)."""
    if not _fits(layer, src, (layer.self_attn,), (layer.dropout, layer.dropout1, layer.dropout2)):
        return False
    if src_key_padding_mask is not None and cache is not None:
        return False                            # the ordinary forward says why it is refused
    return no_gradient_wanted(src._data, _parameters(layer), (src, src_mask, src_key_padding_mask), (cache,))


def decoder_applies(layer, tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                    cache):
    """True when ``decoder_layer`` below gives what TransformerDecoderLayer.forward would (module docstring)."""
    if not _fits(layer, tgt, (layer.self_attn, layer.multihead_attn),
                 (layer.dropout, layer.dropout1, layer.dropout2, layer.dropout3)):
        return False
    batch = 0 if layer.self_attn.batch_first else 1
    if not isinstance(memory, autograd.Tensor):
        return False                            # an array: the ordinary forward's case
    if memory.ndim != 3 or memory.shape[2] != tgt.shape[2] or memory.shape[batch] != tgt.shape[batch]:
        return False                            # the ordinary forward names the mismatch
    if memory.shape[1 - batch] == 0 or type(memory._data) is not type(tgt._data) or memory.dtype != tgt.dtype:
        return False
    if tgt_key_padding_mask is not None and cache is not None:
        return False                            # the ordinary forward says why it is refused
    caches = () if cache is None else (cache.get("self"), cache.get("cross"))
    return no_gradient_wanted(tgt._data, _decoder_parameters(layer),
                               (tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask),
                               caches)


def encoder_layer(layer, src, src_mask, src_key_padding_mask, is_causal, cache):
    """TransformerEncoderLayer.forward, when ``applies``: src (N, T, E) or (T, N, E) -> same shape, no graph.

    The layer's own ``_residual`` places the norms (pre-LN or post-LN), here on arrays."""
    def self_attention(x):
        return _attention(layer.self_attn, x, None, src_mask, src_key_padding_mask, is_causal, cache, src)

    x = transformer._residual(src._data, lambda x: _layer_norm(layer.norm1, x), layer.norm_first, self_attention)
    x = transformer._residual(x, lambda x: _layer_norm(layer.norm2, x), layer.norm_first,
                              lambda x: _feed_forward(layer, x))
    return autograd.Tensor._from_array(x)


def decoder_layer(layer, tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                  tgt_is_causal, memory_is_causal, cache):
    """TransformerDecoderLayer.forward, when ``decoder_applies``: tgt (N, T, E) or (T, N, E) -> same shape,
    no graph.  Self-attention, attention to ``memory``, feed-forward, each placed by ``_residual``."""
    self_cache, cross_cache = transformer._decoder_caches(cache)

    def self_attention(x):
        return _attention(layer.self_attn, x, None, tgt_mask, tgt_key_padding_mask, tgt_is_causal, self_cache, tgt)

    def memory_attention(x):
        return _attention(layer.multihead_attn, x, memory._data, memory_mask, memory_key_padding_mask,
                          memory_is_causal, cross_cache, tgt)

    x = transformer._residual(tgt._data, lambda x: _layer_norm(layer.norm1, x), layer.norm_first, self_attention)
    x = transformer._residual(x, lambda x: _layer_norm(layer.norm2, x), layer.norm_first, memory_attention)
    x = transformer._residual(x, lambda x: _layer_norm(layer.norm3, x), layer.norm_first,
                              lambda x: _feed_forward(layer, x))
    return autograd.Tensor._from_array(x)


def _layer_norm(norm, x):
    function = F.layer_norm_function(norm.reference)                     # the norm's own tier
    return forward(function, x, _array(norm.weight), _array(norm.bias), norm.normalized_shape, norm.eps)


def _linear(x, weight, bias):
    """fn.Linear on arrays (weight, bias: arrays, bias None when the layer has none)."""
    return forward(fn.Linear, x, weight, bias)


def _feed_forward(layer, x):
    """linear2(activation(linear1(x))) (dropout is off in eval mode)."""
    activation = fn.ReLU if layer.activation is F.relu else fn.GELU
    hidden = _linear(x, layer.linear1.weight._data, _array(layer.linear1.bias))
    return _linear(forward(activation, hidden), layer.linear2.weight._data, _array(layer.linear2.bias))


def _attention(attention, x, memory, attn_mask, key_padding_mask, is_causal, cache, like):
    """MultiheadAttention.forward(x, kv, kv, ...)[0] as that method computes it, on arrays: self-attention
    (memory None: kv = x, one packed projection, the cache appended to) or attention to ``memory``
    (static keys and values: projected once, then read from the cache).  ``like``: the layer's input
    Tensor, whose device and dtype the masks' bias takes."""
    if not attention.batch_first:
        x = x.swapaxes(0, 1)                                     # (T, N, E) -> (N, T, E)
        memory = None if memory is None else memory.swapaxes(0, 1)
    n, tq = x.shape[0], x.shape[1]
    h, dh = attention.num_heads, attention.head_dim
    past = 0
    if memory is None:
        qkv = _linear(x, attention.in_proj_weight._data, _array(attention.in_proj_bias))    # (N, T, 3E)
        q, k, v = (_split_heads(qkv[..., attention._rows(i)], h, dh) for i in range(3))     # (N, h, T, Dh)
        if cache is not None and "k" in cache:                   # decoding: earlier positions first
            past = cache["k"].shape[2]
            k = forward(fn.Cat, 2, cache["k"]._data, k)
            v = forward(fn.Cat, 2, cache["v"]._data, v)
        if cache is not None:
            cache["k"], cache["v"] = autograd.Tensor._from_array(k), autograd.Tensor._from_array(v)
    else:
        weight, bias = attention.in_proj_weight._data, _array(attention.in_proj_bias)
        q = _split_heads(_projection(attention, x, weight, bias, 0), h, dh)     # (N, h, Tq, Dh)
        if cache is not None and "k" in cache:                   # the memory, projected at the first step
            k, v = cache["k"]._data, cache["v"]._data
        else:
            k = _split_heads(_projection(attention, memory, weight, bias, 1), h, dh)    # (N, h, S, Dh)
            v = _split_heads(_projection(attention, memory, weight, bias, 2), h, dh)
            if cache is not None:
                cache["k"], cache["v"] = autograd.Tensor._from_array(k), autograd.Tensor._from_array(v)
    bias = attention._attention_bias(key_padding_mask, attn_mask, is_causal, n, tq, k.shape[2], past, False,
                                     like.device, like.dtype)
    scale = 1.0 / math.sqrt(dh)                                 # as F.scaled_dot_product_attention
    sdpa = F.attention_function(tq, k.shape[2])                  # F's choice of tier
    out = forward(sdpa, q, k, v, _array(bias), 0.0, scale, False)                           # (N, h, T, Dh)
    out = _linear(_merge_heads(out), attention.out_proj.weight._data, _array(attention.out_proj.bias))  # (N, T, E)
    return out if attention.batch_first else out.swapaxes(0, 1)


def _projection(attention, x, weight, bias, which):
    """MultiheadAttention's q_proj (which 0), k_proj (1) or v_proj (2): its rows of the packed weight and bias."""
    rows = attention._rows(which)
    return _linear(x, weight[rows], None if bias is None else bias[rows])


def _split_heads(x, h, dh):
    """(N, T, E) -> (N, h, T, Dh), F.split_heads on an array (a view: no Function to save here)."""
    n, t, _ = x.shape
    return x.reshape(n, t, h, dh).transpose(0, 2, 1, 3)


def _merge_heads(x):
    """(N, h, T, Dh) -> (N, T, h Dh), F.merge_heads on an array."""
    n, h, t, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(n, t, h * dh)
