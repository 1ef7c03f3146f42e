"""Assignment: a vanilla RNN, one step and a whole sequence, forward and backward.

    h_t = tanh(x_t Wx + h_{t-1} Wh + b)

Shapes: N batch, T time steps, D input features, H hidden units.
    x (N, T, D)   h0 (N, H)   Wx (D, H)   Wh (H, H)   b (H,)   h (N, T, H)

Each forward returns its output and a ``cache``, anything the backward needs;
each backward takes the upstream gradient and the cache and returns one
gradient per input, of that input's shape (``dx`` has the shape of ``x``).
"""
from minigrad import backend


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    """One step.  x (N, D), prev_h (N, H), Wx (D, H), Wh (H, H), b (H,) -> next_h (N, H), cache."""
    xp = backend.array_module(x, prev_h, Wx, Wh, b)
    # BEGIN SOLUTION
    # HINT: next_h = tanh(x @ Wx + prev_h @ Wh + b); keep next_h in the cache, the backward needs it
    next_h = xp.tanh(x @ Wx + prev_h @ Wh + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    # END SOLUTION
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    """dnext_h (N, H) -> dx (N, D), dprev_h (N, H), dWx (D, H), dWh (H, H), db (H,)."""
    # BEGIN SOLUTION
    # HINT: d tanh(a) / da = 1 - tanh(a)**2 = 1 - next_h**2
    # HINT: for a = x @ W, dx = da @ W.T and dW = x.T @ da
    x, prev_h, Wx, Wh, next_h = cache
    da = dnext_h * (1 - next_h ** 2)          # (N, H)
    dx = da @ Wx.T                            # (N, D)
    dprev_h = da @ Wh.T                       # (N, H)
    dWx = x.T @ da                            # (D, H)
    dWh = prev_h.T @ da                       # (H, H)
    db = da.sum(axis=0)                       # (H,): b was broadcast over the batch
    # END SOLUTION
    return dx, dprev_h, dWx, dWh, db


def rnn_forward(x, h0, Wx, Wh, b):
    """A whole sequence.  x (N, T, D), h0 (N, H) -> h (N, T, H) (every hidden state but h0), cache."""
    xp = backend.array_module(x, h0, Wx, Wh, b)
    # BEGIN SOLUTION
    # HINT: loop over t, calling rnn_step_forward; keep every step's cache
    N, T, _ = x.shape
    h = xp.zeros((N, T, h0.shape[1]), dtype=x.dtype)
    caches = []
    prev_h = h0
    for t in range(T):
        prev_h, step_cache = rnn_step_forward(x[:, t], prev_h, Wx, Wh, b)
        h[:, t] = prev_h
        caches.append(step_cache)
    cache = caches
    # END SOLUTION
    return h, cache


def rnn_backward(dh, cache):
    """dh (N, T, H), the upstream gradient of every hidden state -> dx, dh0, dWx, dWh, db.

    Backpropagation through time: h_t feeds both the loss at step t and h_{t+1},
    so its gradient is dh[:, t] plus what flows back from step t+1.
    """
    xp = backend.array_module(dh)
    # BEGIN SOLUTION
    # HINT: walk t from T-1 down to 0 and carry dprev_h from one step to the one before it
    # HINT: the weights are shared by all steps: add up their gradients over t
    N, T, H = dh.shape
    x0, _, Wx, Wh, _ = cache[0]
    dx = xp.zeros((N, T, Wx.shape[0]), dtype=dh.dtype)
    dWx, dWh, db = xp.zeros_like(Wx), xp.zeros_like(Wh), xp.zeros(H, dtype=dh.dtype)
    dprev_h = xp.zeros((N, H), dtype=dh.dtype)
    for t in reversed(range(T)):
        dx[:, t], dprev_h, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t] + dprev_h, cache[t])
        dWx, dWh, db = dWx + dWx_t, dWh + dWh_t, db + db_t
    dh0 = dprev_h
    # END SOLUTION
    return dx, dh0, dWx, dWh, db
