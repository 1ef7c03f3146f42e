"""The textbook level: one time step of RNN, LSTM and GRU (minigrad/functions/rnn_steps.py).

Each step function runs inside its one-step autograd Function (the cells' own,
minigrad/functions/rnn.py: RNNCellFunction, ...) so that gradcheck compares its
hand-written backward with finite differences (float64), and a sequence built
from the RNN step shows that gradcheck catches the classic BPTT bug: forgetting
the dh carried from step t+1.
"""
import pytest

import minigrad
from minigrad.autograd import Function
from minigrad.functions.rnn import (GRUCellFunction, GRUFunction, LSTMCellFunction, LSTMFunction, RNNCellFunction,
                                   RNNFunction)
from minigrad.functions.rnn_steps import (
    gru_step_backward, gru_step_forward, lstm_step_backward, lstm_step_forward, rnn_step_backward,
    rnn_step_forward,
)
from minigrad.gradient_check import GradcheckError

N, D, H = 2, 3, 4
f64 = minigrad.float64


def _randn(device, *shape):
    return minigrad.randn(*shape, dtype=f64, device=device, requires_grad=True)


def _weights(device, gates, bias=True):
    w_ih = _randn(device, gates * H, D) * 0.5
    w_hh = _randn(device, gates * H, H) * 0.5
    params = [w_ih.detach().requires_grad_(), w_hh.detach().requires_grad_()]
    params += [_randn(device, gates * H), _randn(device, gates * H)] if bias else [None, None]
    return params


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("bias", [True, False])
def test_rnn_step_gradcheck(device, nonlinearity, bias):
    x, h = _randn(device, N, D), _randn(device, N, H)
    params = _weights(device, 1, bias)
    minigrad.gradcheck(lambda *a: RNNCellFunction.apply(*a, nonlinearity), (x, h, *params))


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_step_gradcheck(device, bias):
    x, h, c = _randn(device, N, D), _randn(device, N, H), _randn(device, N, H)
    minigrad.gradcheck(LSTMCellFunction.apply, (x, h, c, *_weights(device, 4, bias)))


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_step_gradcheck(device, reset_after, bias):
    x, h = _randn(device, N, D), _randn(device, N, H)
    minigrad.gradcheck(lambda *a: GRUCellFunction.apply(*a, reset_after), (x, h, *_weights(device, 3, bias)))


def test_step_functions_agree_with_one_step_of_the_sequence_functions(device):
    """The two levels of the course compute the same numbers (T = 1)."""
    x, h, c = _randn(device, N, D), _randn(device, N, H), _randn(device, N, H)
    x1 = x._data.reshape(1, N, D)
    for nonlinearity in ("tanh", "relu"):
        w = [p._data for p in _weights(device, 1)]
        step, _ = rnn_step_forward(x._data, h._data, *w, nonlinearity)
        out, _ = RNNFunction.apply(minigrad.Tensor(x1), h, *[minigrad.Tensor(a) for a in w], None, False,
                                   nonlinearity)
        assert abs(out.numpy()[0] - minigrad.Tensor(step).numpy()).max() < 1e-12
    w = [p._data for p in _weights(device, 4)]
    h_step, c_step, _ = lstm_step_forward(x._data, h._data, c._data, *w)
    out, h_n, c_n = LSTMFunction.apply(minigrad.Tensor(x1), h, c, *[minigrad.Tensor(a) for a in w], None, False)
    assert abs(h_n.numpy() - minigrad.Tensor(h_step).numpy()).max() < 1e-12
    assert abs(c_n.numpy() - minigrad.Tensor(c_step).numpy()).max() < 1e-12
    for reset_after in (True, False):
        w = [p._data for p in _weights(device, 3)]
        step, _ = gru_step_forward(x._data, h._data, *w, reset_after)
        out, h_n = GRUFunction.apply(minigrad.Tensor(x1), h, *[minigrad.Tensor(a) for a in w], None, False,
                                     reset_after)
        assert abs(h_n.numpy() - minigrad.Tensor(step).numpy()).max() < 1e-12


