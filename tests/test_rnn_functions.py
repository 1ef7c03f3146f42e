"""The sequence Functions F.rnn, F.lstm, F.gru (minigrad/functions/rnn.py and rnn_fast.py): one
layer, one direction, backward through time written by hand.  gradcheck runs on both tiers.

gradcheck (float64) over the options, hypothesis over shapes, and the second path:
the same weights unrolled through the cells (one step Function each, the step
functions of rnn_steps.py) give the same outputs and gradients to 1e-10.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import functional as F
from minigrad import nn

f64 = minigrad.float64
GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3, "gru_before": 3}


def _leaf(device, *shape, scale=1.0):
    return (minigrad.randn(*shape, dtype=f64, device=device) * scale).requires_grad_()


def _make(kind, device, T, N, D, H, bias=True, initial=True):
    """Inputs (x, h0, c0, w_ih, w_hh, b_ih, b_hh) for F.<kind>; None where absent."""
    G = GATES[kind]
    x = _leaf(device, T, N, D)
    h0 = _leaf(device, N, H) if initial else None
    c0 = _leaf(device, N, H) if initial and kind == "lstm" else None
    weights = [_leaf(device, G * H, D, scale=0.6), _leaf(device, G * H, H, scale=0.6)]
    weights += [_leaf(device, G * H, scale=0.5), _leaf(device, G * H, scale=0.5)] if bias else [None, None]
    return x, h0, c0, weights


def _call(kind, x, h0, c0, weights, lengths=None, reverse=False, reference=False):
    if kind.startswith("rnn"):
        return F.rnn(x, h0, *weights, lengths=lengths, reverse=reverse, nonlinearity=kind[4:], reference=reference)
    if kind == "lstm":
        return F.lstm(x, h0, c0, *weights, lengths=lengths, reverse=reverse, reference=reference)
    return F.gru(x, h0, *weights, lengths=lengths, reverse=reverse, reset_after=(kind == "gru"), reference=reference)


def _check(kind, device, T, N, D, H, bias=True, initial=True, lengths=None, reverse=False, reference=False):
    x, h0, c0, weights = _make(kind, device, T, N, D, H, bias, initial)
    if kind == "rnn_relu":                      # keep pre-activations away from relu's kink
        x = (x + 0.3).detach().requires_grad_()
    inputs = [x, h0, c0] + weights
    present = [i for i, v in enumerate(inputs) if v is not None]

    def fn(*tensors):
        args = [None] * len(inputs)
        for i, value in zip(present, tensors):
            args[i] = value
        return _call(kind, args[0], args[1], args[2], args[3:], lengths, reverse, reference)

    minigrad.gradcheck(fn, [inputs[i] for i in present])


@pytest.mark.parametrize("kind", list(GATES))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("lengths", [None, [2, 4, 1]])
def test_gradcheck_options(device, kind, reverse, lengths, tier):
    _check(kind, device, T=4, N=3, D=2, H=3, lengths=lengths, reverse=reverse, reference=(tier == "reference"))


@pytest.mark.parametrize("kind", list(GATES))
def test_gradcheck_no_bias_no_initial_state(device, kind, tier):
    _check(kind, device, T=3, N=2, D=2, H=2, bias=False, initial=False, reference=(tier == "reference"))


@pytest.mark.parametrize("kind", list(GATES))
@pytest.mark.parametrize("T, N", [(1, 2), (3, 1), (1, 1)])
def test_gradcheck_single_step_and_single_sequence(kind, T, N):
    _check(kind, "cpu", T=T, N=N, D=2, H=2, lengths=[T] * N, reverse=True)


@pytest.mark.parametrize("bias, initial, lengths, reverse", [(True, True, None, False), (False, False, [3], True),
                                                             (True, False, [2], False), (False, True, None, True)])
def test_gradcheck_lstm_one_sequence(bias, initial, lengths, reverse):
    """Batch 1 with a small hidden size: the fast LSTM's six-call forward and its backward of one
    matrix product a step (rnn_fast.py block 11), gradchecked on its own, every option."""
    _check("lstm", "cpu", T=4, N=1, D=2, H=3, bias=bias, initial=initial, lengths=lengths, reverse=reverse)


@settings(max_examples=10)
@given(kind=st.sampled_from(list(GATES)), T=st.integers(1, 4), N=st.integers(1, 3),
       D=st.integers(1, 3), H=st.integers(1, 3), reverse=st.booleans(), data=st.data())
def test_gradcheck_shapes_hypothesis(kind, T, N, D, H, reverse, data):
    lengths = data.draw(st.none() | st.lists(st.integers(1, T), min_size=N, max_size=N))
    _check(kind, "cpu", T, N, D, H, lengths=lengths, reverse=reverse)


# ------------------------------------------------------------------ BPTT == the cells unrolled step by step

def _cell(kind, H, D, weights):
    if kind.startswith("rnn"):
        cell = nn.RNNCell(D, H, nonlinearity=kind[4:])
    elif kind == "lstm":
        cell = nn.LSTMCell(D, H)
    else:
        cell = nn.GRUCell(D, H, reset_after=(kind == "gru"))
    cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh = weights
    return cell


def _grads(tensors):
    return [None if t is None else t.grad.clone() for t in tensors]


@pytest.mark.parametrize("kind", list(GATES))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("lengths", [None, [5, 2, 4, 1]])
def test_hand_written_bptt_equals_unrolled_cells(device, kind, reverse, lengths):
    T, N, D, H = 5, 4, 3, 4
    x, h0, c0, weights = _make(kind, device, T, N, D, H)
    leaves = [x, h0, c0] + weights
    leaves = [t for t in leaves if t is not None]
    v_out = minigrad.randn(T, N, H, dtype=f64, device=device)
    v_h = minigrad.randn(N, H, dtype=f64, device=device)

    results = _call(kind, x, h0, c0, weights, lengths, reverse)
    loss = (results[0] * v_out).sum() + (results[1] * v_h).sum()
    if kind == "lstm":
        loss = loss + (results[2] * v_h * 0.5).sum()
    loss.backward()
    fast = [r.numpy() for r in results], _grads(leaves)
    for t in leaves:
        t.grad = None

    state = (h0, c0) if kind == "lstm" else h0
    output, final = nn.unroll(_cell(kind, H, D, weights), x, state, lengths, reverse)
    final = final if isinstance(final, tuple) else (final,)
    loss = (output * v_out).sum() + (final[0] * v_h).sum()
    if kind == "lstm":
        loss = loss + (final[1] * v_h * 0.5).sum()
    loss.backward()
    slow = [output.numpy()] + [f.numpy() for f in final], _grads(leaves)

    for a, b in zip(fast[0], slow[0]):
        assert abs(a - b).max() < 1e-10
    for a, b in zip(fast[1], slow[1]):
        assert abs(minigrad.Tensor(a).numpy() - minigrad.Tensor(b).numpy()).max() < 1e-10


def test_padded_steps_output_zero_and_get_zero_gradient(device):
    T, N, D, H = 4, 3, 2, 3
    x, h0, c0, weights = _make("lstm", device, T, N, D, H)
    lengths = [4, 1, 2]
    out, h_n, c_n = F.lstm(x, h0, c0, *weights, lengths=lengths)
    out.sum().backward()
    out, grad = out.numpy(), minigrad.Tensor(x.grad).numpy()
    for n, length in enumerate(lengths):
        assert (out[length:, n] == 0).all()
        assert (grad[length:, n] == 0).all()
        assert abs(h_n.numpy()[n] - out[length - 1, n]).max() == 0    # h_n: the state at its own last step


def test_reverse_direction_starts_at_each_sequence_end(device):
    """A padded sequence in reverse gives what the same sequence alone, unpadded, gives."""
    T, N, D, H = 5, 2, 2, 3
    x, h0, _, weights = _make("gru", device, T, N, D, H)
    out, h_n = F.gru(x, h0, *weights, lengths=[5, 3], reverse=True)
    alone, alone_h = F.gru(x[:3, 1:2], h0[1:2], *weights, reverse=True)
    assert abs(out.numpy()[:3, 1] - alone.numpy()[:, 0]).max() < 1e-12
    assert abs(h_n.numpy()[1] - alone_h.numpy()[0]).max() < 1e-12


def test_no_gradient_requested_for_the_input(device):
    """The first layer's input usually needs no gradient: the backward skips dx."""
    x, h0, c0, weights = _make("lstm", device, 3, 2, 2, 2)
    x = x.detach()
    out, _, _ = F.lstm(x, None, None, *weights)
    out.sum().backward()
    assert x.grad is None and weights[0].grad is not None


