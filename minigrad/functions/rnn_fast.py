"""RNN, LSTM and GRU over whole sequences: the FAST tier.  Read rnn.py first.

(Over 400 lines on purpose: three Functions whose speed-ups must sit next to
the loops they change, each block citing the reference lines it replaces.)

Same Functions, same arguments, same numbers as the reference ``rnn.py`` (the
tests in tests/test_tiers.py prove it for every option); the nn layers run
these.  Each block below names the lines of the reference it speeds up.  Only
what a same-process A/B showed worth >= 3% on the benchmark it targets is kept
(benchmarks/bench_rnn.py sizes: in 128, hidden 256, batch 64, T = 50 / 200;
"tiny": in 8, hidden 8, batch 1, T = 50; the measured cost of the plain code
in brackets):

  1. Gate-major storage (LSTM, GRU).  The reference keeps a step's gates as
     column slices of an (N, 4H) array; here all steps' gates are one
     (n_gates, T, N, H) array, gate index first, so gate k of step t, G[k, t],
     is a contiguous (N, H) block and G[:, t] the whole step, (n_gates, N, H).
     Gate arithmetic on contiguous blocks is 3-5x cheaper than on strided
     column slices.  The projections are computed per gate, x W_ih,k^T, in one
     batched matmul over k.  (Replaces reference lines `a = xw[t] + h @ w_hh.T`
     and `i, f, g, o = (gates[t, :, k * H:(k + 1) * H] ...)`.)
  2. One tanh for all gates of a step (LSTM, GRU's r and z):
     sigma(a) = (1 + tanh(a / 2)) / 2 (rnn_steps.sigmoid), so with the sigmoid
     gates' weight rows halved once (exact in floating point), one tanh over the
     (4, N, H) step buffer, a multiply and an add activate all four gates.
     (Replaces the four lines `i = sigmoid(...)` ... `o = sigmoid(...)`; plain:
     tiny LSTM +30%; halving the gates each step instead of the weights once:
     tiny LSTM forward +4%, GRU at the lessons' size (batch 64, in 2, hidden 32) +3%.)
  3. Local derivatives a run of steps at a time (LSTM, GRU; all T for the RNN).
     The slopes (sigma', tanh', and the factors next to dc and dh) depend only
     on the forward's values, so they are computed before the loop for a
     cache-sized run of steps (``_step_runs``), and the loop only multiplies
     them by the carried gradient.  (Replaces the `da = [dc g i(1 - i), ...]`
     lines of the reference's backward loop; one run for all T: +10-20% at T = 200.)
  4. dA written over the gate array (LSTM, GRU).  The gates are needed only
     until their slopes are computed, so dA takes their memory instead of a new
     (n_gates, T, N, H) array, unless the graph is kept for another backward
     (``ctx.retain_graph``).  (Replaces `dA = xp.empty_like(gates)`; plain:
     +10-22% at T = 50 and 200, and one more 4TNH array in memory.)
  5. The LSTM recomputes tanh(c_t) in the backward instead of storing it
     (LSTM T = 200 extra memory 146 -> 107 MiB).
  6. States in one (T + 1, N, H) array ``hs``: step t reads hs[t] and writes
     hs[t + 1] (reverse: reads hs[t + 1], writes hs[t]), so the outputs and the
     states the backward needs are views, not copies; the recurrent weights are
     made contiguous once (a faster gemm operand).
  7. The bias trick: [x, 1] [W_ih, b]^T = x W_ih^T + b, so the input projection
     adds the biases inside its matmul, and [dW_ih, db] = dA^T [x, 1] gets the
     bias gradient from the same matmul as the weight's (the ones column sums
     dA).  (Replaces `xw = xw + b` in ``_input_projection`` and the sums in
     ``_sequence_grads``; plain: GRU forward +9%, LSTM T = 50 and 200 +3-5%.)
  8. ``out=`` where a plain expression would allocate a fresh T-sized array
     (the RNN's slopes: +14% at T = 50, in page faults) and in the forward
     steps of the LSTM and GRU, where each is one NumPy call fewer than the
     expression (tiny GRU +8%, tiny LSTM forward +2-4% as expressions).
  9. One sequence (N = 1, the LSTM): a step's gates (4, 1, H) gate-major are
     also the row (1, 4H), so the recurrent product h_{t-1} W_hh^T is one 2-D
     ``dot`` with the (H, 4H) W_hh^T instead of a batched matmul over the
     gates, and dh_{t-1} = sum_k da_k W_hh,k is one 2-D dot, da (1, 4H) W_hh,
     instead of a matmul per gate and their sum (``_recurrent_weights``,
     ``_recurrent_grad``).  Likewise the input projection is the plain rows
     (T, 4H) = (T, 4, 1, H), one 2-D matmul whose step t is a contiguous
     (4, 1, H) block (G is then filled step by step; H <= 16: block 12).
     (Replaces `a = ... + h @ w_hh.T`, `dh = da @ w_hh` and
     ``_input_projection``'s gate-major layout for N = 1; plain: tiny LSTM
     +10% for the two step products, +5% for the projection.)
 10. The LSTM's backward makes dout contiguous once: after a loss like out.sum()
     it is a broadcast view (stride 0), and each step's dout[t] + dh then costs
     more (plain: tiny LSTM +3%, its Function alone +4%).
 11. One small sequence (N = 1, H <= 16, no lengths; the LSTM's backward): a
     step's cost is NumPy's per-call overhead, and broadcasting one (N, H)
     array over three gates (`da[:3] *= dc`) costs three plain calls.  So the
     loop works on (1, 4H) rows, all four blocks at once: dh repeated 4 times,
     dc4 = [dc, dc, dc, dh] (the slopes of c padded with a 1, the carried dc
     with a 0), da = slopes * dc4 in one call, and dh_{t-1} repeated 4 times
     from one dot with W_hh tiled (4H, 4H).  G is stored step-major for N = 1
     so that a step's row is a view.  (Replaces the five lines of the loop
     body; plain: tiny LSTM +8%.  The tiled W_hh makes the dot 4x larger: at
     H = 32 even, at H = 64 +8%, hence the limit.)
 12. One small sequence in the LSTM's forward (N = 1, H <= 16): the states live
     in rows Z[r] = [h, x, 1] (hs is a view of Z's first H columns), each row
     holding the x of the step that reads that state, so a step's gates are ONE
     dot, [h_{t-1}, x_t, 1] [W_hh, W_ih, b]^T, with no input projection
     before the loop and no add per step.  (Replaces `a = xw[t] + h @ w_hh.T`
     and ``_input_projection`` there; plain (block 9): tiny LSTM forward +10%,
     fwd+bwd +4%.  For larger sizes one projection matmul for all T beats
     reading W_ih at every step.)

Returned to plain code after an A/B showed < 3% on its benchmark: one merged
weight-gradient matmul dA^T [x, h_{t-1}, 1] (split: T = 200 4% faster, T = 50
2% slower), the slopes computed into scratch buffers written over the gates
(named temporaries now), chains of ``out=`` ufunc calls in the backward loops
(equal within 1-2%).  Tried and not kept: the LSTM's dh_{t-1} = da W_hh as one
matmul of da seen as (N, 4H) rows instead of one per gate and a sum (tiny LSTM
-6%, but batch 8, hidden 256: +20%).

The file is longer than the ~400 lines of the others because it holds the
three Functions next to the list of blocks above that explains them.

Variable lengths: ``mask`` (T, N, 1) as in rnn.py.  A padded step keeps its
state (copied with ``where``), outputs zero, and in the backward its slopes are
zero and the carried gradient passes through.
"""
from .. import backend
from ..autograd import Function
from .rnn import check_shapes


