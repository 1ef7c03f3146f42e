"""RNN, LSTM and GRU over whole sequences: the FAST tier.  Read rnn.py (and rnn_steps.py) first.

Same Functions, same arguments, same numbers as the reference ``rnn.py``, which
loops over the step functions of ``rnn_steps.py``; tests/test_tiers.py proves
the two equal for every option.  The layers run these unless built with
``reference=True``.  What this file changes relative to the reference, and
nothing else (the equations are rnn_steps.py's, rearranged; the measured cost
of the plain code in brackets, benchmarks/bench_rnn.py sizes: in 128, hidden
256, batch 64, T = 50 / 200, float32, one thread):

  0. Whole-sequence products.  The reference's step computes x_t W_ih^T + b
     at every step and returns each step's dW_ih, dW_hh, db and dx_t; here the
     input projection of all T steps is ONE matmul before the loop, and after
     the loop dx = dA W_ih, dW_ih = dA^T X, dW_hh = dA^T H_prev, db = sum dA
     are one matmul each over all T*N rows (``_projection_grads``), so the
     loops only carry h_{t-1} W_hh^T forward and da W_hh backward.  The loop
     bodies are written out here instead of calling the step functions, so
     that the blocks below can change how they store and compute.
  1. Gate-major storage (LSTM, GRU).  The reference keeps a step's gates as
     column slices of an (N, 4H) array; here all steps' gates are one
     (n_gates, T, N, H) array, gate index first, so gate k of step t, G[k, t],
     is a contiguous (N, H) block and G[:, t] the whole step, (n_gates, N, H).
     Gate arithmetic on contiguous blocks is 3-5x cheaper than on strided
     column slices.  The projections are computed per gate, x W_ih,k^T, in one
     batched matmul over k.
  2. One tanh for all gates of a step (LSTM, GRU's r and z):
     sigma(a) = (1 + tanh(a / 2)) / 2 (rnn_steps.sigmoid), so with the sigmoid
     gates' weight rows halved once (exact in floating point), one tanh over the
     (4, N, H) step buffer, a multiply and an add activate all four gates.
     (Plain: tiny LSTM +30%; halving the gates each step instead of the weights
     once: GRU at the lessons' size (batch 64, in 2, hidden 32) +3%.)  One step
     (T = 1, decoding a token at a time) halves its pre-activations instead of
     the weights (block 14): GRU LM decoding, hidden 256, greedy 1.40x -> 0.93x
     PyTorch, beam search (5 beams) 1.41x -> 1.18x.
  3. Local derivatives a run of steps at a time (LSTM, GRU; all T for the RNN).
     The slopes (sigma', tanh', and the factors next to dc and dh) depend only
     on the forward's values, so they are computed before the loop for a
     cache-sized run of steps (``_step_runs``: about 2^15 values per gate), and
     the loop only multiplies them by the carried gradient.  (One run for all
     T: +10-20% at T = 200.)
  4. dA written over the gate array (LSTM, GRU).  The gates are needed only
     until their slopes are computed, so dA takes their memory instead of a new
     (n_gates, T, N, H) array, unless the graph is kept for another backward
     (``ctx.retain_graph``).  (Plain: +10-22% at T = 50 and 200, and one more
     4TNH array in memory.)
  5. The LSTM recomputes tanh(c_t) in the backward instead of storing it
     (LSTM T = 200 extra memory 146 -> 107 MiB).
  6. States in one (T + 1, N, H) array ``hs``: step t reads hs[t] and writes
     hs[t + 1] (reverse: reads hs[t + 1], writes hs[t]), so the outputs and the
     states the backward needs are views, not copies; the recurrent weights are
     made contiguous once (a faster gemm operand), except for one step (T = 1,
     decoding a token at a time: one product cannot pay back the copy) and for
     one sequence (N = 1, whose matrix-vector products read the transposed view
     as fast).  (Copying for one GRU step at hidden 256: greedy decoding 2.6x
     PyTorch instead of 1.4x.)  How one step multiplies by the transposed view:
     block 14.
  7. The bias trick: [x, 1] [W_ih, b]^T = x W_ih^T + b, so the input projection
     adds the biases inside its matmul, and [dW_ih, db] = dA^T [x, 1] gets the
     bias gradient from the same matmul as the weight's (the ones column sums
     dA).  (Plain: GRU forward +9%, LSTM T = 50 and 200 +3-5%.)
  8. ``out=`` where a plain expression would allocate a fresh T-sized array
     (the RNN's slopes: +14% at T = 50, in page faults) and in the forward
     steps of the LSTM and GRU, where each is one NumPy call fewer than the
     expression (tiny GRU +8%, tiny LSTM forward +2-4% as expressions).
  9. The LSTM's backward makes dout contiguous once: after a loss like out.sum()
     it is a broadcast view (stride 0), and each step's dout[t] + dh then costs
     more (plain: tiny LSTM +3%).
 10. One sequence (N = 1, the LSTM; issue 22): batch 1 is per-call cost, so the
     layout minimises NumPy calls and their arguments' shapes.  Step t's gates sit in a
     row F[t] = [o, i, f, g, c_{t-1}] beside the cell state, so one ufunc call forms
     [i, f] * [g, c_{t-1}] and one adds the two products; h_{t-1} W_hh^T is one np.dot
     with a (H, 4H) operand (a gemv, no batched matmul); the gates' half/shift
     operands are full-size arrays (a broadcast operand costs a small ufunc call 3x);
     the backward's slopes go to S[t] = [f, s_i, s_f, s_g, s_o, s_c], so one multiply
     by dh and one by dc (then dc_{t-1} = dc f rides along) give every da, and
     dh_{t-1} = da W_hh is one np.dot of the row da.  Forward 9 NumPy calls a step,
     backward 5 (gate-major: 11 and 8, with a batched matmul and a sum).  (Plain,
     i.e. gate-major: batch 1, T = 64, hidden 48 / 64 / 128: +20% / +20% / +43%;
     hidden 256 even: the products dominate there.)
 11. One sequence with H <= SMALL_HIDDEN (32): the products by small matrices cost
     less than the calls they replace.  The forward carries h as [tanh c, u_o tanh c]
     (u = tanh(a / 2), sigma = (1 + u) / 2): one np.dot of [tanh c, u_o tanh c, x_t, 1]
     gives the step's pre-activations (input projection and bias included), one tanh,
     one multiply [u_i, u_f] * [g, c], one np.dot c_t = [g, c, u_i g, u_f c] [I; I; I; I] / 2,
     one tanh, one multiply: six calls a step.  The backward is linear in
     v_t = [dh_t, dc_t, 1] once the slopes are known: v_{t-1} = v_t M_t with M_t
     (2H + 1, 2H + 1) built for all steps before the loop (one batched matmul), so a
     step is one np.dot (``_lstm_linear_steps``).  (Plain, i.e. block 10: tiny LSTM
     T = 50, hidden 8 / 16 / 24 / 32: +48% / +41% / +29% / +21%; hidden 48 even,
     64 20% slower, hence the threshold.)  Tiny LSTM (in 8, hidden 8, batch 1, T = 50)
     fwd+bwd with 10 and 11: 1.90x -> 1.00x PyTorch (quiet AMD EPYC, one thread).
 12. The one-sequence loops (10, 11) and the RNN's steps call the array's method,
     ``v.dot(m, out=v_next)``: the module function ``xp.dot`` first dispatches through
     ``__array_function__``, about 0.2 of the 0.5 us such a call takes at these sizes (NumPy
     2.4), and the matmul ufunc (``xp.matmul``, ``@``) costs 0.5-0.7 us more than ``dot`` on
     (N, H) x (H, H) with N*H ~ 1000.  (Plain ``xp.dot``, A/B back to back: tiny LSTM +6%,
     batch 1 in 32 hidden 32 +5%, hidden 64 +1.4%; the RNN with ``matmul`` and ``@``: lesson 4's
     size (batch 32, hidden 32) +10%, batch 4 hidden 64 +14%, the rnn suite's even; the GRU's
     two ``@`` in its backward steps gained under 2% and stay; AMD EPYC, one thread.)
 13. Column blocks for the LSTM's per-step products (gate-major, T > 1): h_{t-1} W_hh,k^T and
     da_k W_hh,k are split into products with ``width`` columns each, the widest H / 2^k >= 32
     with N H width <= 2^19 multiply-adds (none when even 32 is wider, or H fits whole).  OpenBLAS
     (its SkylakeX kernels, used on AVX-512 Intel and AMD alike) runs a product of a few rows
     faster in such pieces (measured; its small-matrix paths are the likely reason): (32, 256) x
     (256, 1024) 176 -> 150 us forward, 194 -> 143 us backward, in blocks of 64 columns.  The
     forward's add of x_t W_ih,k^T reads the blocks through a view, so no NumPy call is added;
     the backward sums the gates' parts into the columns of dh.  (Whole products, A/B in one
     process, benchmarks/ab_column_blocks.py: char LM size (batch 32, in 32, hidden 256) T = 64
     / 128 +9% / +5%, batch 16 hidden 256 +9-19%, batch 32 hidden 512 +7%, the rnn suite's
     (batch 64, hidden 256) +2-3%; Intel Xeon with AVX-512, one thread.)  Sizes without
     blocks keep the plain calls: one block through the same views costs lesson 4's size
     (batch 32, hidden 32) +12% and batch 8 hidden 256 +7% (A/B in one process).  On the GPU
     the products stay whole (cuBLAS is another matter, not measured).
 14. One step (T = 1: decoding a token at a time; every RNN, LSTM and GRU) copies no
     weight.  The input projection is x W_ih,k^T plus the biases (block 7's [W_ih, b] is
     a copy of W_ih), and the LSTM, as the GRU (block 2), halves its pre-activations
     instead of its weights.  The products read W^T as the transposed view of W
     (block 6), which OpenBLAS multiplies slowly from the left by a few rows: h (5, 256)
     times W_hh^T (256, 768) takes 104 us, the same product made as W h^T with h^T
     copied contiguous (N H values) 29 us.  So a step whose products have more than
     STEP_PRODUCT_VALUES (2^10) values, N H, makes them that way, into buffers laid out
     (gates, H, N) (``_product_buffer``, ``_step_product``); smaller ones stay h W^T,
     whose call is cheaper there (1.1-1.5x faster at N H <= 2^10, measured over
     N = 2..32, H = 32..512).  On the GPU the products stay h W^T (as in block 13).
     (One step's forward, A/B in one process, Intel Xeon, one thread, in 32: the LSTM at
     hidden 256, batch 1 / 4 / 5: 619 / 244 / 366 -> 40 / 68 / 90 us, no longer four
     copies of its weights; the GRU batch 5: 120 -> 74 us; the RNN 48 -> 29 us; no size
     slower.  Decoding, hidden 256: LSTM greedy 2.00x -> 0.34x PyTorch, beam search
     1.14x -> 0.59x; GRU beam search 1.20x -> 0.93x.)

Size thresholds: the run length of block 3, batch 1 (block 10), H <= 32 (block
11), the column width (block 13) and one step's product size (block 14); tests/test_tiers.py
runs sizes on both sides of each (runs of 8 and 4 steps; batch 1 and 2; hidden 4, 16, 32, 33,
64; batch 8 and 9 at hidden 256, 32 and 33 at hidden 128, 64 and 65 at hidden 256; one step at
batch 4 and 5, hidden 256, and batch 32 and 33, hidden 32; every option, float64 and float32).
Issue 19 had removed three older one-sequence layouts (no lesson ran batch 1);
issue 22 asks the tiny LSTM to reach PyTorch, and blocks 10 and 11 do it with fewer
calls than those had.
Also returned to plain code earlier after an A/B showed < 3%: one merged
weight-gradient matmul dA^T [x, h_{t-1}, 1], scratch buffers for the slopes,
chains of ``out=`` ufunc calls in the backward loops; in issue 22, block 11's
steps in pairs (v_{t-2} = v_t (M_t M_{t-1}), half the products in the loop: 1.5%
of the tiny LSTM).

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


def _fast_input_projection(xp, x, w_ih, biases, n_gates):
    """x W_ih^T + biases for all T steps, gate-major: (T, N, D) -> (n_gates, T, N, H), ONE matmul.

    Block k holds gate k, x W_ih,k^T + b_k (W_ih,k: rows kH..(k+1)H of W_ih).  With
    biases it is [x, 1] [W_ih, b]^T (block 7).
    """
    T, N, D = x.shape
    H = w_ih.shape[0] // n_gates
    biases = [b for b in biases if b is not None]
    bias = sum(biases[1:], biases[0]) if biases else None              # (n_gates H,): b_ih + b_hh
    if T == 1:                          # block 14: one step copies no weight ([W_ih, b] would)
        transposed = _transposed_step(N, H, T, backend.device_of(x))
        products = _product_buffer(xp, n_gates, N, H, x.dtype, transposed)
        _step_product(xp, x[0], w_ih.reshape(n_gates, H, D).swapaxes(1, 2), products, transposed)
        G = xp.empty((n_gates, 1, N, H), dtype=x.dtype)
        xp.add(products, 0 if bias is None else bias.reshape(n_gates, 1, H), out=G[:, 0])   # + b_k, contiguous
        return G
    if bias is not None:
        x = _with_ones(xp, x)
        w_ih = xp.concatenate([w_ih, bias[:, None]], axis=1)
    else:
        x = x.reshape(T * N, D)
    w_k_T = w_ih.reshape(n_gates, H, w_ih.shape[1]).transpose(0, 2, 1)  # (n_gates, D[+1], H): W_ih,k^T
    return xp.matmul(x, w_k_T).reshape(n_gates, T, N, H)


LSTM_HALVES = (0.5, 0.5, 1, 0.5)   # i, f, g, o: the sigmoid gates' rows are halved (block 2)
GRU_HALVES = (0.5, 0.5, 1)          # r, z, n


def _half_rows(xp, halves, H, dtype):
    """(n_gates * H,): the factor of each weight row, ``halves[k]`` for gate k's H rows (block 2)."""
    return xp.repeat(xp.asarray(halves, dtype=dtype), H)


