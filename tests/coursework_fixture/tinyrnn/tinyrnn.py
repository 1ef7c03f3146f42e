"""A small private assignment for the grader's own tests: a tanh RNN step and the sequence built from it.

    step:      h = tanh(x @ Wx + h_prev @ Wh + b)        x (N, D), h_prev (N, H) -> h (N, H)
    sequence:  h[:, t] = step(x[:, t], h[:, t-1])          x (N, T, D), h0 (N, H) -> h (N, T, H)
"""
import numpy as np


def step_forward(x, h_prev, Wx, Wh, b):
    # BEGIN SOLUTION
    h = np.tanh(x @ Wx + h_prev @ Wh + b)
    # END SOLUTION
    return h, (x, h_prev, Wx, Wh, h)


def step_backward(dh, cache):
    x, h_prev, Wx, Wh, h = cache
    # BEGIN SOLUTION
    da = dh * (1 - h ** 2)
    dx, dh_prev = da @ Wx.T, da @ Wh.T
    dWx, dWh, db = x.T @ da, h_prev.T @ da, da.sum(axis=0)
    # END SOLUTION
    return dx, dh_prev, dWx, dWh, db


def sequence_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    h = np.zeros((N, T, h0.shape[1]))
    caches = []
    h_prev = h0
    # BEGIN SOLUTION
    for t in range(T):
        h_prev, cache = step_forward(x[:, t], h_prev, Wx, Wh, b)
        h[:, t] = h_prev
        caches.append(cache)
    # END SOLUTION
    return h, caches


def sequence_backward(dh, caches):
    N, T, H = dh.shape
    dx = np.zeros((N, T, caches[0][0].shape[1]))
    dWx, dWh, db = 0, 0, 0
    dh_prev = np.zeros((N, H))
    # BEGIN SOLUTION
    for t in reversed(range(T)):
        dx[:, t], dh_prev, dWx_t, dWh_t, db_t = step_backward(dh[:, t] + dh_prev, caches[t])
        dWx, dWh, db = dWx + dWx_t, dWh + dWh_t, db + db_t
    # END SOLUTION
    return dx, dh_prev, dWx, dWh, db