@pytest.mark.parametrize("kind", list(GATES))
@pytest.mark.parametrize("N, H", [(3, 3), (1, 3), (1, 33)])   # N = 1: the fast LSTM's rows (rnn_fast.py blocks 10, 11)
def test_retain_graph_gives_the_same_gradients_twice(device, kind, tier, N, H):
    """The backward reuses the memory of the forward's gate buffer for dA, but only when the
    graph is freed: with retain_graph=True a second backward must see the same saved values."""
    x, h0, c0, weights = _make(kind, device, 4, N, 2, H)
    leaves = [v for v in [x, h0, c0] + weights if v is not None]
    out = _call(kind, x, h0, c0, weights, reference=(tier == "reference"))[0]
    out.sum().backward(retain_graph=True)
    first = [minigrad.Tensor(v.grad).numpy().copy() for v in leaves]
    for v in leaves:
        v.grad = None
    out.sum().backward()
    for v, g in zip(leaves, first):
        assert abs(minigrad.Tensor(v.grad).numpy() - g).max() == 0


# ------------------------------------------------------------------ errors name the expected shape

def test_bad_arguments_name_the_expected_shape(device, tier):
    x, h0, c0, weights = _make("lstm", device, 3, 2, 4, 5)
    reference = tier == "reference"
    with pytest.raises(ValueError, match=r"\(T, N, 4\)"):
        F.lstm(x[:, :, :3], h0, c0, *weights, reference=reference)
    with pytest.raises(ValueError, match=r"h0 of shape \(N, H\) = \(2, 5\)"):
        F.lstm(x, h0[:, :4], c0, *weights, reference=reference)
    with pytest.raises(ValueError, match=r"c0 of shape \(N, H\) = \(2, 5\)"):
        F.lstm(x, h0, c0[:1], *weights, reference=reference)
    with pytest.raises(ValueError, match=r"\[1, 3\]"):
        F.lstm(x, h0, c0, *weights, reference=reference, lengths=[4, 1])
    with pytest.raises(ValueError, match=r"\[1, 3\]"):
        F.lstm(x, h0, c0, *weights, reference=reference, lengths=[0, 1])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        F.lstm(x, h0, c0, *weights, reference=reference, lengths=[1, 1, 1])
    with pytest.raises(ValueError, match=r"\(T, N, 4\)"):
        F.lstm(x[0], h0, c0, *weights, reference=reference)
    with pytest.raises(ValueError, match="nonlinearity"):
        F.rnn(x, None, weights[0][:5], weights[1][:5], nonlinearity="sigmoid", reference=reference)
