"""Attention masks: which keys a query may not attend to.

Inside minigrad a mask is one thing: a float bias B added to the attention scores,
0 where a query may attend and -inf where it may not (any other value is a bias
given or learned).  minigrad/functions/attention.py runs on it; ``attention_bias``
makes it, and is the one place a boolean mask is read, at the arguments named
after PyTorch's, which give True opposite meanings:

    F.scaled_dot_product_attention(attn_mask=)         True = MAY attend
    nn.MultiheadAttention(attn_mask=, key_padding_mask=),
    nn.Transformer* layers' *_mask, *_key_padding_mask  True = may NOT attend

The helpers build boolean masks in the layers' meaning (True = may NOT attend):

    padding_mask(ids, pad_idx)   (N, S)    True where ids == pad_idx: keys that are padding
    causal_mask(T)               (T, T)    True above the diagonal: query t may not see keys > t
    combine_masks(...)           OR of any masks, shaped to broadcast over (N, heads, Tq, Tk)
    attention_bias(mask, dtype, true_means)   a boolean or float mask -> the bias B

The attention itself is ``minigrad.functional.scaled_dot_product_attention``
(its Function: ``minigrad/functions/attention.py``); the layers are in
``minigrad/nn/multihead_attention.py`` and ``minigrad/nn/transformer.py``.
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


def attention_bias(mask, dtype, true_means, name="attention mask"):
    """A mask as the bias B attention adds to its scores: 0 = may attend, -inf = may not.

    mask: bool, True meaning what ``true_means`` says: "may attend"
          (F.scaled_dot_product_attention's attn_mask) or "may not attend"
          (nn.MultiheadAttention's and the Transformer layers' masks, the helpers above);
          or float: already a bias, cast to ``dtype``; one that requires grad (a learned
          bias) is returned as it is, so that it gets its gradient.
    ``name`` (the caller and argument) begins the error for a mask of another dtype.
    Returns a Tensor of the mask's shape.
    """
    if isinstance(mask, Tensor) and mask.requires_grad:
        return mask
    mask = array_of(mask)
    kind = getattr(getattr(mask, "dtype", None), "kind", None)
    if kind == "f":
        return Tensor._from_array(mask.astype(dtype, copy=False))
    if kind != "b":
        raise TypeError(f"{name} must be boolean (True = {true_means}) or floating (added to the "
                        f"scores), got {getattr(mask, 'dtype', type(mask).__name__)}")
    if true_means == "may attend":
        blocked = ~mask
    elif true_means == "may not attend":
        blocked = mask
    else:
        raise ValueError(f'attention_bias: true_means is "may attend" or "may not attend", got {true_means!r}')
    xp = backend.array_module(mask)
    return Tensor._from_array(xp.where(blocked, -xp.inf, 0.0).astype(dtype))
