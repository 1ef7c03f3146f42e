"""Attention layers.

Score modules for RNN encoder-decoders (one decoder state looks at the encoder states):

    DotScore         score(h_dec, h_enc) = h_dec . h_enc                   (Luong "dot")
    BilinearScore    score(h_dec, h_enc) = h_dec^T W_a h_enc                (Luong "general")
    AdditiveScore    score(h_dec, h_enc) = v^T tanh(W [h_dec; h_enc] + b)   (Bahdanau; Luong "concat")
    HardAttention    one-hot weights on the best-scoring key (not differentiable in the scores)

each called as ``context, weights = attention(query, keys, values=None, mask=None)``.

MultiheadAttention (Vaswani et al., 2017), PyTorch's interface, with separate
q_proj, k_proj, v_proj and out_proj Linear layers; ``from_torch_state_dict`` and
``to_torch_state_dict`` convert to and from PyTorch's packed ``in_proj_weight``.
"""
import math
from collections import OrderedDict

from .. import backend
from ..functional import merge_heads, scaled_dot_product_attention, split_heads
from ..masks import causal_mask, combine_masks
from ..autograd import no_grad
from ..tensor import Tensor
from ..creation import cat, empty
from . import init
from .linear import Linear
from .module import Module, Parameter, _host_array


def masked_softmax(scores, mask=None):
    """softmax over the last dimension, 0 where ``mask`` (bool, True = ignore) is set.

    Masked scores are replaced by a very negative number rather than -inf, so a
    row with every key masked gives all-zero weights and finite gradients, not NaN.
    """
    if mask is None:
        return scores.softmax(-1)
    return scores.masked_fill(mask, -1e30).softmax(-1).masked_fill(mask, 0.0)


class _ScoreAttention(Module):
    """Shared forward of the score modules: scores -> masked softmax -> weighted sum of values."""

    def score(self, query, keys):
        """query (N, Tq, Hq), keys (N, S, Hk) -> scores (N, Tq, S)."""
        raise NotImplementedError

    def forward(self, query, keys, values=None, mask=None):
        """Attend from ``query`` to ``keys``; return (context, weights).

        query:  (N, Hq) one decoder state per example, or (N, Tq, Hq) several
        keys:   (N, S, Hk) encoder states;  values: (N, S, Hv), default ``keys``
        mask:   (N, S) bool, True at source positions to ignore (padding)
        context (N, Hv) and weights (N, S)   (or (N, Tq, Hv) and (N, Tq, S))
        """
        values = keys if values is None else values
        single = query.ndim == 2
        if single:
            query = query.unsqueeze(1)
        if keys.shape[:2] != values.shape[:2]:
            raise ValueError(f"{type(self).__name__}: keys {keys.shape} and values {values.shape} "
                             "must have the same batch size and length S")
        if mask is not None:
            mask = mask.data if isinstance(mask, Tensor) else mask
            if mask.dtype.kind != "b" or tuple(mask.shape) != keys.shape[:2]:
                raise ValueError(f"{type(self).__name__}: mask must be bool of shape (N, S) = {keys.shape[:2]}, "
                                 f"got {mask.dtype} {tuple(mask.shape)}")
            mask = mask[:, None, :]                             # (N, 1, S): the same for every query
        weights = masked_softmax(self.score(query, keys), mask)  # (N, Tq, S)
        context = weights @ values                                # (N, Tq, Hv): sum_s a_s v_s
        if single:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights


class DotScore(_ScoreAttention):
    """score = h_dec . h_enc  (divided by sqrt(H) when ``scaled``).  Needs Hq == Hk."""

    def __init__(self, scaled=False):
        super().__init__()
        self.scaled = scaled

    def score(self, query, keys):
        if query.shape[-1] != keys.shape[-1]:
            raise ValueError(f"DotScore: query {query.shape} and keys {keys.shape} need the same feature size")
        scores = query @ keys.transpose(1, 2)                    # (N, Tq, S)
        return scores * (1.0 / math.sqrt(query.shape[-1])) if self.scaled else scores


