"""Scaled dot-product attention, the FAST tier: read attention.py first.

The same Function interface and the same numbers as the reference
``attention.py`` (tests/test_tiers.py proves it for masks, dropout, returned
weights, broadcast and unbatched inputs); the layers run this one.  The
equations are the reference's:

    S = Q K^T * scale + B,  P = softmax(S),  D = P * keep / (1 - p),  O = D V
    dV = D^T dO,  dP = (dO V^T) * keep / (1 - p),  dS = P * (dP - rowsum(dP * P)),
    dQ = dS K * scale,  dK = dS^T Q * scale,  dB = dS

What this tier changes, block by block (the reference's lines in brackets):

  1. Blocks of scores.  The (..., Tq, Tk) matrices S, P, dP dominate time and
     memory for long sequences: at batch 8, 8 heads and T = 1024 each is
     256 MB, and a fresh buffer of that size costs more to allocate than to
     fill.  So the work is done in blocks of about BLOCK_ELEMENTS scores (a few
     examples, or a few query rows of one example: query rows are independent),
     in buffers allocated once per call and reused (a few MB: mostly in the
     CPU cache); the softmax runs in place in the block (in P itself when
     block 2 keeps it).  [``scores = ...``,
     ``softmax_over_keys``, and each line of the backward, on whole matrices.]
  2. P is stored only while it is small.  Up to STORED_SCORES scores (2^26:
     256 MB of float32, batch 8, 8 heads, T = 1024) the forward writes its P
     blocks straight into one whole P array and the backward reads them back.
     Beyond that the forward keeps only each row's log-sum-exp,
     lse = log sum_j exp(S_ij), and the backward recomputes each block's
     P = exp(S - lse) from Q and K (one more matmul, as FlashAttention does),
     so memory stays a few blocks however long the sequence.  (Recomputing at
     every size: the attention alone +9-26% at batch 8, T = 64 ... 1024.)
     [``ctx.save_for_backward(q, k, v, weights, ...)``.]
  3. rowsum(dP * P) = rowsum(dO * O) (sum_j dP_ij P_ij = dO_i . sum_j D_ij V_j,
     as O = D V): a pass over (Tq, Dv) instead of one over (Tq, Tk).
     [``(dp * weights).sum(axis=-1)``; with returned weights their term is
     added per block.]  (Per block instead: +27% at T = 128, +18% at T = 1024.)
  4. Q * scale and K^T made contiguous once, shared by the forward and (beyond
     block 2's size) the backward's recomputation (K^T and V^T as strided views
     instead: +5% at batch 32, T = 128; -5% at batch 8, T = 1024, measured
     before block 2 kept P: kept for the T = 128 layers).
  5. A bias B that needs its gradient (a learned one) gets dB = dS block by
     block, in a (..., Tq, Tk) array summed over B's broadcast copies at the
     end: the one case that holds a whole matrix.  [``unbroadcast(ds, ...)``.]

Measured as a whole against the reference (same process, paired medians,
one BLAS thread): the reference was 1.3-1.6x slower at batch 32, 8 heads,
T = 128 and 2.7-3.2x at batch 8, T = 1024, where it holds several 256 MB
matrices.  Since the reference computes its softmax and dS in place and
rowsum(dP * P) by einsum (issue 19: no fresh (..., Tq, Tk) matrix but S and dP),
it is 1.00x at batch 8, T = 1024 (the Function alone on split_heads' strided
views, fwd+bwd; 2.10x before, same process, load ~3.5 on 2 cores), and 1.0-1.4x
in MultiheadAttention (best of 7 / paired median); 1.0x at batch 32 and 64,
T = 128.  Blocks 1 and 2 were not measured one by one.

A query whose keys are all masked gets P = 0: a zero output and zero gradients.
No keys at all (Tk = 0) leaves nothing to split into blocks: F.scaled_dot_product_attention
sends that case to the reference.
"""
from .. import backend
from ..autograd import Function, unbroadcast
from .attention import check_attention_inputs


BLOCK_ELEMENTS = 2 ** 20   # scores per block: 4 MB of float32 (2^21: MHA batch 8 T=256, batch 32 T=128 3-5% slower)
STORED_SCORES = 2 ** 26    # the largest P the forward keeps for the backward (block 2)


