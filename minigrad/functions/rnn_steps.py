"""One time step of an RNN, an LSTM and a GRU: forward and backward on plain arrays.

These are the textbook level (as in CS231n's assignment 3): each forward
returns the next state and a ``cache``; each backward takes the upstream
gradients and that cache and returns the gradient of every input.  No
autograd is involved: every derivative is written out by hand.

The layouts a student meets (one table, so they cannot drift apart):

                    CS231n's assignment 3          minigrad (PyTorch's): here, functions/, nn/,
                                                   and the rnn and lstm_gru assignments
    weights         Wx (D, G*H), Wh (H, G*H)       w_ih (G*H, D), w_hh (G*H, H)
    biases          b (G*H,)                       b_ih, b_hh (G*H,)                 b == b_ih + b_hh
    pre-activation  x @ Wx + prev_h @ Wh + b       x @ w_ih.T + b_ih + h_prev @ w_hh.T + b_hh
    gate blocks     LSTM (i, f, o, g)              LSTM (i, f, g, o), GRU (r, z, n)
    sequence        x (N, T, D), batch first       x (T, N, D), time first; nn layers take
                                                   (N, T, D) with batch_first=True
    states          prev_h, next_h (prev_c, next_c)  h_prev, h (c_prev, c)

    G = 1 (RNN), 4 (LSTM), 3 (GRU).  RNN: Wx == w_ih.T and Wh == w_hh.T.  LSTM: CS231n's
    ``lstm_step_forward`` splits a into (a_i, a_f, a_o, a_g), so Wx equals w_ih.T only after
    swapping its third and fourth blocks of H columns (o and g), and the same for Wh and b.
    CS231n's assignment has no GRU; minigrad's follows PyTorch's (reset gate applied after
    the product with w_hh, Cho et al.'s is ``reset_after=False``).

Notation (the lessons'):   N batch, D input features, H hidden units.

    x       (N, D)     the input at this step
    h_prev  (N, H)     the previous hidden state   (c_prev: the LSTM's cell)
    w_ih    (G*H, D)   input-to-hidden weights, one block of rows per gate
    w_hh    (G*H, H)   hidden-to-hidden weights
    b_ih, b_hh (G*H,)  biases (either may be None)

Weights are stored as in PyTorch, (out, in), so the pre-activations are
``x @ w_ih.T + h_prev @ w_hh.T``, and the gate blocks come in PyTorch's
order: LSTM (i, f, g, o), GRU (r, z, n).

This file is the one place the recurrent equations and their derivatives are
written.  Everything else calls these functions: the reference sequence
Functions of ``minigrad/functions/rnn.py`` loop over them (forward and
backward), the cells of ``minigrad/nn/rnn_cell.py`` run one of them per call,
and ``minigrad/instruments.py`` reads the gates they cache.  The fast tier,
``rnn_fast.py``, rearranges the same equations for speed, and the tests prove
it equal to the reference (tests/test_tiers.py); the tests also check every
step here against finite differences (tests/test_rnn_steps.py).
"""
from .. import backend

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the rnn and lstm_gru
# assignments ask students to write: `minigrad assignment make` builds their files from this one.


def sigmoid(xp, a):
    """sigma(a) = 1 / (1 + exp(-a)), written as (1 + tanh(a/2)) / 2 so it never overflows."""
    return 0.5 * (1 + xp.tanh(0.5 * a))


def _pre_activation(x, h_prev, w_ih, w_hh, b_ih, b_hh):
    a = x @ w_ih.T + h_prev @ w_hh.T
    if b_ih is not None:
        a = a + b_ih
    if b_hh is not None:
        a = a + b_hh
    return a