class BilinearScore(_ScoreAttention):
    """score = h_dec^T W_a h_enc, W_a (Hq, Hk)  (Luong's "general").   ``weight`` is W_a."""

    def __init__(self, query_size, key_size, device=None, dtype=None):
        super().__init__()
        self.weight = Parameter(empty((query_size, key_size), dtype=dtype, device=device))
        bound = 1.0 / math.sqrt(key_size)
        init.uniform_(self.weight, -bound, bound)

    def score(self, query, keys):
        projected = keys @ self.weight.T                         # (N, S, Hq): W_a h_enc
        return query @ projected.transpose(1, 2)                 # (N, Tq, S)


class AdditiveScore(_ScoreAttention):
    """score = v^T tanh(W [h_dec; h_enc] + b)  (Bahdanau et al., 2015).

    W is ``attn`` = Linear(Hq + Hk, attn_size), v is ``v`` = Linear(attn_size, 1, bias=False).
    """

    def __init__(self, query_size, key_size, attn_size, device=None, dtype=None):
        super().__init__()
        self.attn = Linear(query_size + key_size, attn_size, device=device, dtype=dtype)
        self.v = Linear(attn_size, 1, bias=False, device=device, dtype=dtype)

    def score(self, query, keys):
        n, tq, hq = query.shape
        s, hk = keys.shape[1], keys.shape[2]
        pairs = cat([query.unsqueeze(2).expand(n, tq, s, hq),    # every (query, key) pair side by side
                     keys.unsqueeze(1).expand(n, tq, s, hk)], dim=-1)   # (N, Tq, S, Hq + Hk)
        return self.v(self.attn(pairs).tanh()).squeeze(-1)      # (N, Tq, S)


class HardAttention(Module):
    """Attend to exactly one key: the best-scoring one under ``score_module``.

    weights = one_hot(argmax scores): the choice is a step function of the
    scores, so no gradient reaches the score's parameters (only the values).
    An illustration of why attention is made soft.
    """

    def __init__(self, score_module):
        super().__init__()
        self.score_module = score_module

    def forward(self, query, keys, values=None, mask=None):
        values = keys if values is None else values
        single = query.ndim == 2
        if single:
            query = query.unsqueeze(1)
        with no_grad():
            scores = self.score_module.score(query, keys)      # (N, Tq, S)
            if mask is not None:
                mask = mask.data if isinstance(mask, Tensor) else mask
                scores = scores.masked_fill(mask[:, None, :], -1e30)
            xp = backend.array_module(scores.data)
            best = xp.argmax(scores.data, axis=-1)               # (N, Tq)
            one_hot = (xp.arange(scores.shape[-1]) == best[..., None]).astype(values.dtype)
        weights = Tensor._from_array(one_hot)
        context = weights @ values
        if single:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights


# ----------------------------------------------------------------------------- multi-head attention

def _bool_mask(name, mask):
    mask = mask.data if isinstance(mask, Tensor) else mask
    if getattr(mask, "dtype", None) is None or mask.dtype.kind != "b":
        raise TypeError(
            f"MultiheadAttention: {name} must be a boolean mask (True = may not attend), got dtype "
            f"{getattr(mask, 'dtype', type(mask).__name__)}. Additive float masks are not supported: "
            "build one with minigrad.masks.causal_mask / padding_mask"
        )
    return mask


