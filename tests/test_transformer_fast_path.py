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


def _count_runs(monkeypatch, name):
    """A list that grows by one at each run of transformer_fast_path.<name>."""
    calls = []
    real = getattr(transformer_fast_path, name)

    def counting(*args):
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(transformer_fast_path, name, counting)
    return calls


@pytest.fixture
def spy(monkeypatch):
    """Counts the encoder layer's fast-path runs."""
    return _count_runs(monkeypatch, "encoder_layer")


def _layer(norm_first=True, batch_first=True, activation="relu", bias=True, dtype=minigrad.float64, seed=0,
           layer_class=nn.TransformerEncoderLayer):
    minigrad.manual_seed(seed)
    layer = layer_class(D, HEADS, FF, dropout=0.3, activation=activation, batch_first=batch_first,
                        norm_first=norm_first, bias=bias, dtype=dtype)
    for p in layer.parameters():            # non-trivial LayerNorm weights and biases too
        p.data.copy_(minigrad.randn(*p.shape, dtype=dtype) * 0.5)
    return layer.eval()


def _copy(cache):
    """A cache with new dicts (the encoder layer's {k, v}, the decoder layer's {self: {k, v}, cross: {k, v}})."""
    return None if cache is None else {name: dict(part) if isinstance(part, dict) else part
                                       for name, part in cache.items()}


def _cached_arrays(cache):
    """{"k": array, ...} or {"self.k": array, ...}: every tensor in a cache, by name."""
    arrays = {}
    for name, part in cache.items():
        for key, tensor in (part.items() if isinstance(part, dict) else [(None, part)]):
            arrays[name if key is None else f"{name}.{key}"] = tensor.detach().numpy()
    return arrays


def _both(layer, inputs, spy, **kwargs):
    """(ordinary forward, fast path) of one call layer(*inputs, **kwargs); the cache (if any) is
    copied for each side, and both sides' caches must hold the same keys and values afterwards."""
    cache = kwargs.pop("cache", None)
    ordinary_cache = _copy(cache)
    ordinary = layer(*inputs, cache=ordinary_cache, **kwargs)       # grad mode, parameters require grad
    assert ordinary.grad_fn is not None and not spy
    with minigrad.no_grad():
        fast_cache = _copy(cache)
        fast = layer(*inputs, cache=fast_cache, **kwargs)
    assert spy == [1] and fast.grad_fn is None
    spy.clear()
    assert fast.shape == ordinary.shape and fast.dtype == ordinary.dtype
    numpy.testing.assert_array_equal(fast.numpy(), ordinary.detach().numpy())
    if cache is not None:
        fast_arrays, ordinary_arrays = _cached_arrays(fast_cache), _cached_arrays(ordinary_cache)
        assert sorted(fast_arrays) == sorted(ordinary_arrays)
        for name, array in ordinary_arrays.items():
            numpy.testing.assert_array_equal(fast_arrays[name], array, err_msg=name)
    return fast, fast_cache


def _src(n, t, batch_first, dtype=minigrad.float64):
    return minigrad.randn(*((n, t, D) if batch_first else (t, n, D)), dtype=dtype)


@pytest.mark.parametrize("norm_first,batch_first,activation", itertools.product(
    [True, False], [True, False], ["relu", "gelu"]))
@pytest.mark.parametrize("n,t", [(1, 1), (1, 2), (3, 1), (2, 3), (2, 7)])
def test_fast_path_equals_the_ordinary_forward(spy, norm_first, batch_first, activation, n, t):
    layer = _layer(norm_first, batch_first, activation)
    src = _src(n, t, batch_first)
    _both(layer, (src,), spy)
    _both(layer, (src,), spy, is_causal=True)


@pytest.mark.parametrize("batch_first", [True, False])
def test_fast_path_equals_the_ordinary_forward_with_every_mask(spy, batch_first):
    layer = _layer(batch_first=batch_first)
    n, t = 2, 5
    src = _src(n, t, batch_first)
    blocked = minigrad.tensor(numpy.triu(numpy.ones((t, t), bool), 2))         # True = may not attend
    padding = minigrad.tensor(numpy.array([[False] * t, [False] * 3 + [True] * 2]))
    added = minigrad.randn(t, t, dtype=minigrad.float64)
    per_head = minigrad.randn(n * HEADS, t, t, dtype=minigrad.float64)
    _both(layer, (src,), spy, src_mask=blocked)
    _both(layer, (src,), spy, src_mask=added)
    _both(layer, (src,), spy, src_mask=per_head)
    _both(layer, (src,), spy, src_key_padding_mask=padding)
    _both(layer, (src,), spy, src_mask=blocked, src_key_padding_mask=padding)
    _both(layer, (src,), spy, src_key_padding_mask=padding, is_causal=True)