def _steps(T, reverse):
    """(t, index in hs of the state read, index of the state written) in processing order."""
    if reverse:
        return [(t, t + 1, t) for t in range(T - 1, -1, -1)]
    return [(t, t, t + 1) for t in range(T)]


def _new_states(xp, h0, T, N, H, dtype, reverse):
    """The (T + 1, N, H) state array, h0 (or zeros) at the end the loop starts from."""
    hs = xp.empty((T + 1, N, H), dtype=dtype)
    hs[T if reverse else 0] = 0 if h0 is None else h0
    return hs


def _outputs(hs, reverse):
    """(states after each step, states before each step, final state), all views of hs."""
    if reverse:
        return hs[:-1], hs[1:], hs[0]
    return hs[1:], hs[:-1], hs[-1]


def _sequence_outputs(hs, reverse, mask):
    """The forward's results from its states: output (T, N, H), zero at padded steps, and h_n."""
    output, _, h_n = _outputs(hs, reverse)
    return (output if mask is None else output * mask), h_n


def _with_ones(xp, x):
    """[x, 1]: (T, N, D) -> rows (T*N, D + 1) with a column of ones (the bias trick).

    [x, 1] [W, b]^T = x W^T + b, so the bias costs no pass of its own in the
    projection, and [dW, db] = dA^T [x, 1]: the ones column sums dA.
    """
    T, N, D = x.shape
    ones = xp.empty((T * N, D + 1), dtype=x.dtype)
    ones[:, :D] = x.reshape(T * N, D)
    ones[:, D] = 1
    return ones


