"""Greedy, beam search and sampling on a tiny hand-made decoder whose every sequence can be enumerated."""
import itertools
import math

import numpy as np
import pytest

import minigrad
from minigrad import decoding
from minigrad.decoding import beam_search, greedy, sample, sequence_log_prob

V, H, EOS, BOS = 4, 5, 3, 0


class TinyRNN(decoding.Decoder):
    """h' = tanh(E[token] + h W);  log p = log_softmax(3 h' O).  The distribution depends on the whole prefix."""

    def __init__(self, device, seed=0):
        rng = np.random.default_rng(seed)
        as_t = lambda a: minigrad.tensor(a, dtype=minigrad.float64, device=device)  # noqa: E731
        self.E, self.W, self.O = (as_t(rng.normal(size=s)) for s in ((V, H), (H, H), (H, V)))
        self.device = device

    def initial_state(self, N):
        return minigrad.zeros(N, H, dtype=minigrad.float64, device=self.device)

    def step(self, tokens, state):
        h = (self.E[tokens] + state @ self.W).tanh()
        return (h @ self.O * 3.0).log_softmax(dim=-1), h


def all_sequences(max_len):
    """Every output the decoders can produce: ends with EOS, or reaches max_len without it."""
    for n in range(1, max_len + 1):
        for body in itertools.product([t for t in range(V) if t != EOS], repeat=n - 1):
            yield list(body) + [EOS]
    yield from (list(s) for s in itertools.product([t for t in range(V) if t != EOS], repeat=max_len))


def enumerate_scores(model, max_len):
    sequences = list(all_sequences(max_len))
    scores = sequence_log_prob(model, model.initial_state(len(sequences)), [BOS] * len(sequences), sequences)
    return sequences, scores


def test_probabilities_of_all_sequences_sum_to_one(device):
    _, scores = enumerate_scores(TinyRNN(device), 4)
    assert math.isclose(sum(math.exp(s) for s in scores), 1.0, rel_tol=1e-9)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_wide_beam_finds_the_most_probable_sequence(device, alpha):
    max_len = 4
    for seed in range(3):
        model = TinyRNN(device, seed)
        sequences, scores = enumerate_scores(model, max_len)
        ranked = sorted(zip(sequences, scores), key=lambda p: -p[1] / len(p[0]) ** alpha)
        [hyps] = beam_search(model, model.initial_state(1), [BOS], beam_size=128, max_len=max_len,
                             eos=EOS, n_best=5, length_penalty=alpha)
        assert [h.tokens for h in hyps] == [s for s, _ in ranked[:5]]
        for h, (_, score) in zip(hyps, ranked):
            assert math.isclose(h.score, score / len(h.tokens) ** alpha, abs_tol=1e-9)


def test_each_beam_score_is_its_teacher_forced_log_prob(device):
    model = TinyRNN(device, 1)
    N = 3
    results = beam_search(model, model.initial_state(N), [BOS, 1, 2], beam_size=4, max_len=6, eos=EOS, n_best=4)
    for start, hyps in zip([BOS, 1, 2], results):
        assert len(hyps) == 4
        forced = sequence_log_prob(model, model.initial_state(len(hyps)), [start] * len(hyps),
                                   [h.tokens for h in hyps])
        for h, f in zip(hyps, forced):
            assert math.isclose(h.log_prob, f, abs_tol=1e-9)
        assert [h.score for h in hyps] == sorted([h.score for h in hyps], reverse=True)


def test_beam_of_width_one_is_greedy(device):
    model = TinyRNN(device, 2)
    starts = [0, 1, 2, 0]
    tokens, scores = greedy(model, model.initial_state(4), starts, max_len=7, eos=EOS)
    results = beam_search(model, model.initial_state(4), starts, beam_size=1, max_len=7, eos=EOS)
    assert [r[0].tokens for r in results] == tokens
    for r, s in zip(results, scores):
        assert math.isclose(r[0].log_prob, s, abs_tol=1e-9)


def test_batched_beam_search_equals_one_row_at_a_time(device):
    model = TinyRNN(device, 3)
    batched = beam_search(model, model.initial_state(3), [0, 1, 2], beam_size=3, max_len=5, eos=EOS, n_best=3)
    for start, expected in zip([0, 1, 2], batched):
        [alone] = beam_search(model, model.initial_state(1), [start], beam_size=3, max_len=5, eos=EOS, n_best=3)
        assert [h.tokens for h in alone] == [h.tokens for h in expected]


def test_greedy_takes_the_argmax_and_stops_at_eos(device):
    model = TinyRNN(device, 0)
    [tokens], [score] = greedy(model, model.initial_state(1), [BOS], max_len=8, eos=EOS)
    state, previous, total = model.initial_state(1), BOS, 0.0
    for token in tokens:
        log_probs, state = model.step(minigrad.tensor([previous], device=device), state)
        row = log_probs.numpy()[0]
        assert token == int(row.argmax())
        total += row[token]
        previous = token
    assert math.isclose(score, total, abs_tol=1e-12)
    assert EOS not in tokens[:-1] and (tokens[-1] == EOS or len(tokens) == 8)


