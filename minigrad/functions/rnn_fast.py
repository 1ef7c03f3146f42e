"""Whole sequences through an RNN, an LSTM and a GRU: one layer, one direction,
with the backward through time written by hand.

The equations are those of ``rnn_steps.py`` (read that file first); here they
run over all T steps inside ONE autograd Function, so the graph has one node
per layer and direction instead of dozens per step, and the work is arranged
for speed:

  forward   the input projection x W_ih^T + b for all T steps is one matmul
            (with the bias trick: [x, 1] [W_ih, b]^T, so the bias costs no pass);
            the loop adds h_{t-1} W_hh^T to a step's gate pre-activations, all
            G gates of the step in one buffer, and activates them; it keeps
            only what the backward needs (gates, states: O(T N H)).
  backward  the local derivatives of the gates (sigma', tanh', ...) depend
            only on the forward's values, so they are computed for many steps
            at once (all T in the RNN; in the LSTM and GRU a cache-sized run
            of steps, just before the loop reaches it); the loop, in reverse,
            multiplies them by the gradient carried from step t+1 (dh, and the
            LSTM's dc).  After the loop the weight and bias gradients are ONE
            matmul over all stacked steps, dA^T [x, h_{t-1}, 1] (the GRU: one
            per projection, as its n rows see a different input).

Gate-major storage: where ``rnn_steps.py`` holds a step's pre-activations in
an (N, 4H) array [a_i, a_f, a_g, a_o], here all steps' gates are one
(G, T, N, H) array, gate index first: G[k, t] is gate k at step t, an (N, H)
block of contiguous memory, and G[:, t] is the whole step, (G, N, H).  The
gate arithmetic (f * c, i * g, o * tanh(c), and their derivatives) then runs
over contiguous blocks instead of strided column slices, and each projection
is computed per gate, x W_ih,k^T (W_ih,k: rows kH..(k+1)H of W_ih), in one
batched matmul over k.

Memory: the LSTM's and the GRU's backward write dA over the gate array G
(which they keep for the backward anyway) once its values are used, instead
of allocating a new (G, T, N, H) array, unless the graph is kept for another
backward (``ctx.retain_graph``).  The LSTM recomputes tanh(c_t) in the
backward rather than keep it.

Shapes: x (T, N, D) time-major, h0 / c0 (N, H), w_ih (G*H, D), w_hh (G*H, H),
biases (G*H,) or None; G = 1 (RNN), 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n).

States live in one (T + 1, N, H) array ``hs``.  Going forward, step t reads
hs[t] and writes hs[t + 1]; with ``reverse=True`` (the backward direction of
a bidirectional layer) the loop runs t = T-1, ..., 0, step t reads hs[t + 1]
and writes hs[t].  Either way the outputs are a slice of ``hs``.

Variable lengths: ``mask`` (T, N, 1) is True where step t belongs to sequence
n.  A padded step keeps the state it received and outputs zero, so h_n is each
sequence's state at its own last step, and the reverse direction (which meets
the padding first) starts from h0 at each sequence's own end.  Its gradients
are zero.
"""
from .. import backend
from ..autograd import Function
from .rnn import check_shapes


def _steps(T, reverse):
    """(t, index of the state read, index of the state written) in processing order."""
    if reverse:
        return [(t, t + 1, t) for t in range(T - 1, -1, -1)]
    return [(t, t, t + 1) for t in range(T)]


def _new_states(xp, h0, T, N, H, dtype, reverse):
    hs = xp.empty((T + 1, N, H), dtype=dtype)
    first = T if reverse else 0
    if h0 is None:
        hs[first] = 0
    else:
        hs[first] = h0
    return hs


def _outputs(hs, reverse):
    """(states after each step, states before each step, final state), all views of hs."""
    if reverse:
        return hs[:-1], hs[1:], hs[0]
    return hs[1:], hs[:-1], hs[-1]


def _with_ones(xp, *parts):
    """[parts..., 1]: (T, N, D_k) arrays side by side, then a column of ones, as rows (T*N, sum D_k + 1).

    The bias trick: [x, 1] [W, b]^T = x W^T + b, and [dW, db] = dA^T [x, 1] (the ones sum dA).
    """
    T, N = parts[0].shape[:2]
    out = xp.empty((T, N, sum(p.shape[2] for p in parts) + 1), dtype=parts[0].dtype)
    start = 0
    for p in parts:
        out[..., start:start + p.shape[2]] = p
        start += p.shape[2]
    out[..., -1] = 1
    return out.reshape(T * N, start + 1)


