"""Whole sequences through an RNN, an LSTM and a GRU, backward through time by hand.

This is the REFERENCE tier: a loop over the step functions of ``rnn_steps.py``
(read that file first: the equations and their derivatives live there, and
only there), as CS231n's ``rnn_forward`` loops over ``rnn_step_forward``.
One layer, one direction:

    forward:   for t = 0, ..., T-1:      h_t, cache_t = step_forward(x_t, h_{t-1})
    backward:  for t = T-1, ..., 0:      dh = dout_t + dh_next             h_t feeds the loss and step t+1
                                         dx_t, dh_next, dW... = step_backward(dh, cache_t)
                                         dW_ih += dW_ih,t, ...             the weights are shared by all steps

(the LSTM carries (h, c) and (dh, dc) the same way).  Each step's gradient of
the weights is that step's term of the sum over t.

Shapes: x (T, N, D) time-major (nn.RNN turns batch_first input around), h0 / c0
(N, H) or None (zeros), w_ih (G*H, D), w_hh (G*H, H), biases (G*H,) or None;
G = 1 (RNN), 4 (LSTM), 3 (GRU).  Returns output (T, N, H) and the final state(s).

``reverse=True`` (the backward direction of a bidirectional layer) runs the
steps t = T-1, ..., 0; output[t] is still the state after step t.

Variable lengths: ``mask`` (T, N, 1) bool, True where step t belongs to
sequence n (functional.py builds it from lengths).  A padded step keeps the
state it received and outputs zero, so the final state is each sequence's state
at its own last step; the reverse direction, which meets the padding first,
starts from h0 at each sequence's own end.  In the backward a padded step's
rows get no gradient through the step (its upstream gradient is zeroed, so it
adds nothing to dx or the weights), and the gradient of its state passes
through unchanged.

The fast tier, ``rnn_fast.py``, computes the same numbers faster; tests prove
the two equal (tests/test_tiers.py).  The ``*CellFunction`` below are one step
as an autograd Function: what nn.RNNCell, LSTMCell and GRUCell run.
"""
from .. import backend
from ..autograd import Function
from .rnn_steps import (gru_step_backward, gru_step_forward, lstm_step_backward, lstm_step_forward,
                        rnn_step_backward, rnn_step_forward)


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


def forward_steps(step_forward, x, states, options, mask, reverse):
    """Run ``step_forward(x_t, *states, *options) -> (*new states, cache)`` over every step.

    states: the initial state(s), [h0] or [h0, c0].  Returns (output (T, N, H), the
    final states, the caches in time order).
    """
    xp = backend.array_module(x)
    T = x.shape[0]
    hs = xp.empty((T,) + states[0].shape, dtype=x.dtype)         # h_t of every step
    caches = [None] * T
    for t in time_steps(T, reverse):
        *new, caches[t] = step_forward(x[t], *states, *options)
        if mask is not None:                                     # a padded step keeps its state(s)
            new = [xp.where(mask[t], a, b) for a, b in zip(new, states)]
        states = new
        hs[t] = states[0]
    output = hs if mask is None else hs * mask                   # padded steps output zero
    return output, states, caches


def backward_steps(step_backward, caches, dout, d_finals, mask, reverse):
    """Backward through time: ``step_backward(*d_states, cache) -> (dx, *d_prev states, *weight grads)``.

    d_finals: dL/d(final states), [dh_n] or [dh_n, dc_n].  Returns (dx (T, N, D), dL/d(initial
    states), the weight and bias gradients summed over the steps, None for an absent bias).
    """
    xp = backend.array_module(dout)
    if mask is not None:
        dout = dout * mask                                       # a padded output is a constant zero
    d_states = list(d_finals)
    dx = d_weights = None
    for t in reversed(time_steps(len(caches), reverse)):
        d_states[0] = dout[t] + d_states[0]                      # h_t feeds the loss at t and step t+1
        d_step = d_states if mask is None else [d * mask[t] for d in d_states]   # padded rows: nothing
        dx_t, *grads = step_backward(*d_step, caches[t])
        d_prev, grads = grads[:len(d_states)], grads[len(d_states):]
        if mask is not None:                                     # padded: state_t = state_{t-1}
            d_prev = [xp.where(mask[t], a, b) for a, b in zip(d_prev, d_states)]
        d_states = d_prev
        if dx is None:
            dx = xp.empty((len(caches),) + dx_t.shape, dtype=dx_t.dtype)
            d_weights = grads                                    # fresh arrays of the step's: ours to add to
        else:
            for total, grad in zip(d_weights, grads):            # the weights are shared by every step
                if grad is not None:
                    total += grad
        dx[t] = dx_t
    return dx, d_states, d_weights


# --------------------------------------------------------------------------- RNN

