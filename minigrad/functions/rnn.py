"""Whole sequences through an RNN, an LSTM and a GRU, backward through time by hand.

This is the REFERENCE tier: the equations of ``rnn_steps.py`` (read that file
first) run over all T steps inside one autograd Function, written to be read.
One layer, one direction, gates in PyTorch's order:

    RNN   h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)          (or relu)

    LSTM  [a_i, a_f, a_g, a_o] = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh
          i = sigma(a_i),  f = sigma(a_f),  g = tanh(a_g),  o = sigma(a_o)
          c_t = f * c_{t-1} + i * g,      h_t = o * tanh(c_t)

    GRU   [ai_r, ai_z, ai_n] = x_t W_ih^T + b_ih,   [ah_r, ah_z, ah_n] = h_{t-1} W_hh^T + b_hh
          r = sigma(ai_r + ah_r),  z = sigma(ai_z + ah_z)
          n = tanh(ai_n + r * ah_n)                        reset_after=True  (PyTorch)
          n = tanh(ai_n + (r * h_{t-1}) W_hn^T + b_hn)     reset_after=False (Cho et al., d2l)
          h_t = (1 - z) * n + z * h_{t-1}

Each step's backward is the step backward of ``rnn_steps.py``, with two changes
that make the sequence fast without making it harder to read:

  1. x_t W_ih^T + b for all T steps is ONE matmul before the loop (it does not
     depend on h), so the loop only adds h_{t-1} W_hh^T.
  2. The weight gradients are ONE matmul after the loop: the loop stores dL/da_t
     for every step in dA (T, N, G*H), and dW_ih = dA^T X, dW_hh = dA^T H_prev,
     db = sum dA over all T*N rows (the step formulas, on all steps stacked).
     Likewise dx = dA W_ih.

Shapes: x (T, N, D) time-major (nn.RNN turns batch_first input around), h0 / c0
(N, H) or None (zeros), w_ih (G*H, D), w_hh (G*H, H), biases (G*H,) or None;
G = 1 (RNN), 4 (LSTM), 3 (GRU).  Returns output (T, N, H) and the final state(s).

``reverse=True`` (the backward direction of a bidirectional layer) runs the
steps t = T-1, ..., 0; output[t] is still the state after step t.

Variable lengths: ``mask`` (T, N, 1) bool, True where step t belongs to
sequence n (functional.py builds it from lengths).  A padded step keeps the
state it received and outputs zero, so the final state is each sequence's state
at its own last step; the reverse direction, which meets the padding first,
starts from h0 at each sequence's own end.  No gradient flows through a padded
step's weights; the gradient of its state passes through unchanged.

The fast tier, ``rnn_fast.py``, computes the same numbers faster; tests prove
the two equal (tests/test_tiers.py).
"""
from .. import backend
from ..autograd import Function
from .rnn_steps import _weight_grads, sigmoid


def time_steps(T, reverse):
    """The time steps in the order the forward processes them."""
    return range(T - 1, -1, -1) if reverse else range(T)


def check_shapes(name, x, h0, w_ih, w_hh, n_gates, states=()):
    """Raise a clear error when x, the states and the weights do not fit together; return (T, N, H)."""
    H = w_hh.shape[1]
    if x.ndim != 3:
        raise ValueError(f"{name}: expected x of shape (T, N, {w_ih.shape[1]}), got {tuple(x.shape)}")
    if w_ih.shape[0] != n_gates * H or w_hh.shape != (n_gates * H, H):
        raise ValueError(f"{name}: expected w_ih ({n_gates * H}, D) and w_hh ({n_gates * H}, {H}), "
                         f"got {tuple(w_ih.shape)} and {tuple(w_hh.shape)}")
    if x.shape[2] != w_ih.shape[1]:
        raise ValueError(f"{name}: expected x of shape (T, N, {w_ih.shape[1]}), got {tuple(x.shape)}")
    for label, h in (("h0", h0),) + tuple(states):
        if h is not None and tuple(h.shape) != (x.shape[1], H):
            raise ValueError(f"{name}: expected {label} of shape (N, H) = ({x.shape[1]}, {H}), "
                             f"got {tuple(h.shape)}")
    return x.shape[0], x.shape[1], H


def _initial_state(xp, state, x, H):
    """h0 or c0, zeros (N, H) when None."""
    return xp.zeros((x.shape[1], H), dtype=x.dtype) if state is None else state


def _input_projection(x, w_ih, *biases):
    """x_t W_ih^T + the biases for all T steps, ONE matmul: (T, N, D) -> (T, N, G*H)."""
    T, N, D = x.shape
    xw = (x.reshape(T * N, D) @ w_ih.T).reshape(T, N, w_ih.shape[0])
    for b in biases:
        if b is not None:
            xw = xw + b
    return xw


