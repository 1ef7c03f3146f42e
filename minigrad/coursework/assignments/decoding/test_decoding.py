"""Public tests: run them with  python -m pytest test_decoding.py"""
import itertools

import numpy as np

import minigrad
from decoding import TableDecoder, _sample_from, beam_search, sampling_distribution

rng = np.random.default_rng(0)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_temperature_sharpens_below_1_and_flattens_above():
    logits = rng.standard_normal((3, 6)) * 2
    p1 = sampling_distribution(logits, 1.0)
    assert np.allclose(p1, softmax(logits)) and np.allclose(p1.sum(axis=1), 1.0)
    sharp, flat = sampling_distribution(logits, 0.5), sampling_distribution(logits, 2.0)
    top = logits.argmax(axis=1)
    rows = np.arange(3)
    assert (sharp[rows, top] > p1[rows, top]).all() and (flat[rows, top] < p1[rows, top]).all()
    assert np.allclose(sampling_distribution(logits + 1000.0, 0.5), sharp)   # no overflow


def test_top_k_keeps_exactly_the_k_most_probable_tokens():
    logits = rng.standard_normal((4, 7))
    for k in (1, 3, 7):
        probs = sampling_distribution(logits, 1.0, top_k=k)
        assert ((probs > 0).sum(axis=1) == k).all(), k
        largest = np.argsort(-logits, axis=1)[:, :k]
        assert (np.take_along_axis(probs, largest, axis=1) > 0).all()
        kept = np.take_along_axis(softmax(logits), largest, axis=1)      # renormalised, in the same proportions
        assert np.allclose(np.take_along_axis(probs, largest, axis=1), kept / kept.sum(axis=1, keepdims=True))


def test_samples_follow_the_distribution():
    logits = np.log(np.array([[0.5, 0.3, 0.15, 0.05]]))
    minigrad.manual_seed(0)
    ids = np.asarray(_sample_from(np.repeat(logits, 20000, axis=0), 1.0, 3, None))
    frequencies = np.bincount(ids, minlength=4) / len(ids)
    assert frequencies[3] == 0                                   # outside the top 3: never drawn
    assert np.allclose(frequencies[:3], np.array([0.5, 0.3, 0.15]) / 0.95, atol=0.01)


def best_by_brute_force(decoder, start, eos, max_len, alpha):
    """Every sequence up to max_len tokens (ending at eos, or cut at max_len), ranked by log p / len ** alpha."""
    V = decoder.log_probs.shape[0]
    best = None
    for length in range(1, max_len + 1):
        for tokens in itertools.product(range(V), repeat=length):
            if eos in tokens[:-1] or (length < max_len and tokens[-1] != eos):
                continue
            previous = (start,) + tokens[:-1]
            log_prob = sum(decoder.log_probs[u, v] for u, v in zip(previous, tokens))
            score = log_prob / length ** alpha
            if best is None or score > best[1]:
                best = (list(tokens), score)
    return best


def test_a_wide_beam_finds_the_best_sequence():
    decoder = TableDecoder(rng.standard_normal((4, 4)) * 2)
    for alpha in (0.0, 1.0):
        tokens, score = best_by_brute_force(decoder, 0, 1, 4, alpha)
        found = beam_search(decoder, None, [0], beam_size=64, max_len=4, eos=1, length_penalty=alpha)[0][0]
        assert found.tokens == tokens and np.isclose(found.score, score), alpha


def test_length_normalisation_ranks_by_the_mean_log_probability():
    decoder = TableDecoder(rng.standard_normal((5, 5)) * 2)
    for hypothesis in beam_search(decoder, None, [0], beam_size=3, max_len=5, eos=1, n_best=3, length_penalty=1.0)[0]:
        assert np.isclose(hypothesis.score, hypothesis.log_prob / len(hypothesis.tokens))
    scores = [h.score for h in beam_search(decoder, None, [0], 3, 5, 1, n_best=3, length_penalty=1.0)[0]]
    assert scores == sorted(scores, reverse=True)
