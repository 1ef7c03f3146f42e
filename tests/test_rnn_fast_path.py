"""The recurrent layers' inference fast path (nn/rnn_fast_path.py) gives what the layer's ordinary
forward gives, bit for bit, and runs only when nothing can tell them apart.

The ordinary forward is the same layer called with grad mode on and its parameters requiring
grad (the fast path's conditions then fail); the fast path runs under no_grad, checked by a spy
on ``run_layers`` so a test cannot pass by both sides taking the ordinary path.
"""
import itertools

import numpy
import pytest

import minigrad
from minigrad import nn
from minigrad.models import RNNLanguageModel, Seq2Seq
from minigrad.nn import rnn_fast_path

D, H = 5, 6


@pytest.fixture
def spy(monkeypatch):
    """Counts the fast path's runs."""
    calls = []
    real = rnn_fast_path.run_layers

    def counting(*args):
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(rnn_fast_path, "run_layers", counting)
    return calls


def _layer(kind, dtype=minigrad.float64, **options):
    minigrad.manual_seed(0)
    if kind == "GRU textbook":
        return nn.GRU(D, H, reset_after=False, dtype=dtype, **options)
    if kind == "RNN relu":
        return nn.RNN(D, H, nonlinearity="relu", dtype=dtype, **options)
    return getattr(nn, kind)(D, H, dtype=dtype, **options)


def _states(kind, layer, n, dtype=minigrad.float64):
    shape = (layer.num_layers * layer.num_directions, n, H)
    if kind == "LSTM":
        return (minigrad.randn(*shape, dtype=dtype), minigrad.randn(*shape, dtype=dtype))
    return minigrad.randn(*shape, dtype=dtype)


def _arrays(result):
    """Every array in a layer's (output, state) result, state a Tensor or a (h, c) tuple."""
    output, state = result
    return [output.detach().numpy()] + [s.detach().numpy() for s in (state if isinstance(state, tuple) else (state,))]


def _both(layer, spy, *args, **kwargs):
    """(ordinary forward, fast path) of one call; every output and final state must be equal."""
    ordinary = layer(*args, **kwargs)                           # grad mode, parameters require grad
    assert ordinary[0].grad_fn is not None and not spy
    with minigrad.no_grad():
        fast = layer(*args, **kwargs)
    assert spy == [1] and fast[0].grad_fn is None
    spy.clear()
    for a, b in zip(_arrays(fast), _arrays(ordinary)):
        assert a.shape == b.shape and a.dtype == b.dtype
        numpy.testing.assert_array_equal(a, b)
    return fast


