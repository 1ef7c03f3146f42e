"""Public tests: run them with  python -m pytest test_lstm_gru.py"""
import numpy as np
import pytest

from lstm_gru import gru_step_backward, gru_step_forward, lstm_step_backward, lstm_step_forward
from minigrad.coursework import check_backward

rng = np.random.default_rng(0)
N, D, H = 2, 3, 4


def test_lstm_step_forward_forget_gate():
    x, h_prev, c_prev = rng.standard_normal((N, D)), rng.standard_normal((N, H)), rng.standard_normal((N, H))
    b_ih = np.zeros(4 * H)
    b_ih[H:2 * H], b_ih[:H] = 50.0, -50.0             # forget gate open, input gate shut: c = c_prev
    _, c, _ = lstm_step_forward(x, h_prev, c_prev, np.zeros((4 * H, D)), np.zeros((4 * H, H)), b_ih, np.zeros(4 * H))
    assert np.allclose(c, c_prev)


def test_lstm_step_backward():
    shapes = [(N, D), (N, H), (N, H), (4 * H, D), (4 * H, H), (4 * H,), (4 * H,)]
    check_backward(lstm_step_forward, lstm_step_backward, [rng.standard_normal(s) for s in shapes],
                   names=["dx", "dh_prev", "dc_prev", "dw_ih", "dw_hh", "db_ih", "db_hh"])


def test_gru_step_forward_update_gate():
    x, h_prev = rng.standard_normal((N, D)), rng.standard_normal((N, H))
    b_ih = np.zeros(3 * H)
    b_ih[H:2 * H] = 50.0                               # update gate z = 1: h = h_prev
    h, _ = gru_step_forward(x, h_prev, np.zeros((3 * H, D)), np.zeros((3 * H, H)), b_ih, np.zeros(3 * H))
    assert np.allclose(h, h_prev)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_step_backward(reset_after):
    shapes = [(N, D), (N, H), (3 * H, D), (3 * H, H), (3 * H,), (3 * H,)]
    check_backward(lambda *args: gru_step_forward(*args, reset_after=reset_after), gru_step_backward,
                   [rng.standard_normal(s) for s in shapes],
                   names=["dx", "dh_prev", "dw_ih", "dw_hh", "db_ih", "db_hh"])