class RNNFunction(Function):
    """h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)  (or relu), for every step.

    forward(x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity) -> (output (T, N, H), h_n (N, H))
    Each step: ``rnn_step_forward`` and ``rnn_step_backward``.
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, nonlinearity):
        T, N, H = check_shapes("rnn", x, h0, w_ih, w_hh, 1)
        h0 = _initial_state(backend.array_module(x), h0, x, H)
        output, (h_n,), caches = forward_steps(rnn_step_forward, x, [h0], (w_ih, w_hh, b_ih, b_hh, nonlinearity),
                                               mask, reverse)
        ctx.save_for_backward(caches, mask)
        ctx.reverse = reverse
        return output, h_n

    @staticmethod
    def backward(ctx, dout, dh_n):
        caches, mask = ctx.saved_tensors
        dx, (dh0,), d_weights = backward_steps(rnn_step_backward, caches, dout, [dh_n], mask, ctx.reverse)
        return (dx, dh0, *d_weights, None, None, None)


# --------------------------------------------------------------------------- LSTM

class LSTMFunction(Function):
    """An LSTM over every step, gates (i, f, g, o).

    forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse) -> (output (T, N, H), h_n, c_n)
    Each step: ``lstm_step_forward`` and ``lstm_step_backward``.
    """

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse):
        T, N, H = check_shapes("lstm", x, h0, w_ih, w_hh, 4, (("c0", c0),))
        xp = backend.array_module(x)
        states = [_initial_state(xp, h0, x, H), _initial_state(xp, c0, x, H)]
        output, (h_n, c_n), caches = forward_steps(lstm_step_forward, x, states, (w_ih, w_hh, b_ih, b_hh),
                                                   mask, reverse)
        ctx.save_for_backward(caches, mask)
        ctx.reverse = reverse
        return output, h_n, c_n

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n):
        caches, mask = ctx.saved_tensors
        dx, (dh0, dc0), d_weights = backward_steps(lstm_step_backward, caches, dout, [dh_n, dc_n], mask,
                                                   ctx.reverse)
        return (dx, dh0, dc0, *d_weights, None, None)


# --------------------------------------------------------------------------- GRU

class GRUFunction(Function):
    """A GRU over every step, gates (r, z, n), either variant (``reset_after``: see ``gru_step_forward``).

    forward(x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after) -> (output (T, N, H), h_n)
    Each step: ``gru_step_forward`` and ``gru_step_backward``.
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, mask, reverse, reset_after):
        T, N, H = check_shapes("gru", x, h0, w_ih, w_hh, 3)
        h0 = _initial_state(backend.array_module(x), h0, x, H)
        output, (h_n,), caches = forward_steps(gru_step_forward, x, [h0], (w_ih, w_hh, b_ih, b_hh, reset_after),
                                               mask, reverse)
        ctx.save_for_backward(caches, mask)
        ctx.reverse = reverse
        return output, h_n

    @staticmethod
    def backward(ctx, dout, dh_n):
        caches, mask = ctx.saved_tensors
        dx, (dh0,), d_weights = backward_steps(gru_step_backward, caches, dout, [dh_n], mask, ctx.reverse)
        return (dx, dh0, *d_weights, None, None, None)


# --------------------------------------------------------------------------- one step (the cells)

class RNNCellFunction(Function):
    """One RNN step: forward(x (N, D), h (N, H), w_ih, w_hh, b_ih, b_hh, nonlinearity) -> h' (N, H)."""

    @staticmethod
    def forward(ctx, x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity):
        h_next, cache = rnn_step_forward(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity)
        ctx.save_for_backward(cache)
        return h_next

    @staticmethod
    def backward(ctx, dh):
        (cache,) = ctx.saved_tensors
        return rnn_step_backward(dh, cache) + (None,)


class LSTMCellFunction(Function):
    """One LSTM step: forward(x (N, D), h, c (N, H), w_ih, w_hh, b_ih, b_hh) -> (h', c')."""

    @staticmethod
    def forward(ctx, x, h, c, w_ih, w_hh, b_ih, b_hh):
        h_next, c_next, cache = lstm_step_forward(x, h, c, w_ih, w_hh, b_ih, b_hh)
        ctx.save_for_backward(cache)
        return h_next, c_next

    @staticmethod
    def backward(ctx, dh, dc):
        (cache,) = ctx.saved_tensors
        return lstm_step_backward(dh, dc, cache)


class GRUCellFunction(Function):
    """One GRU step: forward(x (N, D), h (N, H), w_ih, w_hh, b_ih, b_hh, reset_after) -> h' (N, H)."""

    @staticmethod
    def forward(ctx, x, h, w_ih, w_hh, b_ih, b_hh, reset_after):
        h_next, cache = gru_step_forward(x, h, w_ih, w_hh, b_ih, b_hh, reset_after)
        ctx.save_for_backward(cache)
        return h_next

    @staticmethod
    def backward(ctx, dh):
        (cache,) = ctx.saved_tensors
        return gru_step_backward(dh, cache) + (None,)
