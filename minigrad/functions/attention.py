"""Scaled dot-product attention as one Function, with its backward written out.

    S = Q K^T * scale              scores              (..., Tq, Tk)
    S[mask] = -inf                 True = may NOT attend (PyTorch's convention)
    P = softmax(S) over keys       attention weights   (..., Tq, Tk)
    D = P * keep / (1 - p)         dropout on the weights (D = P when p = 0)
    O = D V                        output              (..., Tq, Dv)

Backward, given dO = dL/dO (and dL/dP when the weights are returned):

    dV = D^T dO
    dP = (dO V^T) * keep / (1 - p)
    dS = P * (dP - rowsum(dP * P))            softmax backward, row by row
    dQ = dS K * scale,     dK = dS^T Q * scale

rowsum(dP * P) is a (Tq,)-vector per row; because O = D V it equals
rowsum(dO * O) (sum_j dP_ij P_ij = dO_i . sum_j D_ij V_j), which costs a pass
over (Tq, Dv) instead of one over (Tq, Tk).

The (Tq, Tk) matrices dominate time and memory for long sequences, so the
forward computes the softmax in place in the scores buffer and the backward
turns dP into dS in place: one (..., Tq, Tk) buffer each way (two with dropout).
A query whose keys are all masked gets P = 0: a zero output and zero gradients.
"""
from .. import backend
from ..autograd import Function, unbroadcast


def check_attention_inputs(q, k, v, mask):
    """Raise a clear error for inputs that do not fit together (shapes named)."""
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
        batch = backend.broadcast_shape(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"scaled_dot_product_attention: the leading (batch, head) dimensions of q {tuple(q.shape)}, "
            f"k {tuple(k.shape)} and v {tuple(v.shape)} do not broadcast"
        ) from None
    scores_shape = tuple(batch) + (q.shape[-2], k.shape[-2])
    if mask is not None:
        if getattr(mask, "dtype", None) is None or mask.dtype.kind != "b":
            raise TypeError(
                f"scaled_dot_product_attention: the mask must be boolean (True = may not attend), "
                f"got dtype {getattr(mask, 'dtype', type(mask).__name__)}; build one with "
                "minigrad.attention.causal_mask / padding_mask, or compare: ids == pad_idx"
            )
        try:
            fits = backend.broadcast_shape(mask.shape, scores_shape) == scores_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"scaled_dot_product_attention: mask of shape {tuple(mask.shape)} does not broadcast "
                f"to the scores' shape {scores_shape} (..., Tq, Tk) of q {tuple(q.shape)} and k {tuple(k.shape)}"
            )
    return scores_shape


class ScaledDotProductAttention(Function):
    """O = softmax(Q K^T * scale, masked) V, with dropout on the weights; see the module docstring.

    q (..., Tq, Dk), k (..., Tk, Dk), v (..., Tk, Dv); mask bool broadcastable to
    (..., Tq, Tk) or None.  Returns O (..., Tq, Dv), and also the weights P
    (..., Tq, Tk) (before dropout) when ``return_weights``.
    """

    @staticmethod
    def forward(ctx, q, k, v, mask, dropout_p, scale, return_weights):
        check_attention_inputs(q, k, v, mask)
        if not 0.0 <= dropout_p < 1.0:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        xp = backend.array_module(q, k, v, mask)
        q_scaled = q * scale                                    # (..., Tq, Dk), cheaper than scaling S
        weights = xp.matmul(q_scaled, xp.swapaxes(k, -1, -2))   # S: (..., Tq, Tk)
        if mask is not None:
            xp.copyto(weights, -xp.inf, where=mask)
        # softmax over the keys, in place in the scores buffer
        row_max = weights.max(axis=-1, keepdims=True)
        if mask is not None:
            row_max[row_max == -xp.inf] = 0                     # all keys masked: exp(-inf) = 0 below
        weights -= row_max
        xp.exp(weights, out=weights)
        total = weights.sum(axis=-1, keepdims=True)
        if mask is not None:
            total[total == 0] = 1                               # so those rows stay 0, not 0/0
        weights /= total                                        # P
        keep = None
        dropped = weights                                       # D
        if dropout_p > 0.0:
            keep = backend.random_bernoulli(weights.shape, 1.0 - dropout_p, backend.device_of(weights))
            dropped = weights * keep
            dropped *= 1.0 / (1.0 - dropout_p)
        out = xp.matmul(dropped, v)                             # O: (..., Tq, Dv)
        ctx.save_for_backward(q_scaled, k, v, weights, dropped, keep, out)
        ctx.scale, ctx.dropout_p, ctx.return_weights = scale, dropout_p, return_weights
        return (out, weights) if return_weights else out

    @staticmethod
    def backward(ctx, dout, dweights=None):
        q_scaled, k, v, weights, dropped, keep, out = ctx.saved_tensors
        xp = backend.array_module(dout, weights)
        needs = ctx.needs_input_grad
        dv = None
        if needs[2]:
            dv = unbroadcast(xp.matmul(xp.swapaxes(dropped, -1, -2), dout), v.shape)   # dV = D^T dO
        if not (needs[0] or needs[1]):
            return None, None, dv, None, None, None, None
        dp = xp.matmul(dout, xp.swapaxes(v, -1, -2))             # dL/dD = dO V^T   (..., Tq, Tk)
        if keep is not None:
            dp *= keep                                           # dL/dP = dL/dD * keep / (1 - p)
            dp *= 1.0 / (1.0 - ctx.dropout_p)
        inner = (dout * out).sum(axis=-1, keepdims=True)        # rowsum(dP * P) = rowsum(dO * O)
        if dweights is not None:                                 # the weights were an output too
            dp += dweights
            inner = inner + (dweights * weights).sum(axis=-1, keepdims=True)
        dp -= inner
        dp *= weights                                            # dS = P * (dP - rowsum(dP * P))
        dq = dk = None
        if needs[0]:
            dq = unbroadcast(xp.matmul(dp, k) * ctx.scale, q_scaled.shape)            # dQ = dS K scale
        if needs[1]:
            dk = unbroadcast(xp.matmul(xp.swapaxes(dp, -1, -2), q_scaled), k.shape)   # dK = dS^T Q scale
        return dq, dk, dv, None, None, None, None
