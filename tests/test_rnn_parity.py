"""Parity with PyTorch: nn.RNN / LSTM / GRU loaded from a PyTorch state dict give the same
outputs, final states and gradients of every parameter and input (float64, 1e-10),
for every option combination PyTorch supports, padded batches against
pack_padded_sequence(enforce_sorted=False) included.  The fast tier (the layers' default) runs
every combination; the reference tier (``tier`` fixture, ``reference=True``) a representative
set, each option at least once (tests/test_tiers.py proves the tiers equal on all of them)."""
import itertools

import numpy
import pytest

import minigrad
from minigrad import nn

torch = pytest.importorskip("torch")

KINDS = ["rnn_tanh", "rnn_relu", "lstm", "gru"]
OPTIONS = list(itertools.product([1, 2], [False, True], [False, True], [False, True], [None, [3, 5, 1]]))


def _pair(kind, D, H, reference, **options):
    if kind.startswith("rnn"):
        theirs = torch.nn.RNN(D, H, nonlinearity=kind[4:], **options)
        ours = nn.RNN(D, H, nonlinearity=kind[4:], reference=reference, **options)
    else:
        theirs = getattr(torch.nn, kind.upper())(D, H, **options)
        ours = getattr(nn, kind.upper())(D, H, reference=reference, **options)
    return theirs, ours


def _host(tensor):
    return tensor.numpy() if isinstance(tensor, minigrad.Tensor) else minigrad.Tensor(tensor).numpy()


def _run_torch(model, x, hx, lengths, batch_first, T):
    if lengths is None:
        return model(x, hx)
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first,
                                                     enforce_sorted=False)
    out, state = model(packed, hx)
    out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first, total_length=T)
    return out, state


def _compare(device, kind, layers, bidirectional, batch_first, initial, lengths, bias=True,
             dtype=torch.float64, tol=1e-10, tier="fast"):
    T, N, D, H = 5, 3, 4, 3
    theirs, ours = _pair(kind, D, H, tier == "reference", num_layers=layers, bidirectional=bidirectional,
                         batch_first=batch_first, bias=bias)
    theirs = theirs.to(dtype)
    ours = ours.to(device=device, dtype=minigrad.float64 if dtype == torch.float64 else minigrad.float32)
    ours.load_state_dict(theirs.state_dict())
    torch.manual_seed(1)
    x = torch.randn((N, T, D) if batch_first else (T, N, D), dtype=dtype, requires_grad=True)
    S = layers * (2 if bidirectional else 1)
    states = [torch.randn(S, N, H, dtype=dtype, requires_grad=True) for _ in range(2 if kind == "lstm" else 1)]
    hx = None if not initial else tuple(states) if kind == "lstm" else states[0]

    out, state = _run_torch(theirs, x, hx, lengths, batch_first, T)
    finals = state if kind == "lstm" else (state,)
    vs = [torch.randn_like(out)] + [torch.randn_like(f) for f in finals]
    loss = sum((o * v).sum() for o, v in zip((out,) + tuple(finals), vs))
    loss.backward()

    def mine(t):
        return minigrad.tensor(t.detach().numpy(), device=device, requires_grad=t.requires_grad)

    mx = mine(x)
    mstates = [mine(s) for s in states]
    mhx = None if not initial else tuple(mstates) if kind == "lstm" else mstates[0]
    mout, mstate = ours(mx, mhx, lengths=lengths)
    mfinals = mstate if kind == "lstm" else (mstate,)
    mloss = sum((o * mine(v).detach()).sum() for o, v in zip((mout,) + tuple(mfinals), vs))
    mloss.backward()

    def close(a, b):
        return numpy.abs(_host(a) - b.detach().numpy()).max() <= tol

    assert close(mout, out)
    assert all(close(a, b) for a, b in zip(mfinals, finals))
    assert close(mx.grad, x.grad)
    if initial:
        assert all(close(a.grad, b.grad) for a, b in zip(mstates, states))
    reference = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(reference)
    for name, p in ours.named_parameters():
        assert close(p.grad, reference[name].grad), name


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("layers, bidirectional, batch_first, initial, lengths", OPTIONS)
def test_parity_with_pytorch(kind, layers, bidirectional, batch_first, initial, lengths):
    _compare("cpu", kind, layers, bidirectional, batch_first, initial, lengths)


REPRESENTATIVE = [(2, True, False, True, [3, 5, 1]), (1, False, True, False, None), (2, False, True, True, [5, 2, 4])]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("layers, bidirectional, batch_first, initial, lengths", REPRESENTATIVE)
def test_parity_with_pytorch_reference_tier(kind, layers, bidirectional, batch_first, initial, lengths):
    _compare("cpu", kind, layers, bidirectional, batch_first, initial, lengths, tier="reference")


@pytest.mark.parametrize("kind", KINDS)
def test_parity_without_bias(device, kind, tier):
    _compare(device, kind, 2, True, False, True, [2, 5, 4], bias=False, tier=tier)


@pytest.mark.parametrize("kind", KINDS)
def test_parity_on_device(device, kind, tier):
    _compare(device, kind, 2, True, True, True, [5, 1, 3], tier=tier)


@pytest.mark.parametrize("kind", KINDS)
def test_parity_float32(kind, tier):
    _compare("cpu", kind, 2, True, False, True, [5, 2, 3], dtype=torch.float32, tol=1e-5, tier=tier)


@pytest.mark.parametrize("kind", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("state", [False, True])
def test_cells_match_pytorch_cells(kind, state):
    """The cells run the step functions of rnn_steps.py: outputs and every gradient as PyTorch's cells."""
    D, H, N = 3, 4, 2
    if kind.startswith("rnn"):
        theirs = torch.nn.RNNCell(D, H, nonlinearity=kind[4:]).double()
        ours = nn.RNNCell(D, H, nonlinearity=kind[4:]).double()
    else:
        theirs = getattr(torch.nn, kind.upper() + "Cell")(D, H).double()
        ours = getattr(nn, kind.upper() + "Cell")(D, H).double()
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(N, D, dtype=torch.float64, requires_grad=True)
    states = [torch.randn(N, H, dtype=torch.float64, requires_grad=True) for _ in range(2 if kind == "lstm" else 1)]
    hx = None if not state else tuple(states) if kind == "lstm" else states[0]
    a = theirs(x, hx)
    a = a if isinstance(a, tuple) else (a,)
    vs = [torch.randn_like(u) for u in a]
    sum((u * v).sum() for u, v in zip(a, vs)).backward()

    def mine(t):
        return minigrad.tensor(t.detach().numpy(), requires_grad=True)
    mx, mstates = mine(x), [mine(s) for s in states]
    mhx = None if not state else tuple(mstates) if kind == "lstm" else mstates[0]
    b = ours(mx, mhx)
    b = b if isinstance(b, tuple) else (b,)
    sum((u * minigrad.tensor(v.numpy())).sum() for u, v in zip(b, vs)).backward()
    for u, v in zip(a, b):
        assert numpy.abs(u.detach().numpy() - v.numpy()).max() < 1e-12
    pairs = [(x, mx)] + (list(zip(states, mstates)) if state else [])
    pairs += [(p, dict(ours.named_parameters())[name]) for name, p in theirs.named_parameters()]
    for theirs_leaf, our_leaf in pairs:
        assert numpy.abs(theirs_leaf.grad.numpy() - _host(our_leaf.grad)).max() < 1e-12
