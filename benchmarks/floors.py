"""The floor of the rows that do not reach 1.00x PyTorch: the NumPy calls a row cannot avoid.

    python benchmarks/floors.py            every floor (one BLAS and torch thread, CPU time)
    python benchmarks/floors.py --quick    fewer repeats

For each row, the floor is ONE training step (or decoded token) written as the bare
sequence of NumPy calls that minigrad's fast tier makes, with no autograd, no Tensor,
no Python bookkeeping: buffers allocated once, views taken once, every call that can
write in place does (``out=``).  It is what minigrad would cost if everything above
NumPy were free.  Timed in a tight loop beside minigrad's own step and the same step in
PyTorch, in this process, interleaved (min over repeats of the calling thread's CPU time).

    floor / torch > 1    NumPy's per-call cost alone is above PyTorch's whole step:
                         no change above NumPy reaches 1.00x (it takes fewer NumPy calls,
                         or one compiled kernel per step)
    minigrad / floor     what minigrad spends above the NumPy calls it makes
                         (autograd, Tensors, modules, allocation of fresh arrays)

The sequences follow minigrad/functions/rnn_fast.py (items 1-5 of its header: whole-sequence
products, gate-major gates, one tanh for the four gates, the recurrent weight copied once, slopes
before the loop; one layout for every size since issue 37) and minigrad/functions/attention_fast.py
(blocks of scores, P kept for the backward).  The stacked and bidirectional LSTM rows add one
such floor per layer and direction.

A second table is the reference tier's floor (issue 22 asks the reference tier within 1.5x of
the fast tier): the plain step functions of rnn_steps.py alone, looped as functions/rnn.py
loops them, with no Function, Tensor or module, against both tiers of the same layer.

    plain steps / fast tier        above 1.5x: no change outside rnn_steps.py brings the
                                   reference tier within 1.5x (it takes a step with fewer calls)
    reference tier / plain steps   what the reference tier spends above its own NumPy calls

A third table is the BLAS share of a floor: the same products (same shapes, same calls) made once
by NumPy's BLAS (OpenBLAS in NumPy's wheels) and once by PyTorch's (MKL in its x86 wheels).

    NumPy / PyTorch > 1    the products alone are slower under NumPy: part of the floor is the
                           BLAS, and no change in minigrad's code removes it (it takes another
                           BLAS under NumPy)
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import numpy  # noqa: E402

import common  # noqa: E402

F32 = numpy.float32


# ----------------------------------------------------------------------------- LSTM

def lstm_floor(T, N, D, H, seed=0):
    """(step, NumPy calls per step): one LSTM forward + backward (loss = sum of outputs, dx too)."""
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((T, N, D), dtype=F32)
    w_ih = rng.standard_normal((4 * H, D), dtype=F32) * 0.1
    w_hh = rng.standard_normal((4 * H, H), dtype=F32) * 0.1
    bias = rng.standard_normal(4 * H, dtype=F32) * 0.1
    half_rows = numpy.repeat(numpy.asarray([0.5, 0.5, 1, 0.5], F32), H)
    half = numpy.empty((4, N, H), F32)
    half[...] = numpy.asarray([0.5, 0.5, 1, 0.5], F32)[:, None, None]
    shift = 1 - half
    dout = numpy.ones((T, N, H), F32)
    hs = numpy.zeros((T + 1, N, H), F32)
    cs = numpy.zeros((T + 1, N, H), F32)
    ig = numpy.empty((N, H), F32)
    tanh_c = numpy.empty((N, H), F32)
    xs = numpy.empty((T * N, D + 1), F32)                                # [x, 1]
    xs[:, D] = 1
    G = numpy.empty((4, T, N, H), F32)
    gates = numpy.empty((4, N, H), F32)
    i, f, g, o = gates
    dh_parts = numpy.empty((4, N, H), F32)
    G_t = [G[:, t] for t in range(T)]
    products = numpy.empty((4, N, H), F32)
    w_blocks = w_hh.reshape(4, H, H)
    hs_t, cs_t = list(hs), list(cs)
    i_all, f_all, g_all, o_all = G
    calls = 0

    def step():
        nonlocal calls
        xs[:, :D] = x.reshape(T * N, D)                                  # [x, 1]
        w_in = numpy.concatenate([w_ih, bias[:, None]], axis=1)
        w_in *= half_rows[:, None]
        projection = numpy.matmul(xs, w_in.reshape(4, H, D + 1).transpose(0, 2, 1))   # (4, T*N, H)
        G[...] = projection.reshape(4, T, N, H)
        w_rec = numpy.ascontiguousarray((w_hh * half_rows[:, None]).reshape(4, H, H).transpose(0, 2, 1))
        calls = 7
        for t in range(T):
            numpy.matmul(hs_t[t], w_rec, out=products)
            numpy.add(products, G_t[t], out=gates)
            numpy.tanh(gates, out=gates)
            numpy.multiply(gates, half, out=gates)
            numpy.add(gates, shift, out=gates)
            G_t[t][...] = gates
            numpy.multiply(f, cs_t[t], out=cs_t[t + 1])
            numpy.multiply(i, g, out=ig)
            numpy.add(cs_t[t + 1], ig, out=cs_t[t + 1])
            numpy.tanh(cs_t[t + 1], out=tanh_c)
            numpy.multiply(o, tanh_c, out=hs_t[t + 1])
        calls += 11 * T
        # backward: the slopes of all T at once (item 4), written over the gates
        tc = numpy.tanh(cs[1:])
        slope_c = o_all * (1 - tc * tc)
        f_run = f_all.copy()
        slope_o = tc * o_all * (1 - o_all)
        slope_f = cs[:-1] * f_all * (1 - f_all)
        slope_i = g_all * i_all * (1 - i_all)
        slope_g = i_all * (1 - g_all * g_all)
        G[0], G[1], G[2], G[3] = slope_i, slope_f, slope_g, slope_o
        calls += 21
        dh_next = numpy.zeros((N, H), F32)
        dc_next = numpy.zeros((N, H), F32)
        for t in range(T - 1, -1, -1):
            da = G_t[t]
            dh = dout[t] + dh_next
            dc = dc_next + dh * slope_c[t]
            da[:3] *= dc
            da[3] *= dh
            numpy.matmul(da, w_blocks, out=dh_parts)
            dh_next = dh_parts.sum(axis=0)
            dc_next = dc * f_run[t]
        calls += 2 + 8 * T
        dA = G.reshape(4, T * N, H)
        w_ih_k = w_ih.reshape(4, H, D)
        dx = dA[0] @ w_ih_k[0]
        for k in range(1, 4):
            dx += dA[k] @ w_ih_k[k]
        dA_T = dA.transpose(0, 2, 1)
        numpy.matmul(dA_T, xs)                                            # [dW_ih, db]
        numpy.matmul(dA_T, hs[:-1].reshape(T * N, H))                     # dW_hh
        calls += 9
    step()
    return step, calls


def stacked_lstm_floor(T, N, D, H, layers=1, directions=1):
    """(step, calls): the floor of a stacked or bidirectional LSTM, each layer and direction one
    ``lstm_floor`` (layer k > 0 reads directions * H features), plus the concatenation of a
    bidirectional layer's two outputs (its backward takes views: no call)."""
    floors = [lstm_floor(T, N, D if k < directions else directions * H, H, seed=k)
              for k in range(layers * directions)]
    outputs = [numpy.ones((T, N, H), F32) for _ in range(directions)]
    concatenations = layers if directions > 1 else 0

    def step():
        for layer in range(layers):
            for floor, _ in floors[layer * directions:(layer + 1) * directions]:
                floor()
            if directions > 1:
                numpy.concatenate(outputs, axis=2)
    return step, sum(calls for _, calls in floors) + concatenations


