"""Assignment: one step of an LSTM and of a GRU, forward and backward.

Gates are stacked in PyTorch's order, along the last axis of the weights:
LSTM (i, f, g, o) in Wx (D, 4H), Wh (H, 4H), b (4H,); GRU (r, z, n) in
Wx (D, 3H), Wh (H, 3H), bx (3H,), bh (3H,).

LSTM:  a = x Wx + h Wh + b = [a_i, a_f, a_g, a_o]
       i, f, o = sigmoid(a_i, a_f, a_o),  g = tanh(a_g)
       c' = f * c + i * g,   h' = o * tanh(c')
GRU:   gx = x Wx + bx,   gh = h Wh + bh   (each split into its r, z, n parts)
       r = sigmoid(gx_r + gh_r),  z = sigmoid(gx_z + gh_z),  n = tanh(gx_n + r * gh_n)
       h' = (1 - z) * n + z * h
"""
from minigrad import backend


def sigmoid(x):
    xp = backend.array_module(x)
    return 1 / (1 + xp.exp(-x))


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    """x (N, D), prev_h (N, H), prev_c (N, H) -> next_h (N, H), next_c (N, H), cache."""
    xp = backend.array_module(x, prev_h, prev_c, Wx, Wh, b)
    # BEGIN SOLUTION
    # HINT: split the (N, 4H) pre-activations into four (N, H) blocks, in the order i, f, g, o
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b                        # (N, 4H)
    i, f, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 3 * H:])
    g = xp.tanh(a[:, 2 * H:3 * H])
    next_c = f * prev_c + i * g
    tanh_c = xp.tanh(next_c)
    next_h = o * tanh_c
    cache = (x, prev_h, prev_c, Wx, Wh, i, f, g, o, tanh_c)
    # END SOLUTION
    return next_h, next_c, cache


def lstm_step_backward(dnext_h, dnext_c, cache):
    """dnext_h, dnext_c (N, H) -> dx, dprev_h, dprev_c, dWx, dWh, db."""
    xp = backend.array_module(dnext_h, dnext_c)
    # BEGIN SOLUTION
    # HINT: next_c reaches the loss twice: directly (dnext_c) and through next_h = o * tanh(next_c)
    # HINT: sigmoid'(a) = s (1 - s) and tanh'(a) = 1 - t**2, written with the gates you cached
    x, prev_h, prev_c, Wx, Wh, i, f, g, o, tanh_c = cache
    dc = dnext_c + dnext_h * o * (1 - tanh_c ** 2)      # (N, H)
    do = dnext_h * tanh_c
    di, df, dg = dc * g, dc * prev_c, dc * i
    dprev_c = dc * f
    da = xp.concatenate([di * i * (1 - i), df * f * (1 - f), dg * (1 - g ** 2), do * o * (1 - o)], axis=1)
    dx = da @ Wx.T                                      # (N, D)
    dprev_h = da @ Wh.T                                 # (N, H)
    dWx = x.T @ da                                      # (D, 4H)
    dWh = prev_h.T @ da                                 # (H, 4H)
    db = da.sum(axis=0)                                 # (4H,)
    # END SOLUTION
    return dx, dprev_h, dprev_c, dWx, dWh, db


def gru_step_forward(x, prev_h, Wx, Wh, bx, bh):
    """x (N, D), prev_h (N, H) -> next_h (N, H), cache."""
    xp = backend.array_module(x, prev_h, Wx, Wh, bx, bh)
    # BEGIN SOLUTION
    # HINT: the reset gate r multiplies the hidden part of n's pre-activation only: n = tanh(gx_n + r * gh_n)
    H = prev_h.shape[1]
    gx = x @ Wx + bx                                    # (N, 3H)
    gh = prev_h @ Wh + bh                               # (N, 3H)
    r = sigmoid(gx[:, :H] + gh[:, :H])
    z = sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    n = xp.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
    next_h = (1 - z) * n + z * prev_h
    cache = (x, prev_h, Wx, Wh, r, z, n, gh[:, 2 * H:])
    # END SOLUTION
    return next_h, cache


def gru_step_backward(dnext_h, cache):
    """dnext_h (N, H) -> dx, dprev_h, dWx, dWh, dbx, dbh."""
    xp = backend.array_module(dnext_h)
    # BEGIN SOLUTION
    # HINT: prev_h reaches next_h twice: directly through z * prev_h, and through gh = prev_h @ Wh
    # HINT: the gradients of gx and gh are equal for r and z, but the one of gh_n is r times the one of gx_n
    x, prev_h, Wx, Wh, r, z, n, gh_n = cache
    dn = dnext_h * (1 - z)
    dz = dnext_h * (prev_h - n)
    dan = dn * (1 - n ** 2)                             # through tanh
    dar = dan * gh_n * r * (1 - r)                      # through r * gh_n, then the sigmoid
    daz = dz * z * (1 - z)
    dgx = xp.concatenate([dar, daz, dan], axis=1)       # (N, 3H)
    dgh = xp.concatenate([dar, daz, dan * r], axis=1)   # (N, 3H)
    dx = dgx @ Wx.T
    dprev_h = dnext_h * z + dgh @ Wh.T
    dWx, dWh = x.T @ dgx, prev_h.T @ dgh
    dbx, dbh = dgx.sum(axis=0), dgh.sum(axis=0)
    # END SOLUTION
    return dx, dprev_h, dWx, dWh, dbx, dbh