def _halved(w, half_rows):
    """A weight (rows, D) or bias (rows,) with its rows scaled by ``half_rows`` (block 2); ``w``
    itself when half_rows is None."""
    if w is None or half_rows is None:
        return w
    if w.ndim == 1:
        return w * half_rows                                           # a bias: entry i times half_rows[i]
    return w * half_rows[:, None]                                      # a weight: row i times half_rows[i]


def _gate_blocks_T(xp, w, T, N):
    """(n_gates*H, H) recurrent weights -> (n_gates, H, H), block k = W_k^T (block 6)."""
    H = w.shape[1]
    return _recurrent_operand(xp, w.reshape(-1, H, H).transpose(0, 2, 1), T, N)


def _recurrent_operand(xp, w_T, T, N):
    """W_hh^T as the loop's matmul operand (block 6): a contiguous copy (a faster gemm operand),
    except for one step (T = 1: one product cannot pay back the copy) or one sequence (N = 1: a
    matrix-vector product reads the transposed view as fast)."""
    return w_T if T == 1 or N == 1 else xp.ascontiguousarray(w_T)


STEP_PRODUCT_VALUES = 1 << 10   # one step's (N, H) products above this size run as W h^T (block 14)


def _transposed_step(N, H, T, device="cpu"):
    """True when a step's products h W^T, (N, K) x (K, H), run as W h^T (block 14): one step
    (T = 1, whose W^T is a transposed view) with more than STEP_PRODUCT_VALUES values in each,
    not on the GPU (an OpenBLAS matter, as block 13)."""
    return T == 1 and N * H > STEP_PRODUCT_VALUES and device != "cuda"