# ----------------------------------------------------------------------------- attention

def mha_floor(B, T, d, heads, seed=0):
    """(step, NumPy calls per step): self-attention forward + backward, loss = sum of the outputs.

    The attention itself as attention_fast.py does it at these sizes: the scores kept keys x
    queries (S^T, P^T, dP^T: block 6), blocks of about BLOCK_ELEMENTS scores (examples, then
    heads), P^T kept whole for the backward (up to STORED_SCORES scores), dP^T in one buffer
    allocated once, rowsum(dP * P) as rowsum(dO * O).
    """
    from minigrad.functions.attention_fast import STORED_SCORES, _block_size, _score_blocks
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((B * T, d), dtype=F32)
    w_in = rng.standard_normal((3 * d, d), dtype=F32) * 0.05
    b_in = numpy.zeros(3 * d, F32)
    w_out = rng.standard_normal((d, d), dtype=F32) * 0.05
    b_out = numpy.zeros(d, F32)
    hd = d // heads
    scale = 1 / numpy.sqrt(hd)
    dout = numpy.ones((B * T, d), F32)
    blocks = _score_blocks((B, heads), T, T, split_queries=False)
    size = _block_size(blocks, (B, heads), T)
    assert B * heads * T * T <= STORED_SCORES, "P is recomputed at this size: not this floor's algorithm"

    def split(a):                                                         # (B*T, d) -> (B, heads, T, hd)
        return a.reshape(B, T, heads, hd).transpose(0, 2, 1, 3)

    def merge(a):                                                         # (B, heads, T, hd) -> (B*T, d)
        return a.transpose(0, 2, 1, 3).reshape(B * T, d)

    def view(buffer, shape):
        return buffer[:int(numpy.prod(shape))].reshape(shape)

    def step():
        qkv = x @ w_in.T
        qkv += b_in
        q, k, v = (numpy.ascontiguousarray(split(qkv[:, j * d:(j + 1) * d])) for j in range(3))
        q *= scale
        q_t = numpy.ascontiguousarray(q.transpose(0, 1, 3, 2))
        out = numpy.empty((B, heads, T, hd), F32)
        P_t = numpy.empty((B, heads, T, T), F32)                           # P^T: keys x queries
        for lead, queries in blocks:
            at = lead + (Ellipsis, queries, slice(None))
            at_t = lead + (Ellipsis, slice(None), queries)
            s = P_t[at_t]
            numpy.matmul(k[lead], q_t[at_t], out=s)
            key_max = s.max(axis=-2, keepdims=True)
            s -= key_max
            numpy.exp(s, out=s)
            total = s.sum(axis=-2, keepdims=True)
            s *= 1 / total
            out[at] = numpy.matmul(s.swapaxes(-1, -2), v[lead])
        context = merge(out)
        y = context @ w_out.T
        y += b_out
        # backward
        dcontext = split(dout @ w_out)
        context.T @ dout, dout.sum(axis=0)                                # dW_out, db_out
        dO = numpy.ascontiguousarray(dcontext)
        dO_t = numpy.ascontiguousarray(dcontext.transpose(0, 1, 3, 2))
        inner = (dO * out).sum(axis=-1, keepdims=True).swapaxes(-1, -2)  # (B, heads, 1, T)
        dq = numpy.empty((B, heads, T, hd), F32)
        dk = numpy.zeros((B, heads, T, hd), F32)
        dv = numpy.zeros((B, heads, T, hd), F32)
        dp_buffer = numpy.empty(size, F32)
        for lead, queries in blocks:
            at = lead + (Ellipsis, queries, slice(None))
            at_t = lead + (Ellipsis, slice(None), queries)
            p = P_t[at_t]
            dv[lead] += numpy.matmul(p, dO[at])
            dp = view(dp_buffer, p.shape)
            numpy.matmul(v[lead], dO_t[at_t], out=dp)
            dp -= inner[at_t]
            dp *= p
            dq[at] = numpy.matmul(dp.swapaxes(-1, -2), k[lead])
            dk[lead] += numpy.matmul(dp, q[at])
        dq *= scale
        dqkv = numpy.concatenate([merge(dq), merge(dk), merge(dv)], axis=1)
        dqkv.T @ x, dqkv.sum(axis=0)                                      # dW_in, db_in
        return dqkv @ w_in                                                # dx
    step()
    calls = 10 + 10 * len(blocks) + 15 + 9 * len(blocks) + 7
    return step, calls


