"""Public tests: run them with  python -m pytest test_lstm_gru.py"""
import numpy as np

from lstm_gru import gru_step_backward, gru_step_forward, lstm_step_backward, lstm_step_forward
from minigrad.coursework import check_backward

rng = np.random.default_rng(0)
N, D, H = 2, 3, 4


def test_lstm_step_forward_forget_gate():
    x, prev_h, prev_c = rng.standard_normal((N, D)), rng.standard_normal((N, H)), rng.standard_normal((N, H))
    b = np.zeros(4 * H)
    b[H:2 * H], b[:H] = 50.0, -50.0                   # forget gate open, input gate shut: c' = c
    _, next_c, _ = lstm_step_forward(x, prev_h, prev_c, np.zeros((D, 4 * H)), np.zeros((H, 4 * H)), b)
    assert np.allclose(next_c, prev_c)


def test_lstm_step_backward():
    shapes = [(N, D), (N, H), (N, H), (D, 4 * H), (H, 4 * H), (4 * H,)]
    errors = check_backward(lstm_step_forward, lstm_step_backward, [rng.standard_normal(s) for s in shapes])
    assert max(errors) < 1e-6, dict(zip(["dx", "dprev_h", "dprev_c", "dWx", "dWh", "db"], errors))


def test_gru_step_forward_update_gate():
    x, prev_h = rng.standard_normal((N, D)), rng.standard_normal((N, H))
    bx = np.zeros(3 * H)
    bx[H:2 * H] = 50.0                                 # update gate z = 1: h' = h
    next_h, _ = gru_step_forward(x, prev_h, np.zeros((D, 3 * H)), np.zeros((H, 3 * H)), bx, np.zeros(3 * H))
    assert np.allclose(next_h, prev_h)


def test_gru_step_backward():
    shapes = [(N, D), (N, H), (D, 3 * H), (H, 3 * H), (3 * H,), (3 * H,)]
    errors = check_backward(gru_step_forward, gru_step_backward, [rng.standard_normal(s) for s in shapes])
    assert max(errors) < 1e-6, dict(zip(["dx", "dprev_h", "dWx", "dWh", "dbx", "dbh"], errors))
