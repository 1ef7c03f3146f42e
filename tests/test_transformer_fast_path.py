"""TransformerEncoderLayer's inference fast path (nn/transformer_fast_path.py) gives what the
layer's ordinary forward gives, bit for bit, and runs only when nothing can tell them apart.

The ordinary forward is the same layer called with grad mode on and its parameters requiring
grad (the fast path's conditions then fail); the fast path runs under no_grad, checked by a
spy on ``encoder_layer`` so a test cannot pass by both sides taking the ordinary path.
"""
import itertools

import numpy
import pytest

import minigrad
from minigrad import functional as F
from minigrad import nn
from minigrad.models import CausalLM
from minigrad.nn import transformer_fast_path

D, HEADS, FF = 12, 3, 20


@pytest.fixture
def spy(monkeypatch):
    """Counts the fast path's runs."""
    calls = []
    real = transformer_fast_path.encoder_layer

    def counting(*args):
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(transformer_fast_path, "encoder_layer", counting)
    return calls


def _layer(norm_first=True, batch_first=True, activation="relu", bias=True, dtype=minigrad.float64, seed=0):
    minigrad.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.3, activation=activation, batch_first=batch_first,
                                       norm_first=norm_first, bias=bias, dtype=dtype)
    for p in layer.parameters():            # non-trivial LayerNorm weights and biases too
        p.data.copy_(minigrad.randn(*p.shape, dtype=dtype) * 0.5)
    return layer.eval()


def _both(layer, src, spy, **kwargs):
    """(ordinary forward, fast path) of one call; the cache (if any) is copied for each side."""
    cache = kwargs.pop("cache", None)
    ordinary_cache = None if cache is None else dict(cache)
    ordinary = layer(src, cache=ordinary_cache, **kwargs)            # grad mode, parameters require grad
    assert ordinary.grad_fn is not None and not spy
    with minigrad.no_grad():
        fast_cache = None if cache is None else dict(cache)
        fast = layer(src, cache=fast_cache, **kwargs)
    assert spy == [1] and fast.grad_fn is None
    spy.clear()
    assert fast.shape == ordinary.shape and fast.dtype == ordinary.dtype
    numpy.testing.assert_array_equal(fast.numpy(), ordinary.detach().numpy())
    if cache is not None:
        for name in ("k", "v"):
            numpy.testing.assert_array_equal(fast_cache[name].numpy(), ordinary_cache[name].detach().numpy())
    return fast, fast_cache


def _src(n, t, batch_first, dtype=minigrad.float64):
    return minigrad.randn(*((n, t, D) if batch_first else (t, n, D)), dtype=dtype)


@pytest.mark.parametrize("norm_first,batch_first,activation", itertools.product(
    [True, False], [True, False], ["relu", "gelu"]))
@pytest.mark.parametrize("n,t", [(1, 1), (1, 2), (3, 1), (2, 3), (2, 7)])
def test_fast_path_equals_the_ordinary_forward(spy, norm_first, batch_first, activation, n, t):
    layer = _layer(norm_first, batch_first, activation)
    src = _src(n, t, batch_first)
    _both(layer, src, spy)
    _both(layer, src, spy, is_causal=True)


@pytest.mark.parametrize("batch_first", [True, False])
def test_fast_path_equals_the_ordinary_forward_with_every_mask(spy, batch_first):
    layer = _layer(batch_first=batch_first)
    n, t = 2, 5
    src = _src(n, t, batch_first)
    blocked = minigrad.tensor(numpy.triu(numpy.ones((t, t), bool), 2))         # True = may not attend
    padding = minigrad.tensor(numpy.array([[False] * t, [False] * 3 + [True] * 2]))
    added = minigrad.randn(t, t, dtype=minigrad.float64)
    per_head = minigrad.randn(n * HEADS, t, t, dtype=minigrad.float64)
    _both(layer, src, spy, src_mask=blocked)
    _both(layer, src, spy, src_mask=added)
    _both(layer, src, spy, src_mask=per_head)
    _both(layer, src, spy, src_key_padding_mask=padding)
    _both(layer, src, spy, src_mask=blocked, src_key_padding_mask=padding)
    _both(layer, src, spy, src_key_padding_mask=padding, is_causal=True)