# ----------------------------------------------------------------------------- decoding

def _greedy_pick(logits):
    """The most probable next token from its logits, through log_softmax as minigrad's decoder: 7 calls."""
    shifted = logits - logits.max()                                       # 2
    log_probs = shifted - numpy.log(numpy.exp(shifted).sum())             # 4
    return int(log_probs.argmax())                                        # 1


def gru_decoding_floor(tokens, V=69, E=32, H=256, seed=0):
    """(step, NumPy calls per step): greedy decoding of ``tokens`` tokens (25 calls each) by a GRU
    language model, batch 1."""
    rng = numpy.random.default_rng(seed)
    embedding = rng.standard_normal((V, E), dtype=F32)
    w_ih = rng.standard_normal((3 * H, E), dtype=F32) * 0.05
    w_hh = rng.standard_normal((3 * H, H), dtype=F32) * 0.05
    b_ih = numpy.zeros(3 * H, F32)
    b_hh = numpy.zeros(3 * H, F32)
    w_out = rng.standard_normal((V, H), dtype=F32) * 0.05
    b_out = numpy.zeros(V, F32)

    def step():
        h = numpy.zeros((1, H), F32)
        token, out = 2, []
        for _ in range(tokens):
            xw = embedding[token] @ w_ih.T + b_ih                         # 3 calls
            hw = h @ w_hh.T + b_hh                                        # 2
            rz = numpy.tanh((xw[:2 * H] + hw[:, :2 * H]) * 0.5) * 0.5 + 0.5   # 5: r, z
            n = numpy.tanh(xw[2 * H:] + rz[:, :H] * hw[:, 2 * H:])        # 3
            h = n + rz[:, H:] * (h - n)                                   # 3: (1 - z) n + z h
            logits = h @ w_out.T + b_out                                  # 2
            token = _greedy_pick(logits)                                  # 7
            out.append(token)
        return out
    step()
    return step, 25 * tokens


