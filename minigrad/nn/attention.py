"""Attention layers.

Score modules for RNN encoder-decoders (one decoder state looks at the encoder states):

    DotScore         score(h_dec, h_enc) = h_dec . h_enc                   (Luong "dot")
    BilinearScore    score(h_dec, h_enc) = h_dec^T W_a h_enc                (Luong "general")
    AdditiveScore    score(h_dec, h_enc) = v^T tanh(W [h_dec; h_enc] + b)   (Bahdanau; Luong "concat")
    HardAttention    one-hot weights on the best-scoring key (not differentiable in the scores)

each called as ``context, weights = attention(query, keys, values=None, mask=None)``.

MultiheadAttention (Vaswani et al., 2017), with PyTorch's parameters and masks, is in
minigrad/nn/multihead_attention.py.
"""
import math

from .. import backend, checks
from ..autograd import no_grad
from ..tensor import Tensor
from ..creation import cat, empty
from . import init
from .linear import Linear
from .module import Module, Parameter


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
        checks.tensors(type(self).__name__, query=query, keys=keys, values=values)
        values = keys if values is None else values
        single = query.ndim == 2
        if single:
            query = query.unsqueeze(1)
        if keys.shape[:2] != values.shape[:2]:
            raise ValueError(f"{type(self).__name__}: keys {keys.shape} and values {values.shape} "
                             "must have the same batch size and length S")
        if mask is not None:
            mask = mask._data if isinstance(mask, Tensor) else mask
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
        checks.tensors("HardAttention", query=query, keys=keys, values=values)
        values = keys if values is None else values
        single = query.ndim == 2
        if single:
            query = query.unsqueeze(1)
        with no_grad():
            scores = self.score_module.score(query, keys)      # (N, Tq, S)
            if mask is not None:
                mask = mask._data if isinstance(mask, Tensor) else mask
                scores = scores.masked_fill(mask[:, None, :], -1e30)
            xp = backend.array_module(scores._data)
            best = xp.argmax(scores._data, axis=-1)               # (N, Tq)
            one_hot = (xp.arange(scores.shape[-1]) == best[..., None]).astype(values.dtype)
        weights = Tensor._from_array(one_hot)
        context = weights @ values
        if single:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights


# MultiheadAttention has its own file; imported here for ``from minigrad.nn.attention import ...``
from .multihead_attention import MultiheadAttention, from_torch_state_dict, to_torch_state_dict  # noqa: E402,F401
