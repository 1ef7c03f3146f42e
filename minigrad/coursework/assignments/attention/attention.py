"""Assignment: softmax, LayerNorm and scaled dot-product attention, forward and backward.

    softmax:    y_i = exp(x_i) / sum_j exp(x_j)          over the last axis
    layernorm:  xhat = (x - mean) / sqrt(var + eps),  y = gamma * xhat + beta   over the last axis
    attention:  S = q k^T / sqrt(d),  P = softmax(S) (masked),  out = P v

Shapes: N batch, T queries, S keys, d features of a query or key, dv of a value.
"""
import math

from minigrad import backend

# BEGIN LIBRARY
from minigrad.functions.softmax import softmax_backward, softmax_forward
from minigrad.functions.normalization import layer_norm_backward, layer_norm_forward
# END LIBRARY



def attention_forward(q, k, v, mask=None):
    """q (N, T, d), k (N, S, d), v (N, S, dv), mask (T, S) bool or None -> out (N, T, dv), cache.

    Where mask is True, a query may not look at that key (minigrad's and
    PyTorch's convention: True = blocked): its score becomes -inf before the
    softmax, so its weight is 0.  The causal mask is np.triu(np.ones((T, T), bool), k=1).
    """
    xp = backend.array_module(q, k, v)
    # BEGIN SOLUTION
    # HINT: k.transpose(0, 2, 1) is k^T for every batch element; reuse softmax_forward
    # HINT: a True in the mask means "may not attend": that score must become -inf
    scale = 1 / math.sqrt(q.shape[-1])
    scores = q @ k.transpose(0, 2, 1) * scale          # (N, T, S)
    if mask is not None:
        scores = xp.where(mask, -xp.inf, scores)     # True = may not attend
    p, _ = softmax_forward(scores)
    out = p @ v                                         # (N, T, dv)
    cache = (q, k, v, p, scale)
    # END SOLUTION
    return out, cache


def attention_backward(dout, cache):
    """dout (N, T, dv) -> dq (N, T, d), dk (N, S, d), dv (N, S, dv)."""
    # BEGIN SOLUTION
    # HINT: go back through out = P v, then the softmax (reuse softmax_backward), then S = q k^T * scale
    q, k, v, p, scale = cache
    dp = dout @ v.transpose(0, 2, 1)                    # (N, T, S)
    dv = p.transpose(0, 2, 1) @ dout                    # (N, S, dv)
    dscores = softmax_backward(dp, (p, -1)) * scale           # masked entries have p = 0, so 0 gradient
    dq = dscores @ k                                    # (N, T, d)
    dk = dscores.transpose(0, 2, 1) @ q                 # (N, S, d)
    # END SOLUTION
    return dq, dk, dv