def _bias(*biases):
    """The sum of the biases that are not None (both add to the same pre-activation), or None."""
    biases = [b for b in biases if b is not None]
    return sum(biases[1:], biases[0]) if biases else None


def _input_projection(xp, x, w_ih, bias, gates):
    """x W_ih^T + bias for all T steps, gate-major: (T, N, D) -> (G, T, N, H), ONE matmul.

    Block k holds gate k, x W_ih,k^T + b_k (W_ih,k: rows kH..(k+1)H of W_ih), so each gate
    of each step is a contiguous (N, H) array and the gate arithmetic runs over contiguous
    memory.  With a bias it is [x, 1] [W_ih, bias]^T: the bias needs no pass of its own.
    """
    T, N, D = x.shape
    H = w_ih.shape[0] // gates
    if bias is None:
        x = x.reshape(T * N, D)
    else:
        x, w_ih = _with_ones(xp, x), xp.concatenate([w_ih, bias[:, None]], axis=1)
    w_k_T = w_ih.reshape(gates, H, w_ih.shape[1]).transpose(0, 2, 1)   # (G, D[+1], H): W_ih,k^T
    return xp.matmul(x, w_k_T).reshape(gates, T, N, H)


def _gate_blocks_T(xp, w):
    """(G*H, H) recurrent weights -> (G, H, H), block k = W_k^T, contiguous (a fast gemm operand)."""
    H = w.shape[1]
    return xp.ascontiguousarray(w.reshape(-1, H, H).transpose(0, 2, 1))


def _input_grad(xp, dA, w_ih):
    """dx = dA W_ih = sum_k dA_k W_ih,k, for dA (G, T, N, H) gate-major: -> (T, N, D)."""
    gates, T, N, H = dA.shape
    dA = dA.reshape(gates, T * N, H)
    w_ih_k = w_ih.reshape(gates, H, w_ih.shape[1])             # W_ih,k: gate k's rows
    dx = dA[0] @ w_ih_k[0]                                     # (T*N, D)
    term = xp.empty_like(dx)
    for k in range(1, gates):
        dx += xp.matmul(dA[k], w_ih_k[k], out=term)
    return dx.reshape(T, N, w_ih.shape[1])


def _projection_grads(ctx, dA, x, h_prev, w_ih, first):
    """The gradients of the projections of an RNN or LSTM, over all T steps stacked:

        dx = sum_k dA_k W_ih,k,     [dW_ih, dW_hh, db]_k = dA_k^T [x, h_prev, 1]   (ONE matmul)
        db_ih = db_hh = db   (both biases add to the same pre-activation)

    dA (G, T, N, H) holds dL/d(pre-activation) gate-major, dA_k its gate k; ``first`` is the
    position of w_ih among the forward's arguments.  Returns (dx, dw_ih, dw_hh, db_ih, db_hh),
    None where no gradient is needed.  (With one gate, the RNN's, copying [x, h_prev, 1]
    together costs more than the one matmul saves: it takes dA^T x, dA^T h_prev, sum dA.)
    """
    xp = backend.array_module(dA)
    gates, T, N, H = dA.shape
    D = x.shape[2]
    need = ctx.needs_input_grad
    dx = _input_grad(xp, dA, w_ih) if need[0] else None
    if not any(need[first:first + 4]):
        return dx, None, None, None, None
    dA = dA.reshape(gates, T * N, H)
    if gates == 1:
        dw_ih, dw_hh = dA[0].T @ x.reshape(T * N, D), dA[0].T @ h_prev.reshape(T * N, H)
        db = dA[0].sum(axis=0)
    else:
        grads = xp.matmul(dA.transpose(0, 2, 1), _with_ones(xp, x, h_prev))   # (G, H, D + H + 1)
        grads = grads.reshape(gates * H, D + H + 1)
        dw_ih, dw_hh, db = grads[:, :D], grads[:, D:-1], grads[:, -1]
    db_ih = db if need[first + 2] else None
    db_hh = db.copy() if need[first + 3] else None
    return dx, dw_ih, dw_hh, db_ih, db_hh


