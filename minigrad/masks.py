"""Attention masks: which keys a query may not attend to.

Masks are boolean and True means "may NOT attend" (minigrad's convention):

    padding_mask(ids, pad_idx)   (N, S)    True where ids == pad_idx: keys that are padding
    causal_mask(T)               (T, T)    True above the diagonal: query t may not see keys > t
    combine_masks(...)           OR of any masks, shaped to broadcast over (N, heads, Tq, Tk)

The attention itself is ``minigrad.functional.scaled_dot_product_attention``
(its Function: ``minigrad/functions/attention.py``); the layers are in
``minigrad/nn/attention.py``.
"""
from . import backend
from .torch_compat.arguments import array_of
from .tensor import Tensor


def padding_mask(ids, pad_idx):
    """(N, S) integer ids -> (N, S) bool, True where the token is padding (a key to ignore)."""
    return Tensor._from_array(array_of(ids) == pad_idx)


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
        mask = array_of(mask)
        result = mask if result is None else result | mask
    return None if result is None else Tensor._from_array(result)


def key_padding_to_4d(mask):
    """(N, Tk) key padding mask -> (N, 1, 1, Tk), broadcasting over heads and queries."""
    mask = array_of(mask)
    return Tensor._from_array(mask[:, None, None, :])

