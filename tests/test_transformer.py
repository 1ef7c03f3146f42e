"""Transformer layers, stacks, nn.Transformer and the ready models (incremental decoding included)."""
import numpy
import pytest

import minigrad
from minigrad import decoding, nn
from minigrad.masks import causal_mask
from minigrad.gradient_check import check_module
from minigrad.models import CausalLM, TransformerClassifier, TransformerTranslator


def randn(*shape, device="cpu", requires_grad=True):
    return minigrad.randn(*shape, dtype=minigrad.float64, device=device, requires_grad=requires_grad)


def bool_tensor(array, device):
    return minigrad.tensor(numpy.asarray(array, dtype=bool), device=device)


PAD = [[False, False, False, True], [False, False, False, False]]


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck(device, norm_first):
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, batch_first=True,
                                       norm_first=norm_first).double().to(device)
    x = randn(2, 4, 4, device=device)
    check_module(layer, x, causal_mask(4, device=device), bool_tensor(PAD, device), fast_mode=device != "cpu")


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_gradcheck(device, norm_first):
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu",
                                       norm_first=norm_first).double().to(device)      # time-first
    tgt, memory = randn(3, 2, 4, device=device), randn(4, 2, 4, device=device)
    check_module(layer, tgt, memory, causal_mask(3, device=device), None, None, bool_tensor(PAD, device),
                 fast_mode=device != "cpu")                                  # every element on cpu


def test_stacks_and_transformer_gradcheck(device):
    model = nn.Transformer(4, 2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=6, dropout=0.0,
                           batch_first=True).double().to(device)
    src, tgt = randn(2, 4, 4, device=device), randn(2, 3, 4, device=device)
    assert len(model.encoder.layers) == 2 and model.encoder.norm is not None and model.decoder.norm is not None
    first, second = model.encoder.layers[0], model.encoder.layers[1]
    assert first.linear1.weight is not second.linear1.weight                 # deep copies, own weights
    check_module(model, src, tgt, None, causal_mask(3, device=device), None, bool_tensor(PAD, device),
                 fast_mode=True)
    check_module(model.decoder, tgt, src, causal_mask(3, device=device), fast_mode=True)


def test_dropout_in_training_changes_output_and_eval_does_not():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, batch_first=True)
    x = minigrad.randn(2, 5, 8)
    assert not numpy.allclose(layer(x).numpy(), layer(x).numpy())
    layer.eval()
    assert numpy.array_equal(layer(x).numpy(), layer(x).numpy())


def test_bad_arguments():
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(4, 2, activation="swish")
    with pytest.raises(ValueError, match="embed_dim=5.*num_heads=2"):
        nn.TransformerDecoderLayer(5, 2)
    model = nn.Transformer(4, 2, 1, 1, 8, batch_first=True)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(1, 3, 4\)"):
        model(minigrad.randn(2, 3, 4), minigrad.randn(1, 3, 4))


# ----------------------------------------------------------------------------- models

@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_classifier_gradcheck_and_padding_is_ignored(device, pooling):
    model = TransformerClassifier(9, 3, d_model=4, nhead=2, num_layers=1, dim_feedforward=6, dropout=0.0,
                                  pooling=pooling).double().to(device)
    ids = minigrad.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 2, 1]], device=device)
    logits = model(ids)
    assert logits.shape == (2, 3)
    shorter = model(minigrad.tensor([[3, 4, 5]], device=device))
    assert numpy.allclose(shorter.numpy(), logits.numpy()[:1])              # padding changes nothing
    check_module(model, ids, fast_mode=True)


def test_classifier_embedding_norm_is_a_layer_norm_after_the_positions(device):
    """lesson 11's --data imdb (the Technion tutorial's model): LayerNorm(embedding + positions), then the encoder."""
    options = dict(d_model=4, nhead=2, num_layers=1, dim_feedforward=6, dropout=0.0, pooling="max")
    minigrad.manual_seed(0)
    model = TransformerClassifier(9, 3, embedding_norm=True, **options).double().to(device)
    assert {"embedding_norm.weight", "embedding_norm.bias"} <= set(dict(model.named_parameters()))
    ids = minigrad.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 2, 1]], device=device)
    check_module(model, ids, fast_mode=True)
    for p in (model.embedding_norm.weight, model.embedding_norm.bias):   # not the identity at initialisation
        p._data = p._data + minigrad.randn(*p.shape, dtype=minigrad.float64, device=device)._data
    plain = TransformerClassifier(9, 3, **options).double().to(device)
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("embedding_norm")})
    plain.positions = nn.Sequential(plain.positions, model.embedding_norm)
    assert numpy.allclose(plain(ids).numpy(), model(ids).numpy(), atol=1e-12)