def _product_buffer(xp, n_gates, N, H, dtype, transposed):
    """An empty (n_gates, N, H) array for a step's products; when ``transposed``, the transposed
    view of a contiguous (n_gates, H, N) array, which W h^T fills (block 14)."""
    if transposed:
        return xp.empty((n_gates, H, N), dtype=dtype).swapaxes(1, 2)
    return xp.empty((n_gates, N, H), dtype=dtype)


def _step_product(xp, h, w_T, out, transposed):
    """out = h W^T for a step's rows h (N, K) and W^T (..., K, H).  When ``transposed`` (block 14),
    W^T is the transposed view of a contiguous W and ``out`` a ``_product_buffer`` of that layout:
    the product is made as W h^T, with h^T copied contiguous (N K values)."""
    if transposed:
        xp.matmul(w_T.swapaxes(-1, -2), xp.ascontiguousarray(h.T), out=out.swapaxes(-1, -2))
    else:
        xp.matmul(h, w_T, out=out)


BLOCK_PRODUCT = 1 << 19     # multiply-adds of one column block's product, at most (block 13)


def _column_width(N, H, T, device="cpu"):
    """Width of the column blocks of the LSTM's per-step products (block 13): H, or the widest
    H / 2^k >= 32 whose (N, H) x (H, width) product has at most BLOCK_PRODUCT multiply-adds;
    H for one step (T = 1, no loop to pay back the copy), when even 32 is wider (large
    products run best whole) and on the GPU (the blocks are an OpenBLAS matter)."""
    if device == "cuda":
        return H
    width = H
    while N * H * width > BLOCK_PRODUCT and width % 2 == 0 and width // 2 >= 32:
        width //= 2
    return width if T > 1 and N * H * width <= BLOCK_PRODUCT else H