class MultiheadAttention(Module):
    """Multi-head attention:  MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    embed_dim E is split into num_heads heads of E / num_heads features each.
    q_proj (E -> E), k_proj (kdim -> E), v_proj (vdim -> E), out_proj (E -> E).

    forward(query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
            is_causal=False, average_attn_weights=False) -> (output, weights)

        query (Tq, N, E), key (S, N, kdim), value (S, N, vdim)   ((N, T, .) if batch_first;
            (T, .) for one unbatched sequence)
        key_padding_mask (N, S) bool: True at keys that are padding
        attn_mask (Tq, S) or (N * num_heads, Tq, S) bool: True = may not attend
        is_causal: also mask the future (query t sees keys <= t)
        output (Tq, N, E);  weights (N, num_heads, Tq, S), or (N, Tq, S) averaged over heads
        when average_attn_weights (PyTorch's default is True; minigrad's is per head), or
        None when not need_weights.

    ``cache`` (a dict) serves incremental decoding: the projected keys and values
    are kept in it, so a later call with only the new query positions attends to
    every earlier position too.  For self-attention the new keys/values are appended;
    with ``static_kv`` (cross-attention to a fixed encoder output) they are computed once.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, kdim=None, vdim=None,
                 batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError(f"MultiheadAttention: embed_dim={embed_dim} is not divisible by "
                             f"num_heads={num_heads} (each head gets embed_dim / num_heads features)")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.batch_first = batch_first
        self.q_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.k_proj = Linear(self.kdim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.v_proj = Linear(self.vdim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """As PyTorch: Xavier-uniform projections (over the packed (3E, E) matrix when
        kdim = vdim = E), zero biases; out_proj keeps Linear's weight init."""
        same = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        for proj in (self.q_proj, self.k_proj, self.v_proj):
            if same:
                bound = math.sqrt(6.0 / (self.embed_dim + 3 * self.embed_dim))
                init.uniform_(proj.weight, -bound, bound)
            else:
                init.xavier_uniform_(proj.weight)
            if proj.bias is not None:
                init.zeros_(proj.bias)
        if self.out_proj.bias is not None:
            init.zeros_(self.out_proj.bias)

    def _check(self, query, key, value):
        if query.shape[-1] != self.embed_dim or key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(
                f"MultiheadAttention: expected query (..., {self.embed_dim}), key (..., {self.kdim}), "
                f"value (..., {self.vdim}); got query {query.shape}, key {key.shape}, value {value.shape}"
            )
        if key.shape[:-1] != value.shape[:-1]:
            raise ValueError(f"MultiheadAttention: key {key.shape} and value {value.shape} must have the "
                             "same length and batch size (one value per key)")
        if query.ndim != key.ndim or (query.ndim == 3 and query.shape[0] != key.shape[0]):
            raise ValueError(f"MultiheadAttention: query {query.shape} and key {key.shape} have different "
                             "batch sizes (after batch_first handling)")

    def _mask(self, key_padding_mask, attn_mask, is_causal, n, tq, s, past, device):
        """One bool mask broadcastable to (N, heads, Tq, S), or None."""
        masks = []
        if key_padding_mask is not None:
            kpm = _bool_mask("key_padding_mask", key_padding_mask)
            if tuple(kpm.shape) != (n, s):
                raise ValueError(f"MultiheadAttention: key_padding_mask must have shape (N, S) = {(n, s)}, "
                                 f"got {tuple(kpm.shape)}")
            masks.append(kpm[:, None, None, :])
        if attn_mask is not None:
            am = _bool_mask("attn_mask", attn_mask)
            if tuple(am.shape) == (n * self.num_heads, tq, s):
                am = am.reshape(n, self.num_heads, tq, s)
            elif tuple(am.shape) != (tq, s):
                raise ValueError(f"MultiheadAttention: attn_mask must have shape (Tq, S) = {(tq, s)} or "
                                 f"(N * num_heads, Tq, S) = {(n * self.num_heads, tq, s)}, got {tuple(am.shape)}")
            masks.append(am)
        if is_causal:
            masks.append(causal_mask(tq, s, device=device, offset=past).data)
        return combine_masks(*masks)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, need_weights=True,
                is_causal=False, average_attn_weights=False, cache=None, static_kv=False):
        unbatched = query.ndim == 2
        if unbatched:                       # one sequence (T, E): a batch of one
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = (key_padding_mask.data if isinstance(key_padding_mask, Tensor)
                                    else key_padding_mask)[None]
        elif not self.batch_first:          # (T, N, E) -> (N, T, E)
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        self._check(query, key, value)
        n, tq = query.shape[0], query.shape[1]
        h = self.num_heads

        q = split_heads(self.q_proj(query), h)                   # (N, h, Tq, Dh)
        past = 0
        if cache is not None and static_kv and "k" in cache:
            k, v = cache["k"], cache["v"]                        # the encoder output, projected once
        else:
            k = split_heads(self.k_proj(key), h)                 # (N, h, S, Dh)
            v = split_heads(self.v_proj(value), h)
            if cache is not None and not static_kv and "k" in cache:
                past = cache["k"].shape[2]
                k = cat([cache["k"], k], dim=2)                  # earlier positions first
                v = cat([cache["v"], v], dim=2)
        if cache is not None:
            cache["k"], cache["v"] = k, v
        s = k.shape[2]
        if key_padding_mask is not None and cache is not None and not static_kv:
            raise ValueError("MultiheadAttention: key_padding_mask with a self-attention cache is not supported")

        mask = self._mask(key_padding_mask, attn_mask, is_causal, n, tq, s, past, query.device)
        dropout_p = self.dropout if self.training else 0.0
        result = scaled_dot_product_attention(q, k, v, mask, dropout_p=dropout_p, return_weights=need_weights)
        out, weights = result if need_weights else (result, None)
        out = self.out_proj(merge_heads(out))                    # (N, Tq, E)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)                        # (N, Tq, S)
        if unbatched:
            return out.squeeze(0), (None if weights is None else weights.squeeze(0))
        if not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, " \
               f"batch_first={self.batch_first}"