def _weight_grads(da_x, da_h, x, h_prev, b_ih, b_hh):
    """dW_ih = da_x^T x,  dW_hh = da_h^T h_prev,  db = da summed over the batch."""
    dw_ih = da_x.T @ x
    dw_hh = da_h.T @ h_prev
    db_ih = None if b_ih is None else da_x.sum(axis=0)
    db_hh = None if b_hh is None else da_h.sum(axis=0)
    return dw_ih, dw_hh, db_ih, db_hh


# --------------------------------------------------------------------------- vanilla RNN

def rnn_step_forward(x, h_prev, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    """One step of an Elman RNN.

        a = x W_ih^T + b_ih + h_prev W_hh^T + b_hh      (N, H)
        h = tanh(a)   (or relu(a))                        (N, H)

    Returns (h, cache).
    """
    xp = backend.array_module(x, h_prev, w_ih, w_hh)
    # BEGIN SOLUTION
    # HINT: the weights are stored (out, in), as in PyTorch: x @ w_ih.T is (N, H)
    # HINT: keep h in the cache: the derivative of tanh is best written with it
    a = _pre_activation(x, h_prev, w_ih, w_hh, b_ih, b_hh)
    h = xp.tanh(a) if nonlinearity == "tanh" else xp.maximum(a, 0)
    return h, (x, h_prev, w_ih, w_hh, b_ih, b_hh, h, nonlinearity)
    # END SOLUTION


def rnn_step_backward(dh, cache):
    """Backward of ``rnn_step_forward``.  dh = dL/dh (N, H).

        da       = dh * (1 - h^2)          tanh'(a) = 1 - tanh(a)^2
                 = dh * [a > 0]            relu'(a) (h > 0 exactly when a > 0)
        dx       = da W_ih                 (N, D)
        dh_prev  = da W_hh                 (N, H)   the gradient carried to step t-1
        dW_ih    = da^T x,  dW_hh = da^T h_prev,  db_ih = db_hh = sum_n da

    Returns (dx, dh_prev, dw_ih, dw_hh, db_ih, db_hh); a bias gradient is None when the bias is.
    """
    # BEGIN SOLUTION
    # HINT: go back through the nonlinearity first, then through the two matmuls
    # HINT: w_ih is (H, D): the gradient of x @ w_ih.T with respect to x is da @ w_ih
    x, h_prev, w_ih, w_hh, b_ih, b_hh, h, nonlinearity = cache
    da = dh * (1 - h * h) if nonlinearity == "tanh" else dh * (h > 0)
    dx = da @ w_ih
    dh_prev = da @ w_hh
    return (dx, dh_prev) + _weight_grads(da, da, x, h_prev, b_ih, b_hh)
    # END SOLUTION


# --------------------------------------------------------------------------- LSTM

def lstm_step_forward(x, h_prev, c_prev, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an LSTM (Hochreiter & Schmidhuber 1997, with a forget gate), gates (i, f, g, o).

        a = x W_ih^T + b_ih + h_prev W_hh^T + b_hh       (N, 4H) = [a_i, a_f, a_g, a_o]
        i = sigma(a_i)    input gate
        f = sigma(a_f)    forget gate
        g = tanh(a_g)     candidate cell
        o = sigma(a_o)    output gate
        c = f * c_prev + i * g                             (N, H)
        h = o * tanh(c)                                    (N, H)

    Returns (h, c, cache).
    """
    xp = backend.array_module(x, h_prev, c_prev, w_ih, w_hh)
    H = h_prev.shape[1]
    # BEGIN SOLUTION
    # HINT: one matmul per weight gives all four gates; slice the (N, 4H) result in the order i, f, g, o
    a = _pre_activation(x, h_prev, w_ih, w_hh, b_ih, b_hh)
    i = sigmoid(xp, a[:, 0 * H:1 * H])
    f = sigmoid(xp, a[:, 1 * H:2 * H])
    g = xp.tanh(a[:, 2 * H:3 * H])
    o = sigmoid(xp, a[:, 3 * H:4 * H])
    c = f * c_prev + i * g
    tanh_c = xp.tanh(c)
    h = o * tanh_c
    return h, c, (x, h_prev, c_prev, w_ih, w_hh, b_ih, b_hh, i, f, g, o, tanh_c)
    # END SOLUTION


def lstm_step_backward(dh, dc, cache):
    """Backward of ``lstm_step_forward``.  dh = dL/dh, dc = dL/dc from later steps, both (N, H).

    The cell receives gradient along two paths, directly and through h:
        dc_total = dc + dh * o * (1 - tanh(c)^2)           h = o tanh(c)
    then, gate by gate (sigma' = sigma (1 - sigma), tanh' = 1 - tanh^2):
        do = dh * tanh(c)          da_o = do * o * (1 - o)
        di = dc_total * g          da_i = di * i * (1 - i)
        df = dc_total * c_prev     da_f = df * f * (1 - f)
        dg = dc_total * i          da_g = dg * (1 - g^2)
        dc_prev = dc_total * f     the cell's gradient carried to step t-1
        da = [da_i, da_f, da_g, da_o]                      (N, 4H)
        dx = da W_ih,  dh_prev = da W_hh,  dW_ih = da^T x,  dW_hh = da^T h_prev,  db = sum_n da

    Returns (dx, dh_prev, dc_prev, dw_ih, dw_hh, db_ih, db_hh).
    """
    # BEGIN SOLUTION
    # HINT: the cell state c reaches the loss along two paths: directly (dc) and through h = o * tanh(c)
    # HINT: write each gate's slope with the gate values you cached (sigma' = s (1 - s))
    x, h_prev, c_prev, w_ih, w_hh, b_ih, b_hh, i, f, g, o, tanh_c = cache
    xp = backend.array_module(dh, dc, x)
    dc_total = dc + dh * o * (1 - tanh_c * tanh_c)
    da = xp.concatenate([
        dc_total * g * i * (1 - i),             # da_i
        dc_total * c_prev * f * (1 - f),        # da_f
        dc_total * i * (1 - g * g),             # da_g
        dh * tanh_c * o * (1 - o),              # da_o
    ], axis=1)
    dx = da @ w_ih
    dh_prev = da @ w_hh
    dc_prev = dc_total * f
    return (dx, dh_prev, dc_prev) + _weight_grads(da, da, x, h_prev, b_ih, b_hh)
    # END SOLUTION


# --------------------------------------------------------------------------- GRU

def gru_step_forward(x, h_prev, w_ih, w_hh, b_ih=None, b_hh=None, reset_after=True):
    """One step of a GRU (Cho et al. 2014), gates (r, z, n) as in PyTorch.

        [ai_r, ai_z, ai_n] = x W_ih^T + b_ih                (N, 3H)
        [ah_r, ah_z, ah_n] = h_prev W_hh^T + b_hh           (N, 3H)
        r = sigma(ai_r + ah_r)                  reset gate
        z = sigma(ai_z + ah_z)                  update gate
        reset_after=True  (PyTorch, cuDNN, Keras' default):
            n = tanh(ai_n + r * ah_n)           r applied after the recurrent matmul
        reset_after=False (Cho et al. 2014 as published, arXiv v3; d2l.ai; the textbooks):
            n = tanh(ai_n + (r * h_prev) W_hn^T + b_hn)
        h = (1 - z) * n + z * h_prev            (N, H)

    Returns (h, cache).
    """
    xp = backend.array_module(x, h_prev, w_ih, w_hh)
    # BEGIN SOLUTION
    # HINT: the reset gate r multiplies only the hidden part of n's pre-activation
    H = h_prev.shape[1]
    ai = x @ w_ih.T if b_ih is None else x @ w_ih.T + b_ih
    if reset_after:
        ah = h_prev @ w_hh.T if b_hh is None else h_prev @ w_hh.T + b_hh
    else:  # only the r and z rows of W_hh see h_prev; the n rows see r * h_prev
        ah = h_prev @ w_hh[:2 * H].T if b_hh is None else h_prev @ w_hh[:2 * H].T + b_hh[:2 * H]
    r = sigmoid(xp, ai[:, :H] + ah[:, :H])
    z = sigmoid(xp, ai[:, H:2 * H] + ah[:, H:2 * H])
    if reset_after:
        n_rec = ah[:, 2 * H:]                                # n's recurrent term: ah_n = h_prev W_hn^T + b_hn
    else:
        n_rec = (r * h_prev) @ w_hh[2 * H:].T                   # (r * h_prev) W_hn^T
        n_rec = n_rec if b_hh is None else n_rec + b_hh[2 * H:]
    n = xp.tanh(ai[:, 2 * H:] + (r * n_rec if reset_after else n_rec))
    h = (1 - z) * n + z * h_prev
    return h, (x, h_prev, w_ih, w_hh, b_ih, b_hh, r, z, n, n_rec, reset_after)
    # END SOLUTION


def gru_step_backward(dh, cache):
    """Backward of ``gru_step_forward``.  dh = dL/dh (N, H).

        dn = dh * (1 - z)                       h = (1 - z) n + z h_prev
        dz = dh * (h_prev - n)
        da_n = dn * (1 - n^2)                   the n pre-activation (tanh')
        da_z = dz * z * (1 - z)                 (sigma')
      reset_after=True, n = tanh(ai_n + r * ah_n):
        dr = da_n * ah_n,   dah_n = da_n * r
      reset_after=False, n = tanh(ai_n + (r * h_prev) W_hn^T + b_hn):
        d(r h) = da_n W_hn,   dr = d(r h) * h_prev,   dh_prev gets d(r h) * r
        da_r = dr * r * (1 - r)
        dai = [da_r, da_z, da_n]            dah = [da_r, da_z, dah_n]
        dx = dai W_ih,   dh_prev = dh * z + dah W_hh  (+ d(r h) * r)
        dW_ih = dai^T x,  dW_hh = dah^T h_prev  (n rows: da_n^T (r h_prev) when reset_after=False)

    Returns (dx, dh_prev, dw_ih, dw_hh, db_ih, db_hh).
    """
    # BEGIN SOLUTION
    # HINT: h_prev reaches h along two paths: directly through z * h_prev, and through the recurrent matmul
    # HINT: r multiplies ah_n, so the gradients of ai and ah differ in their n block
    x, h_prev, w_ih, w_hh, b_ih, b_hh, r, z, n, n_rec, reset_after = cache
    xp = backend.array_module(dh, x)
    H = h_prev.shape[1]
    da_n = dh * (1 - z) * (1 - n * n)
    da_z = dh * (h_prev - n) * z * (1 - z)
    dh_prev = dh * z
    if reset_after:
        da_r = da_n * n_rec * r * (1 - r)
        dah = xp.concatenate([da_r, da_z, da_n * r], axis=1)      # (N, 3H)
        dh_prev = dh_prev + dah @ w_hh
        dw_hh = dah.T @ h_prev
    else:
        drh = da_n @ w_hh[2 * H:]                                 # d(r * h_prev)
        da_r = drh * h_prev * r * (1 - r)
        dah = xp.concatenate([da_r, da_z, da_n], axis=1)
        dh_prev = dh_prev + dah[:, :2 * H] @ w_hh[:2 * H] + drh * r
        dw_hh = xp.concatenate([dah[:, :2 * H].T @ h_prev, da_n.T @ (r * h_prev)], axis=0)
    dai = xp.concatenate([da_r, da_z, da_n], axis=1)
    dx = dai @ w_ih
    dw_ih = dai.T @ x
    db_ih = None if b_ih is None else dai.sum(axis=0)
    db_hh = None if b_hh is None else dah.sum(axis=0)
    return dx, dh_prev, dw_ih, dw_hh, db_ih, db_hh
    # END SOLUTION