def _column_blocks(xp, w, width):
    """(n_gates, H, H) -> (n_gates, H // width, H, width), contiguous: block j of matrix k is
    w[k, :, j * width:(j + 1) * width], its columns j * width .. (block 13)."""
    n_gates, rows, columns = w.shape
    blocks = w.reshape(n_gates, rows, columns // width, width).transpose(0, 2, 1, 3)
    return xp.ascontiguousarray(blocks)


def _recurrent_grad(xp, da, w_blocks, parts):
    """dh_{t-1} = sum_k da_k W_hh,k for a step's da (n_gates, N, H): a batched matmul into
    ``parts`` and their sum over k.  With column blocks (block 13), w_blocks is
    (n_gates, nb, H, width) and parts (n_gates, nb, N, width); the sum is written into an (N, H)
    array.  Without, w_blocks is W_hh (n_gates, H, H) and parts (n_gates, N, H)."""
    if parts.ndim == 3:
        xp.matmul(da, w_blocks, out=parts)
        return parts.sum(axis=0)
    n_gates, nb, N, width = parts.shape
    xp.matmul(da[:, None], w_blocks, out=parts)
    dh = xp.empty((N, nb * width), dtype=parts.dtype)
    xp.sum(parts, axis=0, out=dh.reshape(N, nb, width).transpose(1, 0, 2))
    return dh


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
        w_hh_T = _recurrent_operand(xp, w_hh.T, T, N)
        padded_steps = None if mask is None else ~mask                 # (T, N, 1): True at padded steps
        transposed = _transposed_step(N, H, T, backend.device_of(x))   # block 14
        product = _product_buffer(xp, 1, N, H, x.dtype, transposed)[0] if transposed else None
        for t, prev, nxt in _steps(T, reverse):
            h = hs[nxt]
            if transposed:
                _step_product(xp, hs[prev], w_hh_T, product, True)     # a = h_{t-1} W_hh^T
                xp.add(product, xw[t], out=h)                          #   + x_t W_ih^T + b
            else:
                hs[prev].dot(w_hh_T, out=h)                            # a = h_{t-1} W_hh^T (block 12)
                h += xw[t]                                             #   + x_t W_ih^T + b
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
            dh_next = da.dot(w_hh)                                     # dh_{t-1} = da_t W_hh
            if mask is not None:
                dh_next += dh * padded[t]                              # a padded step passes dh through
        dx, dw_ih, dw_hh, db_ih, db_hh = _projection_grads(ctx, dA[None], x, h_prev, w_ih, first=2)
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None


# --------------------------------------------------------------------------- LSTM

class FastLSTMFunction(Function):
    """The reference's LSTMFunction (same arguments and results), fast: see the module docstring.

    Three layouts, by size (blocks 10, 11): one sequence (N = 1, T > 1) keeps each step's gates in a
    row beside its cell state (``_lstm_rows_forward``), and with H <= SMALL_HIDDEN also carries
    h differently and runs the backward as one matrix product a step (``_lstm_tiny_forward``,
    ``_lstm_linear_steps``); a batch keeps them gate-major, G (4, T, N, H) = [i, f, g, o],
    which the backward replaces, a run of steps at a time, by their slopes and then by dA.
    One step (T = 1) takes the gate-major layout at every batch size (block 14).
    """

    SMALL_HIDDEN = 32        # block 11 up to here: H = 24 / 32 22% / 17% faster, 48 even, 64 20% slower

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
        T, N, H = check_shapes("lstm", x, h0, w_ih, w_hh, 4, (("c0", c0),))
        ctx.rows = N == 1 and T > 1                                     # one sequence: blocks 10, 11
        ctx.reverse = reverse
        if ctx.rows and H <= FastLSTMFunction.SMALL_HIDDEN:
            return _lstm_tiny_forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse)
        if ctx.rows:
            return _lstm_rows_forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse)
        return _lstm_gates_forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse)

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n):
        if ctx.rows:
            return _lstm_rows_backward(ctx, dout, dh_n, dc_n)
        return _lstm_gates_backward(ctx, dout, dh_n, dc_n)


def _lstm_weights(xp, x, w_ih, w_hh, b_ih, b_hh):
    """The forward's operands (block 2): [W_ih, b] (4H, D[+1]) and W_hh (4H, H) with the i, f, o rows
    halved, so that one tanh gives all four gates."""
    half_rows = _half_rows(xp, LSTM_HALVES, w_hh.shape[1], x.dtype)
    biases = [b for b in (b_ih, b_hh) if b is not None]
    w_in = w_ih
    if biases:                                                          # [W_ih, b]: the bias trick (block 7)
        w_in = xp.concatenate([w_ih, sum(biases[1:], biases[0])[:, None]], axis=1)
    return _halved(w_in, half_rows), _halved(w_hh, half_rows)


