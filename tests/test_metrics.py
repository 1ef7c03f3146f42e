"""Perplexity, BLEU (against NLTK), the n-gram LM, accuracy and the confusion matrix."""
import math
import warnings

import pytest
from hypothesis import given, settings, strategies as st

import minigrad
from minigrad import metrics

nltk_bleu = pytest.importorskip("nltk.translate.bleu_score")

sentences = st.lists(st.sampled_from("a b c d e".split()), min_size=0, max_size=10)
corpora = st.integers(1, 3).flatmap(lambda n: st.tuples(
    st.lists(st.lists(sentences, min_size=1, max_size=3), min_size=n, max_size=n),
    st.lists(sentences, min_size=n, max_size=n)))
weightings = st.sampled_from([(0.25, 0.25, 0.25, 0.25), (0.5, 0.5), (1 / 3, 1 / 3, 1 / 3), (0.1, 0.2, 0.3, 0.4)])


def nltk_or_error(function):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return function()
        except (AssertionError, IndexError, ValueError):
            return "error"


def ours_or_error(function):
    try:
        return function()
    except (IndexError, ValueError):
        return "error"


@settings(max_examples=150)
@given(corpora, weightings, st.integers(0, 7), st.booleans())
def test_corpus_bleu_equals_nltk(corpus, weights, method, auto_reweigh):
    references, hypotheses = corpus
    smoothing = getattr(nltk_bleu.SmoothingFunction(), f"method{method}")
    expected = nltk_or_error(lambda: nltk_bleu.corpus_bleu(references, hypotheses, weights, smoothing, auto_reweigh))
    got = ours_or_error(lambda: metrics.corpus_bleu(references, hypotheses, weights, method,
                                                    auto_reweigh=auto_reweigh))
    if expected == "error":
        assert got == "error"
    else:
        assert abs(got - expected) <= 1e-9


@settings(max_examples=60)
@given(st.lists(sentences, min_size=1, max_size=3), sentences, st.integers(0, 7))
def test_sentence_bleu_equals_nltk(references, hypothesis, method):
    smoothing = getattr(nltk_bleu.SmoothingFunction(), f"method{method}")
    expected = nltk_or_error(lambda: nltk_bleu.sentence_bleu(references, hypothesis, smoothing_function=smoothing))
    got = ours_or_error(lambda: metrics.sentence_bleu(references, hypothesis, smoothing=method))
    assert got == "error" if expected == "error" else abs(got - expected) <= 1e-9


def test_bleu_textbook_cases():
    reference = "the cat is on the mat".split()
    assert metrics.sentence_bleu([reference], reference) == 1.0
    assert metrics.modified_precision([reference], "the the the the the the the".split(), 1) == (2, 7)
    assert metrics.closest_ref_length([[1] * 13, [1] * 2], 12) == 13
    assert metrics.brevity_penalty(13, 12) == pytest.approx(math.exp(1 - 13 / 12))
    assert metrics.sentence_bleu([reference], "dog".split()) == 0.0


def test_uniform_model_perplexity_equals_vocabulary_size(device):
    V = 7
    log_probs = minigrad.full((3, 5, V), -math.log(V), dtype=minigrad.float64, device=device)
    targets = minigrad.tensor([[4, 5, 6, 0, 0], [1, 2, 3, 4, 5], [6, 0, 0, 0, 0]], device=device)
    assert metrics.perplexity(log_probs, targets) == pytest.approx(V, rel=1e-12)


def test_perplexity_skips_padding(device):
    log_probs = minigrad.tensor([[[math.log(0.5), math.log(0.25), math.log(0.25)]] * 3], dtype=minigrad.float64,
                                device=device)
    targets = minigrad.tensor([[1, 2, 0]], device=device)   # pad = 0, the likely token, is left out
    assert metrics.perplexity(log_probs, targets) == pytest.approx(4.0)
    assert metrics.perplexity(log_probs, targets, pad=None) == pytest.approx(math.exp(-(2 * math.log(0.25) + math.log(0.5)) / 3))
    assert metrics.perplexity_from_nll(3 * math.log(5), 3) == pytest.approx(5)


def test_ngram_lm_probabilities_sum_to_one_and_back_off():
    corpus = [s.split() for s in ["the cat sat", "the dog sat", "a cat ran", "the cat ran"]]
    for order in (1, 2, 3):
        lm = metrics.NGramLM(order, k=0.5).fit(corpus)
        for context in [(), ("the",), ("the", "cat"), ("zebra", "unseen")]:
            total = sum(lm.prob(w, context) for w in lm.vocab)
            assert total == pytest.approx(1.0, abs=1e-12)
    lm = metrics.NGramLM(3, k=0.5).fit(corpus)
    # p(sat | "dog" seen only once) - "zebra dog" was never seen, so it backs off to "dog"
    assert lm.prob("sat", ("zebra", "dog")) == lm.prob("sat", ("dog",))
    assert lm.prob("cat", ("<bos>", "the")) == pytest.approx((2 + 0.5) / (3 + 0.5 * len(lm.vocab)))


def test_ngram_lm_perplexity_prefers_seen_text_and_uniform_is_vocab_size():
    corpus = [s.split() for s in ["the cat sat on the mat", "the dog sat on the log"] * 5]
    bigram = metrics.NGramLM(2, k=0.1).fit(corpus)
    assert bigram.perplexity([["the", "cat", "sat"]]) < bigram.perplexity([["mat", "the", "on"]])
    unigram = metrics.NGramLM(1, k=1e12).fit(corpus)      # huge k: uniform over the vocabulary
    assert unigram.perplexity(corpus[:2]) == pytest.approx(len(unigram.vocab), rel=1e-6)


def test_accuracy_and_confusion_matrix(device):
    targets = minigrad.tensor([0, 1, 2, 2, 1], device=device)
    predictions = minigrad.tensor([0, 2, 2, 2, 1], device=device)
    assert metrics.accuracy(predictions, targets) == pytest.approx(0.8)
    scores = minigrad.tensor([[3.0, 0, 0], [0, 1, 2], [0, 0, 1], [0, 0, 1], [0, 5, 1]], device=device)
    assert metrics.accuracy(scores, targets) == pytest.approx(0.8)
    assert metrics.accuracy(predictions, targets, ignore_index=1) == 1.0
    matrix = metrics.confusion_matrix(predictions, targets, 3)
    assert matrix.tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 2]]