def causal_lm_decoding_floor(tokens, V=74, d=64, heads=4, ff=256, layers=2, max_len=256, seed=0):
    """(step, NumPy calls per step): greedy decoding of ``tokens`` tokens (22 + 45 per layer calls each)
    by lesson 12's CausalLM (pre-LN, ReLU, learned positions), batch 1, the keys and values of each
    layer written into buffers allocated once."""
    rng = numpy.random.default_rng(seed)

    def weight(*shape):
        return rng.standard_normal(shape, dtype=F32) * 0.1

    embedding, positions = weight(V, d), weight(max_len, d)
    blocks = [dict(w_in=weight(3 * d, d), b_in=weight(3 * d), w_out=weight(d, d), b_out=weight(d),
                   w1=weight(ff, d), b1=weight(ff), w2=weight(d, ff), b2=weight(d),
                   n1=(numpy.ones(d, F32), numpy.zeros(d, F32)), n2=(numpy.ones(d, F32), numpy.zeros(d, F32)),
                   k=numpy.empty((heads, max_len, d // heads), F32), v=numpy.empty((heads, max_len, d // heads), F32))
              for _ in range(layers)]
    final = (numpy.ones(d, F32), numpy.zeros(d, F32))
    w_head, b_head = weight(V, d), weight(V)
    scale = 1.0 / (d // heads) ** 0.5

    def layer_norm(x, w_b):                                               # 12 calls
        centred = x - x.sum() / d
        rstd = 1.0 / numpy.sqrt((centred * centred).sum() / d + 1e-5)
        return centred * rstd * w_b[0] + w_b[1]

    def step():
        token, out = 2, []
        for t in range(tokens):
            x = embedding[token] + positions[t]                           # 1 call (d,)
            for b in blocks:
                qkv = b["w_in"] @ layer_norm(x, b["n1"]) + b["b_in"]      # 14
                q = qkv[:d].reshape(heads, d // heads, 1)
                b["k"][:, t] = qkv[d:2 * d].reshape(heads, d // heads)    # 1
                b["v"][:, t] = qkv[2 * d:].reshape(heads, d // heads)     # 1
                s = (b["k"][:, :t + 1] @ q)[..., 0] * scale               # 2: scores (heads, t + 1)
                s = numpy.exp(s - s.max(axis=-1, keepdims=True))          # 3
                s /= s.sum(axis=-1, keepdims=True)                        # 2
                o = (s[:, None, :] @ b["v"][:, :t + 1]).reshape(d)        # 1
                x = x + (b["w_out"] @ o + b["b_out"])                     # 3
                f = numpy.maximum(b["w1"] @ layer_norm(x, b["n2"]) + b["b1"], 0)   # 15
                x = x + (b["w2"] @ f + b["b2"])                           # 3
            logits = w_head @ layer_norm(x, final) + b_head               # 14
            token = _greedy_pick(logits)                                  # 7
            out.append(token)
        return out
    step()
    return step, (22 + layers * 45) * tokens


# ----------------------------------------------------------------------------- core suite

def chain_floor(grad, n=1000):
    """(step, calls): bench_core's chain of n tiny ops on (4,) (x * 0.5, x + 1, tanh(x), ...), forward
    (+ backward: Mul dout * 0.5, Add nothing, Tanh dout * (1 - y * y)), every output in its own row."""
    ys = numpy.ones((n + 1, 4), F32)
    rows = list(ys)                                                       # the views, taken once
    dout, square = numpy.ones(4, F32), numpy.empty(4, F32)

    def step():
        for i in range(n):
            kind = i % 3
            if kind == 0:
                numpy.multiply(rows[i], 0.5, out=rows[i + 1])
            elif kind == 1:
                numpy.add(rows[i], 1.0, out=rows[i + 1])
            else:
                numpy.tanh(rows[i], out=rows[i + 1])
        if grad:
            dout[...] = 1
            for i in reversed(range(n)):
                kind = i % 3
                if kind == 0:
                    numpy.multiply(dout, 0.5, out=dout)
                elif kind == 2:
                    numpy.multiply(rows[i + 1], rows[i + 1], out=square)
                    numpy.subtract(1, square, out=square)
                    numpy.multiply(dout, square, out=dout)
    step()
    return step, n + (1 + 1 + (n // 3) * 4 if grad else 0)


def mlp_floor(optimizer=None, M=64, D=512, C=10, seed=0):
    """(step, calls): bench_core's Linear(D, D) -> LayerNorm -> ReLU -> Linear(D, C) + cross_entropy,
    forward + backward (+ SGD momentum / Adam), the calls minigrad's Functions make (functions/linalg.py
    Linear, normalization.py's pair, ReLU, losses.py CrossEntropy; optim/sgd.py, adam.py)."""
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((M, D), dtype=F32)
    target = rng.integers(0, C, M)
    rows = numpy.arange(M)
    params = [rng.standard_normal(shape, dtype=F32) * 0.05 for shape in ((D, D), (D,), (D,), (D,), (C, D), (C,))]
    w1, b1, g, beta, w2, b2 = params
    grads = [numpy.empty_like(p) for p in params]
    dw1, db1, dg, dbeta, dw2, db2 = grads
    state = [[numpy.zeros_like(p), numpy.zeros_like(p)] for p in params]
    h, y, mask, a, logits = (numpy.empty((M, D), F32), numpy.empty((M, D), F32), numpy.empty((M, D), bool),
                             numpy.empty((M, D), F32), numpy.empty((M, C), F32))
    scratch, dx = numpy.empty((M, D), F32), numpy.empty((M, D), F32)

    def step():
        numpy.matmul(x, w1.T, out=h)                                      # Linear 1: 2 calls
        h.__iadd__(b1)
        x_hat = h - h.mean(axis=1, keepdims=True)                         # LayerNorm: 10
        numpy.multiply(x_hat, x_hat, out=y)
        rstd = 1.0 / numpy.sqrt(y.mean(axis=1, keepdims=True) + 1e-5)
        x_hat *= rstd
        numpy.multiply(x_hat, g, out=y)
        y.__iadd__(beta)
        numpy.greater(y, 0, out=mask)                                     # ReLU: 2
        numpy.multiply(y, mask, out=a)
        numpy.matmul(a, w2.T, out=logits)                                 # Linear 2: 2
        logits.__iadd__(b2)
        shifted = logits - logits.max(axis=1, keepdims=True)              # cross_entropy: 8
        log_p = shifted - numpy.log(numpy.exp(shifted).sum(axis=1, keepdims=True))
        -log_p[rows, target].sum() / M
        dz = numpy.exp(log_p)                                             # its backward: 3
        dz[rows, target] -= 1
        dz *= 1.0 / M
        numpy.matmul(dz.T, a, out=dw2)                                    # Linear 2 backward: 3
        dz.sum(axis=0, out=db2)
        da = dz @ w2
        da *= mask                                                        # ReLU backward: 1
        numpy.multiply(da, x_hat, out=scratch)                            # LayerNorm backward: 11
        scratch.sum(axis=0, out=dg)
        da.sum(axis=0, out=dbeta)
        numpy.multiply(da, g, out=dx)
        numpy.multiply(dx, x_hat, out=scratch)
        numpy.multiply(x_hat, scratch.mean(axis=1, keepdims=True), out=scratch)
        numpy.subtract(dx, dx.mean(axis=1, keepdims=True), out=dx)
        numpy.subtract(dx, scratch, out=dx)
        numpy.multiply(dx, rstd, out=dx)
        numpy.matmul(dx.T, x, out=dw1)                                    # Linear 1 backward: 2
        dx.sum(axis=0, out=db1)
        for p, grad, (m, v) in zip(params, grads, state):
            if optimizer == "sgd":                                        # 3 calls a parameter
                numpy.multiply(m, 0.9, out=m)
                m += grad
                p -= 0.01 * m
            elif optimizer == "adam":                                     # 9 calls a parameter
                numpy.multiply(m, 0.9, out=m)
                m += 0.1 * grad
                numpy.multiply(v, 0.999, out=v)
                v += 0.001 * (grad * grad)
                p -= 0.001 * m / (numpy.sqrt(v) + 1e-8)
    step()
    return step, 45 + {None: 0, "sgd": 3 * 6 + 6, "adam": 9 * 6 + 8 * 6}[optimizer]


def _matmuls_only(T, N, D, H):
    """(step, calls): only the matmuls of an LSTM's forward and backward (bench_rnn's matmul floor)."""
    import bench_rnn
    return bench_rnn._matmul_floor(T, N, D, H), 2 * T + 4


def _arrays(lib, rng, *shapes):
    """Standard normal float32 arrays of ``shapes``, as NumPy arrays or (lib = torch) tensors."""
    arrays = [rng.standard_normal(shape, dtype=F32) for shape in shapes]
    return arrays if lib is numpy else [lib.from_numpy(a) for a in arrays]


def lstm_products(lib, T, N, D, H):
    """(step, calls): only the matmuls of the fast tier's gate-major LSTM (rnn_fast.py items 1-3),
    made by ``lib`` (numpy: NumPy's BLAS; torch: PyTorch's) on the same shapes: the projection
    [x, 1] [W_ih,k, b_k]^T per gate, four (N, H) x (H, H) products a step forward and backward,
    dx = sum_k dA_k W_ih,k, [dW_ih, db] = dA^T [x, 1] and dW_hh = dA^T H_prev per gate."""
    rng = numpy.random.default_rng(0)
    xs, w_in_T, w_rec, w_back, w_ih_k, hs, dA, gates, parts = _arrays(
        lib, rng, (T * N, D + 1), (4, D + 1, H), (4, H, H), (4, 1, H, H), (4, H, D),
        (T + 1, N, H), (4, T, N, H), (4, N, H), (4, 1, N, H))

    def step():
        lib.matmul(xs, w_in_T)                                            # projection, all steps
        for t in range(T):
            lib.matmul(hs[t], w_rec, out=gates)                           # forward recurrence
        for t in range(T):
            lib.matmul(dA[:, t, None], w_back, out=parts)                 # backward recurrence
        flat = dA.reshape(4, T * N, H)
        dx = flat[0] @ w_ih_k[0]
        for k in range(1, 4):
            dx += flat[k] @ w_ih_k[k]                                     # dx
        flat_T = flat.swapaxes(1, 2)
        lib.matmul(flat_T, xs)                                            # [dW_ih, db]
        lib.matmul(flat_T, hs[:-1].reshape(T * N, H))                     # dW_hh
    step()
    return step, 2 * T + 7


def linear_products(lib, M, layers):
    """(step, calls): the products of Linear layers on M rows, forward and backward, made by ``lib``
    on the same shapes: Y = X W^T, dX = dY W, dW = dY^T X for each (in, out) in ``layers``."""
    rng = numpy.random.default_rng(0)
    operands = [_arrays(lib, rng, (M, n_in), (n_out, n_in), (M, n_out)) for n_in, n_out in layers]

    def step():
        for x, w, dy in operands:
            x @ w.T                                                       # Y = X W^T
            dy @ w                                                        # dX = dY W
            dy.T @ x                                                      # dW = dY^T X
    step()
    return step, 3 * len(layers)


def attention_products(lib, B, T, d, heads):
    """(step, calls): the products of ``mha_floor`` (attention_fast.py at these sizes: block 6's keys x
    queries layout, blocks of whole examples or heads), made by ``lib`` on the same shapes: the
    projections and their gradients, and per block S^T = K (Q scale)^T, O = (P^T)^T V, dV = P^T dO,
    dP^T = V dO^T, dQ = (dS^T)^T K and dK = dS^T Q (P^T stands in for dS^T: the same shape)."""
    from minigrad.functions.attention_fast import _score_blocks
    rng = numpy.random.default_rng(0)
    hd = d // heads
    blocks = [lead for lead, _ in _score_blocks((B, heads), T, T, split_queries=False)]
    x, w_in, w_out, context, dout, dqkv = _arrays(lib, rng, (B * T, d), (3 * d, d), (d, d), (B * T, d),
                                                  (B * T, d), (B * T, 3 * d))
    q, k, v, dO, q_t, dO_t, P_t = _arrays(lib, rng, *[(B, heads, T, hd)] * 4, *[(B, heads, hd, T)] * 2,
                                          (B, heads, T, T))

    def step():
        lib.matmul(x, w_in.T)                                             # [Q, K, V]
        for lead in blocks:
            lib.matmul(k[lead], q_t[lead])                                # S^T = K (Q scale)^T
            lib.matmul(P_t[lead].swapaxes(-1, -2), v[lead])               # O = (P^T)^T V
        lib.matmul(context, w_out.T)                                      # the output projection
        lib.matmul(dout, w_out)                                           # d context
        lib.matmul(context.T, dout)                                       # dW_out
        for lead in blocks:
            lib.matmul(P_t[lead], dO[lead])                               # dV = P^T dO
            lib.matmul(v[lead], dO_t[lead])                               # dP^T = V dO^T
            lib.matmul(P_t[lead].swapaxes(-1, -2), k[lead])               # dQ = (dS^T)^T K
            lib.matmul(P_t[lead], q[lead])                                # dK = dS^T Q
        lib.matmul(dqkv.T, x)                                             # dW_in
        lib.matmul(dqkv, w_in)                                            # dx
    step()
    return step, 6 + 6 * len(blocks)


# ----------------------------------------------------------------------------- the reference tier's floor

class _Counted(numpy.ndarray):
    """An array that counts the NumPy calls made on it: ufuncs (operators and ``@`` included) and
    array functions (concatenate, ...).  Indexing and slicing are not counted."""
    calls = 0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _Counted.calls += 1
        inputs = [a.view(numpy.ndarray) if isinstance(a, _Counted) else a for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(a.view(numpy.ndarray) if isinstance(a, _Counted) else a for a in kwargs["out"])
        result = getattr(ufunc, method)(*inputs, **kwargs)
        return result.view(_Counted) if isinstance(result, numpy.ndarray) else result

    def __array_function__(self, func, types, args, kwargs):
        _Counted.calls += 1
        return super().__array_function__(func, types, args, kwargs)


def plain_steps_floor(kind, T, N, D, H, seed=0):
    """(step, NumPy calls per step): the reference tier's own NumPy work, with nothing above it.

    One forward + backward of functions/rnn.py's loops (``forward_steps``, ``backward_steps``)
    over rnn_steps.py's step functions, called on plain arrays: what the reference sequence
    Function runs, without the Function, the Tensors or the module.  Its calls are counted once,
    on arrays that count them (``_Counted``), so the count follows the step functions as they are.
    """
    from minigrad.functions import rnn, rnn_steps
    n_gates, step_forward, step_backward, options, n_states = {
        "LSTM": (4, rnn_steps.lstm_step_forward, rnn_steps.lstm_step_backward, (), 2),
        "GRU": (3, rnn_steps.gru_step_forward, rnn_steps.gru_step_backward, (True,), 1),
        "RNN": (1, rnn_steps.rnn_step_forward, rnn_steps.rnn_step_backward, ("tanh",), 1),
    }[kind]

    def arrays(cls):
        rng_arrays = numpy.random.default_rng(seed)

        def normal(*shape):
            return (rng_arrays.standard_normal(shape, dtype=F32) * 0.1).view(cls)
        weights = (normal(n_gates * H, D), normal(n_gates * H, H), normal(n_gates * H), normal(n_gates * H))
        return normal(T, N, D), [normal(N, H) for _ in range(n_states)], weights, numpy.ones((T, N, H), F32).view(cls)

    def run(x, states, weights, dout):
        _, finals, caches = rnn.forward_steps(step_forward, x, states, weights + options, None, False)
        rnn.backward_steps(step_backward, caches, dout, [d * 0 for d in finals], None, False)

    _Counted.calls = 0
    run(*arrays(_Counted))
    calls = _Counted.calls
    plain = arrays(numpy.ndarray)
    return (lambda: run(*plain)), calls


def _reference_and_fast(kind, T, N, D, H):
    """(reference tier step, fast tier step) of bench_rnn's row: the layer built each way."""
    import bench_rnn
    reference, _ = bench_rnn._step_fns(kind, T, N, D, H, reference=True)
    fast, _ = bench_rnn._step_fns(kind, T, N, D, H)
    return reference, fast


REFERENCE_CASES = [
    ("tiny LSTM fwd+bwd, in 8, hidden 8, batch 1, T=50", ("LSTM", 50, 1, 8, 8)),
    ("lesson 4's size: LSTM, in 2, hidden 32, batch 32, T=50", ("LSTM", 50, 32, 2, 32)),
    ("lesson 4's size: GRU, in 2, hidden 32, batch 32, T=50", ("GRU", 50, 32, 2, 32)),
    ("lesson 4's size: RNN, in 2, hidden 32, batch 32, T=50", ("RNN", 50, 32, 2, 32)),
    ("LSTM, in 128, hidden 256, batch 64, T=50 (within 1.5x)", ("LSTM", 50, 64, 128, 256)),
]


BLAS_CASES = [
    ("the char LM's recurrence, nn.LSTM(32, 128), batch 32, T=64", lambda lib: lstm_products(lib, 64, 32, 32, 128)),
    ("the char LM's recurrence, nn.LSTM(32, 256), batch 32, T=64", lambda lib: lstm_products(lib, 64, 32, 32, 256)),
    ("nn.LSTM(256, 256), batch 8, T=64 (LSTM vs T)", lambda lib: lstm_products(lib, 64, 8, 256, 256)),
    ("LSTM in 128, hidden 256, batch 64, T=50 (the rnn suite)", lambda lib: lstm_products(lib, 50, 64, 128, 256)),
    ("the MLP row's Linear layers, 64 rows: 512 -> 512, 512 -> 10",
     lambda lib: linear_products(lib, 64, [(512, 512), (512, 10)])),
    ("lesson 12's CausalLM step, its Linear layers on 1536 rows (batch 32, T=48): 2 x (64 -> 192, 64 -> 64, "
     "64 -> 256, 256 -> 64), 64 -> 74",
     lambda lib: linear_products(lib, 1536, [(64, 192), (64, 64), (64, 256), (256, 64)] * 2 + [(64, 74)])),
    ("the char LM's head, 2048 rows (batch 32, T=64): 128 -> 69", lambda lib: linear_products(lib, 2048, [(128, 69)])),
    ("MultiheadAttention, batch 32, T=128, d=256, 8 heads (blocks of the fast tier)",
     lambda lib: attention_products(lib, 32, 128, 256, 8)),
    ("MultiheadAttention, batch 8, T=256, d=256, 8 heads (attention vs T)",
     lambda lib: attention_products(lib, 8, 256, 256, 8)),
    ("MultiheadAttention, batch 8, T=1024, d=256, 8 heads (attention vs T)",
     lambda lib: attention_products(lib, 8, 1024, 256, 8)),
]


# ----------------------------------------------------------------------------- the table

def _minigrad_and_torch(case):
    """(minigrad step, torch step) of the benchmark row a floor belongs to."""
    import bench_attention
    import bench_rnn
    import bench_workloads
    torch = common.torch_or_none()
    kind, args = case
    if kind == "lstm":
        T, N, D, H, *stacking = args                                     # stacking: (layers, bidirectional)
        return bench_rnn._step_fns("LSTM", T, N, D, H, *stacking)
    if kind == "mha":
        B, T = args
        return tuple(bench_attention._attention_pair(B, T, torch))
    if kind == "decoding":
        model, tokens = args
        return bench_workloads.decoding_pair(torch, model, "greedy", tokens)
    if kind == "chain":
        import bench_core
        import minigrad
        (grad,) = args
        mine = bench_core._chain(lambda: minigrad.ones(4, requires_grad=True), lambda y: y.tanh(), grad)
        reference = bench_core._chain(lambda: torch.ones(4, requires_grad=True), torch.tanh, grad)
        return (mine, reference) if grad else (minigrad.no_grad()(mine), torch.no_grad()(reference))
    if kind == "mlp":
        import bench_core
        (optimizer,) = args
        return (bench_core._minigrad_step(64, 512, 10, optimizer or "none"),
                bench_core._torch_step(torch, 64, 512, 10, optimizer or "none"))
    raise ValueError(kind)


CASES = [
    ("tiny LSTM fwd+bwd, in 8, hidden 8, batch 1, T=50", ("lstm", (50, 1, 8, 8)), lambda: lstm_floor(50, 1, 8, 8)),
    ("nn.LSTM(256, 256) fwd+bwd, batch 8, T=64", ("lstm", (64, 8, 256, 256)), lambda: lstm_floor(64, 8, 256, 256)),
    ("nn.LSTM(256, 256) fwd+bwd, batch 8, T=256", ("lstm", (256, 8, 256, 256)),
     lambda: lstm_floor(256, 8, 256, 256)),
    ("nn.LSTM(256, 256) fwd+bwd, batch 8, T=64: its matmuls only (2-D, one (N, 4H) product a step)",
     ("lstm", (64, 8, 256, 256)), lambda: _matmuls_only(64, 8, 256, 256)),
    ("LSTM fwd+bwd, in 128, hidden 256, batch 64, T=50 (a row at ~1x)", ("lstm", (50, 64, 128, 256)),
     lambda: lstm_floor(50, 64, 128, 256)),
    ("LSTM fwd+bwd, in 128, hidden 256, batch 64, T=50, 2 layers", ("lstm", (50, 64, 128, 256, 2, False)),
     lambda: stacked_lstm_floor(50, 64, 128, 256, layers=2)),
    ("LSTM fwd+bwd, in 128, hidden 256, batch 64, T=50, bidirectional", ("lstm", (50, 64, 128, 256, 1, True)),
     lambda: stacked_lstm_floor(50, 64, 128, 256, directions=2)),
    ("lesson 4's LSTM: nn.LSTM(2, 32) fwd+bwd, batch 32, T=50 (the lessons suite's adding problem)",
     ("lstm", (50, 32, 2, 32)), lambda: lstm_floor(50, 32, 2, 32)),
    ("MultiheadAttention fwd+bwd, batch 8, T=256, d 256, 8 heads", ("mha", (8, 256)), lambda: mha_floor(8, 256, 256, 8)),
    ("MultiheadAttention fwd+bwd, batch 8, T=1024, d 256, 8 heads", ("mha", (8, 1024)),
     lambda: mha_floor(8, 1024, 256, 8)),
    ("MultiheadAttention fwd+bwd, batch 32, T=128, d 256, 8 heads", ("mha", (32, 128)),
     lambda: mha_floor(32, 128, 256, 8)),
    ("greedy decoding, GRU char LM hidden 256, batch 1, 300 tokens", ("decoding", ("GRU char LM", 300)),
     lambda: gru_decoding_floor(300)),
    ("greedy decoding, CausalLM (KV cache), batch 1, 120 tokens", ("decoding", ("CausalLM", 120)),
     lambda: causal_lm_decoding_floor(120)),
    ("nn.LSTM(32, 256) fwd+bwd, batch 32, T=64: the char LM's recurrence (workloads)", ("lstm", (64, 32, 32, 256)),
     lambda: lstm_floor(64, 32, 32, 256)),
    ("nn.LSTM(32, 128) fwd+bwd, batch 32, T=64: the char LM's recurrence, hidden 128 (workloads)",
     ("lstm", (64, 32, 32, 128)), lambda: lstm_floor(64, 32, 32, 128)),
    ("nn.LSTM(32, 128) fwd+bwd, batch 32, T=128: the char LM's recurrence, hidden 128 (workloads)",
     ("lstm", (128, 32, 32, 128)), lambda: lstm_floor(128, 32, 32, 128)),
    ("nn.LSTM(32, 256) fwd+bwd, batch 32, T=64: its matmuls only, gate-major (the fast tier's)",
     ("lstm", (64, 32, 32, 256)), lambda: lstm_products(numpy, 64, 32, 32, 256)),
    ("nn.LSTM(256, 256) fwd+bwd, batch 8, T=64: its matmuls only, gate-major (the fast tier's)",
     ("lstm", (64, 8, 256, 256)), lambda: lstm_products(numpy, 64, 8, 256, 256)),
    ("chain of 1000 tiny ops on (4,), forward + backward", ("chain", (True,)), lambda: chain_floor(True)),
    ("chain of 1000 tiny ops on (4,), forward only, no_grad", ("chain", (False,)), lambda: chain_floor(False)),
    ("Linear-LayerNorm-ReLU-Linear + cross_entropy (64, 512), fwd+bwd", ("mlp", (None,)), lambda: mlp_floor()),
    ("Linear-LayerNorm-ReLU-Linear + cross_entropy (64, 512), fwd+bwd + sgd step", ("mlp", ("sgd",)),
     lambda: mlp_floor("sgd")),
    ("Linear-LayerNorm-ReLU-Linear + cross_entropy (64, 512), fwd+bwd + adam step", ("mlp", ("adam",)),
     lambda: mlp_floor("adam")),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--rows", default="", help="only the rows whose name contains this text")
    args = parser.parse_args()
    torch = common.torch_or_none()
    common.limit_threads(1)
    common.CLOCK = time.thread_time
    with open("/proc/cpuinfo") as f:
        processor = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    print("\n".join(common.machine_description()))
    print(f"processor: {processor}; load {os.getloadavg()}; one BLAS and torch thread; CPU time of this thread, "
          "min over interleaved repeats")
    print()
    print("| row | NumPy calls per step (floor) | floor | minigrad | torch | floor / torch | minigrad / floor |"
          " µs per floor call |")
    print("|---|---|---|---|---|---|---|---|")
    for name, case, make_floor in CASES:
        if args.rows not in name:
            continue
        floor, calls = make_floor()
        mine, reference = _minigrad_and_torch(case)
        fns = [floor, mine] + ([reference] if reference is not None else [])
        repeat = 3 if args.quick else (5 if "1024" in name or "T=256" in name else 15)
        times = common.best_times(fns, repeat=repeat)
        theirs = times[2] if len(times) > 2 else None
        print(f"| {name} | {calls} | {times[0] * 1e3:.3g} ms | {times[1] * 1e3:.3g} ms | "
              f"{'-' if theirs is None else f'{theirs * 1e3:.3g} ms'} | "
              f"{'-' if theirs is None else f'{times[0] / theirs:.2f}x'} | {times[1] / times[0]:.2f}x | "
              f"{times[0] / calls * 1e6:.2f} |", flush=True)
    print()
    print("The reference tier's floor (issue 22 asks it within 1.5x of the fast tier): rnn_steps.py's plain "
          "step functions alone,\nlooped as functions/rnn.py loops them, against the reference tier and the fast "
          "tier of the same layer.")
    print()
    print("| row | NumPy calls per step (plain steps) | plain steps alone | reference tier | fast tier |"
          " plain steps / fast tier | reference tier / plain steps |")
    print("|---|---|---|---|---|---|---|")
    for name, (kind, T, N, D, H) in REFERENCE_CASES:
        if args.rows not in name:
            continue
        floor, calls = plain_steps_floor(kind, T, N, D, H)
        reference, fast = _reference_and_fast(kind, T, N, D, H)
        times = common.best_times([floor, reference, fast], repeat=3 if args.quick else 15)
        print(f"| {name} | {calls / T:.0f} | {times[0] * 1e3:.3g} ms | {times[1] * 1e3:.3g} ms | "
              f"{times[2] * 1e3:.3g} ms | {times[0] / times[2]:.2f}x | {times[1] / times[0]:.2f}x |", flush=True)
    if torch is None:
        return
    print()
    print("The BLAS share: the same products, on the same shapes, made by NumPy's BLAS and by PyTorch's.")
    print()
    print("| products of | products per step | NumPy's BLAS | PyTorch's BLAS | NumPy / PyTorch |")
    print("|---|---|---|---|---|")
    for name, make_products in BLAS_CASES:
        if args.rows not in name:
            continue
        (ours, calls), (theirs, _) = make_products(numpy), make_products(torch)
        times = common.best_times([ours, theirs], repeat=3 if args.quick else 15)
        print(f"| {name} | {calls} | {times[0] * 1e3:.3g} ms | {times[1] * 1e3:.3g} ms | "
              f"{times[0] / times[1]:.2f}x |", flush=True)


if __name__ == "__main__":
    from run import rerun_without_slow_blas_settings
    rerun_without_slow_blas_settings()
    main()
