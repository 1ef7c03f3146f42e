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
     examples, or a few heads of one example, or a few query rows of one head:
     query rows are independent), in buffers allocated once per call and reused
     (a few MB: mostly in the CPU cache); the softmax runs in place in the block
     (in P itself when block 2 keeps it).  A P kept whole is blocked no finer
     than one head (block 6: a block of queries is a strided block of P^T).  [``scores = ...``,
     ``softmax_over_keys``, and each line of the backward, on whole matrices.]
  2. P is stored only while it is small.  Up to STORED_SCORES scores (2^26:
     256 MB of float32, batch 8, 8 heads, T = 1024) the forward writes its P
     blocks straight into one whole P array and the backward reads them back.
     Beyond that the forward keeps only each query's log-sum-exp,
     lse = log sum_j exp(S_ij), and the backward recomputes each block's
     P = exp(S - lse) from Q and K (one more matmul, as FlashAttention does),
     so memory stays a few blocks however long the sequence.  (Recomputing at
     every size: the attention alone +9-26% at batch 8, T = 64 ... 1024.)
     [``ctx.save_for_backward(q, k, v, weights, ...)``.]
  3. rowsum(dP * P) = rowsum(dO * O) (sum_j dP_ij P_ij = dO_i . sum_j D_ij V_j,
     as O = D V): a pass over (Tq, Dv) instead of one over (Tq, Tk).
     [``(dp * weights).sum(axis=-1)``; with returned weights their term is
     added per block.]  (Per block instead: +27% at T = 128, +18% at T = 1024.)
  4. Q * scale and its transpose made contiguous once, shared by the forward and
     (beyond block 2's size) the backward's recomputation; dO^T once in the
     backward.  (Measured before block 6 with K^T and V^T: strided views instead
     were +5% at batch 32, T = 128 and -5% at batch 8, T = 1024.)
  5. A bias B that needs its gradient (a learned one) gets dB = dS block by
     block, in a (..., Tq, Tk) array summed over B's broadcast copies at the
     end: the one case that holds a whole matrix.  [``unbroadcast(ds, ...)``.]
  6. The scores are kept transposed, keys x queries: S^T = K (Q scale)^T + B^T,
     P^T, dP^T = V dO^T, dS^T, so the softmax's max and sum over the keys are
     reductions over axis -2.  NumPy reduces over the last axis one row at a time
     (a max over (32, 8, 128, 128) along -1: 3.7 ms, more than its exp, 2.6 ms;
     along -2: 1.3 ms).  The products take P^T and dS^T as they are (dV = P^T dO,
     dK = dS^T Q) or transposed (O = (P^T)^T V, dQ = (dS^T)^T K): BLAS reads a
     transposed operand at no cost.  [``scores = q @ k^T``, ``.max(axis=-1)``,
     ``.sum(axis=-1)``.]  (A/B in one process, MultiheadAttention fwd+bwd, Intel
     Xeon, one BLAS thread: batch 8, T = 128 / 256 / 512 / 1024: 0.97-0.99 / 0.99 /
     0.96 / 0.86-0.87; batch 32, T = 128 0.98; lesson 12's CausalLM training step
     0.95; TransformerEncoderLayer even (0.92-1.09 paired).)

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
import math

from .. import backend
from ..autograd import Function, unbroadcast
from .attention import check_attention_inputs


BLOCK_ELEMENTS = 2 ** 20   # scores per block: 4 MB of float32 (2^21: MHA batch 8 T=256, batch 32 T=128 3-5% slower)
STORED_SCORES = 2 ** 26    # the largest P the forward keeps for the backward (block 2)


def _score_blocks(batch, tq, tk, split_queries=True):
    """(lead, queries) pairs covering the scores batch + (Tq, Tk), about BLOCK_ELEMENTS scores each:
    ``lead`` slices the first one or two batch dimensions (examples, heads), ``queries`` the queries.

    Whole examples when they fit; else one example and a few heads (the second batch dimension);
    else one example and one head, split along the queries, but only when ``split_queries``: a
    block of queries is a block of columns of P^T (block 6), strided, so a P kept whole (block 2)
    is blocked no finer than one head.
    """
    rows, per_row = batch[0], math.prod(batch[1:]) * tq * tk
    if per_row <= BLOCK_ELEMENTS or (len(batch) == 1 and not split_queries):
        step = max(1, BLOCK_ELEMENTS // per_row)
        return [((slice(r, min(r + step, rows)),), slice(0, tq)) for r in range(0, rows, step)]
    if len(batch) > 1:
        heads, per_head = batch[1], math.prod(batch[2:]) * tq * tk
        if per_head <= BLOCK_ELEMENTS or not split_queries:
            step = max(1, BLOCK_ELEMENTS // per_head)
            return [((slice(r, r + 1), slice(h, min(h + step, heads))), slice(0, tq))
                    for r in range(rows) for h in range(0, heads, step)]
        step = max(1, BLOCK_ELEMENTS // (math.prod(batch[2:]) * tk))
        return [((slice(r, r + 1), slice(h, h + 1)), slice(i, min(i + step, tq)))
                for r in range(rows) for h in range(heads) for i in range(0, tq, step)]
    step = max(1, BLOCK_ELEMENTS // tk)
    return [((slice(r, r + 1),), slice(i, min(i + step, tq))) for r in range(rows) for i in range(0, tq, step)]


def _block_size(blocks, batch, tk):
    """The largest number of scores in one block."""
    def size(lead, queries):
        n = (queries.stop - queries.start) * tk * math.prod(batch[len(lead):])
        for extent in lead:
            n *= extent.stop - extent.start
        return n
    return max(size(lead, queries) for lead, queries in blocks)


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
        q_t = xp.ascontiguousarray(xp.swapaxes(q_scaled, -1, -2))               # (Q scale)^T  (..., Dk, Tq)
        k_b = _broadcast(xp, k, batch + k.shape[-2:])                           # (..., Tk, Dk)
        v_b = _broadcast(xp, v, batch + v.shape[-2:])                           # (..., Tk, Dv)
        bias_t = None                                          # B^T (..., Tk, Tq): block 6
        if bias is not None:
            bias_t = _broadcast(xp, xp.ascontiguousarray(xp.swapaxes(bias, -1, -2)), batch + (tk, tq))
        keep = None
        if dropout_p > 0.0:
            keep = backend.random_bernoulli(scores_shape, 1.0 - dropout_p, backend.device_of(q))
        out = xp.empty(batch + (tq, v.shape[-1]), dtype)
        weights = xp.empty(scores_shape, dtype) if return_weights else None
        keep_p = math.prod(scores_shape) <= STORED_SCORES
        blocks = _score_blocks(batch, tq, tk, split_queries=not keep_p)
        block_size = _block_size(blocks, batch, tk)
        stored = None                                          # block 2: the whole P^T, while it is small
        lse = None                                             # without P: each query's log-sum-exp
        if keep_p:
            stored = xp.empty(batch + (tk, tq), dtype)
        else:
            buffer = xp.empty(block_size, dtype)
            lse = xp.empty(batch + (1, tq), dtype)
        for lead, queries in blocks:
            at = lead + (Ellipsis, queries, slice(None))       # a block of query rows: Q, O, weights
            at_t = lead + (Ellipsis, slice(None), queries)     # the same queries' columns: S^T, P^T
            s = stored[at_t] if stored is not None else _view(buffer, k_b[lead].shape[:-1] + (q_t[at_t].shape[-1],))
            xp.matmul(k_b[lead], q_t[at_t], out=s)                                # (Q K^T scale)^T block
            if bias_t is not None:
                s += bias_t[at_t]                             # S^T block
            key_max = s.max(axis=-2, keepdims=True)           # each query's max over its keys
            if bias_t is not None:
                key_max[key_max == -xp.inf] = 0               # all keys masked: exp(-inf) = 0 below
            s -= key_max
            xp.exp(s, out=s)
            total = s.sum(axis=-2, keepdims=True)
            if bias_t is not None:
                total[total == 0] = 1                         # so those queries stay 0, not 0/0
            s *= 1 / total                                    # P^T block, in place
            if lse is not None:
                lse[at_t] = key_max + xp.log(total)           # P = exp(S - lse), for the backward
            if weights is not None:
                weights[at] = xp.swapaxes(s, -1, -2)
            if keep is not None:
                s = s * xp.swapaxes(keep[at], -1, -2)         # (a new array: P itself may be kept)
                s *= 1.0 / (1.0 - dropout_p)                  # D^T block
            out[at] = xp.matmul(xp.swapaxes(s, -1, -2), v_b[lead])    # O block = D V
        ctx.save_for_backward(q_scaled, q_t, k, v, bias_t, keep, out, lse, stored)
        ctx.scale, ctx.dropout_p, ctx.unbatched = scale, dropout_p, unbatched
        ctx.blocks, ctx.block_size = blocks, block_size
        if unbatched:
            out, weights = out[0], (None if weights is None else weights[0])
        return (out, weights) if return_weights else out

    @staticmethod
    def backward(ctx, dout, dweights=None):
        q_scaled, q_t, k, v, bias_t, keep, out, lse, stored = ctx.saved_tensors
        xp = backend.array_module(dout, out)
        if ctx.unbatched:
            dout = dout[None]
            dweights = None if dweights is None else dweights[None]
        batch, tk = q_scaled.shape[:-2], k.shape[-2]
        k_b = _broadcast(xp, k, batch + k.shape[-2:])
        v_b = _broadcast(xp, v, batch + v.shape[-2:])
        dout_t = xp.ascontiguousarray(xp.swapaxes(dout, -1, -2))                # dO^T (..., Dv, Tq)
        inner = xp.swapaxes((dout * out).sum(axis=-1, keepdims=True), -1, -2)  # rowsum(dP * P) = rowsum(dO * O), (..., 1, Tq)
        dq = xp.empty(q_scaled.shape, q_scaled.dtype)
        dk = xp.zeros(batch + k.shape[-2:], k.dtype)
        dv = xp.zeros(batch + v.shape[-2:], v.dtype)
        dbias = xp.empty(batch + (q_scaled.shape[-2], tk), out.dtype) if ctx.needs_input_grad[3] else None
        dp_buffer = xp.empty(ctx.block_size, out.dtype)
        p_buffer = xp.empty(ctx.block_size, out.dtype) if stored is None else None
        for lead, queries in ctx.blocks:
            at = lead + (Ellipsis, queries, slice(None))
            at_t = lead + (Ellipsis, slice(None), queries)
            shape = k_b[lead].shape[:-1] + (q_t[at_t].shape[-1],)                 # (..., Tk, block's Tq)
            if stored is not None:
                p = stored[at_t]                              # P^T, kept by the forward (block 2)
            else:
                p = _view(p_buffer, shape)
                xp.matmul(k_b[lead], q_t[at_t], out=p)       # S^T block again
                if bias_t is not None:
                    p += bias_t[at_t]
                p -= lse[at_t]
                xp.exp(p, out=p)                              # P^T = exp(S - lse)^T
            d = p
            keep_t = None if keep is None else xp.swapaxes(keep[at], -1, -2)     # keep^T block
            if keep_t is not None:
                d = p * keep_t
                d *= 1.0 / (1.0 - ctx.dropout_p)              # D^T
            dv[lead] += xp.matmul(d, dout[at])                # dV = D^T dO
            dp = _view(dp_buffer, shape)
            xp.matmul(v_b[lead], dout_t[at_t], out=dp)       # (dL/dD)^T = V dO^T
            if keep_t is not None:
                dp *= keep_t                                  # dL/dP = dL/dD * keep / (1 - p)
                dp *= 1.0 / (1.0 - ctx.dropout_p)
            query_inner = inner[at_t]
            if dweights is not None:                          # the weights were an output too
                dweights_t = xp.swapaxes(dweights[at], -1, -2)
                dp += dweights_t
                query_inner = query_inner + (dweights_t * p).sum(axis=-2, keepdims=True)
            dp -= query_inner
            dp *= p                                           # dS^T = P^T * (dP - rowsum(dP * P))^T
            if dbias is not None:
                dbias[at] = xp.swapaxes(dp, -1, -2)           # dB = dS
            dq[at] = xp.matmul(xp.swapaxes(dp, -1, -2), k_b[lead])    # dQ = dS K scale (scale below)
            dk[lead] += xp.matmul(dp, q_scaled[at])           # dK = dS^T Q scale
        dq *= ctx.scale
        (q_shape, k_shape, v_shape, bias_shape), needs = ctx.shapes, ctx.needs_input_grad
        dq = unbroadcast(dq, tuple(q_shape)) if needs[0] else None     # sum over broadcast copies
        dk = unbroadcast(dk, tuple(k_shape)) if needs[1] else None
        dv = unbroadcast(dv, tuple(v_shape)) if needs[2] else None
        dbias = unbroadcast(dbias, tuple(bias_shape)) if needs[3] else None
        return dq, dk, dv, dbias, None, None, None