def _lstm_tiny_forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
    """One sequence of a small model (N = 1, H <= SMALL_HIDDEN; block 11): six NumPy calls a step.

    Row r of R (T + 1, 9H + D + 1) holds what step t reads (r = t, or t + 1 when reverse) and
    then its gates; the states after step t go to row t + 1 (reverse: t):

        [tc, u_o tc | x, 1 | u_o, u_i, u_f, g | c, u_i g, u_f c]
         state h       input  pre-activations,  state   products
                              then tanh of them

    with u = tanh(a / 2) for the sigmoid gates (sigma(a) = (1 + u) / 2, block 2) and tc =
    tanh(c_{t-1}).  h_{t-1} = o tc = (tc + u_o tc) / 2 is never formed: the step's product
    [tc, u_o tc, x_t, 1] [W_hh / 2, W_hh / 2, W_ih, b]^T gives its pre-activations at once, and
    c_t = f c_{t-1} + i g = [g, c_{t-1}, u_i g, u_f c_{t-1}] [I, I, I, I]^T / 2 is a second
    product.  The states h come from [tc, u_o tc] after the loop.
    """
    xp = backend.array_module(x, w_ih, w_hh)
    T, N, D = x.shape
    H = w_hh.shape[1]
    dtype = x.dtype
    w_in, w_rec = _lstm_weights(xp, x, w_ih, w_hh, b_ih, b_hh)
    if w_in.shape[1] == D:                                              # no bias: a zero bias column
        w_in = xp.concatenate([w_in, xp.zeros((4 * H, 1), dtype=dtype)], axis=1)
    w_step = xp.concatenate([w_rec / 2, w_rec / 2, w_in], axis=1)      # (4H, 2H + D + 1), rows i, f, g, o
    w_step = xp.ascontiguousarray(_gates_oifg(xp, w_step).T)           # (2H + D + 1, 4H): columns o, i, f, g
    halves = xp.concatenate([xp.eye(H, dtype=dtype)] * 4) / 2          # (4H, H): [I, I, I, I]^T / 2
    first = 1 if reverse else 0                                         # step t reads row t + first
    z, u = 2 * H + D + 1, 6 * H + D + 1                                 # where [x, 1] ends, where the gates end
    R = xp.empty((T + 1, 9 * H + D + 1), dtype=dtype)
    R[first:first + T, 2 * H:2 * H + D] = x[:, 0]
    R[:, 2 * H + D] = 1
    start = T - 1 + first if reverse else 0                             # the row of the initial states
    R[start, :2 * H] = 0 if h0 is None else xp.concatenate([h0[0], h0[0]])   # h0 = (h0 + h0) / 2
    R[start, u:u + H] = 0 if c0 is None else c0[0]
    order = slice(None, None, -1) if reverse else slice(None)           # the rows in the order processed
    reads, writes = R[first:first + T][order], R[1 - first:T + 1 - first][order]
    step_views = [reads[:, :z], reads[:, z:u],                          # [tc, u_o tc, x, 1]; [u_o, u_i, u_f, g]
                  reads[:, z + H:z + 3 * H], reads[:, z + 3 * H:u + H], reads[:, u + H:],   # [u_i, u_f]; [g, c]; products
                  reads[:, z + 3 * H:], reads[:, z:z + H],              # [g, c, u_i g, u_f c]; u_o
                  writes[:, u:u + H], writes[:, :H], writes[:, H:2 * H]]  # the states after the step: c, tc, u_o tc
    if mask is not None:                                                # padded: keep both states
        step_views += [(~mask[:, 0])[order], reads[:, u:u + H], reads[:, :2 * H], writes[:, :2 * H]]
    # one zip over views of all steps: a view per array and step, with no indexing in the loop
    for inputs, a, u_if, g_c, products, for_c, u_o, c, tc, u_o_tc, *padding in zip(*step_views):
        inputs.dot(w_step, out=a)                                       # a (a / 2 for i, f, o)
        xp.tanh(a, out=a)                                               # [u_o, u_i, u_f, g]
        xp.multiply(u_if, g_c, out=products)                            # [u_i g, u_f c_{t-1}]
        for_c.dot(halves, out=c)                                        # c_t = f c_{t-1} + i g
        xp.tanh(c, out=tc)
        xp.multiply(u_o, tc, out=u_o_tc)                                # h_t = (tc + u_o tc) / 2
        if padding:
            padded, c_prev, states, new_states = padding
            xp.copyto(c, c_prev, where=padded)
            xp.copyto(new_states, states, where=padded)
    cells = R[:, u:u + H]
    tc = R[:, :H]
    u_o_tc = R[:, H:2 * H]
    hs = ((tc + u_o_tc) / 2)[:, None]                                   # (T + 1, 1, H): every h
    steps = slice(first, first + T)
    sigmoids = R[steps, z:z + 3 * H]                                    # u_o, u_i, u_f -> o, i, f
    sigmoids += 1
    sigmoids *= 0.5                                                     # sigma = (1 + u) / 2
    xs = R[steps, 2 * H:z] if b_ih is not None or b_hh is not None else R[steps, 2 * H:z - 1]   # [x, 1]
    ctx.save_for_backward(xs, R[steps, None, z:u + H].reshape(T, 1, 5, H), tc[1 - first:T + 1 - first, None],
                          _outputs(hs, reverse)[1], w_ih, w_hh, mask)
    output, h_n = _sequence_outputs(hs, reverse, mask)
    return output, h_n, _outputs(cells, reverse)[2][None]


def _gates_oifg(xp, w):
    """Weight rows in PyTorch's gate order (i, f, g, o) -> (o, i, f, g), the order blocks 10 and 11 keep."""
    H = w.shape[0] // 4
    return xp.concatenate([w[3 * H:], w[:3 * H]])


def _lstm_rows_forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
    """One sequence (N = 1, block 10): step t's storage is F[t] (N, 5, H) = [o, i, f, g, c_{t-1}]
    (the gates in the order o, i, f, g), so that one ufunc call activates a step's gates, one
    forms [i, f] * [g, c_{t-1}] and one adds the two products: c_t.  Nine NumPy calls a step."""
    xp = backend.array_module(x, w_ih, w_hh)
    T, N, D = x.shape
    H = w_hh.shape[1]
    w_in, w_rec = _lstm_weights(xp, x, w_ih, w_hh, b_ih, b_hh)
    xs = _with_ones(xp, x) if w_in.shape[1] > D else x.reshape(T * N, D)
    w_in_T = xp.ascontiguousarray(_gates_oifg(xp, w_in).T)             # (a transposed operand: some
    projection = (xs @ w_in_T).reshape(T, N, 4, H)                     #   processes 100x slower in OpenBLAS)
    w_rec_T = xp.ascontiguousarray(_gates_oifg(xp, w_rec).T)           # (H, 4H)
    half = xp.empty((N, 4, H), dtype=x.dtype)                           # sigma(a) = tanh(a / 2) / 2 + 1/2
    half[...] = _gates_oifg(xp, xp.asarray(LSTM_HALVES, dtype=x.dtype))[:, None]   # (full-size operands:
    shift = 1 - half                                                    #   broadcasting one costs 3x the call)
    F = xp.empty((T + 1, N, 5, H), dtype=x.dtype)
    cells = F[:, :, 4]                                                  # (T + 1, N, H): c_{t-1} beside step t's gates
    cells[T - 1 if reverse else 0] = 0 if c0 is None else c0
    gates = F[:, :, :4]                                                 # (T + 1, N, 4, H): [o, i, f, g]
    i_f = F[:, :, 1:3]
    g_c = F[:, :, 3:5]
    outs = F[:, :, 0]                                                   # o
    hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)                 # (T + 1, N, H)
    tanh_c = xp.empty((T, N, H), dtype=x.dtype)                         # kept for the backward
    a = xp.empty((N, 4 * H), dtype=x.dtype)
    a_3d = a.reshape(N, 4, H)
    products = xp.empty((N, 2, H), dtype=x.dtype)
    ig = products[:, 0]
    fc = products[:, 1]
    padded_steps = None if mask is None else ~mask                      # (T, N, 1): True at padded steps
    for t, prev, nxt in _steps(T, reverse):
        hs[prev].dot(w_rec_T, out=a)                                    # h_{t-1} W_hh^T
        g_t = gates[t]
        xp.add(a_3d, projection[t], out=g_t)                            #   + x_t W_ih^T + b
        xp.tanh(g_t, out=g_t)
        xp.multiply(g_t, half, out=g_t)
        xp.add(g_t, shift, out=g_t)                                     # now [o, i, f, g]
        xp.multiply(i_f[t], g_c[t], out=products)                       # [i * g, f * c_{t-1}]
        c = cells[t - 1 if reverse else t + 1]                          # c_t sits beside the next step's gates
        xp.add(ig, fc, out=c)                                           #   (the last: at T, c_n)
        xp.tanh(c, out=tanh_c[t])
        xp.multiply(outs[t], tanh_c[t], out=hs[nxt])                    # h_t = o * tanh(c_t)
        if mask is not None:                                            # padded: keep both states
            xp.copyto(c, cells[t], where=padded_steps[t])
            xp.copyto(hs[nxt], hs[prev], where=padded_steps[t])
    ctx.save_for_backward(xs, F[:T], tanh_c, _outputs(hs, reverse)[1], w_ih, w_hh, mask)
    output, h_n = _sequence_outputs(hs, reverse, mask)
    return output, h_n, cells[T]