def test_temperature_zero_and_tiny_temperature_equal_greedy(device):
    model = TinyRNN(device, 4)
    starts = [0, 1, 2, 0, 1]
    expected, _ = greedy(model, model.initial_state(5), starts, max_len=6, eos=EOS)
    for temperature in (0.0, 1e-6):
        got, _ = sample(model, model.initial_state(5), starts, max_len=6, eos=EOS, temperature=temperature)
        assert got == expected
    got, _ = sample(model, model.initial_state(5), starts, max_len=6, eos=EOS, top_k=1)
    assert got == expected
    got, _ = sample(model, model.initial_state(5), starts, max_len=6, eos=EOS, top_p=1e-9)
    assert got == expected


def test_seeded_sampling_repeats(device):
    model = TinyRNN(device, 5)
    runs = []
    for _ in range(2):
        minigrad.manual_seed(123)
        runs.append(sample(model, model.initial_state(6), [0] * 6, max_len=8, eos=EOS, temperature=1.3, top_p=0.9))
    assert runs[0] == runs[1]
    assert len({tuple(s) for s in runs[0][0]}) > 1   # it does sample: rows differ


def test_sampling_follows_the_distribution_and_top_k():
    model = TinyRNN(None, 6)
    N = 4000
    log_probs, _ = model.step(minigrad.tensor([BOS] * 1), model.initial_state(1))
    p = np.exp(log_probs.numpy()[0])
    tokens, _ = sample(model, model.initial_state(N), [BOS] * N, max_len=1)
    counts = np.bincount([t[0] for t in tokens], minlength=V)
    assert np.all(np.abs(counts / N - p) < 4 * np.sqrt(p * (1 - p) / N) + 1e-3)
    tokens, _ = sample(model, model.initial_state(N), [BOS] * N, max_len=1, top_k=2)
    assert {t[0] for t in tokens} == set(np.argsort(-p)[:2].tolist())


def test_sampling_distribution_is_the_tempered_softmax_over_the_tokens_kept():
    """What sample draws from (the decoding practice set's answer): exp(l / T) over the top k, renormalised."""
    logits = np.random.default_rng(0).standard_normal((3, 6)) * 2
    for temperature, top_k in [(1.0, None), (0.5, None), (2.0, None), (0.7, 3), (1.0, 1), (1.5, 6)]:
        e = np.exp(logits / temperature)
        if top_k is not None:
            e = np.where(logits >= np.sort(logits, axis=1)[:, [-top_k]], e, 0.0)
        expected = e / e.sum(axis=1, keepdims=True)
        assert np.allclose(decoding.sampling_distribution(logits, temperature, top_k), expected, atol=1e-15), \
            (temperature, top_k)
    nucleus = decoding.sampling_distribution(logits, 1.0, None, 0.5)
    assert np.allclose(nucleus.sum(axis=1), 1.0) and ((nucleus > 0).sum(axis=1) < 6).all()


def test_bad_arguments_raise():
    model = TinyRNN(None)
    with pytest.raises(ValueError, match="temperature"):
        sample(model, model.initial_state(1), [0], 3, temperature=-1)
    with pytest.raises(ValueError, match="n_best"):
        beam_search(model, model.initial_state(1), [0], beam_size=2, max_len=3, eos=EOS, n_best=3)


def test_plot_beam_tree_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    model = TinyRNN("cpu", 0)
    _, trace = beam_search(model, model.initial_state(1), [BOS], beam_size=3, max_len=4, eos=EOS,
                           return_trace=True)
    path = decoding.plot_beam_tree(trace, tmp_path / "tree.png", itos=["a", "b", "c", "</s>"])
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_protocol_works_with_the_transformer_language_model():
    from minigrad.models import CausalLM
    lm = CausalLM(9, d_model=8, nhead=2, num_layers=1, dim_feedforward=16, dropout=0.0, dtype=minigrad.float64)
    lm.eval()
    results = beam_search(lm, lm.initial_state(2), [BOS, 1], beam_size=3, max_len=4, eos=EOS, n_best=3)
    for start, hyps in zip([BOS, 1], results):
        forced = sequence_log_prob(lm, lm.initial_state(len(hyps)), [start] * len(hyps), [h.tokens for h in hyps])
        assert all(math.isclose(h.log_prob, f, abs_tol=1e-9) for h, f in zip(hyps, forced))
    greedy_tokens, _ = greedy(lm, lm.initial_state(2), [BOS, 1], max_len=4, eos=EOS)
    assert greedy_tokens == [r[0].tokens for r in beam_search(lm, lm.initial_state(2), [BOS, 1], 1, 4, EOS)]
