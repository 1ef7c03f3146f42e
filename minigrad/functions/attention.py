"""Scaled dot-product attention as one Function, with its backward written out.

This is the REFERENCE tier: every matrix below is computed whole and the
weights P are stored for the backward.  (P is computed in S's array and dS in
dP's: a fresh (..., Tq, Tk) matrix costs more to allocate than to fill.)

    S = Q K^T * scale + B          scores              (..., Tq, Tk)
    P = softmax(S) over keys       attention weights   (..., Tq, Tk)
    D = P * keep / (1 - p)         dropout on the weights (D = P when p = 0)
    O = D V                        output              (..., Tq, Dv)

Backward, given dO = dL/dO (and dL/dP when the weights are returned):

    dV = D^T dO
    dP = (dO V^T) * keep / (1 - p)
    dS = P * (dP - rowsum(dP * P))            softmax backward, row by row
    dQ = dS K * scale,     dK = dS^T Q * scale,     dB = dS

The mask is the bias B, broadcastable to (..., Tq, Tk): minigrad's one mask
convention.  A blocked key has B = -inf (so P = 0 there), a free one B = 0;
any other value is a bias learned or given (relative positions, ALiBi), and
gets its gradient dB.  A float has no polarity to get wrong, and masks combine
by adding them.  The boolean masks of PyTorch's arguments are turned into B
where they enter (minigrad/masks.py, ``attention_bias``).

A query whose keys are all masked gets P = 0: a zero output and zero gradients;
with no keys at all (Tk = 0) the output is zeros.  Leading (batch, head)
dimensions broadcast; the gradient of an input that was broadcast is summed
over its copies.

The equations are written once, in ``attention_forward`` / ``attention_backward`` (the
pair form ``out, cache = forward(...)``, ``grads = backward(dout, cache)``: the attention
practice set's answer); the Function ``ScaledDotProductAttention`` calls them.

The fast tier, ``attention_fast.py``, works in blocks, holds no whole (..., Tq, Tk)
matrix but P (and beyond a size not even P: it recomputes it in the backward); tests
prove the two equal.
"""
import math

from .. import backend
from ..autograd import Function, unbroadcast

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the attention
# assignment asks students to write (attention_forward, attention_backward): `minigrad assignment make`
# builds its file from this one.


def check_attention_inputs(q, k, v, bias, dropout_p):
    """Raise a clear error for inputs that do not fit together (shapes named); return the scores' shape."""
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(
            f"scaled_dot_product_attention: q, k and v need shape (..., T, D), got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"scaled_dot_product_attention: queries {tuple(q.shape)} and keys {tuple(k.shape)} "
            f"must have the same last dimension d_k, got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"scaled_dot_product_attention: keys {tuple(k.shape)} and values {tuple(v.shape)} "
            f"must have the same length Tk, got {k.shape[-2]} and {v.shape[-2]}"
        )
    try:
        batch = q.shape[:-2]                 # the usual case, one batch shape: no broadcasting to work out
        if not batch == k.shape[:-2] == v.shape[:-2]:
            batch = backend.broadcast_shape(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"scaled_dot_product_attention: the leading (batch, head) dimensions of q {tuple(q.shape)}, "
            f"k {tuple(k.shape)} and v {tuple(v.shape)} do not broadcast"
        ) from None
    scores_shape = tuple(batch) + (q.shape[-2], k.shape[-2])
    if bias is not None:
        if bias.dtype != q.dtype:
            raise TypeError(
                f"scaled_dot_product_attention: the mask, a bias added to the scores, must have the "
                f"queries' dtype {q.dtype}, got {bias.dtype}; build it with minigrad.masks.attention_bias"
            )
        try:
            fits = backend.broadcast_shape(bias.shape, scores_shape) == scores_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"scaled_dot_product_attention: mask of shape {tuple(bias.shape)} does not broadcast "
                f"to the scores' shape {scores_shape} (..., Tq, Tk) of q {tuple(q.shape)} and k {tuple(k.shape)}"
            )
    return scores_shape


def softmax_over_keys(xp, scores):
    """P = softmax(S) along the last axis, computed in the array ``scores`` (overwritten: each
    new (..., Tq, Tk) matrix costs more to allocate than to fill).  A row whose scores are
    all -inf gives zeros; no keys give an empty P."""
    if scores.shape[-1] == 0:
        return scores
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = xp.where(row_max == -xp.inf, 0, row_max)          # all keys masked: exp(-inf) = 0 below
    scores -= row_max                                           # in place, as the docstring says
    e = xp.exp(scores, out=scores)
    total = e.sum(axis=-1, keepdims=True)
    e *= 1 / xp.where(total == 0, 1, total)
    return e


