"""Attention masks and the functional form of scaled dot-product attention.

Masks are boolean and True means "may NOT attend" (PyTorch's convention):

    padding_mask(ids, pad_idx)   (N, S)    True where ids == pad_idx: keys that are padding
    causal_mask(T)               (T, T)    True above the diagonal: query t may not see keys > t
    combine_masks(...)           OR of any masks, shaped to broadcast over (N, heads, Tq, Tk)

Shape helpers for multi-head attention:

    split_heads(x, heads)        (N, T, E) -> (N, heads, T, E / heads)
    merge_heads(x)               (N, heads, T, Dh) -> (N, T, heads * Dh)
"""
import math

from . import backend
from .functions.attention import ScaledDotProductAttention
from .tensor import Tensor


def _data(value):
    return value.data if isinstance(value, Tensor) else value


def padding_mask(ids, pad_idx):
    """(N, S) integer ids -> (N, S) bool, True where the token is padding (a key to ignore)."""
    return Tensor._from_array(_data(ids) == pad_idx)


def causal_mask(size, size_k=None, device=None, offset=0):
    """(Tq, Tk) bool, True where key j lies in the future of query i: j > i + offset.

    ``offset`` shifts the queries: query i sits at position i + offset, which is
    what a decoder needs when Tq new positions follow ``offset`` cached ones.
    """
    size_k = size if size_k is None else size_k
    xp = backend.get_module(backend.normalize_device(device))
    rows = xp.arange(size)[:, None] + offset
    cols = xp.arange(size_k)[None, :]
    return Tensor._from_array(cols > rows)


def combine_masks(*masks):
    """OR of boolean masks (None ignored) after broadcasting; None when all are None.

    Give each mask the shape it broadcasts with over (N, heads, Tq, Tk): a key
    padding mask (N, Tk) as ``key_padding_to_4d(mask)`` -> (N, 1, 1, Tk), a
    causal mask (Tq, Tk) as it is.
    """
    result = None
    for mask in masks:
        if mask is None:
            continue
        mask = _data(mask)
        result = mask if result is None else result | mask
    return None if result is None else Tensor._from_array(result)


def key_padding_to_4d(mask):
    """(N, Tk) key padding mask -> (N, 1, 1, Tk), broadcasting over heads and queries."""
    mask = _data(mask)
    return Tensor._from_array(mask[:, None, None, :])


def split_heads(x, heads):
    """(N, T, E) -> (N, heads, T, E / heads): head h sees features h*Dh ... (h+1)*Dh - 1."""
    n, t, e = x.shape
    return x.reshape(n, t, heads, e // heads).permute(0, 2, 1, 3)


def merge_heads(x):
    """(N, heads, T, Dh) -> (N, T, heads * Dh), the inverse of split_heads."""
    n, h, t, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(n, t, h * d)


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
    return ScaledDotProductAttention.apply(query, key, value, _data(mask), float(dropout_p),
                                           float(scale), bool(return_weights))