# ------------------------------------------------------------------ gradcheck catches a BPTT bug

class StepwiseRNN(Function):
    """An RNN over T steps built from the step functions, CS231n style.

    With carry=False the backward forgets dh_next, the gradient carried from
    step t+1 into step t: the classic BPTT bug.
    """

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, carry):
        xp = minigrad.backend.array_module(x)
        caches, h = [], h0
        hs = []
        for t in range(x.shape[0]):
            h, cache = rnn_step_forward(x[t], h, w_ih, w_hh, b_ih, b_hh)
            caches.append(cache)
            hs.append(h)
        ctx.caches, ctx.carry = caches, carry
        return xp.stack(hs)

    @staticmethod
    def backward(ctx, dout):
        xp = minigrad.backend.array_module(dout)
        dx = xp.zeros((len(ctx.caches),) + ctx.caches[0][0].shape, dtype=dout.dtype)
        dw_ih = dw_hh = db_ih = db_hh = 0
        dh_next = xp.zeros_like(dout[0])
        for t in reversed(range(len(ctx.caches))):
            dh = dout[t] + dh_next if ctx.carry else dout[t]
            dx[t], dh_next, dwi, dwh, dbi, dbh = rnn_step_backward(dh, ctx.caches[t])
            dw_ih, dw_hh, db_ih, db_hh = dw_ih + dwi, dw_hh + dwh, db_ih + dbi, db_hh + dbh
        return dx, dh_next, dw_ih, dw_hh, db_ih, db_hh, None


def test_gradcheck_catches_forgotten_dh_next(device):
    x, h0 = _randn(device, 4, N, D), _randn(device, N, H)
    params = _weights(device, 1)
    assert minigrad.gradcheck(lambda *a: StepwiseRNN.apply(*a, True), (x, h0, *params))
    with pytest.raises(GradcheckError) as error:
        minigrad.gradcheck(lambda *a: StepwiseRNN.apply(*a, False), (x, h0, *params))
    assert "FAIL" in str(error.value)
    report = minigrad.gradcheck(lambda *a: StepwiseRNN.apply(*a, False), (x, h0, *params), raise_exception=False)
    failed = {row["name"] for row in report.rows if row["status"] == "FAIL"}
    assert {"input 0", "input 2", "input 3"} <= failed    # x and both weight matrices are wrong


def test_cs231n_lstm_weights_port_with_the_o_g_blocks_swapped():
    """rnn_steps' layout table: CS231n's lstm_step_forward splits a = x Wx + prev_h Wh + b as
    (a_i, a_f, a_o, a_g); Wx == w_ih.T only after swapping the o and g blocks."""
    import numpy as np

    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((N, D)), rng.standard_normal((N, H)), rng.standard_normal((N, H))
    Wx, Wh, b = rng.standard_normal((D, 4 * H)), rng.standard_normal((H, 4 * H)), rng.standard_normal(4 * H)

    def sigmoid(a):
        return 1 / (1 + np.exp(-a))

    a = x @ Wx + h @ Wh + b                                   # CS231n's lstm_step_forward
    i, f, o, g = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H]), np.tanh(a[:, 3 * H:])
    next_c = f * c + i * g
    next_h = o * np.tanh(next_c)

    swap = np.r_[0:2 * H, 3 * H:4 * H, 2 * H:3 * H]           # (i, f, o, g) -> (i, f, g, o)
    ours_h, ours_c, _ = lstm_step_forward(x, h, c, Wx[:, swap].T, Wh[:, swap].T, b[swap], None)
    assert np.allclose(ours_h, next_h, atol=1e-14) and np.allclose(ours_c, next_c, atol=1e-14)
    naive_h, _, _ = lstm_step_forward(x, h, c, Wx.T, Wh.T, b, None)   # the old table's "Wx == w_ih.T"
    assert not np.allclose(naive_h, next_h, atol=1e-3)
