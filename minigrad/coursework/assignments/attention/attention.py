"""Assignment: softmax, LayerNorm and scaled dot-product attention, forward and backward.

    softmax:    y_i = exp(x_i) / sum_j exp(x_j)          over the last axis
    layernorm:  xhat = (x - mean) / sqrt(var + eps),  y = gamma * xhat + beta   over the last axis
    attention:  S = q k^T / sqrt(d),  P = softmax(S) (masked),  out = P v

Shapes: N batch, T queries, S keys, d features of a query or key, dv of a value.
"""
import math

from minigrad import backend


def softmax_forward(x):
    """x (..., C) -> y (..., C), cache.  Subtract the row's max first: exp must not overflow."""
    xp = backend.array_module(x)
    # BEGIN SOLUTION
    e = xp.exp(x - x.max(axis=-1, keepdims=True))
    y = e / e.sum(axis=-1, keepdims=True)
    cache = y
    # END SOLUTION
    return y, cache


def softmax_backward(dy, cache):
    """dy (..., C) -> dx (..., C)."""
    # BEGIN SOLUTION
    # HINT: every y_i depends on every x_j of its row; the backward needs only y, and never the whole Jacobian
    y = cache
    dx = y * (dy - (dy * y).sum(axis=-1, keepdims=True))
    # END SOLUTION
    return dx


def layernorm_forward(x, gamma, beta, eps=1e-5):
    """x (N, D), gamma (D,), beta (D,) -> y (N, D), cache.  Mean and variance (biased) over D."""
    xp = backend.array_module(x, gamma, beta)
    # BEGIN SOLUTION
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    inv_std = 1 / xp.sqrt(var + eps)
    xhat = (x - mean) * inv_std
    y = gamma * xhat + beta
    cache = (xhat, inv_std, gamma)
    # END SOLUTION
    return y, cache


def layernorm_backward(dy, cache):
    """dy (N, D) -> dx (N, D), dgamma (D,), dbeta (D,)."""
    # BEGIN SOLUTION
    # HINT: the mean and the variance depend on every x of the row: dx has three terms
    xhat, inv_std, gamma = cache
    dgamma = (dy * xhat).sum(axis=0)
    dbeta = dy.sum(axis=0)
    dxhat = dy * gamma
    dx = inv_std * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                    - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    # END SOLUTION
    return dx, dgamma, dbeta


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
    dscores = softmax_backward(dp, p) * scale           # masked entries have p = 0, so 0 gradient
    dq = dscores @ k                                    # (N, T, d)
    dk = dscores.transpose(0, 2, 1) @ q                 # (N, S, d)
    # END SOLUTION
    return dq, dk, dv