def _fast_input_projection(xp, x, w_ih, biases, n_gates, gate_major=True):
    """x W_ih^T + biases for all T steps, gate-major: (T, N, D) -> (n_gates, T, N, H), ONE matmul.

    Block k holds gate k, x W_ih,k^T + b_k (W_ih,k: rows kH..(k+1)H of W_ih).  With
    biases it is [x, 1] [W_ih, b]^T (block 7).  gate_major=False: the plain rows
    (T*N, n_gates*H), one 2-D matmul (block 9).
    """
    T, N, D = x.shape
    H = w_ih.shape[0] // n_gates
    biases = [b for b in biases if b is not None]
    if biases:
        x = _with_ones(xp, x)
        w_ih = xp.concatenate([w_ih, sum(biases[1:], biases[0])[:, None]], axis=1)
    else:
        x = x.reshape(T * N, D)
    if not gate_major:
        return xp.matmul(x, w_ih.T)
    w_k_T = w_ih.reshape(n_gates, H, w_ih.shape[1]).transpose(0, 2, 1)  # (n_gates, D[+1], H): W_ih,k^T
    return xp.matmul(x, w_k_T).reshape(n_gates, T, N, H)


def _gate_blocks_T(xp, w):
    """(n_gates*H, H) recurrent weights -> (n_gates, H, H), block k = W_k^T, contiguous."""
    H = w.shape[1]
    return xp.ascontiguousarray(w.reshape(-1, H, H).transpose(0, 2, 1))


def _recurrent_weights(xp, w, N):
    """(n_gates*H, H) recurrent weights -> the right operand of h_{t-1} (N, H) for a step's gates (block 9).

    (n_gates, H, H), block k = W_k^T, giving the gates gate-major, (n_gates, N, H); for one
    sequence (N = 1) the (H, n_gates*H) matrix W^T instead: its (1, n_gates*H) row product IS
    the gates gate-major, from one 2-D matmul.
    """
    if N == 1:
        return xp.ascontiguousarray(w.T)
    return _gate_blocks_T(xp, w)


def _recurrent_grad(xp, da, w_hh, parts):
    """dh_{t-1} = sum_k da_k W_hh,k for a step's da (n_gates, N, H) (block 9).

    A batched matmul per gate into ``parts`` (n_gates, N, H) and their sum; for one sequence
    (N = 1) da is the row [da_1, ..., da_k] and the sum is ONE 2-D matmul, da (1, n_gates*H) W_hh.
    """
    n_gates, N, H = da.shape
    if N == 1:
        return xp.dot(da.reshape(1, n_gates * H), w_hh)
    xp.matmul(da, w_hh.reshape(n_gates, H, H), out=parts)
    return parts.sum(axis=0)


def _input_grad(xp, dA, w_ih):
    """dx = dA W_ih = sum_k dA_k W_ih,k for dA (n_gates, T*N, H) gate-major -> (T*N, D).

    Accumulated one gate at a time: a matmul over all gates at once and its sum
    would hold an (n_gates, T*N, D) temporary (LSTM T = 50 8% slower).
    """
    n_gates, _, H = dA.shape
    w_ih_k = w_ih.reshape(n_gates, H, w_ih.shape[1])                   # W_ih,k: gate k's rows
    dx = dA[0] @ w_ih_k[0]
    for k in range(1, n_gates):
        dx += dA[k] @ w_ih_k[k]
    return dx


def _projection_grads(ctx, dA, x, h_prev, w_ih, first):
    """dx and the weight and bias gradients of an RNN or LSTM from dA (n_gates, T, N, H).

    The reference's ``_sequence_grads``, gate-major: over all T*N rows stacked,
    dx = sum_k dA_k W_ih,k,  [dW_ih,k, db_k] = dA_k^T [X, 1],  dW_hh,k = dA_k^T H_prev.
    ``first`` is the position of w_ih among the forward's arguments.  Returns
    (dx, dw_ih, dw_hh, db_ih, db_hh), None where no gradient is needed.
    """
    xp = backend.array_module(dA)
    n_gates, T, N, H = dA.shape
    D = x.shape[2]
    need = ctx.needs_input_grad
    dA = dA.reshape(n_gates, T * N, H)
    dx = _input_grad(xp, dA, w_ih).reshape(T, N, D) if need[0] else None
    if not any(need[first:first + 4]):
        return dx, None, None, None, None
    dA_T = dA.transpose(0, 2, 1)                                        # (n_gates, H, T*N)
    grads_ih = xp.matmul(dA_T, _with_ones(xp, x)).reshape(n_gates * H, D + 1)   # [dW_ih, db], block 7
    dw_ih = grads_ih[:, :D] if need[first] else None
    db = grads_ih[:, D]
    dw_hh = xp.matmul(dA_T, h_prev.reshape(T * N, H)).reshape(n_gates * H, H) if need[first + 1] else None
    db_ih = db if need[first + 2] else None
    db_hh = db.copy() if need[first + 3] else None
    return dx, dw_ih, dw_hh, db_ih, db_hh


