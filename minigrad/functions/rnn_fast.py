"""RNN, LSTM and GRU over whole sequences: the FAST tier.  Read rnn.py (and rnn_steps.py) first.

Same Functions, same arguments, same numbers as the reference ``rnn.py``, which loops over
the step functions of ``rnn_steps.py``; tests/test_tiers.py proves the two equal for every
option.  The layers run these unless built with ``reference=True``.  One layout for every
size; what it changes relative to the reference, and nothing else:

 1. Whole-sequence products.  The reference's step computes x_t W_ih^T + b and returns its
    own dW_ih, dW_hh, db and dx_t; here the input projection of all T steps is ONE matmul
    before the loop, and after the loop dx = dA W_ih, dW_ih = dA^T X, dW_hh = dA^T H_prev
    and db = sum dA are one matmul (or sum) each over all T*N rows.  The loops only carry
    h_{t-1} W_hh^T forward and da W_hh backward.
 2. Gate-major storage (LSTM, GRU).  All steps' gates are one (n_gates, T, N, H) array, gate
    index first, so gate k of step t, G[k, t], is a contiguous (N, H) block.  The LSTM does a
    step's gate arithmetic in one contiguous (4, N, H) buffer and writes it back to G[:, t];
    all gates take one tanh, as sigma(a) = (1 + tanh(a / 2)) / 2 (rnn_steps.sigmoid): halve
    the sigmoid gates, tanh, halve, add 1/2.
 3. The recurrent weight as a product operand.  For T > 1, W_hh,k^T is copied once into a
    contiguous array (OpenBLAS multiplies by a transposed view slowly).  One step (T = 1,
    decoding a token at a time) cannot pay back that copy, so it makes each product
    h W_k^T (its input projection too) as W_k h^T, h^T copied contiguous (N H values), into
    the transposed view of an (n_gates, H, N) buffer.  The RNN's steps call ``h.dot(W)``.
 4. Local derivatives for all steps at once.  The slopes (sigma', tanh', the factors of dc
    and dh) depend only on the forward's values, so the backward computes them for all T
    steps before its loop (a few calls on (T, N, H) arrays instead of a few per step),
    and the loop only multiplies them by the carried gradient.
 5. States in one (T + 1, N, H) array: step t reads hs[t] and writes hs[t + 1] (reverse: reads
    hs[t + 1], writes hs[t]), so the outputs and the states the backward needs are views; the
    steps write with ``out=``.  The LSTM recomputes tanh(c_t) in the backward.

What each of these earns, and what was removed with its cost, measured A/B on the lessons'
and homework's sizes: benchmarks/results/20261128-issue37.md.

Variable lengths: ``mask`` (T, N, 1) as in rnn.py.  A padded step keeps its state (copied
with ``where``), outputs zero, and in the backward its slopes are zero and the carried
gradient passes through.
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


def _recurrent_operand(xp, w, T):
    """W_k^T for the loop's products h_{t-1} W_k^T, from weight blocks w (n_gates, H, K) (block 3):
    for T > 1 a contiguous copy (a faster gemm operand, paid back over the steps); for one step,
    w itself, whose product is made as W_k h^T."""
    return w if T == 1 else xp.ascontiguousarray(w.transpose(0, 2, 1))


def _product_buffer(xp, n_gates, N, H, dtype, T):
    """Where a step's products go: (n_gates, N, H); for one step the transposed view of an
    (n_gates, H, N) array, which W_k h^T fills (block 3)."""
    if T == 1:
        return xp.empty((n_gates, H, N), dtype=dtype).swapaxes(1, 2)
    return xp.empty((n_gates, N, H), dtype=dtype)


def _step_product(xp, h, w, out, T):
    """out = h W_k^T for each k: h (N, K), w a ``_recurrent_operand``, out a ``_product_buffer``.
    One step (T = 1, block 3) makes it as W_k h^T, with h^T copied contiguous (N K values)."""
    if T == 1:
        xp.matmul(w, xp.ascontiguousarray(h.T), out=out.swapaxes(1, 2))
    else:
        xp.matmul(h, w, out=out)
    return out


def _input_projection(xp, x, w_ih, bias, n_gates):
    """x W_ih,k^T + b_k for all T steps, gate-major: (T, N, D) -> (n_gates, T, N, H), ONE matmul
    (block 1); one step as a step's product (block 3).  W_ih,k: rows kH..(k+1)H of W_ih; bias
    (n_gates H,) or None."""
    T, N, D = x.shape
    H = w_ih.shape[0] // n_gates
    w_k = w_ih.reshape(n_gates, H, D)
    if T == 1:
        G = _step_product(xp, x[0], w_k, _product_buffer(xp, n_gates, N, H, x.dtype, 1), 1)[:, None]
    else:
        G = xp.matmul(x.reshape(T * N, D), w_k.transpose(0, 2, 1)).reshape(n_gates, T, N, H)
    if bias is not None:
        G += bias.reshape(n_gates, 1, 1, H)
    return G


def _bias_sum(*biases):
    """b_ih + b_hh, one of them, or None."""
    present = [b for b in biases if b is not None]
    return sum(present[1:], present[0]) if present else None


def _input_grad(xp, dA, w_ih):
    """dx = dA W_ih = sum_k dA_k W_ih,k for dA (n_gates, T*N, H) -> (T*N, D), a gate at a time
    (one product over all gates and its sum would hold an (n_gates, T*N, D) temporary)."""
    n_gates, _, H = dA.shape
    w_ih_k = w_ih.reshape(n_gates, H, w_ih.shape[1])
    dx = dA[0] @ w_ih_k[0]
    for k in range(1, n_gates):
        dx += dA[k] @ w_ih_k[k]
    return dx


def _projection_grads(ctx, dA, x, h_prev, w_ih, first):
    """dx and the weight and bias gradients of an RNN or LSTM from dA (n_gates, T, N, H) (block 1).

    The reference's ``_sequence_grads``, gate-major: over all T*N rows stacked,
    dx = sum_k dA_k W_ih,k,  dW_ih,k = dA_k^T X,  dW_hh,k = dA_k^T H_prev,  db_k = sum dA_k.
    ``first`` is the position of w_ih among the forward's arguments.  Returns
    (dx, dw_ih, dw_hh, db_ih, db_hh), None where no gradient is needed.
    """
    xp = backend.array_module(dA)
    n_gates, T, N, H = dA.shape
    D = x.shape[2]
    need = ctx.needs_input_grad
    dA = dA.reshape(n_gates, T * N, H)
    dA_T = dA.transpose(0, 2, 1)                                        # (n_gates, H, T*N)
    dx = _input_grad(xp, dA, w_ih).reshape(T, N, D) if need[0] else None
    dw_ih = xp.matmul(dA_T, x.reshape(T * N, D)).reshape(n_gates * H, D) if need[first] else None
    dw_hh = xp.matmul(dA_T, h_prev.reshape(T * N, H)).reshape(n_gates * H, H) if need[first + 1] else None
    db = dA.sum(axis=1).reshape(n_gates * H) if need[first + 2] or need[first + 3] else None
    db_ih = db if need[first + 2] else None
    db_hh = (db.copy() if need[first + 2] else db) if need[first + 3] else None
    return dx, dw_ih, dw_hh, db_ih, db_hh


def _float_mask(mask, dtype):
    """Bool mask (T, N, 1) -> (valid, padded) as 0/1 arrays of ``dtype``."""
    valid = mask.astype(dtype)
    return valid, 1 - valid


# --------------------------------------------------------------------------- RNN

class FastRNNFunction(Function):
    """The reference's RNNFunction (same arguments and results), fast: see the module docstring."""

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity):
        T, N, H = check_shapes("rnn", x, h0, w_ih, w_hh, 1)
        xp = backend.array_module(x, w_ih, w_hh)
        xw = _input_projection(xp, x, w_ih, _bias_sum(b_ih, b_hh), 1)[0]   # (T, N, H), all steps
        hs = _new_states(xp, h0, T, N, H, x.dtype, reverse)             # (T + 1, N, H)
        w_rec = _recurrent_operand(xp, w_hh[None], T)                   # (1, H, H)
        product = _product_buffer(xp, 1, N, H, x.dtype, T)
        padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            h = hs[nxt]
            if T > 1:
                hs[prev].dot(w_rec[0], out=h)                           # a = h_{t-1} W_hh^T (block 3)
                h += xw[t]                                              #   + x_t W_ih^T + b
            else:
                xp.add(_step_product(xp, hs[prev], w_rec, product, T)[0], xw[t], out=h)
            if nonlinearity == "tanh":
                xp.tanh(h, out=h)
            else:
                xp.maximum(h, 0, out=h)
            if mask is not None:                                        # padded: keep the state
                xp.copyto(h, hs[prev], where=padded_steps[t])
        ctx.save_for_backward(x, hs, w_ih, w_hh, mask)
        ctx.reverse, ctx.nonlinearity = reverse, nonlinearity
        return _sequence_outputs(hs, reverse, mask)

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, hs, w_ih, w_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        h_new, h_prev, _ = _outputs(hs, ctx.reverse)
        dA = xp.empty_like(h_new)                                       # the slopes f'(a_t), then da_t
        if ctx.nonlinearity == "tanh":
            xp.multiply(h_new, h_new, out=dA)
            xp.subtract(1, dA, out=dA)                                  # tanh' = 1 - h^2
        else:
            xp.greater(h_new, 0, out=dA)                                # relu' = [h > 0]
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dA *= valid                                                 # no gradient through a padded step
            dout = dout * valid                                         # its output was a constant zero
        dh_next = dh_n
        for t, _, _ in reversed(_steps(x.shape[0], ctx.reverse)):
            dh = dout[t] + dh_next
            da = dA[t]
            da *= dh                                                    # da_t = dh * f'(a_t)
            dh_next = da.dot(w_hh)                                      # dh_{t-1} = da_t W_hh (block 3)
            if mask is not None:
                dh_next += dh * padded[t]                               # a padded step passes dh through
        dx, dw_ih, dw_hh, db_ih, db_hh = _projection_grads(ctx, dA[None], x, h_prev, w_ih, first=2)
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None


