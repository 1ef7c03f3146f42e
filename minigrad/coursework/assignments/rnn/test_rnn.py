"""Public tests: run them with  python -m pytest test_rnn.py"""
import numpy as np

from minigrad.coursework import check_backward
from rnn import rnn_backward, rnn_forward, rnn_step_backward, rnn_step_forward

rng = np.random.default_rng(0)
T, N, D, H = 3, 2, 4, 5


def test_rnn_step_forward_shape_and_zero_weights():
    x, h_prev = rng.standard_normal((N, D)), rng.standard_normal((N, H))
    b_ih, b_hh = rng.standard_normal(H), rng.standard_normal(H)
    h, _ = rnn_step_forward(x, h_prev, np.zeros((H, D)), np.zeros((H, H)), b_ih, b_hh)
    assert h.shape == (N, H)
    assert np.allclose(h, np.tanh(b_ih + b_hh))       # with zero weights only the biases are left


def test_rnn_step_backward():
    inputs = [rng.standard_normal(s) for s in [(N, D), (N, H), (H, D), (H, H), (H,), (H,)]]
    check_backward(rnn_step_forward, rnn_step_backward, inputs,
                   names=["dx", "dh_prev", "dw_ih", "dw_hh", "db_ih", "db_hh"])


def test_rnn_forward_matches_steps():
    x, h0 = rng.standard_normal((T, N, D)), rng.standard_normal((N, H))
    w_ih, w_hh = rng.standard_normal((H, D)), rng.standard_normal((H, H))
    b_ih, b_hh = rng.standard_normal(H), rng.standard_normal(H)
    h, _ = rnn_forward(x, h0, w_ih, w_hh, b_ih, b_hh)
    assert h.shape == (T, N, H)
    assert np.allclose(h[0], np.tanh(x[0] @ w_ih.T + b_ih + h0 @ w_hh.T + b_hh))
    assert np.allclose(h[1], np.tanh(x[1] @ w_ih.T + b_ih + h[0] @ w_hh.T + b_hh))


def test_rnn_backward_through_time():
    inputs = [rng.standard_normal(s) for s in [(T, N, D), (N, H), (H, D), (H, H), (H,), (H,)]]
    check_backward(rnn_forward, rnn_backward, inputs, names=["dx", "dh0", "dw_ih", "dw_hh", "db_ih", "db_hh"],
                   time_axes={"dx": 0})