def _score_blocks(rows, queries, per_query):
    """(row slice, query slice) pairs covering rows x queries, about BLOCK_ELEMENTS scores each.

    rows: the first batch dimension; per_query: scores per query row in one row
    of the batch (heads * Tk).  Whole rows when they fit, else one row at a time
    split along the queries.
    """
    if queries * per_query <= BLOCK_ELEMENTS:
        step = max(1, BLOCK_ELEMENTS // (queries * per_query))
        return [(slice(r, min(r + step, rows)), slice(0, queries)) for r in range(0, rows, step)]
    step = max(1, BLOCK_ELEMENTS // per_query)
    return [(slice(r, r + 1), slice(i, min(i + step, queries)))
            for r in range(rows) for i in range(0, queries, step)]


def _block_size(blocks, per_query):
    """The largest number of scores in one block."""
    return max((r.stop - r.start) * (i.stop - i.start) for r, i in blocks) * per_query


def _broadcast(xp, array, shape):
    """``array`` broadcast to ``shape``; the array itself when it has that shape already (the usual
    case: xp.broadcast_to costs more than the rest of the setup of a one-token decoding step)."""
    return array if array.shape == shape else xp.broadcast_to(array, shape)


def _view(buffer, shape):
    """The first prod(shape) elements of a flat buffer, viewed with ``shape`` (no copy)."""
    size = 1
    for n in shape:
        size *= n
    return buffer[:size].reshape(shape)


class FastScaledDotProductAttention(Function):
    """O = softmax(Q K^T * scale + B) V, with dropout on the weights; see the module docstring.

    q (..., Tq, Dk), k (..., Tk, Dk), v (..., Tk, Dv); bias B of q's dtype broadcastable
    to (..., Tq, Tk) (-inf = may not attend) or None.  Returns O (..., Tq, Dv), and also the weights P
    (..., Tq, Tk) (before dropout) when ``return_weights``.
    """

    @staticmethod
    def forward(ctx, q, k, v, bias, dropout_p, scale, return_weights):
        scores_shape = check_attention_inputs(q, k, v, bias, dropout_p)
        xp = backend.array_module(q, k, v, bias)
        ctx.shapes = (q.shape, k.shape, v.shape, None if bias is None else bias.shape)
        unbatched = len(scores_shape) == 2
        if unbatched:                                          # one leading dimension to block over
            q, k, v, scores_shape = q[None], k[None], v[None], (1,) + scores_shape
        batch, (tq, tk) = scores_shape[:-2], scores_shape[-2:]
        dtype = q.dtype
        q_scaled = xp.multiply(_broadcast(xp, q, batch + q.shape[-2:]), scale,
                               out=xp.empty(batch + q.shape[-2:], dtype))        # Q scale  (..., Tq, Dk)
        k_t = xp.ascontiguousarray(xp.swapaxes(_broadcast(xp, k, batch + k.shape[-2:]), -1, -2))  # (..., Dk, Tk)
        v_b = _broadcast(xp, v, batch + v.shape[-2:])                           # (..., Tk, Dv)
        bias_b = None if bias is None else _broadcast(xp, bias, scores_shape)
        keep = None
        if dropout_p > 0.0:
            keep = backend.random_bernoulli(scores_shape, 1.0 - dropout_p, backend.device_of(q))
        out = xp.empty(batch + (tq, v.shape[-1]), dtype)
        weights = xp.empty(scores_shape, dtype) if return_weights else None
        per_query = tk
        for n in batch[1:]:
            per_query *= n
        blocks = _score_blocks(batch[0], tq, per_query)
        stored = None                                          # block 2: the whole P, while it is small
        lse = None                                             # without P: each row's log-sum-exp
        if batch[0] * tq * per_query <= STORED_SCORES:
            stored = xp.empty(scores_shape, dtype)
        else:
            buffer = xp.empty(_block_size(blocks, per_query), dtype)
            lse = xp.empty(batch + (tq, 1), dtype)
        for rows, queries in blocks:
            at = (rows, Ellipsis, queries, slice(None))
            s = stored[at] if stored is not None else _view(buffer, q_scaled[at].shape[:-1] + (tk,))
            xp.matmul(q_scaled[at], k_t[rows], out=s)                             # Q K^T scale block
            if bias_b is not None:
                s += bias_b[at]                               # S block
            row_max = s.max(axis=-1, keepdims=True)
            if bias_b is not None:
                row_max[row_max == -xp.inf] = 0               # all keys masked: exp(-inf) = 0 below
            s -= row_max
            xp.exp(s, out=s)
            total = s.sum(axis=-1, keepdims=True)
            if bias_b is not None:
                total[total == 0] = 1                         # so those rows stay 0, not 0/0
            s *= 1 / total                                    # P block, in place
            if lse is not None:
                lse[at] = row_max + xp.log(total)             # P = exp(S - lse), for the backward
            if weights is not None:
                weights[at] = s
            if keep is not None:
                s = s * keep[at]                              # (a new array: P itself may be kept)
                s *= 1.0 / (1.0 - dropout_p)                  # D block
            out[at] = xp.matmul(s, v_b[rows])                 # O block = D V
        ctx.save_for_backward(q_scaled, k, v, k_t, bias_b, keep, out, lse, stored)
        ctx.scale, ctx.dropout_p, ctx.unbatched = scale, dropout_p, unbatched
        ctx.blocks, ctx.block_size = blocks, _block_size(blocks, per_query)
        if unbatched:
            out, weights = out[0], (None if weights is None else weights[0])
        return (out, weights) if return_weights else out

    @staticmethod
    def backward(ctx, dout, dweights=None):
        q_scaled, k, v, k_t, bias_b, keep, out, lse, stored = ctx.saved_tensors
        xp = backend.array_module(dout, out)
        if ctx.unbatched:
            dout = dout[None]
            dweights = None if dweights is None else dweights[None]
        batch, tk = q_scaled.shape[:-2], k_t.shape[-1]
        k_b = _broadcast(xp, k, batch + k.shape[-2:])
        v_t = xp.ascontiguousarray(xp.swapaxes(_broadcast(xp, v, batch + v.shape[-2:]), -1, -2))  # (..., Dv, Tk)
        inner = (dout * out).sum(axis=-1, keepdims=True)     # rowsum(dP * P) = rowsum(dO * O)
        dq = xp.empty(q_scaled.shape, q_scaled.dtype)
        dk = xp.zeros(batch + k.shape[-2:], k.dtype)
        dv = xp.zeros(batch + v.shape[-2:], v.dtype)
        dbias = xp.empty(bias_b.shape, out.dtype) if ctx.needs_input_grad[3] else None
        dp_buffer = xp.empty(ctx.block_size, out.dtype)
        p_buffer = xp.empty(ctx.block_size, out.dtype) if stored is None else None
        for rows, queries in ctx.blocks:
            at = (rows, Ellipsis, queries, slice(None))
            shape = q_scaled[at].shape[:-1] + (tk,)
            if stored is not None:
                p = stored[at]                                # P, kept by the forward (block 2)
            else:
                p = _view(p_buffer, shape)
                xp.matmul(q_scaled[at], k_t[rows], out=p)    # S block again
                if bias_b is not None:
                    p += bias_b[at]
                p -= lse[at]
                xp.exp(p, out=p)                              # P = exp(S - lse)
            d = p
            if keep is not None:
                d = p * keep[at]
                d *= 1.0 / (1.0 - ctx.dropout_p)              # D
            dv[rows] += xp.matmul(xp.swapaxes(d, -1, -2), dout[at])               # dV = D^T dO
            dp = _view(dp_buffer, shape)
            xp.matmul(dout[at], v_t[rows], out=dp)           # dL/dD = dO V^T
            if keep is not None:
                dp *= keep[at]                                # dL/dP = dL/dD * keep / (1 - p)
                dp *= 1.0 / (1.0 - ctx.dropout_p)
            row_inner = inner[at]
            if dweights is not None:                          # the weights were an output too
                dp += dweights[at]
                row_inner = row_inner + (dweights[at] * p).sum(axis=-1, keepdims=True)
            dp -= row_inner
            dp *= p                                           # dS = P * (dP - rowsum(dP * P))
            if dbias is not None:
                dbias[at] = dp                                # dB = dS
            dq[at] = xp.matmul(dp, k_b[rows])                 # dQ = dS K scale (scale below)
            dk[rows] += xp.matmul(xp.swapaxes(dp, -1, -2), q_scaled[at])          # dK = dS^T Q scale
        dq *= ctx.scale
        (q_shape, k_shape, v_shape, bias_shape), needs = ctx.shapes, ctx.needs_input_grad
        dq = unbroadcast(dq, tuple(q_shape)) if needs[0] else None     # sum over broadcast copies
        dk = unbroadcast(dk, tuple(k_shape)) if needs[1] else None
        dv = unbroadcast(dv, tuple(v_shape)) if needs[2] else None
        dbias = unbroadcast(dbias, tuple(bias_shape)) if needs[3] else None
        return dq, dk, dv, dbias, None, None, None