@pytest.mark.parametrize("dtype", [minigrad.float32, minigrad.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_fast_path_equals_the_ordinary_forward_in_float32_and_without_biases(spy, dtype, bias):
    layer = _layer(bias=bias, dtype=dtype)
    _both(layer, _src(2, 4, True, dtype), spy, is_causal=True)
    _both(layer, _src(1, 1, True, dtype), spy)


@pytest.mark.parametrize("chunks", [(1, 1, 1, 1), (3, 1, 2), (2, 4), (1, 5)])
@pytest.mark.parametrize("norm_first,batch_first", [(True, True), (False, True), (True, False)])
def test_fast_path_with_a_cache_fed_in_chunks_equals_the_ordinary_forward(spy, chunks, norm_first, batch_first):
    """Decoding: each call appends its positions to the cache; both sides hold the same keys and values."""
    layer = _layer(norm_first=norm_first, batch_first=batch_first)
    src = _src(2, sum(chunks), batch_first)
    cache, start = {}, 0
    for size in chunks:
        piece = src[:, start:start + size] if batch_first else src[start:start + size]
        out, cache = _both(layer, piece, spy, is_causal=True, cache=cache)
        start += size
    assert cache["k"].shape == (2, HEADS, sum(chunks), D // HEADS)


def test_causal_lm_decodes_the_same_log_probabilities_on_both_paths(spy):
    """A CausalLM step by step: eval mode (fast path) against train mode with dropout 0 (the ordinary forward)."""
    minigrad.manual_seed(1)
    model = CausalLM(11, d_model=D, nhead=HEADS, num_layers=2, dim_feedforward=FF, dropout=0.0, activation="relu",
                     dtype=minigrad.float64)
    fast_state, ordinary_state = model.initial_state(2), model.initial_state(2)
    tokens = minigrad.tensor([1, 4])
    with minigrad.no_grad():
        for step in range(6):
            model.eval()
            fast, fast_state = model.step(tokens, fast_state)
            assert len(spy) == 2 * (step + 1)                  # both layers took the fast path
            model.train()
            ordinary, ordinary_state = model.step(tokens, ordinary_state)
            assert len(spy) == 2 * (step + 1)                  # ... and here neither did
            numpy.testing.assert_array_equal(fast.numpy(), ordinary.numpy())
            tokens = minigrad.tensor(fast.numpy().argmax(axis=1))


def test_fast_path_runs_only_when_nothing_can_tell_the_difference():
    layer = _layer()
    src = _src(2, 3, True)
    applies = transformer_fast_path.applies
    with minigrad.no_grad():
        assert applies(layer, src, None, None, None)
        layer.train()
        assert not applies(layer, src, None, None, None)           # dropout is on
        layer.eval()
        layer.reference = True
        assert not applies(layer, src, None, None, None)           # the reference tier is what a student reads
        layer.reference = False
        assert not applies(layer, src[0], None, None, None)        # unbatched
        assert not applies(layer, src[:, :0], None, None, None)    # no positions
        assert not applies(layer, src.float(), None, None, None)   # dtypes differ: the ordinary forward raises
        padding = minigrad.zeros(2, 3, dtype=minigrad.bool_)
        assert not applies(layer, src, None, padding, {})          # refused with a cache: the ordinary forward says so
        custom = _layer(activation=lambda x: F.relu(x) * 2)
        assert not applies(custom, src, None, None, None)          # an activation it cannot know
    # grad mode on: only when nothing requires grad
    assert not applies(layer, src, None, None, None)               # the parameters do
    for p in layer.parameters():
        p.requires_grad_(False)
    assert applies(layer, src, None, None, None)
    assert not applies(layer, src.clone().requires_grad_(True), None, None, None)
    learned_mask = minigrad.zeros(3, 3, dtype=minigrad.float64, requires_grad=True)
    assert not applies(layer, src, learned_mask, None, None)


def test_frozen_layer_in_grad_mode_takes_the_fast_path_and_records_nothing(spy):
    layer = _layer()
    src = _src(2, 3, True)
    expected = layer(src, is_causal=True).detach().numpy()
    for p in layer.parameters():
        p.requires_grad_(False)
    out = layer(src, is_causal=True)
    assert spy == [1] and out.grad_fn is None and not out.requires_grad
    numpy.testing.assert_array_equal(out.numpy(), expected)


def test_bad_input_still_gets_the_ordinary_forwards_errors():
    layer = _layer()
    with minigrad.no_grad():
        with pytest.raises(RuntimeError, match="dtype"):
            layer(_src(2, 3, True, minigrad.float32))
        with pytest.raises(ValueError, match="does not end in normalized_shape"):
            layer(minigrad.randn(2, 3, D + 1, dtype=minigrad.float64))
        with pytest.raises(ValueError, match="key_padding_mask with a self-attention cache"):
            layer(_src(2, 3, True), src_key_padding_mask=minigrad.zeros(2, 3, dtype=minigrad.bool_), cache={})