def _sequence_grads(dA_x, dA_h, x, h_prev, w_ih, b_ih, b_hh):
    """dx and the weight and bias gradients from dL/d(pre-activation) of every step.

    dA_x (T, N, G*H) is the gradient of the input projection x W_ih^T + b_ih,
    dA_h of the recurrent one h_{t-1} W_hh^T + b_hh (the same array except in the
    GRU).  Over all steps stacked as T*N rows, the step's formulas become one
    matmul each: dx = dA_x W_ih, dW_ih = dA_x^T X, dW_hh = dA_h^T H_prev, db = sum dA.
    Returns (dx, dw_ih, dw_hh, db_ih, db_hh).
    """
    T, N, D = x.shape
    rows = T * N
    dx = (dA_x.reshape(rows, -1) @ w_ih).reshape(T, N, D)
    return (dx,) + _weight_grads(dA_x.reshape(rows, -1), dA_h.reshape(rows, -1), x.reshape(rows, D),
                                 h_prev.reshape(rows, -1), b_ih, b_hh)


# --------------------------------------------------------------------------- RNN

class RNNFunction(Function):
    """h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)  (or relu), for every step.

    forward(x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity) -> (output (T, N, H), h_n (N, H))

    Backward, carrying dh from step t+1 into step t (see ``rnn_step_backward``):
        dh = dout_t + dh_next
        da_t = dh * (1 - h_t^2)    (tanh)    or  dh * [h_t > 0]  (relu)
        dh_next = da_t W_hh
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity):
        T, N, H = check_shapes("rnn", x, h0, w_ih, w_hh, 1)
        xp = backend.array_module(x, w_ih, w_hh)
        xw = _input_projection(x, w_ih, b_ih, b_hh)            # (T, N, H), all steps at once
        h_prevs = xp.empty((T, N, H), dtype=x.dtype)           # h_{t-1}, for dW_hh
        hs = xp.empty((T, N, H), dtype=x.dtype)                # h_t
        h = _initial_state(xp, h0, x, H)
        for t in time_steps(T, reverse):
            a = xw[t] + h @ w_hh.T                             # (N, H)
            h_new = xp.tanh(a) if nonlinearity == "tanh" else xp.maximum(a, 0)
            if mask is not None:
                h_new = xp.where(mask[t], h_new, h)            # a padded step keeps its state
            h_prevs[t], hs[t] = h, h_new
            h = h_new
        ctx.save_for_backward(x, h_prevs, hs, w_ih, w_hh, b_ih, b_hh, mask)
        ctx.reverse, ctx.nonlinearity = reverse, nonlinearity
        output = hs if mask is None else hs * mask             # padded steps output zero
        return output, h

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, h_prevs, hs, w_ih, w_hh, b_ih, b_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        if mask is not None:
            dout = dout * mask                                 # a padded output is a constant zero
        dA = xp.empty_like(hs)                                 # dL/da_t for every step
        dh_next = dh_n
        for t in reversed(time_steps(x.shape[0], ctx.reverse)):
            h = hs[t]
            dh = dout[t] + dh_next
            da = dh * (1 - h * h) if ctx.nonlinearity == "tanh" else dh * (h > 0)   # tanh', relu'
            dh_prev = da @ w_hh
            if mask is not None:                               # padded: h_t = h_{t-1}
                da = xp.where(mask[t], da, 0)
                dh_prev = xp.where(mask[t], dh_prev, dh)
            dA[t] = da
            dh_next = dh_prev
        dx, dw_ih, dw_hh, db_ih, db_hh = _sequence_grads(dA, dA, x, h_prevs, w_ih, b_ih, b_hh)
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None


# --------------------------------------------------------------------------- LSTM

class LSTMFunction(Function):
    """An LSTM over every step, gates (i, f, g, o) (the module docstring has the equations).

    forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse) -> (output (T, N, H), h_n, c_n)

    Backward, carrying dh and dc from step t+1 into step t (see ``lstm_step_backward``):
        dh = dout_t + dh_next
        dc = dc_next + dh * o * (1 - tanh(c_t)^2)
        da = [dc g i(1 - i),  dc c_{t-1} f(1 - f),  dc i (1 - g^2),  dh tanh(c_t) o(1 - o)]
        dh_next = da W_hh,   dc_next = dc * f
    """

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
        T, N, H = check_shapes("lstm", x, h0, w_ih, w_hh, 4, (("c0", c0),))
        xp = backend.array_module(x, w_ih, w_hh)
        xw = _input_projection(x, w_ih, b_ih, b_hh)            # (T, N, 4H), all steps at once
        gates = xp.empty((T, N, 4 * H), dtype=x.dtype)         # [i, f, g, o] of every step
        h_prevs = xp.empty((T, N, H), dtype=x.dtype)           # h_{t-1}
        c_prevs = xp.empty((T, N, H), dtype=x.dtype)           # c_{t-1}
        cs = xp.empty((T, N, H), dtype=x.dtype)                # c_t
        h, c = _initial_state(xp, h0, x, H), _initial_state(xp, c0, x, H)
        hs = xp.empty((T, N, H), dtype=x.dtype)
        for t in time_steps(T, reverse):
            a = xw[t] + h @ w_hh.T                             # (N, 4H) = [a_i, a_f, a_g, a_o]
            i = sigmoid(xp, a[:, 0 * H:1 * H])
            f = sigmoid(xp, a[:, 1 * H:2 * H])
            g = xp.tanh(a[:, 2 * H:3 * H])
            o = sigmoid(xp, a[:, 3 * H:4 * H])
            c_new = f * c + i * g
            h_new = o * xp.tanh(c_new)
            if mask is not None:                               # a padded step keeps both states
                c_new = xp.where(mask[t], c_new, c)
                h_new = xp.where(mask[t], h_new, h)
            gates[t] = xp.concatenate([i, f, g, o], axis=1)
            h_prevs[t], c_prevs[t], cs[t], hs[t] = h, c, c_new, h_new
            h, c = h_new, c_new
        ctx.save_for_backward(x, gates, h_prevs, c_prevs, cs, w_ih, w_hh, b_ih, b_hh, mask)
        ctx.reverse = reverse
        output = hs if mask is None else hs * mask
        return output, h, c

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n):
        x, gates, h_prevs, c_prevs, cs, w_ih, w_hh, b_ih, b_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        H = w_hh.shape[1]
        if mask is not None:
            dout = dout * mask                                 # a padded output is a constant zero
        dA = xp.empty_like(gates)                              # dL/da_t for every step
        dh_next, dc_next = dh_n, dc_n
        for t in reversed(time_steps(x.shape[0], ctx.reverse)):
            i, f, g, o = (gates[t, :, k * H:(k + 1) * H] for k in range(4))
            tanh_c = xp.tanh(cs[t])
            dh = dout[t] + dh_next
            dc = dc_next + dh * o * (1 - tanh_c * tanh_c)      # h = o tanh(c): the cell's second path
            da = xp.concatenate([
                dc * g * i * (1 - i),                          # da_i
                dc * c_prevs[t] * f * (1 - f),                 # da_f
                dc * i * (1 - g * g),                          # da_g
                dh * tanh_c * o * (1 - o),                     # da_o
            ], axis=1)
            dh_prev = da @ w_hh
            dc_prev = dc * f
            if mask is not None:                               # padded: h_t = h_{t-1}, c_t = c_{t-1}
                da = xp.where(mask[t], da, 0)
                dh_prev = xp.where(mask[t], dh_prev, dh)
                dc_prev = xp.where(mask[t], dc_prev, dc_next)
            dA[t] = da
            dh_next, dc_next = dh_prev, dc_prev
        dx, dw_ih, dw_hh, db_ih, db_hh = _sequence_grads(dA, dA, x, h_prevs, w_ih, b_ih, b_hh)
        return dx, dh_next, dc_next, dw_ih, dw_hh, db_ih, db_hh, None, None


# --------------------------------------------------------------------------- GRU

class GRUFunction(Function):
    """A GRU over every step, gates (r, z, n), either variant (the module docstring has both).

    forward(x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after) -> (output (T, N, H), h_n)

    Backward, carrying dh from step t+1 into step t (see ``gru_step_backward``):
        da_n = dh (1 - z)(1 - n^2),      da_z = dh (h_{t-1} - n) z(1 - z)
        reset_after=True:   da_r = da_n ah_n r(1 - r),   dah = [da_r, da_z, da_n r]
                            dh_next = dh z + dah W_hh
        reset_after=False:  d(rh) = da_n W_hn,   da_r = d(rh) h_{t-1} r(1 - r),   dah = [da_r, da_z, da_n]
                            dh_next = dh z + [da_r, da_z] W_h(r,z) + d(rh) r
    dai = [da_r, da_z, da_n] is the gradient of the input projection, dah of the recurrent one.
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after):
        T, N, H = check_shapes("gru", x, h0, w_ih, w_hh, 3)
        xp = backend.array_module(x, w_ih, w_hh)
        if not reset_after:                                    # only the r, z rows see h_{t-1}
            w_hrz, w_hn = w_hh[:2 * H], w_hh[2 * H:]
            b_hrz, b_hn = (None, None) if b_hh is None else (b_hh[:2 * H], b_hh[2 * H:])
        ai = _input_projection(x, w_ih, b_ih)                  # (T, N, 3H) = [ai_r, ai_z, ai_n], all steps
        gates = xp.empty((T, N, 3 * H), dtype=x.dtype)         # [r, z, n] of every step
        ah_ns = xp.empty((T, N, H), dtype=x.dtype) if reset_after else None   # ah_n, for da_r
        h_prevs = xp.empty((T, N, H), dtype=x.dtype)
        hs = xp.empty((T, N, H), dtype=x.dtype)
        h = _initial_state(xp, h0, x, H)
        for t in time_steps(T, reverse):
            if reset_after:
                ah = h @ w_hh.T if b_hh is None else h @ w_hh.T + b_hh     # (N, 3H)
            else:
                ah = h @ w_hrz.T if b_hrz is None else h @ w_hrz.T + b_hrz  # (N, 2H)
            r = sigmoid(xp, ai[t, :, 0 * H:1 * H] + ah[:, 0 * H:1 * H])
            z = sigmoid(xp, ai[t, :, 1 * H:2 * H] + ah[:, 1 * H:2 * H])
            if reset_after:
                ah_n = ah[:, 2 * H:]                           # h_{t-1} W_hn^T + b_hn
                n = xp.tanh(ai[t, :, 2 * H:] + r * ah_n)
                ah_ns[t] = ah_n
            else:
                rh_w = (r * h) @ w_hn.T if b_hn is None else (r * h) @ w_hn.T + b_hn
                n = xp.tanh(ai[t, :, 2 * H:] + rh_w)
            h_new = (1 - z) * n + z * h
            if mask is not None:
                h_new = xp.where(mask[t], h_new, h)            # a padded step keeps its state
            gates[t] = xp.concatenate([r, z, n], axis=1)
            h_prevs[t], hs[t] = h, h_new
            h = h_new
        ctx.save_for_backward(x, gates, ah_ns, h_prevs, w_ih, w_hh, b_ih, b_hh, mask)
        ctx.reverse, ctx.reset_after = reverse, reset_after
        output = hs if mask is None else hs * mask
        return output, h

    @staticmethod
    def backward(ctx, dout, dh_n):
        x, gates, ah_ns, h_prevs, w_ih, w_hh, b_ih, b_hh, mask = ctx.saved_tensors
        xp = backend.array_module(dout, x)
        H = w_hh.shape[1]
        reset_after = ctx.reset_after
        w_hrz, w_hn = w_hh[:2 * H], w_hh[2 * H:]
        if mask is not None:
            dout = dout * mask                                 # a padded output is a constant zero
        dAI = xp.empty_like(gates)                             # dL/d(input projection) per step
        dAH = xp.empty_like(gates)                             # dL/d(recurrent projection) per step
        dh_next = dh_n
        for t in reversed(time_steps(x.shape[0], ctx.reverse)):
            r, z, n = (gates[t, :, k * H:(k + 1) * H] for k in range(3))
            h_prev = h_prevs[t]
            dh = dout[t] + dh_next
            da_n = dh * (1 - z) * (1 - n * n)
            da_z = dh * (h_prev - n) * z * (1 - z)
            dh_prev = dh * z
            if reset_after:
                da_r = da_n * ah_ns[t] * r * (1 - r)
                dah = xp.concatenate([da_r, da_z, da_n * r], axis=1)
                dh_prev = dh_prev + dah @ w_hh
            else:
                drh = da_n @ w_hn                              # d(r * h_{t-1})
                da_r = drh * h_prev * r * (1 - r)
                dah = xp.concatenate([da_r, da_z, da_n], axis=1)   # the n rows' input is r * h_{t-1}
                dh_prev = dh_prev + dah[:, :2 * H] @ w_hrz + drh * r
            dai = xp.concatenate([da_r, da_z, da_n], axis=1)
            if mask is not None:                               # padded: h_t = h_{t-1}
                dai = xp.where(mask[t], dai, 0)
                dah = xp.where(mask[t], dah, 0)
                dh_prev = xp.where(mask[t], dh_prev, dh)
            dAI[t], dAH[t] = dai, dah
            dh_next = dh_prev
        dx, dw_ih, dw_hh, db_ih, db_hh = _sequence_grads(dAI, dAH, x, h_prevs, w_ih, b_ih, b_hh)
        if not reset_after:                                    # the n rows saw r * h_{t-1}, not h_{t-1}
            T, N, _ = x.shape
            r = gates[:, :, :H]
            da_n = dAH[:, :, 2 * H:].reshape(T * N, H)
            dw_hh[2 * H:] = da_n.T @ (r * h_prevs).reshape(T * N, H)
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None, None, None