def _float_mask(mask, dtype):
    """Bool mask (T, N, 1) -> (valid, padded) as 0/1 arrays of ``dtype``."""
    valid = mask.astype(dtype)
    return valid, 1 - valid


def _step_runs(steps, N, H, elements=1 << 15):
    """Split the steps (in processing order) into runs of consecutive t, each (lo, hi, run).

    A run holds about ``elements`` values per gate (steps x N x H), so its slices
    fit in cache: the backward computes a run's slopes together and uses them
    while they are still in cache.  A small model has one run: all T steps.
    """
    size = max(1, elements // (N * H))
    for start in range(0, len(steps), size):
        run = steps[start:start + size]
        ts = [t for t, _, _ in run]
        yield min(ts), max(ts) + 1, run


# --------------------------------------------------------------------------- RNN

class FastRNNFunction(Function):
    """The reference's RNNFunction (same arguments and results), fast: see the module docstring."""

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity):
        T, N, H = check_shapes("rnn", x, h0, w_ih, w_hh, 1)
        xp = backend.array_module(x, w_ih, w_hh)
        xw = _fast_input_projection(xp, x, w_ih, (b_ih, b_hh), 1)[0]       # (T, N, H), all steps
        hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)            # (T + 1, N, H)
        w_hh_T = xp.ascontiguousarray(w_hh.T)
        padded_steps = None if mask is None else ~mask                 # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            h = hs[nxt]
            xp.matmul(hs[prev], w_hh_T, out=h)                         # a = h_{t-1} W_hh^T
            h += xw[t]                                                 #   + x_t W_ih^T + b
            if nonlinearity == "tanh":
                xp.tanh(h, out=h)
            else:
                xp.maximum(h, 0, out=h)
            if mask is not None:                                       # padded: keep the state
                xp.copyto(h, hs[prev], where=padded_steps[t])
        ctx.save_for_backward(x, hs, w_ih, w_hh, mask)
        ctx.reverse, ctx.nonlinearity = reverse, nonlinearity
        return _sequence_outputs(hs, reverse, mask)

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, hs, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        h_new, h_prev, _ = _outputs(hs, ctx.reverse)
        # the slope f'(a_t) for all steps at once (block 3), written with out= (block 8: a
        # fresh (T, N, H) temporary costs RNN T = 50 14%, in page faults)
        slopes = xp.empty_like(h_new)
        if ctx.nonlinearity == "tanh":
            xp.multiply(h_new, h_new, out=slopes)
            xp.subtract(1, slopes, out=slopes)                         # tanh' = 1 - h^2
        else:
            xp.greater(h_new, 0, out=slopes)                           # relu' = [h > 0]
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            slopes *= valid                                            # no gradient through a padded step
            dout = dout * valid                                        # its output was a constant zero
        dA = slopes                                                    # step t's slope becomes da_t below
        dh_next = dh_n
        for t, _, _ in reversed(_steps(x.shape[0], ctx.reverse)):
            dh = dout[t] + dh_next
            da = dA[t]
            da *= dh                                                   # da_t = dh * f'(a_t)
            dh_next = da @ w_hh                                        # dh_{t-1} = da_t W_hh
            if mask is not None:
                dh_next += dh * padded[t]                              # a padded step passes dh through
        dx, dw_ih, dw_hh, db_ih, db_hh = _projection_grads(ctx, dA[None], x, h_prev, w_ih, first=2)
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None


# --------------------------------------------------------------------------- LSTM