# --------------------------------------------------------------------------- LSTM

class FastLSTMFunction(Function):
    """The reference's LSTMFunction (same arguments and results), fast: see the module docstring.

    G (4, T, N, H) holds the pre-activations [a_i, a_f, a_g, a_o], and each
    step turns its block into the gates [i, f, g, o]; the backward's dA is a new array of that layout.
    """

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
        T, N, H = check_shapes("lstm", x, h0, w_ih, w_hh, 4, (("c0", c0),))
        xp = backend.array_module(x, w_ih, w_hh)
        dtype = x.dtype
        G = _input_projection(xp, x, w_ih, _bias_sum(b_ih, b_hh), 4)   # (4, T, N, H): x part + b
        w_rec = _recurrent_operand(xp, w_hh.reshape(4, H, H), T)        # W_hh,k^T
        half = xp.empty((4, N, H), dtype=dtype)                         # whole arrays (a (4, 1, 1) operand splits
        half[...] = xp.asarray([0.5, 0.5, 1.0, 0.5], dtype=dtype)[:, None, None]   # a call into 4 N short loops)
        shift = 1 - half                                                # 1/2 for i, f, o; 0 for g
        hs = _new_states(xp, h0, T, N, H, dtype, reverse)               # (T + 1, N, H)
        cs = _new_states(xp, c0, T, N, H, dtype, reverse)
        products = _product_buffer(xp, 4, N, H, dtype, T)
        gates = xp.empty((4, N, H), dtype=dtype)                        # step t's gates, contiguous (block 2)
        i, f, g, o = gates
        ig = xp.empty((N, H), dtype=dtype)
        tanh_c = xp.empty((N, H), dtype=dtype)
        padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            _step_product(xp, hs[prev], w_rec, products, T)             # h_{t-1} W_hh,k^T
            xp.add(G[:, t], products, out=gates)                        #   + x_t W_ih,k^T + b_k
            gates *= half
            xp.tanh(gates, out=gates)                                   # sigma(a) = (1 + tanh(a / 2)) / 2
            gates *= half
            gates += shift                                              # now [i, f, g, o]
            G[:, t] = gates                                             # kept for the backward
            c = cs[nxt]
            xp.multiply(f, cs[prev], out=c)                             # c_t = f * c_{t-1} + i * g
            xp.multiply(i, g, out=ig)
            c += ig
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
        T, N, _ = x.shape
        H = w_hh.shape[1]
        _, h_prev, _ = _outputs(hs, ctx.reverse)
        c_new, c_prev, _ = _outputs(cs, ctx.reverse)
        f_carry = G[1]                                                  # dc_{t-1} = dc * f
        if mask is not None:
            valid, padded = _float_mask(mask, x.dtype)
            dout = dout * valid                                         # its output was a constant zero
            f_carry = G[1] * valid + padded                             # a padded step passes dc through
        w_rec = w_hh.reshape(4, H, H)
        dA = xp.empty_like(G)                                           # the slopes, then da, gate-major
        dh_parts = xp.empty((4, N, H), dtype=x.dtype)
        i, f, g, o = G                                                  # block 4: every step's slopes
        tanh_c = xp.tanh(c_new)
        slope_c = o * (1 - tanh_c * tanh_c)                             # dc_t / dh_t (h = o tanh(c))
        dA[0] = g * i * (1 - i)                                         # da_i / dc
        dA[1] = c_prev * f * (1 - f)                                    # da_f / dc
        dA[2] = i * (1 - g * g)                                         # da_g / dc
        dA[3] = tanh_c * o * (1 - o)                                    # da_o / dh
        if mask is not None:
            dA *= valid                                                 # no gradient through a padded step
            slope_c *= valid
        dh_next, dc_next = dh_n, dc_n
        for t, _, _ in reversed(_steps(T, ctx.reverse)):
            da = dA[:, t]                                               # (4, N, H): the slopes, then da
            dh = dout[t] + dh_next
            dc = dc_next + dh * slope_c[t]
            da[:3] *= dc                                                # da_i, da_f, da_g
            da[3] *= dh                                                 # da_o
            xp.matmul(da, w_rec, out=dh_parts)                          # da_k W_hh,k
            dh_next = dh_parts.sum(axis=0)                              # dh_{t-1} = sum_k da_k W_hh,k
            dc_next = dc * f_carry[t]                                   # dc_{t-1} = dc * f
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
        b_hrz = None if b_hh is None else xp.concatenate([b_hh[:2 * H], xp.zeros((H,), dtype=dtype)])
        b_hn = None if b_hh is None else b_hh[2 * H:]
        G = _input_projection(xp, x, w_ih, _bias_sum(b_ih, b_hrz), 3)  # b_hr, b_hz join the projection
        hs = _new_states(xp, h0, T, N, H, dtype, reverse)
        n_part = xp.empty((T, N, H), dtype=dtype)
        w_rec = w_hh.reshape(3, H, H)                                   # [W_hr, W_hz, W_hn]
        if not reset_after:                                             # [ah_r, ah_z]; ah_n waits for r
            w_rec, w_hn = w_rec[:2], _recurrent_operand(xp, w_rec[2:], T)
        w_rec = _recurrent_operand(xp, w_rec, T)
        recurrent = _product_buffer(xp, w_rec.shape[0], N, H, dtype, T)  # step t's h_{t-1} W_k^T
        n_product = _product_buffer(xp, 1, N, H, dtype, T)
        n_rec = xp.empty((N, H), dtype=dtype)
        r, z, n = G                                                     # each (T, N, H)
        padded_steps = None if mask is None else ~mask                  # (T, N, 1): True at padded steps
        for t, prev, nxt in _steps(T, reverse):
            h_prev = hs[prev]
            ah = _step_product(xp, h_prev, w_rec, recurrent, T)         # (2 or 3, N, H)
            rz = G[:2, t]                                               # (2, N, H): step t's r and z
            rz += ah[:2]
            rz *= 0.5
            xp.tanh(rz, out=rz)                                         # sigma(a) = (1 + tanh(a / 2)) / 2
            rz *= 0.5
            rz += 0.5                                                   # now [r, z]
            if reset_after:
                if b_hn is None:
                    xp.copyto(n_part[t], ah[2])                         # ah_n = h_{t-1} W_hn^T
                else:
                    xp.add(ah[2], b_hn, out=n_part[t])                  #   (+ b_hn)
                xp.multiply(r[t], n_part[t], out=n_rec)                 # r * ah_n
            else:
                xp.multiply(r[t], h_prev, out=n_part[t])                # r * h_{t-1}
                xp.copyto(n_rec, _step_product(xp, n_part[t], w_hn, n_product, T)[0])   # (r h_{t-1}) W_hn^T
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
        dAI = xp.empty_like(G)                                          # dL/d(input projection), gate-major
        da_n = dAI[2]
        dah_n = xp.empty_like(n_part) if reset_after else None          # da_n * r: the n rows' recurrent grad
        w_hrz, w_hn = w_hh[:2 * H].reshape(2, H, H), w_hh[2 * H:]
        dh_parts = xp.empty((2, N, H), dtype=x.dtype)
        r, z, n = G                                                     # block 4: every step's slopes
        dAI[2] = slope_n = (1 - z) * (1 - n * n)                        # da_n / dh
        dAI[1] = (h_prev - n) * z * (1 - z)                             # da_z / dh
        if reset_after:
            dAI[0] = slope_n * n_part * r * (1 - r)                     # da_r / dh = da_n/dh ah_n r(1 - r)
        else:
            r_slope = h_prev * r * (1 - r)                              # da_r / d(r h_{t-1}), per unit
        if mask is not None:                                            # no gradient through a padded step
            dAI[0 if reset_after else 1:] *= valid                      # (da_r, when not reset_after, is
            if not reset_after:                                         #  written in the loop, from r_slope)
                r_slope *= valid
        dh_next = dh_n
        for t, _, _ in reversed(_steps(T, ctx.reverse)):
            dh = dout[t] + dh_next
            if reset_after:
                dAI[:, t] *= dh                                         # [da_r, da_z, da_n]
                dah_n[t] = da_n[t] * r[t]                               # da_n * r
                d_rec = dah_n[t] @ w_hn                                 # dah_n W_hn
            else:
                dAI[1:, t] *= dh                                        # da_z, da_n
                d_rh = da_n[t] @ w_hn                                   # d(r * h_{t-1})
                dAI[0, t] = d_rh * r_slope[t]                           # da_r
                d_rec = d_rh * r[t]
            xp.matmul(dAI[:2, t], w_hrz, out=dh_parts)                  # da_r W_hr, da_z W_hz
            dh_next = dh_parts[0] + dh_parts[1] + d_rec + dh * z_carry[t]
        # the reference's _sequence_grads, gate-major; the n rows of W_hh saw h_{t-1} with
        # gradient dah_n (reset_after), or r * h_{t-1} with gradient da_n (not)
        need = ctx.needs_input_grad
        dAI = dAI.reshape(3, T * N, H)
        dAI_T = dAI.transpose(0, 2, 1)                                  # (3, H, T*N)
        dx = _input_grad(xp, dAI, w_ih).reshape(x.shape) if need[0] else None
        dw_ih = xp.matmul(dAI_T, x.reshape(T * N, -1)).reshape(3 * H, -1) if need[2] else None
        grad_n, input_n = (dah_n, h_prev) if reset_after else (da_n, n_part)
        grad_n = grad_n.reshape(T * N, H)
        dw_hh = None
        if need[3]:
            dw_rz = xp.matmul(dAI_T[:2], h_prev.reshape(T * N, H)).reshape(2 * H, H)
            dw_hh = xp.concatenate([dw_rz, grad_n.T @ input_n.reshape(T * N, H)])
        db_i = dAI.sum(axis=1).reshape(3 * H)
        db_ih = db_i if need[4] else None
        db_hh = xp.concatenate([db_i[:2 * H], grad_n.sum(axis=0)]) if need[5] else None
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None