def _lstm_rows_backward(ctx, dout, dh_n, dc_n):
    """The backward of both one-sequence layouts (blocks 10, 11), from F (T, N, 5, H) =
    [o, i, f, g, c_{t-1}]: step t's slopes go to S[t] (N, 6, H) = [f, s_i, s_f, s_g, s_o, s_c]
    (s_k = da_k / dc for k = i, f, g; s_o = da_o / dh; s_c = dc / dh), which the loop
    (``_lstm_row_steps`` or ``_lstm_linear_steps``) turns into [dc_{t-1}, da_i, da_f, da_g, da_o, .],
    and the weight gradients are one matmul each over the rows da = S[:, :, 1:5] (T*N, 4H)."""
    xs, F, tanh_c, h_prev, w_ih, w_hh, mask = ctx.saved_tensors         # F (T, N, 5, H): [o, i, f, g, c_{t-1}]
    xp = backend.array_module(dout, xs)
    T, N, H = tanh_c.shape
    o = F[:, :, 0]
    i = F[:, :, 1]
    g = F[:, :, 3]
    g_c = F[:, :, 3:5]
    sigmoid_slopes = F[:, :, :3] * (1 - F[:, :, :3])                    # sigma' = sigma (1 - sigma): o, i, f
    S = xp.empty((T, N, 6, H), dtype=dout.dtype)
    S[:, :, 0] = F[:, :, 2]                                             # dc_{t-1} / dc = f
    xp.multiply(g_c, sigmoid_slopes[:, :, 1:3], out=S[:, :, 1:3])             # da_i / dc = g i', da_f / dc = c_{t-1} f'
    xp.multiply(i, 1 - g * g, out=S[:, :, 3])                          # da_g / dc = i (1 - g^2)
    xp.multiply(tanh_c, sigmoid_slopes[:, :, 0], out=S[:, :, 4])       # da_o / dh = tanh(c) o'
    xp.multiply(tanh_c, tanh_c, out=S[:, :, 5])
    xp.subtract(1, S[:, :, 5], out=S[:, :, 5])
    S[:, :, 5] *= o                                                     # dc / dh = o (1 - tanh(c)^2)
    padded = None
    if mask is not None:
        valid, padded = _float_mask(mask, dout.dtype)
        dout = dout * valid                                             # its output was a constant zero
        S[:, :, 1:] *= valid[:, :, :, None]                             # no gradient through a padded step
        S[:, :, 0] *= valid
        S[:, :, 0] += padded                                            # a padded step passes dc through
    if H <= FastLSTMFunction.SMALL_HIDDEN:
        dh_0, dc_0 = _lstm_linear_steps(xp, S, dout, dh_n, dc_n, w_hh, padded, ctx.reverse)
    else:
        dh_0, dc_0 = _lstm_row_steps(xp, S, dout, dh_n, dc_n, w_hh, padded, ctx.reverse)
    da_rows = S[:, :, 1:5].reshape(T, N, 4 * H)
    need = ctx.needs_input_grad
    dA = da_rows.reshape(T * N, 4 * H)
    D = w_ih.shape[1]
    dx = (dA @ w_ih).reshape(T, N, D) if need[0] else None
    grads_ih = dA.T @ xs if need[3] or need[5] or need[6] else None    # [dW_ih, db] (block 7)
    dw_ih = grads_ih[:, :D] if need[3] else None
    dw_hh = dA.T @ h_prev.reshape(T * N, H) if need[4] else None
    db = grads_ih[:, D] if grads_ih is not None and xs.shape[1] > D else None   # the ones column: sum of dA
    db_ih = db if need[5] else None
    db_hh = db.copy() if need[6] else None
    return dx, dh_0, dc_0, dw_ih, dw_hh, db_ih, db_hh, None, None


def _lstm_row_steps(xp, S, dout, dh_n, dc_n, w_hh, padded, reverse):
    """The backward's loop over S (T, N, 6, H) = [f, s_i, s_f, s_g, s_o, s_c] (block 10), five
    NumPy calls a step: one multiply by dh gives [da_o, dh s_c], one by dc gives
    [dc_{t-1}, da_i, da_f, da_g], and da = S[t, :, 1:5] is a row (N, 4H) for dh_{t-1} = da W_hh.
    Leaves [dc_{t-1}, da_i, da_f, da_g, da_o, dc] in S[t]; returns (dh0, dc0)."""
    T, N, _, H = S.shape
    dh_group = S[:, :, 4:6]                                             # the slots times dh
    dc_group = S[:, :, 0:4]                                             # the slots times dc
    dcs = S[:, :, 5]
    dc_3d = S[:, :, 5:6]
    da_rows = S[:, :, 1:5].reshape(T, N, 4 * H)
    dout_3d = dout[:, :, None, :]
    dh = xp.empty((N, 1, H), dtype=S.dtype)
    dh_next = xp.empty((N, H), dtype=S.dtype)
    dh_next[...] = dh_n
    dh_next_3d = dh_next.reshape(N, 1, H)
    dc_next = dc_n
    for t, _, _ in reversed(_steps(T, reverse)):
        xp.add(dout_3d[t], dh_next_3d, out=dh)                          # dh = dout_t + dh from step t + 1
        xp.multiply(dh_group[t], dh, out=dh_group[t])                   # [da_o, dh * s_c]
        dc = dcs[t]
        xp.add(dc, dc_next, out=dc)                                     # dc = dc_next + dh * s_c
        xp.multiply(dc_group[t], dc_3d[t], out=dc_group[t])             # [dc_{t-1}, da_i, da_f, da_g]
        dc_next = dc_group[t][:, 0]
        da_rows[t].dot(w_hh, out=dh_next)                               # dh_{t-1} = da W_hh
        if padded is not None:
            dh_next += dh[:, 0] * padded[t]                             # a padded step passes dh through
    return dh_next, dc_next.copy()