# ----------------------------------------------------------------------------- PyTorch layout

def from_torch_state_dict(state_dict):
    """A PyTorch state dict (with nn.MultiheadAttention inside) in minigrad's names.

    PyTorch packs the three input projections of a MultiheadAttention into
    ``in_proj_weight`` (3E, E) = [W_q; W_k; W_v] and ``in_proj_bias`` (3E,)
    (or, when kdim/vdim differ from E, ``q_proj_weight``, ``k_proj_weight``,
    ``v_proj_weight`` and a packed ``in_proj_bias``).  minigrad keeps them as
    three Linear layers, ``q_proj``, ``k_proj``, ``v_proj``.  Every other key
    (``out_proj.weight``, ``linear1.bias``, ``norm1.weight``, ...) is the same.

        model.load_state_dict(nn.from_torch_state_dict(torch_model.state_dict()))

    Returns an OrderedDict of NumPy arrays.
    """
    xp = backend.get_module("cpu")
    out = OrderedDict()
    for name, value in state_dict.items():
        prefix, _, leaf = name.rpartition(".")
        prefix = prefix + "." if prefix else ""
        value = _host_array(value)
        if leaf in ("in_proj_weight", "in_proj_bias"):
            third = value.shape[0] // 3
            suffix = "weight" if leaf == "in_proj_weight" else "bias"
            for i, part in enumerate("qkv"):
                out[f"{prefix}{part}_proj.{suffix}"] = xp.ascontiguousarray(value[i * third:(i + 1) * third])
        elif leaf in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
            out[f"{prefix}{leaf[0]}_proj.weight"] = value
        elif leaf in ("bias_k", "bias_v"):
            raise ValueError(f"from_torch_state_dict: {name}: add_bias_kv is not supported by minigrad")
        else:
            out[name] = value
    return out


def to_torch_state_dict(state_dict):
    """minigrad names -> PyTorch's packed MultiheadAttention layout (the inverse of from_torch_state_dict).

    Returns an OrderedDict of NumPy arrays; give PyTorch tensors with
    ``{k: torch.from_numpy(v) for k, v in d.items()}``.
    """
    xp = backend.get_module("cpu")
    arrays = OrderedDict((name, _host_array(value)) for name, value in state_dict.items())
    out = OrderedDict()
    for name, value in arrays.items():
        prefix, _, leaf = name.rpartition(".")          # leaf: weight / bias
        owner, _, proj = prefix.rpartition(".")         # proj: q_proj / k_proj / v_proj
        base = owner + "." if owner else ""
        if proj not in ("q_proj", "k_proj", "v_proj") or f"{base}out_proj.weight" not in arrays:
            out[name] = value                           # not part of a MultiheadAttention
            continue
        if proj != "q_proj":
            continue                                    # written together with q_proj
        parts = [arrays[f"{base}{p}_proj.{leaf}"] for p in "qkv"]
        if leaf == "bias" or all(p.shape == parts[0].shape for p in parts):
            out[f"{base}in_proj_{leaf}"] = xp.concatenate(parts, axis=0)
        else:
            for p, array in zip("qkv", parts):
                out[f"{base}{p}_proj_weight"] = array
    return out