def best_non_pad(log_probs):
    """Greedy choice that never picks token 0 (padding: the uncached decoder would mask it out)."""
    return log_probs[:, 1:].argmax(-1) + 1


def generate_uncached(model, state_fn, tokens, steps):
    """Greedy generation recomputing the whole prefix at every step: tokens and log-probs per step."""
    prefix, all_log_probs = [tokens], []
    for _ in range(steps):
        log_probs = state_fn(minigrad.stack(prefix, dim=1))[:, -1].log_softmax(-1)
        all_log_probs.append(log_probs.numpy())
        prefix.append(best_non_pad(log_probs))
    return numpy.stack([p.numpy() for p in prefix[1:]], 1), all_log_probs


def generate_cached(model, state, tokens, steps):
    all_log_probs, out = [], []
    for _ in range(steps):
        log_probs, state = model.step(tokens, state)
        all_log_probs.append(log_probs.numpy())
        tokens = best_non_pad(log_probs)
        out.append(tokens.numpy())
    return numpy.stack(out, 1), all_log_probs, state


def test_translator_cached_decoding_equals_uncached(device):
    model = TransformerTranslator(11, 13, d_model=8, nhead=2, dim_feedforward=16, dropout=0.0).double().to(device).eval()
    src = minigrad.tensor([[3, 4, 5, 6, 0], [7, 8, 9, 0, 0]], device=device)
    start = minigrad.tensor([1, 1], device=device)
    with minigrad.no_grad():
        memory, src_pad = model.encode(src)
        tokens, log_probs = generate_uncached(model, lambda prefix: model.decode(prefix, memory, src_pad), start, 6)
        state = model.initial_state(src)
        cached_tokens, cached_log_probs, state = generate_cached(model, state, start, 6)
    assert numpy.array_equal(tokens, cached_tokens)
    assert all(numpy.allclose(a, b, atol=1e-12) for a, b in zip(log_probs, cached_log_probs))
    cache = state["cache"][0]
    assert cache["self"]["k"].shape == (2, 2, 6, 4) and cache["cross"]["k"].shape == (2, 2, 5, 4)


def test_causal_lm_cached_decoding_equals_uncached(device):
    model = CausalLM(17, d_model=8, nhead=2, num_layers=2, dim_feedforward=16, dropout=0.0).double().to(device).eval()
    start = minigrad.tensor([1, 2, 3], device=device)
    with minigrad.no_grad():
        tokens, log_probs = generate_uncached(model, model, start, 7)
        cached_tokens, cached_log_probs, _ = generate_cached(model, model.initial_state(3), start, 7)
    assert numpy.array_equal(tokens, cached_tokens)
    assert all(numpy.allclose(a, b, atol=1e-12) for a, b in zip(log_probs, cached_log_probs))


def test_models_follow_the_decoding_protocol():
    model = TransformerTranslator(11, 13, d_model=8, nhead=2, dim_feedforward=16, dropout=0.0).double().eval()
    src = minigrad.tensor([[3, 4, 5, 6, 0], [7, 8, 9, 0, 0]])
    greedy, _ = decoding.greedy(model, model.initial_state(src), start=[1, 1], max_len=5)
    beams = decoding.beam_search(model, model.initial_state(src), start=[1, 1], beam_size=1, max_len=5, eos=None)
    assert [b[0].tokens for b in beams] == greedy                           # width 1 = greedy, via reorder
    lm = CausalLM(17, d_model=8, nhead=2, dropout=0.0).double().eval()
    best = decoding.beam_search(lm, lm.initial_state(2), start=[1, 2], beam_size=3, max_len=4, eos=None)
    for row, start in zip(best, [1, 2]):                                     # scores are true log-probabilities
        hyp = row[0]
        with minigrad.no_grad():
            log_probs = lm(minigrad.tensor([[start] + hyp.tokens[:-1]])).log_softmax(-1).numpy()[0]
        assert hyp.log_prob == pytest.approx(sum(log_probs[t, tok] for t, tok in enumerate(hyp.tokens)), abs=1e-9)


def test_causal_lm_trains():
    minigrad.manual_seed(0)
    model = CausalLM(5, d_model=16, nhead=2, num_layers=1, dim_feedforward=32, dropout=0.0)
    ids = minigrad.tensor([[0, 1, 2, 3, 4, 0, 1, 2, 3, 4]] * 4)
    optimizer = minigrad.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(40):
        loss = minigrad.functional.cross_entropy(model(ids[:, :-1]).reshape(-1, 5), ids[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.1


def test_generate_square_subsequent_mask_is_the_float_causal_mask_as_in_torch():
    mask = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    assert mask.dtype == numpy.float32
    assert (mask == numpy.where(numpy.triu(numpy.ones((4, 4), dtype=bool), k=1), -numpy.inf, 0.0)).all()