KINDS = ["RNN", "RNN relu", "LSTM", "GRU", "GRU textbook"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("num_layers,bidirectional,batch_first", [(1, False, True), (2, False, False),
                                                                  (1, True, True), (2, True, False)])
@pytest.mark.parametrize("t,n", [(1, 1), (1, 3), (4, 1), (3, 2)])
def test_fast_path_equals_the_ordinary_forward(spy, kind, num_layers, bidirectional, batch_first, t, n):
    layer = _layer(kind, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    x = minigrad.randn(*((n, t, D) if batch_first else (t, n, D)), dtype=minigrad.float64)
    _both(layer, spy, x)
    _both(layer, spy, x, _states(kind, layer, n))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fast_path_equals_the_ordinary_forward_with_lengths(spy, kind, bidirectional):
    layer = _layer(kind, num_layers=2, bidirectional=bidirectional, batch_first=True)
    x = minigrad.randn(3, 5, D, dtype=minigrad.float64)
    _both(layer, spy, x, lengths=[5, 2, 1])
    _both(layer, spy, x, _states(kind, layer, 3), lengths=minigrad.tensor([3, 5, 4]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [minigrad.float32, minigrad.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_fast_path_equals_the_ordinary_forward_in_float32_and_without_biases(spy, kind, dtype, bias):
    layer = _layer(kind, dtype=dtype, bias=bias, batch_first=True)
    _both(layer, spy, minigrad.randn(2, 3, D, dtype=dtype), _states(kind, layer, 2, dtype))


def test_fast_path_in_training_mode_without_dropout_between_layers(spy):
    """Training mode changes nothing but dropout between layers: one layer, or dropout 0, may take it."""
    x = minigrad.randn(4, 2, D, dtype=minigrad.float64)
    for options in (dict(num_layers=1, dropout=0.0), dict(num_layers=2, dropout=0.0)):
        _both(_layer("GRU", **options).train(), spy, x)
    with minigrad.no_grad():
        _layer("GRU", num_layers=2, dropout=0.5).train()(x)
    assert not spy                                              # dropout between layers: the ordinary forward


def test_language_model_and_seq2seq_decode_on_the_fast_path(spy):
    """Decoding a token at a time (minigrad.decoding runs under no_grad): every step takes the fast path,
    and decodes what the ordinary forward decodes."""
    from minigrad import decoding
    minigrad.manual_seed(3)
    lm = RNNLanguageModel(11, embedding_dim=4, hidden_size=H, cell="lstm").double().eval()
    fast, _ = decoding.greedy(lm, lm.initial_state(2), [1, 2], max_len=6)
    assert len(spy) == 6
    state, tokens, ordinary = lm.initial_state(2), minigrad.tensor([1, 2]), []
    for _ in range(6):                                          # grad mode: the ordinary forward
        log_probs, state = lm.step(tokens, state)
        tokens = minigrad.tensor(log_probs.detach().numpy().argmax(axis=1))
        ordinary.append(tokens.tolist())
    assert len(spy) == 6
    assert [list(step) for step in zip(*ordinary)] == fast
    model = Seq2Seq(9, 10, embedding_dim=4, hidden_size=H, attention="dot").double().eval()
    src, tokens = minigrad.tensor([[3, 4, 5, 0], [6, 7, 0, 0]]), minigrad.tensor([1, 1])
    ordinary_state = model.initial_state(src)
    spy.clear()
    with minigrad.no_grad():
        fast_state = model.initial_state(src)                   # the encoder
        for step in range(4):
            fast, fast_state = model.step(tokens, fast_state)
            assert len(spy) == step + 2
            with minigrad.enable_grad():
                ordinary, ordinary_state = model.step(tokens, ordinary_state)
            assert len(spy) == step + 2
            numpy.testing.assert_array_equal(fast.numpy(), ordinary.detach().numpy())
            tokens = minigrad.tensor(fast.numpy().argmax(axis=1))


def test_fast_path_runs_only_when_nothing_can_tell_the_difference():
    layer = _layer("LSTM", num_layers=2)
    x = minigrad.randn(3, 2, D, dtype=minigrad.float64)

    def applies(x=x, states=(None, None), function=minigrad.functional.lstm):
        return rnn_fast_path.applies(layer, function, x, states)
    with minigrad.no_grad():
        assert applies()
        layer.reference = True
        assert not applies()                                    # the reference tier is what a student reads
        layer.reference = False
        assert not applies(x[:0])                               # no steps
        assert not applies(x[:, :0])                            # no sequences
        assert not applies(x.float())                           # dtypes differ: the ordinary forward raises
        other = "strict" if str(x.device) == "cpu" else "cpu"     # (the suite also runs with strict as default)
        assert not applies(x.to(other))                         # devices differ
        assert not applies(states=(minigrad.zeros(4, 2, H, dtype=minigrad.float64, device=other), None))
        assert not applies(states=(numpy.zeros((4, 2, H)), None))   # an array as h0: the ordinary forward's case
        assert not applies(function=lambda *args, **kwargs: None)   # a wrapped F.lstm: the ordinary forward
    # grad mode on: only when nothing requires grad
    assert not applies()                                        # the parameters do
    for p in layer.parameters():
        p.requires_grad_(False)
    assert applies()
    assert not applies(x.clone().requires_grad_(True))
    assert not applies(states=(minigrad.zeros(4, 2, H, dtype=minigrad.float64, requires_grad=True), None))


def test_frozen_layer_in_grad_mode_takes_the_fast_path_and_records_nothing(spy):
    layer = _layer("GRU", batch_first=True)
    x = minigrad.randn(2, 3, D, dtype=minigrad.float64)
    expected = layer(x)[0].detach().numpy()
    for p in layer.parameters():
        p.requires_grad_(False)
    out, h_n = layer(x)
    assert spy == [1] and out.grad_fn is None and not out.requires_grad and h_n.grad_fn is None
    numpy.testing.assert_array_equal(out.numpy(), expected)


def test_bad_input_still_gets_the_ordinary_forwards_errors():
    layer = _layer("GRU")
    with minigrad.no_grad():
        with pytest.raises(ValueError, match="gru"):
            layer(minigrad.randn(3, 2, D))                      # float32 input, float64 weights
        with pytest.raises(ValueError, match="expected a 3-D input"):
            layer(minigrad.randn(3, D, dtype=minigrad.float64))
        with pytest.raises(ValueError, match="expected h0 of shape"):
            layer(minigrad.randn(3, 2, D, dtype=minigrad.float64), minigrad.zeros(1, 3, H, dtype=minigrad.float64))
        with pytest.raises(ValueError, match="lengths"):
            layer(minigrad.randn(3, 2, D, dtype=minigrad.float64), lengths=[4, 1])
