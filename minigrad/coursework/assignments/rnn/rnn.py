"""Assignment: a vanilla RNN, one step and a whole sequence, forward and backward.

    h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)

Shapes (minigrad's and PyTorch's layout; README.md maps it to CS231n's):
N batch, T time steps, D input features, H hidden units.
    x (T, N, D)   h0 (N, H)   w_ih (H, D)   w_hh (H, H)   b_ih, b_hh (H,)   h (T, N, H)

Each forward returns its output and a ``cache``, anything the backward needs;
each backward takes the upstream gradient and the cache and returns one
gradient per input, of that input's shape (``dx`` has the shape of ``x``).

The two step functions are minigrad's own (minigrad/functions/rnn_steps.py)
with their bodies taken out: written right, they are the code that minigrad's
reference tier runs at every time step (nn.RNN(..., reference=True), F.rnn(...,
reference=True) and nn.RNNCell call rnn_step_forward and rnn_step_backward);
the default fast tier (functions/rnn_fast.py) computes the same numbers.
"""
from minigrad import backend

# BEGIN LIBRARY
from minigrad.functions.rnn_steps import rnn_step_backward, rnn_step_forward
# END LIBRARY


def rnn_forward(x, h0, w_ih, w_hh, b_ih, b_hh):
    """A whole sequence.  x (T, N, D), h0 (N, H) -> h (T, N, H) (every hidden state but h0), cache."""
    xp = backend.array_module(x, h0, w_ih, w_hh)
    # BEGIN SOLUTION
    # HINT: call rnn_step_forward once per time step, and keep every step's cache
    T, N, _ = x.shape
    h = xp.zeros((T, N, h0.shape[1]), dtype=x.dtype)
    caches = []
    h_prev = h0
    for t in range(T):
        h_prev, step_cache = rnn_step_forward(x[t], h_prev, w_ih, w_hh, b_ih, b_hh)
        h[t] = h_prev
        caches.append(step_cache)
    cache = caches
    # END SOLUTION
    return h, cache


def rnn_backward(dh, cache):
    """dh (T, N, H), the upstream gradient of every hidden state -> dx, dh0, dw_ih, dw_hh, db_ih, db_hh.

    Backpropagation through time: h_t feeds both the loss at step t and h_{t+1},
    so its gradient is dh[t] plus what flows back from step t+1.
    """
    xp = backend.array_module(dh)
    # BEGIN SOLUTION
    # HINT: walk the steps from the last to the first, and give each step all the gradient h_t receives
    # HINT: the weights are shared by all steps: add up their gradients over t
    T, N, H = dh.shape
    dx = [None] * T
    dh_next = xp.zeros((N, H), dtype=dh.dtype)      # nothing comes back from after the last step
    dw_ih = dw_hh = db_ih = db_hh = 0
    for t in reversed(range(T)):
        dx[t], dh_next, dw_ih_t, dw_hh_t, db_ih_t, db_hh_t = rnn_step_backward(dh[t] + dh_next, cache[t])
        dw_ih, dw_hh = dw_ih + dw_ih_t, dw_hh + dw_hh_t
        db_ih, db_hh = db_ih + db_ih_t, db_hh + db_hh_t
    dx = xp.stack(dx)                               # (T, N, D)
    dh0 = dh_next
    # END SOLUTION
    return dx, dh0, dw_ih, dw_hh, db_ih, db_hh