def _diagonal(M, row, column, H):
    """A view of M[:, row + j, column + j] for j < H, M (T, n, n) contiguous: (T, H)."""
    T, n, _ = M.shape
    start = row * n + column
    return M.reshape(T, n * n)[:, start:start + (H - 1) * (n + 1) + 1:n + 1]


def _lstm_linear_steps(xp, S, dout, dh_n, dc_n, w_hh, padded, reverse):
    """The same as ``_lstm_row_steps``, for one sequence with H <= SMALL_HIDDEN (block 11): one
    matrix product a step.

    Given the slopes, a step's backward is linear in v_t = [dh_t, dc_t^in, 1] (dh_t: dL/dh_t from
    the output and step t + 1; dc_t^in: dL/dc_t from step t + 1):
        dc = dc^in + dh s_c,   da_i,f,g = dc s_i,f,g,   da_o = dh s_o
        dh_{t-1} = sum_k da_k W_hh,k + dout_{t-1},   dc_{t-1}^in = dc f
    so v_{t-1} = v_t M_t with M_t (2H + 1, 2H + 1), built for all T before the loop:
        M_t = [[A_t,              diag(s_c f),  0],       A_t = diag(s_c) B_t + diag(s_o) W_hh,o
               [B_t,              diag(f),      0],       B_t = sum_{k = i, f, g} diag(s_k) W_hh,k
               [dout_{t-1},       0,            1]]
    (a padded step: slopes 0, f = 1, and A_t = I passes dh on).  After the loop, S gets
    da_i, da_f, da_g, da_o from the v_t of every step.  Returns (dh0, dc0).
    """
    T, _, _, H = S.shape
    f, s_i, s_f, s_g, s_o, s_c = S[:, 0].transpose(1, 0, 2)              # each (T, H)
    # [A_t; B_t] row j = sum_k coefficient_k W_hh,k[j]: one matmul, batched over j
    coefficients = xp.zeros((H, T, 2, 4), dtype=S.dtype)                # [j, t, (A, B), k]
    s_ifg = S[:, 0, 1:4].transpose(2, 0, 1)                             # (H, T, 3)
    xp.multiply(s_ifg, s_c.T[:, :, None], out=coefficients[:, :, 0, :3])   # A: s_c s_k for k = i, f, g
    coefficients[:, :, 0, 3] = s_o.T                                    #    s_o for W_hh,o
    coefficients[:, :, 1, :3] = s_ifg                                   # B: s_k for k = i, f, g
    w_rows = w_hh.reshape(4, H, H).transpose(1, 0, 2)                   # (H, 4, H): [j, k] = W_hh,k[j]
    A_B = xp.matmul(coefficients.reshape(H, 2 * T, 4), w_rows).reshape(H, T, 2, H)
    M = xp.zeros((T, 2 * H + 1, 2 * H + 1), dtype=S.dtype)
    M[:, :H, :H] = A_B[:, :, 0].transpose(1, 0, 2)
    M[:, H:2 * H, :H] = A_B[:, :, 1].transpose(1, 0, 2)
    _diagonal(M, 0, H, H)[...] = s_c * f
    _diagonal(M, H, H, H)[...] = f
    if padded is not None:
        _diagonal(M, 0, 0, H)[...] += padded[:, 0]                      # a padded step passes dh on (A_t = I)
    M[:, 2 * H, 2 * H] = 1
    order = slice(None) if reverse else slice(None, None, -1)           # the steps in the backward's order
    dout_rows = dout[:, 0]                                              # (T, H)
    if reverse:                                                         # dout of the step processed next
        M[:-1, 2 * H, :H] = dout_rows[1:]
    else:
        M[1:, 2 * H, :H] = dout_rows[:-1]
    V = xp.empty((T + 1, 2 * H + 1), dtype=S.dtype)                     # v in the order processed, then v_{-1}
    V[0, :H] = dout_rows[0 if reverse else T - 1] + dh_n[0]
    V[0, H:2 * H] = dc_n[0]
    V[0, 2 * H] = 1
    for v, m, v_next in zip(V[:-1], M[order], V[1:]):                 # v_{t-1} = v_t M_t
        v.dot(m, out=v_next)
    v = V[:T] if reverse else V[:T][::-1]                               # (T, 2H + 1): v_t in time order
    dh = v[:, None, :H]                                                 # (T, 1, H)
    dc_in = v[:, None, H:2 * H]
    dc = dc_in + dh * s_c[:, None]
    S[:, 0, 1:4] = dc * S[:, 0, 1:4]                                    # da_i, da_f, da_g
    S[:, 0, 4] = dh[:, 0] * s_o                                         # da_o
    return V[T, None, :H].copy(), V[T, None, H:2 * H].copy()