def _sigma_slope(xp, s, out):
    """sigma'(a) = s (1 - s) from s = sigma(a), written into ``out`` (returned)."""
    xp.subtract(1, s, out=out)
    out *= s
    return out


def _tanh_slope(xp, y, out):
    """tanh'(a) = 1 - y^2 from y = tanh(a), written into ``out`` (returned)."""
    xp.multiply(y, y, out=out)
    xp.subtract(1, out, out=out)
    return out


def _float_mask(mask, dtype):
    """Bool mask (T, N, 1) -> (valid, padded) as 0/1 arrays of ``dtype``."""
    valid = mask.astype(dtype)
    return valid, 1 - valid


def _step_runs(steps, N, H, elements=1 << 15):
    """Split the steps (in processing order) into runs of consecutive t, each (lo, hi, run).

    A run holds about ``elements`` values per gate (steps x N x H): its slices of the
    (T, N, 4H) arrays fit in cache, so the backward computes a run's local derivatives
    together (few NumPy calls) and uses them while they are still in cache, instead of
    streaming megabytes through memory twice.  A small model has one run: all T steps.
    """
    size = max(1, elements // (N * H))
    for start in range(0, len(steps), size):
        run = steps[start:start + size]
        ts = [t for t, _, _ in run]
        yield min(ts), max(ts) + 1, run


# --------------------------------------------------------------------------- RNN

class FastRNNFunction(Function):
    """h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)  (or relu), for t = 1..T.

    forward(x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity) -> (output (T, N, H), h_n (N, H))

    Backward, carrying dh from step t+1 into step t:
        dh    = dout_t + dh_next
        da_t  = dh * f'(a_t)           f' = 1 - h_t^2 (tanh) or [h_t > 0] (relu)
        dh_next = da_t W_hh
    and after the loop dW_ih = dA^T X, dW_hh = dA^T H_prev, db = sum dA over all steps.
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity):
        check_shapes("rnn", x, h0, w_ih, w_hh, 1)
        xp = backend.array_module(x, w_ih, w_hh)
        T, N, _ = x.shape
        H = w_hh.shape[1]
        A = _input_projection(xp, x, w_ih, _bias(b_ih, b_hh), 1)[0]   # (T, N, H)
        hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)    # (T + 1, N, H)
        w_hh_T = xp.ascontiguousarray(w_hh.T)                 # a contiguous B operand: faster gemm
        for t, prev, nxt in _steps(T, reverse):
            h = hs[nxt]
            xp.matmul(hs[prev], w_hh_T, out=h)                 # h_{t-1} W_hh^T
            h += A[t]
            if nonlinearity == "tanh":
                xp.tanh(h, out=h)
            else:
                xp.maximum(h, 0, out=h)
            if mask is not None:                               # padded: keep the state
                xp.copyto(h, hs[prev], where=~mask[t])
        ctx.save_for_backward(x, hs, w_ih, w_hh, mask)
        ctx.reverse, ctx.nonlinearity = reverse, nonlinearity
        output, _, h_n = _outputs(hs, reverse)
        if mask is not None:
            output = output * mask
        return output, h_n

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, hs, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        T, N, _ = x.shape
        h_new, h_prev, _ = _outputs(hs, ctx.reverse)
        dA = xp.empty_like(h_new)                              # (T, N, H)
        # the local derivative f'(a_t) for all steps at once; the loop multiplies it by dh
        if ctx.nonlinearity == "tanh":
            _tanh_slope(xp, h_new, out=dA)                      # tanh' = 1 - h^2
        else:
            xp.greater(h_new, 0, out=dA)                        # relu' = [a > 0] = [h > 0]
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dA *= valid                                        # no gradient through a padded step
            dout = dout * valid                                # its output was a constant zero
        dh_next = dh_n.copy()
        dh = xp.empty_like(dh_next)
        for t, _, _ in reversed(_steps(T, ctx.reverse)):
            xp.add(dout[t], dh_next, out=dh)                   # (N, H): from the output and from step t+1
            da = dA[t]
            xp.multiply(da, dh, out=da)                        # da_t = dh * f'(a_t)
            xp.matmul(da, w_hh, out=dh_next)                   # dh_{t-1} = da_t W_hh
            if mask is not None:
                dh_next += dh * padded[t]                      # a padded step passes dh straight through
        dx, dw_ih, dw_hh, db_ih, db_hh = _projection_grads(ctx, dA[None], x, h_prev, w_ih, first=2)
        dh0 = dh_next if ctx.needs_input_grad[1] else None
        return dx, dh0, dw_ih, dw_hh, db_ih, db_hh, None, None, None


# --------------------------------------------------------------------------- LSTM

class FastLSTMFunction(Function):
    """An LSTM over T steps, gates (i, f, g, o):

        [i, f, g, o] = [sigma, sigma, tanh, sigma](x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)
        c_t = f * c_{t-1} + i * g,      h_t = o * tanh(c_t)

    forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse) -> (output (T, N, H), h_n, c_n)

    The gates are stored gate-major, G (4, T, N, H): G[k, t] is gate k of step t, and
    x_t W_ih^T + h_{t-1} W_hh^T is computed per gate, x_t W_ih,k^T + h_{t-1} W_hh,k^T.

    Backward, carrying dh and dc from step t+1 into step t (see ``lstm_step_backward``):
        dh = dout_t + dh_next
        dc = dc_next + dh * o * (1 - tanh(c_t)^2)
        da = [dc * g * i(1-i),  dc * c_{t-1} * f(1-f),  dc * i * (1-g^2),  dh * tanh(c_t) * o(1-o)]
        dh_next = da W_hh = sum_k da_k W_hh,k,      dc_next = dc * f
    The bracketed factors next to dc and dh are known after the forward, so they
    are computed for a run of steps at a time (see ``_step_runs``) and the loop only multiplies.
    """

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
        check_shapes("lstm", x, h0, w_ih, w_hh, 4, (("c0", c0),))
        xp = backend.array_module(x, w_ih, w_hh)
        T, N, _ = x.shape
        H = w_hh.shape[1]
        # sigma(a) = (1 + tanh(a / 2)) / 2: halve the i, f, o rows of the weights (exact in
        # floating point), then ONE tanh activates all four gates, and scale/shift fixes i, f, o.
        half_gate = xp.asarray([0.5, 0.5, 1, 0.5], dtype=x.dtype)
        half_rows = xp.repeat(half_gate, H)[:, None]          # (4H, 1): per row of the weights
        bias = _bias(b_ih, b_hh)
        G = _input_projection(xp, x, w_ih * half_rows,         # (4, T, N, H)
                              None if bias is None else bias * half_rows[:, 0], 4)
        w_hh_T = _gate_blocks_T(xp, w_hh * half_rows)          # (4, H, H): W_hh,k^T
        hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)    # (T + 1, N, H)
        cs = _new_states(xp, c0, T, N, H, x.dtype, reverse)
        tanh_c = xp.empty((N, H), dtype=x.dtype)              # not kept: the backward recomputes it from c
        # half and shift as full (4, N, H) arrays: a same-shape multiply is faster than a broadcast one
        half = xp.empty((4, N, H), dtype=x.dtype)
        half[...] = half_gate[:, None, None]
        shift = 1 - half                                       # 0.5 for i, f, o; 0 for g
        G_steps = G.transpose(1, 0, 2, 3)                      # G_steps[t]: step t's (4, N, H), a view
        gates = xp.empty((4, N, H), dtype=x.dtype)             # step t's gates, contiguous: fast to work on
        i, f, g, o = gates
        ig = xp.empty((N, H), dtype=x.dtype)
        for t, prev, nxt in _steps(T, reverse):
            G_t = G_steps[t]
            xp.matmul(hs[prev], w_hh_T, out=gates)             # h_{t-1} W_hh,k^T for each gate k
            xp.add(gates, G_t, out=gates)                      #   + x_t W_ih,k^T + b_k
            xp.tanh(gates, out=gates)
            xp.multiply(gates, half, out=gates)
            xp.add(gates, shift, out=gates)                    # now [i, f, g, o]
            G_t[...] = gates                                   # kept for the backward
            c, c_prev = cs[nxt], cs[prev]
            xp.multiply(f, c_prev, out=c)                      # c_t = f * c_{t-1} + i * g
            xp.multiply(i, g, out=ig)
            xp.add(c, ig, out=c)
            xp.tanh(c, out=tanh_c)
            xp.multiply(o, tanh_c, out=hs[nxt])                # h_t = o * tanh(c_t)
            if mask is not None:                               # padded: keep both states
                keep = ~mask[t]
                xp.copyto(c, c_prev, where=keep)
                xp.copyto(hs[nxt], hs[prev], where=keep)
        ctx.save_for_backward(x, G, hs, cs, w_ih, w_hh, mask)
        ctx.reverse = reverse
        output, _, h_n = _outputs(hs, reverse)
        _, _, c_n = _outputs(cs, reverse)
        if mask is not None:
            output = output * mask
        return output, h_n, c_n

    @staticmethod
    def _local_derivatives(xp, gates, c_prev, tanh_c, dc_dh, scratch):
        """The factors next to dc and dh in da (see the class docstring), for a run of steps,
        written over the gates themselves (the backward needs them no more):

            gates (4, ...) = [i, f, g, o]  ->  [g i(1-i),  c_{t-1} f(1-f),  i (1-g^2),  tanh(c) o(1-o)]

        and dc_dh = o (1 - tanh(c)^2); scratch (2, ...) is a work buffer.
        """
        i, f, g, o = gates
        _tanh_slope(xp, tanh_c, out=dc_dh)
        dc_dh *= o                                             # dc_t / dh_t = o (1 - tanh(c_t)^2)
        _sigma_slope(xp, o, out=scratch[0])
        xp.multiply(scratch[0], tanh_c, out=o)                 # da_o / dh = tanh(c) o(1 - o)
        _sigma_slope(xp, gates[:2], out=scratch)               # i(1 - i), f(1 - f)
        xp.multiply(scratch[1], c_prev, out=f)                 # da_f / dc = c_{t-1} f(1 - f)
        scratch[0] *= g                                        # g i(1 - i)
        _tanh_slope(xp, g, out=g)
        g *= i                                                 # da_g / dc = i (1 - g^2)
        xp.copyto(i, scratch[0])                               # da_i / dc = g i(1 - i)

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n):
        x, G, hs, cs, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        T, N, _ = x.shape
        H = w_hh.shape[1]
        _, h_prev, _ = _outputs(hs, ctx.reverse)
        c_new, c_prev, _ = _outputs(cs, ctx.reverse)
        f_carry = G[1]
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dout = dout * valid                                # its output was a constant zero
            f_carry = G[1] * valid + padded                    # a padded step passes dc through
        # dA (4, T, N, H) takes the place of the gates G, run by run: no new 4TNH array
        # (unless the graph is kept for another backward, which needs G again)
        dA = G.copy() if ctx.retain_graph else G
        w_hh_k = w_hh.reshape(4, H, H)                         # W_hh,k: gate k's rows
        dA_steps = dA.transpose(1, 0, 2, 3)                    # dA_steps[t]: step t's (4, N, H), a view
        dh_parts = xp.empty((4, N, H), dtype=x.dtype)
        dh = xp.empty((N, H), dtype=x.dtype)
        dc = xp.empty((N, H), dtype=x.dtype)
        dh_next = dh_n.copy()
        dc_next = dc_n.copy()
        # the local derivatives depend only on the forward's values: computed for a run of
        # steps at once (all T steps in a small model), just before the loop reaches them
        for lo, hi, run in _step_runs(list(reversed(_steps(T, ctx.reverse))), N, H):
            f = f_carry[lo:hi].copy()                          # this run's f: small, stays in cache
            dc_dh = xp.empty((hi - lo, N, H), dtype=x.dtype)  # this run's dc_t / dh_t
            scratch = xp.empty((2, hi - lo, N, H), dtype=x.dtype)
            tanh_c = xp.tanh(c_new[lo:hi])                     # tanh(c_t), recomputed rather than kept
            FastLSTMFunction._local_derivatives(xp, dA[:, lo:hi], c_prev[lo:hi], tanh_c,
                                            dc_dh, scratch)
            if mask is not None:
                dA[:, lo:hi] *= valid[lo:hi]                   # no gradient through a padded step
                dc_dh *= valid[lo:hi]
            for t, _, _ in run:
                da = dA_steps[t]                               # (4, N, H): [i, f, g, o] blocks
                ifg, o = da[:3], da[3]
                xp.add(dout[t], dh_next, out=dh)               # dh = dout_t + dh_next
                xp.multiply(dh, dc_dh[t - lo], out=dc)
                xp.add(dc, dc_next, out=dc)                    # dc = dc_next + dh o (1 - tanh(c)^2)
                xp.multiply(ifg, dc, out=ifg)                  # da_i, da_f, da_g: times dc
                xp.multiply(o, dh, out=o)                      # da_o: times dh
                xp.matmul(da, w_hh_k, out=dh_parts)            # da_k W_hh,k for each gate k
                dh_parts.sum(axis=0, out=dh_next)              # dh_{t-1} = sum_k da_k W_hh,k
                xp.multiply(dc, f[t - lo], out=dc_next)        # dc_{t-1} = dc * f
                if mask is not None:
                    dh_next += dh * padded[t]
        dx, dw_ih, dw_hh, db_ih, db_hh = _projection_grads(ctx, dA, x, h_prev, w_ih, first=3)
        dh0 = dh_next if ctx.needs_input_grad[1] else None
        dc0 = dc_next if ctx.needs_input_grad[2] else None
        return dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh, None, None


# --------------------------------------------------------------------------- GRU

class FastGRUFunction(Function):
    """A GRU over T steps, gates (r, z, n) as in PyTorch (see ``gru_step_forward``):

        r = sigma(ai_r + ah_r),  z = sigma(ai_z + ah_z),   ai = x_t W_ih^T + b_ih,  ah = h_{t-1} W_hh^T + b_hh
        n = tanh(ai_n + r * ah_n)                      reset_after=True  (PyTorch)
        n = tanh(ai_n + (r * h_{t-1}) W_hn^T + b_hn)   reset_after=False (Cho et al., d2l)
        h_t = (1 - z) * n + z * h_{t-1}

    forward(x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after) -> (output (T, N, H), h_n)

    As in the LSTM the gates are stored gate-major, G (3, T, N, H) = [r, z, n].

    Backward, carrying dh from step t+1 into step t:
        da_n = dh (1 - z)(1 - n^2),   da_z = dh (h_{t-1} - n) z(1 - z)
        reset_after=True:   da_r = da_n ah_n r(1 - r);           dah = [da_r, da_z, da_n r]
                            dh_next = dh z + dah W_hh
        reset_after=False:  d(rh) = da_n W_hn;  da_r = d(rh) h_{t-1} r(1 - r)
                            dh_next = dh z + [da_r, da_z] W_hrz + d(rh) r
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after):
        check_shapes("gru", x, h0, w_ih, w_hh, 3)
        xp = backend.array_module(x, w_ih, w_hh)
        T, N, _ = x.shape
        H = w_hh.shape[1]
        dtype = x.dtype
        # as in the LSTM: halve the r, z rows so one tanh gives sigma(a) = (1 + tanh(a / 2)) / 2
        half = xp.full((3 * H, 1), 0.5, dtype=dtype)
        half[2 * H:] = 1
        b_hrz = None if b_hh is None else xp.concatenate([b_hh[:2 * H], xp.zeros((H,), dtype=dtype)])
        b_hn = None if b_hh is None else b_hh[2 * H:]
        # G holds [ai_r + ah_r, ai_z + ah_z, ai_n] and becomes [r, z, n]; b_hr, b_hz join the projection
        bias = _bias(b_ih, b_hrz)
        G = _input_projection(xp, x, w_ih * half, None if bias is None else bias * half[:, 0], 3)
        hs = _new_states(xp, h0, T, N, H, dtype, reverse)
        Hn = xp.empty((T, N, H), dtype=dtype)       # ah_n (reset_after) or r * h_{t-1} (not)
        hn = xp.empty((N, H), dtype=dtype)
        if reset_after:                             # [ah_r, ah_z, ah_n] in one batched matmul
            w_rec_T = _gate_blocks_T(xp, w_hh * half)
        else:                                       # [ah_r, ah_z]; ah_n waits for r
            w_rec_T = _gate_blocks_T(xp, w_hh[:2 * H] * 0.5)
            w_hn_T = xp.ascontiguousarray(w_hh[2 * H:].T)
        recurrent = xp.empty((w_rec_T.shape[0], N, H), dtype=dtype)
        r, z, n = G                                 # each (T, N, H): a gate at every step
        for t, prev, nxt in _steps(T, reverse):
            h_prev, h = hs[prev], hs[nxt]
            rz = G[:2, t]                                      # (2, N, H): step t's r and z
            xp.matmul(h_prev, w_rec_T, out=recurrent)
            rz += recurrent[:2]
            xp.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5                                          # now [r, z]
            if reset_after:
                if b_hn is None:
                    xp.copyto(Hn[t], recurrent[2])             # ah_n = h W_hn^T
                else:
                    xp.add(recurrent[2], b_hn, out=Hn[t])      # ah_n = h W_hn^T + b_hn
                xp.multiply(r[t], Hn[t], out=hn)               # r * ah_n
            else:
                xp.multiply(r[t], h_prev, out=Hn[t])           # r * h_{t-1}
                xp.matmul(Hn[t], w_hn_T, out=hn)               # (r * h_{t-1}) W_hn^T
                if b_hn is not None:
                    hn += b_hn
            n_t = n[t]
            n_t += hn
            xp.tanh(n_t, out=n_t)
            xp.subtract(h_prev, n_t, out=h)                    # h_t = n + z * (h_{t-1} - n)
            h *= z[t]
            h += n_t
            if mask is not None:
                xp.copyto(h, h_prev, where=~mask[t])
        ctx.save_for_backward(x, G, hs, Hn, w_ih, w_hh, mask)
        ctx.reverse, ctx.reset_after = reverse, reset_after
        output, _, h_n = _outputs(hs, reverse)
        if mask is not None:
            output = output * mask
        return output, h_n

    @staticmethod
    def _local_derivatives(xp, gates, h_prev, Hn, r_slope, scratch):
        """The factors of dh in dai (see the class docstring), for a run of steps, written over
        the gates themselves (the backward needs them no more):

            gates (3, ...) = [r, z, n]  ->  [da_r, da_z, da_n] / dh       (reset_after)
                                            [r, da_z, da_n] / dh, and r_slope = h_{t-1} r(1 - r)  (not)

        scratch (2, ...) is a work buffer.
        """
        r, z, n = gates
        one_minus_z, h_minus_n = scratch
        xp.subtract(1, z, out=one_minus_z)
        xp.subtract(h_prev, n, out=h_minus_n)
        z *= one_minus_z
        z *= h_minus_n                                          # da_z / dh = (h_{t-1} - n) z(1 - z)
        _tanh_slope(xp, n, out=n)
        n *= one_minus_z                                        # da_n / dh = (1 - z)(1 - n^2)
        if r_slope is None:
            _sigma_slope(xp, r, out=one_minus_z)
            xp.multiply(one_minus_z, Hn, out=r)
            r *= n                                              # da_r / dh = da_n ah_n r(1 - r)
        else:
            _sigma_slope(xp, r, out=r_slope)
            r_slope *= h_prev                                   # da_r / d(rh) = h_{t-1} r(1 - r)

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, G, hs, Hn, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        T, N, _ = x.shape
        H = w_hh.shape[1]
        reset_after = ctx.reset_after
        _, h_prev, _ = _outputs(hs, ctx.reverse)
        z_carry = G[1]
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dout = dout * valid                                 # its output was a constant zero
            z_carry = G[1] * valid + padded                     # a padded step passes dh through
        # dAI = [da_r, da_z, da_n] = dL/d(input projection), (3, T, N, H), takes the place of the
        # gates G run by run (unless the graph is kept for another backward, which needs G again);
        # with reset_after dah_n = da_n r is the gradient of the n rows' recurrent projection
        dAI = G.copy() if ctx.retain_graph else G
        da_n = dAI[2]
        dah_n = xp.empty_like(Hn) if reset_after else None
        r_slope = None if reset_after else xp.empty_like(Hn)
        w_hrz, w_hn = w_hh[:2 * H].reshape(2, H, H), w_hh[2 * H:]
        dh_parts = xp.empty((2, N, H), dtype=x.dtype)
        drh = xp.empty((N, H), dtype=x.dtype)
        dh = xp.empty((N, H), dtype=x.dtype)
        dh_next = dh_n.copy()
        # the local derivatives depend only on the forward's values: computed for a run of
        # steps at once (all T steps in a small model), just before the loop reaches them
        for lo, hi, run in _step_runs(list(reversed(_steps(T, ctx.reverse))), N, H):
            r = dAI[0, lo:hi].copy()                            # this run's r and z: the loop
            z = z_carry[lo:hi].copy()                           # still needs them
            scratch = xp.empty((2, hi - lo, N, H), dtype=x.dtype)
            FastGRUFunction._local_derivatives(xp, dAI[:, lo:hi], h_prev[lo:hi], Hn[lo:hi],
                                           None if reset_after else r_slope[lo:hi], scratch)
            if mask is not None:
                dAI[:, lo:hi] *= valid[lo:hi]                   # no gradient through a padded step
                if not reset_after:
                    r_slope[lo:hi] *= valid[lo:hi]
            for t, _, _ in run:
                xp.add(dout[t], dh_next, out=dh)                # dh = dout_t + dh_next
                if reset_after:
                    dai = dAI[:, t]
                    xp.multiply(dai, dh, out=dai)               # [da_r, da_z, da_n]
                    xp.multiply(da_n[t], r[t - lo], out=dah_n[t])   # dah_n = da_n * r (dah_r, dah_z = da_r, da_z)
                    xp.matmul(dah_n[t], w_hn, out=drh)          # dah W_hh = dah_n W_hn
                else:
                    dzn = dAI[1:, t]
                    xp.multiply(dzn, dh, out=dzn)               # da_z, da_n
                    xp.matmul(da_n[t], w_hn, out=drh)           # d(rh) = da_n W_hn
                    xp.multiply(drh, r_slope[t], out=dAI[0, t])     # da_r = d(rh) h r(1 - r)
                    drh *= r[t - lo]                            # d(rh) * r
                xp.matmul(dAI[:2, t], w_hrz, out=dh_parts)      # da_r W_hr, da_z W_hz
                xp.add(dh_parts[0], dh_parts[1], out=dh_next)   # dh_{t-1} = da_r W_hr + da_z W_hz
                dh_next += drh                                  #   + dah_n W_hn  (or + d(rh) * r)
                xp.multiply(dh, z[t - lo], out=drh)
                dh_next += drh                                  #   + dh * z
        # [dW_ih, db_ih] = dAI^T [x, 1].  The r, z rows of W_hh saw h_{t-1} with gradient
        # [da_r, da_z] (so b_hr, b_hz get b_ir's, b_iz's gradient); the n rows saw h_{t-1} with
        # gradient dah_n (reset_after), or r * h_{t-1} with gradient da_n (not): [dW_hn, db_hn] =
        # grad_n^T [input_n, 1].  Each is one matmul over all T steps stacked.
        need = ctx.needs_input_grad
        dx = _input_grad(xp, dAI, w_ih) if need[0] else None
        dAI = dAI.reshape(3, T * N, H)
        dw_ih = dw_hh = db_ih = db_hh = None
        if need[2] or need[4] or need[5]:
            grads_ih = xp.matmul(dAI.transpose(0, 2, 1), _with_ones(xp, x)).reshape(3 * H, -1)
            dw_ih = grads_ih[:, :-1] if need[2] else None
            db_ih = grads_ih[:, -1] if need[4] else None
        if need[3] or need[5]:
            grad_n, input_n = (dah_n, h_prev) if reset_after else (da_n, Hn)
            grads_n = grad_n.reshape(T * N, H).T @ _with_ones(xp, input_n)    # (H, H + 1)
            if need[3]:
                dw_rz = xp.matmul(dAI[:2].transpose(0, 2, 1), h_prev.reshape(T * N, H))
                dw_hh = xp.concatenate([dw_rz.reshape(2 * H, H), grads_n[:, :-1]])
            if need[5]:
                db_hh = xp.concatenate([grads_ih[:2 * H, -1], grads_n[:, -1]])
        dh0 = dh_next if ctx.needs_input_grad[1] else None
        return dx, dh0, dw_ih, dw_hh, db_ih, db_hh, None, None, None