class FastLSTMFunction(Function):
    """The reference's LSTMFunction (same arguments and results), fast: see the module docstring.

    The gates are G (4, T, N, H) = [i, f, g, o] gate-major; the backward replaces
    them, a run of steps at a time, by their slopes and then by dA.
    """

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
        T, N, H = check_shapes("lstm", x, h0, w_ih, w_hh, 4, (("c0", c0),))
        xp = backend.array_module(x, w_ih, w_hh)
        # sigma(a) = (1 + tanh(a / 2)) / 2 for i, f, o and tanh(a) for g (block 2): with the
        # i, f, o rows of the weights halved (exact in floating point), one tanh of the step's
        # pre-activations, times ``half`` plus ``shift``, gives all four gates
        half_gate = xp.asarray([0.5, 0.5, 1, 0.5], dtype=x.dtype)
        half_rows = xp.repeat(half_gate, H)                             # (4H,): per row of the weights
        Z = None
        if N == 1:   # (4, T, N, H) filled step by step, stored step-major: a step's (1, 4H) row is contiguous
            G = xp.empty((T, 4, N, H), dtype=x.dtype).transpose(1, 0, 2, 3)      # (blocks 9 and 11)
        if N == 1 and H <= 16:                                          # block 12: rows [h_{t-1}, x_t, 1]
            D = x.shape[2]
            Z = xp.empty((T + 1, H + D + 1), dtype=x.dtype)             # row r: hs[r], the x that meets it, 1
            Z[(1 if reverse else 0):(T + 1 if reverse else T), H:H + D] = x[:, 0]
            Z[0 if reverse else T, H:H + D] = 0                         # the final state meets no x
            Z[:, H + D] = 1
            bias = xp.zeros(4 * H, dtype=x.dtype)
            for b in (b_ih, b_hh):
                bias = bias if b is None else bias + b
            w_all = xp.concatenate([w_hh, w_ih, bias[:, None]], axis=1) * half_rows[:, None]
            w_rec = xp.ascontiguousarray(w_all.T)                       # (H + D + 1, 4H)
            hs = Z[:, None, :H]                                         # (T + 1, 1, H), a view
            hs[T if reverse else 0] = 0 if h0 is None else h0
        else:
            projection = _fast_input_projection(xp, x, w_ih * half_rows[:, None],  # a / 2 (a for g), x part
                                                [None if b is None else b * half_rows for b in (b_ih, b_hh)], 4,
                                                gate_major=N > 1)
            if N == 1:                                                  # block 9: rows (T, 4H) = (T, 4, 1, H)
                G_in = projection.reshape(T, 4, N, H)                   # G_in[t]: step t's x part, contiguous
            else:
                G = projection                                          # (4, T, N, H), gate-major
                G_in = G.transpose(1, 0, 2, 3)                          # G_in[t]: step t's x part, a view
            w_rec = _recurrent_weights(xp, w_hh * half_rows[:, None], N)    # W_hh^T halved, block 9
            hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)         # (T + 1, N, H)
        cs = _new_states(xp, c0, T, N, H, x.dtype, reverse)
        half = xp.empty((4, N, H), dtype=x.dtype)
        half[...] = half_gate[:, None, None]
        shift = 1 - half                                                # 1/2 for i, f, o; 0 for g
        G_steps = G.transpose(1, 0, 2, 3)                               # G_steps[t]: step t's gates, a view
        gates = xp.empty((4, N, H), dtype=x.dtype)                      # step t's gates, contiguous
        i, f, g, o = gates
        gates_rec = gates.reshape(1, 4 * H) if N == 1 else gates        # block 9: as a (1, 4H) row
        product = xp.dot if N == 1 else xp.matmul                       #   (dot: the cheaper 2-D call)
        ig = xp.empty((N, H), dtype=x.dtype)
        tanh_c = xp.empty((N, H), dtype=x.dtype)
        padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            # block 8: out= calls, each a NumPy call fewer than the plain expression
            if Z is None:
                product(hs[prev], w_rec, out=gates_rec)                 # h_{t-1} W_hh,k^T for each gate k
                xp.add(gates, G_in[t], out=gates)                       #   + x_t W_ih,k^T + b_k
            else:
                xp.dot(Z[prev:prev + 1], w_rec, out=gates_rec)          # block 12: [h_{t-1}, x_t, 1] W^T
            xp.tanh(gates, out=gates)
            xp.multiply(gates, half, out=gates)
            xp.add(gates, shift, out=gates)                             # now [i, f, g, o]
            G_steps[t] = gates                                          # kept for the backward
            c = cs[nxt]
            xp.multiply(f, cs[prev], out=c)                             # c_t = f * c_{t-1} + i * g
            xp.multiply(i, g, out=ig)
            xp.add(c, ig, out=c)
            xp.tanh(c, out=tanh_c)
            xp.multiply(o, tanh_c, out=hs[nxt])                         # h_t = o * tanh(c_t)
            if mask is not None:                                        # padded: keep both states
                xp.copyto(cs[nxt], cs[prev], where=padded_steps[t])
                xp.copyto(hs[nxt], hs[prev], where=padded_steps[t])
        ctx.save_for_backward(x, G, hs, cs, w_ih, w_hh, mask)
        ctx.reverse = reverse
        output, h_n = _sequence_outputs(hs, reverse, mask)
        return output, h_n, _outputs(cs, reverse)[2]

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n):
        x, G, hs, cs, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        H = w_hh.shape[1]
        dout = xp.ascontiguousarray(dout)                               # block 10: not a broadcast view
        _, h_prev, _ = _outputs(hs, ctx.reverse)
        c_new, c_prev, _ = _outputs(cs, ctx.reverse)
        f_carry = G[1]                                                  # dc_{t-1} = dc * f
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dout = dout * valid                                         # its output was a constant zero
            f_carry = G[1] * valid + padded                             # a padded step passes dc through
        dA_steps = G.transpose(1, 0, 2, 3)                              # dA_steps[t]: step t's (4, N, H)
        if ctx.retain_graph:                                            # block 4: dA takes G's memory
            dA_steps = dA_steps.copy()                                  #   (same layout: block 11's rows)
        dA = dA_steps.transpose(1, 0, 2, 3)                             # (4, T, N, H)
        dh_parts = xp.empty((4, dout.shape[1], H), dtype=x.dtype)
        dh_next, dc_next = dh_n, dc_n
        one_row = dout.shape[1] == 1 and mask is None and H <= 16       # block 11
        if one_row:
            rows = dA_steps.reshape(x.shape[0], 1, 4 * H)               # a view: step-major for N = 1
            dout4 = xp.concatenate([dout] * 4, axis=-1)                 # (T, 1, 4H): [dout, dout, dout, dout]
            w_hh4 = xp.concatenate([w_hh] * 4, axis=1)                  # (4H, 4H): da W_hh4 = [dh_{t-1}] * 4
            zeros = xp.zeros_like(dh_n)
            dh_next4 = xp.concatenate([dh_n] * 4, axis=-1)
            dc_next4 = xp.concatenate([dc_n, dc_n, dc_n, zeros], axis=-1)
        for lo, hi, run in _step_runs(list(reversed(_steps(x.shape[0], ctx.reverse))), *dh_n.shape):
            # block 3: this run's slopes, from its gates (which dA[:, lo:hi] then overwrites)
            i, f, g, o = G[:, lo:hi]
            tanh_c = xp.tanh(c_new[lo:hi])                              # block 5: recomputed
            slope_c = o * (1 - tanh_c * tanh_c)                         # dc_t / dh_t (h = o tanh(c))
            slope_i = g * i * (1 - i)                                   # da_i / dc
            slope_f = c_prev[lo:hi] * f * (1 - f)                       # da_f / dc
            slope_g = i * (1 - g * g)                                   # da_g / dc
            slope_o = tanh_c * o * (1 - o)                              # da_o / dh
            f_run = f_carry[lo:hi].copy()
            # dA is G (block 4): from here on the views i, f, g, o hold these slopes, and are not read
            dA[0, lo:hi], dA[1, lo:hi], dA[2, lo:hi], dA[3, lo:hi] = slope_i, slope_f, slope_g, slope_o
            if mask is not None:
                dA[:, lo:hi] *= valid[lo:hi]                            # no gradient through a padded step
                slope_c *= valid[lo:hi]
            if one_row:   # block 11: the loop below on (1, 4H) rows, all four blocks at once
                ones = xp.ones_like(slope_c)
                slope_c4 = xp.concatenate([slope_c, slope_c, slope_c, ones], axis=-1)      # dc4 ends in dh
                f_run4 = xp.concatenate([f_run, f_run, f_run, 0 * ones], axis=-1)        # dc_next4 ends in 0
                for t, _, _ in run:
                    dh4 = dout4[t] + dh_next4                           # [dh, dh, dh, dh]
                    dc4 = dc_next4 + dh4 * slope_c4[t - lo]             # [dc, dc, dc, dh]
                    xp.multiply(rows[t], dc4, out=rows[t])              # [da_i, da_f, da_g, da_o]
                    dh_next4 = xp.dot(rows[t], w_hh4)                   # [dh_{t-1}] * 4
                    dc_next4 = dc4 * f_run4[t - lo]                     # [dc_{t-1}] * 3, 0
                continue
            for t, _, _ in run:
                da = dA_steps[t]                                        # (4, N, H): the slopes, then da
                dh = dout[t] + dh_next
                dc = dc_next + dh * slope_c[t - lo]
                da[:3] *= dc                                            # da_i, da_f, da_g
                da[3] *= dh                                             # da_o
                dh_next = _recurrent_grad(xp, da, w_hh, dh_parts)       # dh_{t-1} = sum_k da_k W_hh,k
                dc_next = dc * f_run[t - lo]                            # dc_{t-1} = dc * f
                if mask is not None:
                    dh_next += dh * padded[t]
        if one_row:
            dh_next, dc_next = dh_next4[:, :H], dc_next4[:, :H]
        dx, dw_ih, dw_hh, db_ih, db_hh = _projection_grads(ctx, dA, x, h_prev, w_ih, first=3)
        return dx, dh_next, dc_next, dw_ih, dw_hh, db_ih, db_hh, None, None


