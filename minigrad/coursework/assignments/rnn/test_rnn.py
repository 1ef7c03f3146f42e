"""Public tests: run them with  python -m pytest test_rnn.py"""
import numpy as np

from minigrad.coursework import check_backward
from rnn import rnn_backward, rnn_forward, rnn_step_backward, rnn_step_forward

rng = np.random.default_rng(0)
N, T, D, H = 2, 3, 4, 5


def test_rnn_step_forward_shape_and_zero_weights():
    x, prev_h = rng.standard_normal((N, D)), rng.standard_normal((N, H))
    b = rng.standard_normal(H)
    next_h, _ = rnn_step_forward(x, prev_h, np.zeros((D, H)), np.zeros((H, H)), b)
    assert next_h.shape == (N, H)
    assert np.allclose(next_h, np.tanh(b))          # with zero weights only the bias is left


def test_rnn_step_backward():
    inputs = [rng.standard_normal(s) for s in [(N, D), (N, H), (D, H), (H, H), (H,)]]
    errors = check_backward(rnn_step_forward, rnn_step_backward, inputs)
    assert max(errors) < 1e-6, dict(zip(["dx", "dprev_h", "dWx", "dWh", "db"], errors))


def test_rnn_forward_matches_steps():
    x, h0 = rng.standard_normal((N, T, D)), rng.standard_normal((N, H))
    Wx, Wh, b = rng.standard_normal((D, H)), rng.standard_normal((H, H)), rng.standard_normal(H)
    h, _ = rnn_forward(x, h0, Wx, Wh, b)
    assert h.shape == (N, T, H)
    assert np.allclose(h[:, 0], np.tanh(x[:, 0] @ Wx + h0 @ Wh + b))


def test_rnn_backward_through_time():
    inputs = [rng.standard_normal(s) for s in [(N, T, D), (N, H), (D, H), (H, H), (H,)]]
    errors = check_backward(rnn_forward, rnn_backward, inputs)
    assert max(errors) < 1e-6, dict(zip(["dx", "dh0", "dWx", "dWh", "db"], errors))
