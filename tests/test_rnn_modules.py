"""nn.RNN / LSTM / GRU and the cells: gradcheck across the options, shapes, names,
initialisation, dropout, truncated BPTT and the errors a student meets first."""
import math

import pytest

import minigrad
from minigrad import nn

f64 = minigrad.float64
KINDS = ["rnn_tanh", "rnn_relu", "lstm", "gru", "gru_before"]


def _module(kind, *args, **kwargs):
    if kind.startswith("rnn"):
        return nn.RNN(*args, nonlinearity=kind[4:], **kwargs)
    if kind == "lstm":
        return nn.LSTM(*args, **kwargs)
    return nn.GRU(*args, reset_after=(kind == "gru"), **kwargs)


def _state(kind, shape, device):
    h0 = minigrad.randn(*shape, dtype=f64, device=device, requires_grad=True)
    if kind == "lstm":
        return (h0, minigrad.randn(*shape, dtype=f64, device=device, requires_grad=True))
    return h0


CONFIGS = [  # (num_layers, bidirectional, batch_first, initial state, lengths)
    (1, False, False, False, None),
    (2, True, True, True, [2, 3]),
    (2, False, False, True, None),
    (1, True, False, False, [3, 1]),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("config", CONFIGS)
def test_module_gradcheck(kind, config):
    layers, bidirectional, batch_first, initial, lengths = config
    T, N, D, H = 3, 2, 2, 2
    model = _module(kind, D, H, num_layers=layers, bidirectional=bidirectional,
                    batch_first=batch_first).double()
    shape = (N, T, D) if batch_first else (T, N, D)
    x = minigrad.randn(*shape, dtype=f64, requires_grad=True)
    if kind == "rnn_relu":
        x = (x + 0.5).detach().requires_grad_()
    hx = _state(kind, (layers * (2 if bidirectional else 1), N, H), None) if initial else None
    states = [] if hx is None else list(hx) if isinstance(hx, tuple) else [hx]

    def run(x, *rest):                   # rest: the states, then the parameters (used by the model)
        given = rest[:len(states)]
        state = None if not given else (tuple(given) if kind == "lstm" else given[0])
        return model(x, state, lengths=lengths)

    assert minigrad.gradcheck(run, [x] + states + list(model.parameters()))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_module_gradcheck_on_device(device, kind):
    model = _module(kind, 2, 2, bidirectional=True).double().to(device)
    x = minigrad.randn(3, 2, 2, dtype=f64, device=device, requires_grad=True)
    assert minigrad.check_module(model, x, None, [3, 2])


@pytest.mark.parametrize("kind", KINDS)
def test_cells_gradcheck(device, kind):
    D, H = 3, 2
    if kind.startswith("rnn"):
        cell = nn.RNNCell(D, H, nonlinearity=kind[4:])
    elif kind == "lstm":
        cell = nn.LSTMCell(D, H)
    else:
        cell = nn.GRUCell(D, H, reset_after=(kind == "gru"))
    cell = cell.double().to(device)
    x = (minigrad.randn(2, D, dtype=f64, device=device) + (0.5 if kind == "rnn_relu" else 0)).requires_grad_()
    state = _state(kind, (2, H), device)
    assert minigrad.check_module(cell, x, state)


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_names_and_init(device, kind):
    T, N, D, H, L = 4, 3, 5, 6, 2
    model = _module(kind, D, H, num_layers=L, bidirectional=True, batch_first=True).to(device)
    G = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3, "gru_before": 3}[kind]
    names = [name for name, _ in model.named_parameters()]
    expected = [f"{w}_l{k}{s}" for k in range(L) for s in ("", "_reverse")
                for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert names == expected
    shapes = dict((name, p.shape) for name, p in model.named_parameters())
    assert shapes["weight_ih_l0"] == (G * H, D) and shapes["weight_ih_l1_reverse"] == (G * H, 2 * H)
    assert shapes["weight_hh_l1"] == (G * H, H) and shapes["bias_hh_l0_reverse"] == (G * H,)
    bound = 1 / math.sqrt(H)
    for p in model.parameters():
        values = p.numpy()
        assert values.dtype == minigrad.float32 and abs(values).max() <= bound
    out, state = model(minigrad.randn(N, T, D, device=device))
    assert out.shape == (N, T, 2 * H) and out.dtype == minigrad.float32
    for s in (state if kind == "lstm" else (state,)):
        assert s.shape == (2 * L, N, H) and s.dtype == minigrad.float32
    out.sum().backward()
    assert all(p.grad.dtype == minigrad.float32 for p in model.parameters())


def test_no_bias(device):
    model = nn.LSTM(3, 4, bias=False).to(device)
    assert [name for name, _ in model.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    out, _ = model(minigrad.randn(2, 1, 3, device=device))
    assert out.shape == (2, 1, 4)


def test_gru_variants_differ_with_the_same_weights():
    a, b = nn.GRU(3, 4), nn.GRU(3, 4, reset_after=False)
    b.load_state_dict(a.state_dict())
    x = minigrad.randn(5, 2, 3)
    assert abs(a(x)[0].numpy() - b(x)[0].numpy()).max() > 1e-4


def test_dropout_between_layers():
    model = nn.LSTM(3, 4, num_layers=2, dropout=0.5).double()
    plain = nn.LSTM(3, 4, num_layers=2).double()
    plain.load_state_dict(model.state_dict())
    x = minigrad.randn(4, 2, 3, dtype=f64)
    assert abs(model(x)[0].numpy() - plain(x)[0].numpy()).max() > 1e-6      # training: dropped
    model.eval()
    assert abs(model(x)[0].numpy() - plain(x)[0].numpy()).max() == 0          # eval: identity


def test_lengths_as_a_tensor_and_unsorted(device):
    model = nn.GRU(2, 3).to(device)
    x = minigrad.randn(4, 3, 2, device=device)
    a = model(x, lengths=minigrad.tensor([2, 4, 1]))[0].numpy()
    b = model(x, lengths=[2, 4, 1])[0].numpy()
    assert (a == b).all() and (a[2:, 0] == 0).all() and (a[1:, 2] == 0).all()


# ------------------------------------------------------------------ truncated BPTT

def test_truncated_bptt_stops_exactly_at_the_cut(device):
    """Two chunks of one sequence; the loss is on the second chunk only.

    Truncated: the state is detached at the cut, so nothing reaches chunk 1.
    Full: gradients also flow into chunk 1 through the state at the cut.
    Over the last k steps (chunk 2) both give the same gradient of the input, and
    the full weight gradient is the truncated one plus exactly what flows back
    through the cut state.
    """
    model = nn.LSTM(3, 4).double().to(device)
    T1, T2 = 4, 3
    x = minigrad.randn(T1 + T2, 2, 3, dtype=f64, device=device)
    v = minigrad.randn(T2, 2, 4, dtype=f64, device=device)

    # full BPTT over the whole sequence
    x_full = x.detach().requires_grad_()
    out, _ = model(x_full)
    (out[T1:] * v).sum().backward()
    full_x = x_full.grad.clone()
    full_w = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()

    # truncated: chunk 1, detach, chunk 2
    x1, x2 = x[:T1].detach().requires_grad_(), x[T1:].detach().requires_grad_()
    _, (h, c) = model(x1)
    cut = (h.detach().requires_grad_(), c.detach().requires_grad_())
    assert cut[0].grad_fn is None
    out2, _ = model(x2, cut)
    (out2 * v).sum().backward()
    assert x1.grad is None                                                # nothing crossed the cut
    assert abs(minigrad.Tensor(x2.grad).numpy() - minigrad.Tensor(full_x).numpy()[T1:]).max() < 1e-12
    assert abs(minigrad.Tensor(full_x).numpy()[:T1]).max() > 0           # full BPTT does reach chunk 1
    truncated_w = {n: p.grad.clone() for n, p in model.named_parameters()}

    # what truncation dropped: the gradient at the cut, pushed back through chunk 1
    model.zero_grad()
    _, (h, c) = model(x1)
    (h * cut[0].grad).sum().backward(retain_graph=True)
    (c * cut[1].grad).sum().backward()
    for name, p in model.named_parameters():
        dropped = minigrad.Tensor(p.grad).numpy()
        total = minigrad.Tensor(truncated_w[name]).numpy() + dropped
        assert abs(total - minigrad.Tensor(full_w[name]).numpy()).max() < 1e-12


# ------------------------------------------------------------------ errors name the expected shape

@pytest.mark.parametrize("kind", ["rnn_tanh", "lstm", "gru"])
def test_bad_input_names_the_expected_shape(device, kind):
    model = _module(kind, 3, 4, num_layers=2)
    x = minigrad.randn(5, 2, 3)
    with pytest.raises(ValueError, match=r"\(T, N, input_size\) with input_size=3, got \(5, 2, 7\)"):
        model(minigrad.randn(5, 2, 7))
    with pytest.raises(ValueError, match=r"3-D input of shape \(T, N, input_size\).*got shape \(5, 3\)"):
        model(minigrad.randn(5, 3))
    bad = minigrad.randn(1, 2, 4)
    expected = r"h0 of shape \(num_layers \* num_directions, N, hidden_size\) = \(2, 2, 4\), got \(1, 2, 4\)"
    good = minigrad.zeros(2, 2, 4)
    with pytest.raises(ValueError, match=expected):
        model(x, (bad, good) if kind == "lstm" else bad)
    if kind == "lstm":
        with pytest.raises(ValueError, match=r"c0 of shape .* = \(2, 2, 4\), got \(2, 3, 4\)"):
            model(x, (good, minigrad.zeros(2, 3, 4)))
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        model(x, lengths=[6, 2])
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        model(x, lengths=[0, 2])


def test_batch_first_error_names_its_layout():
    with pytest.raises(ValueError, match=r"\(N, T, input_size\)"):
        nn.GRU(3, 4, batch_first=True)(minigrad.randn(2, 5, 2))


def test_cell_errors():
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        nn.LSTMCell(3, 4)(minigrad.randn(2, 5))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")


@pytest.mark.parametrize("kind, odd_one", [(kind, odd_one) for kind in ("rnn_tanh", "lstm", "gru")
                                           for odd_one in ("weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "h0")]
                                          + [("lstm", "c0")])
@pytest.mark.parametrize("grad_mode", [True, False])
def test_a_float64_weight_or_state_beside_float32_input_is_refused_as_in_pytorch(kind, odd_one, grad_mode):
    """torch raises a RuntimeError for each (self and mat2 must have the same dtype, ...); minigrad
    named only input and weight_ih before, and on the fast tier h_{t-1} W_hh^T then failed with NumPy's
    words, or a float64 h0 was quietly cast.  The no_grad fast path must not skip the check either."""
    layer = _module(kind, 3, 4)
    x = minigrad.randn(5, 2, 3)
    state = minigrad.zeros(1, 2, 4, dtype=f64 if odd_one == "h0" else minigrad.float32)
    cell = minigrad.zeros(1, 2, 4, dtype=f64 if odd_one == "c0" else minigrad.float32)
    hx = (state, cell) if kind == "lstm" else state
    if odd_one.endswith("l0"):
        parameter = getattr(layer, odd_one)
        parameter.data = parameter.data.double()
    for reference in (False, True):
        layer.reference = reference
        with minigrad.set_grad_enabled(grad_mode):
            op, name = kind.split("_")[0], odd_one.removesuffix("_l0")         # rnn_tanh -> rnn; weight_hh_l0 -> weight_hh
            with pytest.raises(RuntimeError, match=rf"{op}: expected the same dtype, got input float32, .*{name} "
                                                   r"float64.*Cast one side"):
                layer(x, hx)


@pytest.mark.parametrize("kind, odd_one", [(kind, odd_one) for kind in ("RNNCell", "LSTMCell", "GRUCell")
                                           for odd_one in ("weight_hh", "bias_ih", "bias_hh", "hx")]
                                          + [("LSTMCell", "cx")])
def test_a_cell_refuses_a_float64_weight_or_state_beside_float32_input_as_pytorch_does(kind, odd_one):
    cell = getattr(nn, kind)(3, 4)
    x = minigrad.randn(2, 3)
    hx = minigrad.zeros(2, 4, dtype=f64 if odd_one == "hx" else minigrad.float32)
    cx = minigrad.zeros(2, 4, dtype=f64 if odd_one == "cx" else minigrad.float32)
    if odd_one.startswith(("weight", "bias")):
        parameter = getattr(cell, odd_one)
        parameter.data = parameter.data.double()
    with pytest.raises(RuntimeError, match=rf"{kind}: expected the same dtype, got input float32, .*{odd_one} "
                                           r"float64.*Cast one side"):
        cell(x, (hx, cx) if kind == "LSTMCell" else hx)