@pytest.mark.parametrize("dtype", [minigrad.float32, minigrad.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_fast_path_equals_the_ordinary_forward_in_float32_and_without_biases(spy, dtype, bias):
    layer = _layer(bias=bias, dtype=dtype)
    _both(layer, (_src(2, 4, True, dtype),), spy, is_causal=True)
    _both(layer, (_src(1, 1, True, dtype),), spy)


@pytest.mark.parametrize("chunks", [(1, 1, 1, 1), (3, 1, 2), (2, 4), (1, 5)])
@pytest.mark.parametrize("norm_first,batch_first", [(True, True), (False, True), (True, False)])
def test_fast_path_with_a_cache_fed_in_chunks_equals_the_ordinary_forward(spy, chunks, norm_first, batch_first):
    """Decoding: each call appends its positions to the cache; both sides hold the same keys and values."""
    layer = _layer(norm_first=norm_first, batch_first=batch_first)
    src = _src(2, sum(chunks), batch_first)
    cache, start = {}, 0
    for size in chunks:
        piece = src[:, start:start + size] if batch_first else src[start:start + size]
        out, cache = _both(layer, (piece,), spy, is_causal=True, cache=cache)
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
        assert not applies(layer, src.numpy(), None, None, None)   # an array: the ordinary forward's case
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


def test_a_layer_whose_parts_were_switched_alone_takes_the_ordinary_forward():
    """Eval mode set on the layer reaches its parts; a part switched back by hand (its attention's
    tier or training flag, a dropout in training) would make the two paths differ, so it is refused."""
    layer = _layer()
    src = _src(2, 3, True)
    applies = transformer_fast_path.applies
    with minigrad.no_grad():
        layer.self_attn.reference = True
        assert not applies(layer, src, None, None, None)
        layer.self_attn.reference = False
        layer.self_attn.train()
        assert not applies(layer, src, None, None, None)
        layer.self_attn.eval()
        layer.dropout1.train()
        assert not applies(layer, src, None, None, None)
        layer.dropout1.eval()
        assert applies(layer, src, None, None, None)
    for p in layer.parameters():
        p.requires_grad_(False)
    cache = {"k": minigrad.zeros(2, HEADS, 1, D // HEADS, dtype=minigrad.float64, requires_grad=True),
             "v": minigrad.zeros(2, HEADS, 1, D // HEADS, dtype=minigrad.float64)}
    assert not applies(layer, src, None, None, cache)             # grad mode: a cached key requires grad
    with minigrad.no_grad():
        assert applies(layer, src, None, None, cache)


# ----------------------------------------------------------------------------- the decoder layer

@pytest.fixture
def decoder_spy(monkeypatch):
    """Counts the decoder layer's fast-path runs."""
    return _count_runs(monkeypatch, "decoder_layer")


def _decoder(norm_first=False, batch_first=True, activation="relu", bias=True, dtype=minigrad.float64, seed=0):
    return _layer(norm_first, batch_first, activation, bias, dtype, seed, nn.TransformerDecoderLayer)


def _both_decoder(layer, tgt, memory, spy, **kwargs):
    return _both(layer, (tgt, memory), spy, **kwargs)


@pytest.mark.parametrize("norm_first,batch_first,activation", itertools.product(
    [True, False], [True, False], ["relu", "gelu"]))
@pytest.mark.parametrize("n,t,s", [(1, 1, 1), (1, 2, 5), (3, 1, 4), (2, 3, 1), (2, 7, 6)])
def test_decoder_fast_path_equals_the_ordinary_forward(decoder_spy, norm_first, batch_first, activation, n, t, s):
    layer = _decoder(norm_first, batch_first, activation)
    tgt, memory = _src(n, t, batch_first), _src(n, s, batch_first)
    _both_decoder(layer, tgt, memory, decoder_spy)
    _both_decoder(layer, tgt, memory, decoder_spy, tgt_is_causal=True)


@pytest.mark.parametrize("batch_first", [True, False])
def test_decoder_fast_path_equals_the_ordinary_forward_with_every_mask(decoder_spy, batch_first):
    layer = _decoder(batch_first=batch_first)
    n, t, s = 2, 5, 4
    tgt, memory = _src(n, t, batch_first), _src(n, s, batch_first)
    blocked = minigrad.tensor(numpy.triu(numpy.ones((t, t), bool), 2))         # True = may not attend
    memory_blocked = minigrad.tensor(numpy.triu(numpy.ones((t, s), bool), 1))
    padding = minigrad.tensor(numpy.array([[False] * t, [False] * 3 + [True] * 2]))
    memory_padding = minigrad.tensor(numpy.array([[False] * s, [False] * 2 + [True] * 2]))
    added = minigrad.randn(t, t, dtype=minigrad.float64)
    memory_added = minigrad.randn(n * HEADS, t, s, dtype=minigrad.float64)
    _both_decoder(layer, tgt, memory, decoder_spy, tgt_mask=blocked, memory_mask=memory_blocked)
    _both_decoder(layer, tgt, memory, decoder_spy, tgt_mask=added, memory_mask=memory_added)
    _both_decoder(layer, tgt, memory, decoder_spy, tgt_key_padding_mask=padding,
                  memory_key_padding_mask=memory_padding)
    _both_decoder(layer, tgt, memory, decoder_spy, memory_key_padding_mask=memory_padding, tgt_is_causal=True,
                  memory_is_causal=True)
    _both_decoder(layer, tgt, memory, decoder_spy, tgt_mask=blocked, tgt_key_padding_mask=padding,
                  memory_mask=memory_blocked, memory_key_padding_mask=memory_padding)


@pytest.mark.parametrize("dtype", [minigrad.float32, minigrad.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_decoder_fast_path_equals_the_ordinary_forward_in_float32_and_without_biases(decoder_spy, dtype, bias):
    layer = _decoder(bias=bias, dtype=dtype)
    _both_decoder(layer, _src(2, 4, True, dtype), _src(2, 3, True, dtype), decoder_spy, tgt_is_causal=True)
    _both_decoder(layer, _src(1, 1, True, dtype), _src(1, 1, True, dtype), decoder_spy)


@pytest.mark.parametrize("chunks", [(1, 1, 1, 1), (3, 1, 2), (1, 5)])
@pytest.mark.parametrize("norm_first,batch_first", [(True, True), (False, True), (False, False)])
def test_decoder_fast_path_with_a_cache_fed_in_chunks_equals_the_ordinary_forward(decoder_spy, chunks, norm_first,
                                                                                   batch_first):
    """Decoding: self-attention appends each call's positions; the memory is projected at the first
    call and read from the cache afterwards; both sides hold the same keys and values."""
    layer = _decoder(norm_first=norm_first, batch_first=batch_first)
    tgt, memory = _src(2, sum(chunks), batch_first), _src(2, 4, batch_first)
    padding = minigrad.tensor(numpy.array([[False] * 4, [False] * 3 + [True]]))
    cache, start = {}, 0
    for size in chunks:
        piece = tgt[:, start:start + size] if batch_first else tgt[start:start + size]
        out, cache = _both_decoder(layer, piece, memory, decoder_spy, tgt_is_causal=True, cache=cache,
                                   memory_key_padding_mask=padding)
        start += size
    assert cache["self"]["k"].shape == (2, HEADS, sum(chunks), D // HEADS)
    assert cache["cross"]["k"].shape == (2, HEADS, 4, D // HEADS)


def test_translator_decodes_the_same_log_probabilities_on_both_paths(spy, decoder_spy):
    """A TransformerTranslator step by step: eval mode (both fast paths) against train mode with dropout 0."""
    from minigrad.models import TransformerTranslator
    minigrad.manual_seed(2)
    model = TransformerTranslator(13, 11, d_model=D, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=2,
                                  dim_feedforward=FF, dropout=0.0, dtype=minigrad.float64)
    src = minigrad.tensor([[5, 6, 7, 8], [9, 10, 0, 0]])                  # the second row padded
    with minigrad.no_grad():
        model.eval()
        fast_state = model.initial_state(src)
        assert len(spy) == 2                                                # both encoder layers
        model.train()
        ordinary_state = model.initial_state(src)
        assert len(spy) == 2
        numpy.testing.assert_array_equal(fast_state["memory"].numpy(), ordinary_state["memory"].numpy())
        tokens = minigrad.tensor([1, 1])
        for step in range(5):
            model.eval()
            fast, fast_state = model.step(tokens, fast_state)
            assert len(decoder_spy) == 2 * (step + 1)
            model.train()
            ordinary, ordinary_state = model.step(tokens, ordinary_state)
            assert len(decoder_spy) == 2 * (step + 1)
            numpy.testing.assert_array_equal(fast.numpy(), ordinary.numpy())
            tokens = minigrad.tensor(fast.numpy().argmax(axis=1))


def test_decoder_fast_path_runs_only_when_nothing_can_tell_the_difference():
    layer = _decoder()
    tgt, memory = _src(2, 3, True), _src(2, 4, True)

    def applies(tgt=tgt, memory=memory, tgt_mask=None, memory_mask=None, tgt_padding=None, memory_padding=None,
                cache=None):
        return transformer_fast_path.decoder_applies(layer, tgt, memory, tgt_mask, memory_mask, tgt_padding,
                                                     memory_padding, cache)
    with minigrad.no_grad():
        assert applies()
        layer.train()
        assert not applies()                                        # dropout is on
        layer.eval()
        layer.reference = True
        assert not applies()                                        # the reference tier is what a student reads
        layer.reference = False
        layer.multihead_attn.reference = True
        assert not applies()                                        # one attention on the reference tier
        layer.multihead_attn.reference = False
        layer.dropout3.train()
        assert not applies()
        layer.dropout3.eval()
        assert not applies(tgt=tgt[0])                              # unbatched
        assert not applies(tgt=tgt.numpy())                         # arrays where Tensors belong: the ordinary
        assert not applies(memory=memory.numpy())                   #   forward's case
        assert not applies(tgt=tgt[:, :0])                          # no positions
        assert not applies(memory=memory[:, :0])                    # no memory positions
        assert not applies(memory=memory[:1])                       # batch sizes differ: the ordinary forward raises
        assert not applies(memory=memory[0])                        # unbatched memory
        assert not applies(tgt=tgt.float(), memory=memory.float())  # dtypes differ from the parameters'
        assert not applies(memory=memory.float())                   # the memory's dtype differs
        padding = minigrad.zeros(2, 3, dtype=minigrad.bool_)
        assert not applies(tgt_padding=padding, cache={})           # refused with a cache: the ordinary forward says so
        assert applies(memory_padding=minigrad.zeros(2, 4, dtype=minigrad.bool_), cache={})
        custom = _decoder(activation=lambda x: F.relu(x) * 2)
        assert not transformer_fast_path.decoder_applies(custom, tgt, memory, None, None, None, None, None)
    # grad mode on: only when nothing requires grad
    assert not applies()                                            # the parameters do
    for p in layer.parameters():
        p.requires_grad_(False)
    assert applies()
    assert not applies(tgt=tgt.clone().requires_grad_(True))
    assert not applies(memory=memory.clone().requires_grad_(True))
    assert not applies(memory_mask=minigrad.zeros(3, 4, dtype=minigrad.float64, requires_grad=True))
    cross = {"k": minigrad.zeros(2, HEADS, 4, D // HEADS, dtype=minigrad.float64, requires_grad=True),
             "v": minigrad.zeros(2, HEADS, 4, D // HEADS, dtype=minigrad.float64)}
    assert not applies(cache={"self": {}, "cross": cross})         # a cached projection of the memory requires grad
    assert applies(cache={"self": {}, "cross": {name: t.detach() for name, t in cross.items()}})


def test_decoder_bad_input_still_gets_the_ordinary_forwards_errors():
    layer = _decoder()
    tgt, memory = _src(2, 3, True), _src(2, 4, True)
    with minigrad.no_grad():
        with pytest.raises(RuntimeError, match="dtype"):
            layer(_src(2, 3, True, minigrad.float32), memory)
        with pytest.raises(ValueError, match="batch sizes"):
            layer(tgt, memory[:1])
        with pytest.raises(ValueError, match="expected query"):
            layer(tgt, minigrad.randn(2, 4, D + 1, dtype=minigrad.float64))
        with pytest.raises(ValueError, match="key_padding_mask with a self-attention cache"):
            layer(tgt, memory, tgt_key_padding_mask=minigrad.zeros(2, 3, dtype=minigrad.bool_), cache={})