# --------------------------------------------------------------------------- GRU

class FastGRUFunction(Function):
    """The reference's GRUFunction (same arguments and results), fast: see the module docstring.

    G (3, T, N, H) holds [ai_r + ah_r, ai_z + ah_z, ai_n] and becomes [r, z, n];
    ``n_part`` (T, N, H) keeps what the n rows' recurrent term needs in the backward:
    ah_n = h_{t-1} W_hn^T + b_hn (reset_after) or r * h_{t-1} (not).
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after):
        T, N, H = check_shapes("gru", x, h0, w_ih, w_hh, 3)
        xp = backend.array_module(x, w_ih, w_hh)
        dtype = x.dtype
        # sigma(a) = (1 + tanh(a / 2)) / 2 (block 2): the r, z rows of the weights and biases
        # halved once (exact), so one tanh, a multiply and an add give r and z
        half_rows = xp.ones((3 * H,), dtype=dtype)
        half_rows[:2 * H] = 0.5
        b_hrz = None if b_hh is None else xp.concatenate([b_hh[:2 * H], xp.zeros((H,), dtype=dtype)])
        b_hn = None if b_hh is None else b_hh[2 * H:]
        G = _fast_input_projection(xp, x, w_ih * half_rows[:, None],         # b_hr, b_hz join the projection
                              [None if b is None else b * half_rows for b in (b_ih, b_hrz)], 3)
        hs = _new_states(xp, h0, T, N, H, dtype, reverse)
        n_part = xp.empty((T, N, H), dtype=dtype)
        if reset_after:                                                 # [ah_r, ah_z, ah_n] in one batched matmul
            w_rec_T = _gate_blocks_T(xp, w_hh * half_rows[:, None])
        else:                                                           # [ah_r, ah_z]; ah_n waits for r
            w_rec_T = _gate_blocks_T(xp, w_hh[:2 * H] * 0.5)
            w_hn_T = xp.ascontiguousarray(w_hh[2 * H:].T)
        recurrent = xp.empty((w_rec_T.shape[0], N, H), dtype=dtype)
        r, z, n = G                                                     # each (T, N, H)
        n_rec = xp.empty((N, H), dtype=dtype)
        padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            h_prev = hs[prev]
            rz = G[:2, t]                                               # (2, N, H): step t's r and z
            xp.matmul(h_prev, w_rec_T, out=recurrent)
            rz += recurrent[:2]                                         # a / 2 for r and z
            xp.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5                                                   # now [r, z]
            # block 8: out= into the stored arrays (tiny GRU +8% as plain expressions)
            if reset_after:
                if b_hn is None:
                    xp.copyto(n_part[t], recurrent[2])                  # ah_n = h_{t-1} W_hn^T
                else:
                    xp.add(recurrent[2], b_hn, out=n_part[t])           #   (+ b_hn)
                xp.multiply(r[t], n_part[t], out=n_rec)                 # r * ah_n
            else:
                xp.multiply(r[t], h_prev, out=n_part[t])                # r * h_{t-1}
                xp.matmul(n_part[t], w_hn_T, out=n_rec)                 # (r * h_{t-1}) W_hn^T
                if b_hn is not None:
                    n_rec += b_hn
            n_t = n[t]
            n_t += n_rec
            xp.tanh(n_t, out=n_t)                                       # n = tanh(ai_n + n_rec)
            h = hs[nxt]
            xp.subtract(h_prev, n_t, out=h)
            h *= z[t]
            h += n_t                                                    # h_t = n + z (h_{t-1} - n)
            if mask is not None:
                xp.copyto(hs[nxt], h_prev, where=padded_steps[t])
        ctx.save_for_backward(x, G, hs, n_part, w_ih, w_hh, mask)
        ctx.reverse, ctx.reset_after = reverse, reset_after
        return _sequence_outputs(hs, reverse, mask)

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, G, hs, n_part, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        T, N, _ = x.shape
        H = w_hh.shape[1]
        reset_after = ctx.reset_after
        _, h_prev, _ = _outputs(hs, ctx.reverse)
        z_carry = G[1]                                                  # dh_{t-1} gets dh * z
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dout = dout * valid                                         # its output was a constant zero
            z_carry = G[1] * valid + padded                             # a padded step passes dh through
        dAI = G.copy() if ctx.retain_graph else G                       # block 4: dL/d(input projection)
        da_n = dAI[2]
        dah_n = xp.empty_like(n_part) if reset_after else None          # da_n * r: the n rows' recurrent grad
        r_slope = None if reset_after else xp.empty_like(n_part)        # da_r / d(rh) = h_{t-1} r(1 - r)
        w_hrz, w_hn = w_hh[:2 * H].reshape(2, H, H), w_hh[2 * H:]
        dh_parts = xp.empty((2, N, H), dtype=x.dtype)
        dh_next = dh_n
        for lo, hi, run in _step_runs(list(reversed(_steps(T, ctx.reverse))), N, H):
            # block 3: this run's slopes, from its gates (which dAI[:, lo:hi] then overwrites)
            r, z, n = G[:, lo:hi]
            slope_n = (1 - z) * (1 - n * n)                             # da_n / dh
            slope_z = (h_prev[lo:hi] - n) * z * (1 - z)                 # da_z / dh
            r_run, z_run = r.copy(), z_carry[lo:hi].copy()
            if reset_after:
                dAI[0, lo:hi] = slope_n * n_part[lo:hi] * r * (1 - r)   # da_r / dh = da_n/dh ah_n r(1 - r)
            else:
                r_slope[lo:hi] = h_prev[lo:hi] * r * (1 - r)
            dAI[1, lo:hi], dAI[2, lo:hi] = slope_z, slope_n                # dAI is G (block 4): r, z, n not read after
            if mask is not None:
                dAI[:, lo:hi] *= valid[lo:hi]                           # no gradient through a padded step
                if not reset_after:
                    r_slope[lo:hi] *= valid[lo:hi]
            for t, _, _ in run:
                dh = dout[t] + dh_next
                if reset_after:
                    dAI[:, t] *= dh                                     # [da_r, da_z, da_n]
                    dah_n[t] = da_n[t] * r_run[t - lo]
                    d_rec = dah_n[t] @ w_hn                             # dah_n W_hn
                else:
                    dAI[1:, t] *= dh                                    # da_z, da_n
                    d_rh = da_n[t] @ w_hn                               # d(r * h_{t-1})
                    dAI[0, t] = d_rh * r_slope[t]                       # da_r
                    d_rec = d_rh * r_run[t - lo]
                xp.matmul(dAI[:2, t], w_hrz, out=dh_parts)              # da_r W_hr, da_z W_hz
                dh_next = dh_parts[0] + dh_parts[1] + d_rec + dh * z_run[t - lo]
        # the reference's _sequence_grads, gate-major; the n rows of W_hh saw h_{t-1} with
        # gradient dah_n (reset_after), or r * h_{t-1} with gradient da_n (not)
        need = ctx.needs_input_grad
        dAI = dAI.reshape(3, T * N, H)
        dx = _input_grad(xp, dAI, w_ih).reshape(x.shape) if need[0] else None
        grads_ih = xp.matmul(dAI.transpose(0, 2, 1), _with_ones(xp, x)).reshape(3 * H, -1)  # [dW_ih, db_ih]
        dw_ih = grads_ih[:, :-1] if need[2] else None
        grad_n, input_n = (dah_n, h_prev) if reset_after else (da_n, n_part)
        grad_n = grad_n.reshape(T * N, H)
        dw_hh = None
        if need[3]:
            dw_rz = xp.matmul(dAI[:2].transpose(0, 2, 1), h_prev.reshape(T * N, H)).reshape(2 * H, H)
            dw_hh = xp.concatenate([dw_rz, grad_n.T @ input_n.reshape(T * N, H)])
        db_i = grads_ih[:, -1]
        db_ih = db_i if need[4] else None
        db_hh = xp.concatenate([db_i[:2 * H], grad_n.sum(axis=0)]) if need[5] else None
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None