def _lstm_gates_forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
    """Gate-major (blocks 1-9, and 14 for one step): G (4, T, N, H)."""
    T, N, D = x.shape
    H = w_hh.shape[1]
    xp = backend.array_module(x, w_ih, w_hh)
    # sigma(a) = (1 + tanh(a / 2)) / 2 for i, f, o and tanh(a) for g (block 2): with the
    # i, f, o rows of the weights halved (exact in floating point), one tanh of the step's
    # pre-activations, times ``half`` plus ``shift``, gives all four gates; one step (T = 1,
    # block 14) halves its pre-activations instead of copying the weights
    half_rows = _half_rows(xp, LSTM_HALVES, H, x.dtype) if T > 1 else None   # (4H,): per weight row
    G = _fast_input_projection(xp, x, _halved(w_ih, half_rows),     # (4, T, N, H): a / 2 (a for g), x part
                               [_halved(b, half_rows) for b in (b_ih, b_hh)], 4)
    G_steps = G.transpose(1, 0, 2, 3)                               # G_steps[t]: step t's x part, then its gates
    w_rec = _gate_blocks_T(xp, _halved(w_hh, half_rows), T, N)      # (4, H, H): W_hh,k^T halved
    hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)             # (T + 1, N, H)
    cs = _new_states(xp, c0, T, N, H, x.dtype, reverse)
    half = xp.empty((4, N, H), dtype=x.dtype)
    half[...] = xp.asarray(LSTM_HALVES, dtype=x.dtype)[:, None, None]
    shift = 1 - half                                                # 1/2 for i, f, o; 0 for g
    gates = xp.empty((4, N, H), dtype=x.dtype)                      # step t's gates, contiguous
    i, f, g, o = gates
    products, products_by_gate, G_by_gate, gates_by_gate = gates, gates, G_steps, gates
    transposed = _transposed_step(N, H, T, backend.device_of(x))    # block 14: filled as W_hh,k h^T
    if transposed:
        products = products_by_gate = _product_buffer(xp, 4, N, H, x.dtype, True)
    width = _column_width(N, H, T, backend.device_of(x))            # block 13: column blocks
    if width < H:
        nb = H // width
        w_rec = _column_blocks(xp, w_rec, width).reshape(4 * nb, H, width)
        products = xp.empty((4 * nb, N, width), dtype=x.dtype)
        products_by_gate = products.reshape(4, nb, N, width).transpose(0, 2, 1, 3)   # (4, N, nb, width)
        G_by_gate = G_steps.reshape(T, 4, N, nb, width)
        gates_by_gate = gates.reshape(4, N, nb, width)
    ig = xp.empty((N, H), dtype=x.dtype)
    tanh_c = xp.empty((N, H), dtype=x.dtype)
    padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
    for t, prev, nxt in _steps(T, reverse):
        # block 8: out= calls, each a NumPy call fewer than the plain expression
        _step_product(xp, hs[prev], w_rec, products, transposed)    # h_{t-1} W_hh,k^T for each gate k
        xp.add(products_by_gate, G_by_gate[t], out=gates_by_gate)   #   + x_t W_ih,k^T + b_k
        if half_rows is None:
            xp.multiply(gates, half, out=gates)                     #   (one step: halved here)
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
    output, h_n = _sequence_outputs(hs, reverse, mask)
    return output, h_n, _outputs(cs, reverse)[2]


def _lstm_gates_backward(ctx, dout, dh_n, dc_n):
    """Gate-major (blocks 1-9)."""
    x, G, hs, cs, w_ih, w_hh, mask = ctx.saved_tensors
    xp = backend.array_module(dout, x)
    H = w_hh.shape[1]
    dout = xp.ascontiguousarray(dout)                               # block 9: not a broadcast view
    _, h_prev, _ = _outputs(hs, ctx.reverse)
    c_new, c_prev, _ = _outputs(cs, ctx.reverse)
    f_carry = G[1]                                                  # dc_{t-1} = dc * f
    if mask is not None:
        valid, padded = _float_mask(mask, x.dtype)
        dout = dout * valid                                         # its output was a constant zero
        f_carry = G[1] * valid + padded                             # a padded step passes dc through
    dA = G.copy() if ctx.retain_graph else G                        # block 4: dA takes G's memory
    dA_steps = dA.transpose(1, 0, 2, 3)                             # dA_steps[t]: step t's (4, N, H)
    N = dout.shape[1]
    w_blocks, dh_parts = w_hh.reshape(4, H, H), xp.empty((4, N, H), dtype=x.dtype)
    width = _column_width(N, H, x.shape[0], backend.device_of(x))   # block 13: column blocks
    if width < H:
        w_blocks = _column_blocks(xp, w_blocks, width)              # (4, nb, H, width)
        dh_parts = xp.empty((4, H // width, N, width), dtype=x.dtype)
    dh_next, dc_next = dh_n, dc_n
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
        for t, _, _ in run:
            da = dA_steps[t]                                        # (4, N, H): the slopes, then da
            dh = dout[t] + dh_next
            dc = dc_next + dh * slope_c[t - lo]
            da[:3] *= dc                                            # da_i, da_f, da_g
            da[3] *= dh                                             # da_o
            dh_next = _recurrent_grad(xp, da, w_blocks, dh_parts)   # dh_{t-1} = sum_k da_k W_hh,k
            dc_next = dc * f_run[t - lo]                            # dc_{t-1} = dc * f
            if mask is not None:
                dh_next += dh * padded[t]
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
        # halved once (exact), so one tanh, a multiply and an add give r and z; one step (T = 1,
        # decoding) halves its 2NH pre-activations in the loop instead of the 3H(H + D) weights
        half_rows = _half_rows(xp, GRU_HALVES, H, dtype) if T > 1 else None
        b_hrz = None if b_hh is None else xp.concatenate([b_hh[:2 * H], xp.zeros((H,), dtype=dtype)])
        b_hn = None if b_hh is None else b_hh[2 * H:]
        G = _fast_input_projection(xp, x, _halved(w_ih, half_rows),            # b_hr, b_hz join the projection
                                   [_halved(b, half_rows) for b in (b_ih, b_hrz)], 3)
        hs = _new_states(xp, h0, T, N, H, dtype, reverse)
        n_part = xp.empty((T, N, H), dtype=dtype)
        w_hh_halved = _halved(w_hh, half_rows)
        if reset_after:                                                 # [ah_r, ah_z, ah_n] in one batched matmul
            w_rec_T = _gate_blocks_T(xp, w_hh_halved, T, N)
        else:                                                           # [ah_r, ah_z]; ah_n waits for r
            w_rec_T = _gate_blocks_T(xp, w_hh_halved[:2 * H], T, N)
            w_hn_T = _recurrent_operand(xp, w_hh[2 * H:].T, T, N)
        n_blocks = w_rec_T.shape[0]
        transposed = _transposed_step(N, H, T, backend.device_of(x))    # block 14
        recurrent = _product_buffer(xp, n_blocks, N, H, dtype, transposed)  # step t's h_{t-1} W_k^T
        n_rec = _product_buffer(xp, 1, N, H, dtype, transposed)[0]
        r, z, n = G                                                     # each (T, N, H)
        padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            h_prev = hs[prev]
            rz = G[:2, t]                                               # (2, N, H): step t's r and z
            _step_product(xp, h_prev, w_rec_T, recurrent, transposed)
            rz += recurrent[:2]                                         # a / 2 for r and z
            if half_rows is None:
                rz *= 0.5                                               #   (one step: a, halved here)
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
                _step_product(xp, n_part[t], w_hn_T, n_rec, transposed)  # (r * h_{t-1}) W_hn^T
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