def attention_forward(q, k, v, bias=None, scale=None, dropout_p=0.0):
    """O = softmax(Q K^T * scale + B) V:

        S = Q K^T * scale + B,   P = softmax(S) over the keys,   D = P * keep / (1 - p),   O = D V

    q (..., Tq, Dk), k (..., Tk, Dk), v (..., Tk, Dv); bias B broadcastable to (..., Tq, Tk)
    (0 = may attend, -inf = may not) or None; scale (default 1 / sqrt(Dk)); dropout_p on the
    weights.  Returns O (..., Tq, Dv) and the cache (the weights P are its fourth entry).
    """
    xp = backend.array_module(q, k, v, bias)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    # BEGIN SOLUTION
    # HINT: xp.swapaxes(k, -1, -2) is K^T for every leading (batch, head) index; add the bias B to the scores
    # HINT: softmax_over_keys(xp, scores) is the softmax over the keys (a row of -inf gives zeros)
    scores = (q * scale) @ xp.swapaxes(k, -1, -2)                # Q K^T scale  (..., Tq, Tk)
    if bias is not None:
        scores = scores + bias                                  # S = Q K^T scale + B
    weights = softmax_over_keys(xp, scores)                     # P
    # END SOLUTION
    keep = None
    dropped = weights
    if dropout_p > 0.0:
        keep = backend.random_bernoulli(weights.shape, 1.0 - dropout_p, backend.device_of(q))
        dropped = weights * keep / (1.0 - dropout_p)            # D
    # BEGIN SOLUTION
    # HINT: the output mixes the values with the (dropped-out) weights D
    out = dropped @ v                                           # O = D V
    # END SOLUTION
    cache = (q, k, v, weights, dropped, keep, scale, dropout_p, None if bias is None else bias.shape)
    return out, cache


def attention_backward(dout, cache, dweights=None):
    """dO (..., Tq, Dv) -> dQ, dK, dV and dB (None when there was no bias):

        dV = D^T dO,   dP = (dO V^T) * keep / (1 - p),   dS = P * (dP - rowsum(dP * P))
        dQ = dS K * scale,   dK = dS^T Q * scale,   dB = dS

    ``dweights``: dL/dP when the weights were an output too (added to dP)."""
    q, k, v, weights, dropped, keep, scale, dropout_p, bias_shape = cache
    xp = backend.array_module(dout, q)
    # BEGIN SOLUTION
    # HINT: go back through O = D V first: a matmul, so dV = D^T dO and dL/dD = dO V^T
    dv = xp.swapaxes(dropped, -1, -2) @ dout                    # dV = D^T dO
    dp = dout @ xp.swapaxes(v, -1, -2)                          # dL/dD = dO V^T
    # END SOLUTION
    if keep is not None:
        dp = dp * keep / (1.0 - dropout_p)                      # dL/dP = dL/dD keep / (1 - p)
    if dweights is not None:                                    # the weights were an output too
        dp = dp + dweights
    # BEGIN SOLUTION
    # HINT: then the softmax, row by row (as softmax_backward), then S = Q K^T scale + B
    # HINT: B was added to the scores: dB = dS, summed over what B was broadcast across (unbroadcast)
    # dS = P * (dP - rowsum(dP * P)), the softmax backward, in dP's array (a fresh one here):
    # a new (..., Tq, Tk) matrix costs more to allocate than to fill
    ds = dp
    ds -= xp.einsum("...qk,...qk->...q", dp, weights)[..., None]     # rowsum(dP * P), no (Tq, Tk) temporary
    ds *= weights
    dq = (ds @ k) * scale                                       # dQ = dS K scale
    dk = (xp.swapaxes(ds, -1, -2) @ q) * scale                  # dK = dS^T Q scale
    dbias = None if bias_shape is None else unbroadcast(ds, bias_shape)   # dB = dS
    # END SOLUTION
    # q, k and v may have been broadcast over the leading dimensions: sum over the copies
    return unbroadcast(dq, q.shape), unbroadcast(dk, k.shape), unbroadcast(dv, v.shape), dbias


class ScaledDotProductAttention(Function):
    """O = softmax(Q K^T * scale + B) V, with dropout on the weights: the equations are
    attention_forward / attention_backward above.

    forward(q, k, v, bias, dropout_p, scale, return_weights)
    q (..., Tq, Dk), k (..., Tk, Dk), v (..., Tk, Dv); bias B of q's dtype broadcastable
    to (..., Tq, Tk) (-inf = may not attend) or None.  Returns O (..., Tq, Dv), and
    also the weights P (..., Tq, Tk) (before dropout) when ``return_weights``.
    """

    @staticmethod
    def forward(ctx, q, k, v, bias, dropout_p, scale, return_weights):
        check_attention_inputs(q, k, v, bias, dropout_p)
        out, cache = attention_forward(q, k, v, bias, scale, dropout_p)
        ctx.save_for_backward(*cache)       # q, k, v, P, D, keep, scale, p, B's shape
        weights = cache[3]
        return (out, weights) if return_weights else out

    @staticmethod
    def backward(ctx, dout, dweights=None):
        dq, dk, dv, dbias = attention_backward(dout, ctx.saved_tensors, dweights)
        return dq, dk, dv, dbias, None, None, None
