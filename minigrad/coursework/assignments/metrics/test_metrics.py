"""Public tests: run them with  python -m pytest test_metrics.py"""
import math

import numpy as np

from metrics import brevity_penalty, clipped_counts, corpus_bleu, perplexity


def test_a_uniform_model_has_perplexity_v_and_padding_is_left_out():
    V = 7
    log_probs = np.full((2, 4, V), -math.log(V))
    targets = np.array([[3, 1, 4, 0], [2, 0, 0, 0]])          # id 0 is <pad>
    assert math.isclose(perplexity(log_probs, targets), V)
    log_probs[0, 3, :] = -1000.0                               # a padded position: whatever it says is not counted
    assert math.isclose(perplexity(log_probs, targets), V)


def test_perplexity_is_e_to_the_mean_negative_log_likelihood():
    log_probs = np.log(np.array([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]]))
    targets = np.array([[1, 1]])
    expected = math.exp(-(math.log(0.25) + math.log(0.8)) / 2)
    assert math.isclose(perplexity(log_probs, targets), expected)


def test_matches_are_clipped_by_the_reference_that_has_the_most():
    assert clipped_counts([["the", "cat"]], ["the", "the", "the"], 1) == (1, 3)
    assert clipped_counts([["the", "cat"], ["the", "the", "mat"]], ["the", "the", "the"], 1) == (2, 3)
    assert clipped_counts([["a", "b", "c"]], ["a", "b", "c", "a", "b"], 2) == (2, 4)


def test_brevity_penalty():
    assert brevity_penalty(5, 6) == 1.0
    assert math.isclose(brevity_penalty(6, 3), math.exp(1 - 2))
    assert math.isclose(brevity_penalty(4, 4), 1.0)
    assert brevity_penalty(4, 0) == 0.0


def test_corpus_bleu_adds_up_the_counts_before_dividing():
    references = [[["the", "cat", "sat", "on", "the", "mat"]], [["a", "dog", "ran", "away", "from", "home"]]]
    hypotheses = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "ran", "to", "the", "home"]]
    # matches / counts over both sentences, n = 1..4: (6+4)/12, (5+2)/10, (4+1)/8, (3+0)/6; same length: BP = 1
    expected = math.exp(sum(math.log(p) for p in (10 / 12, 7 / 10, 5 / 8, 3 / 6)) / 4)
    assert math.isclose(corpus_bleu(references, hypotheses), expected)
    assert math.isclose(corpus_bleu(references[:1], hypotheses[:1]), 1.0)


def test_a_short_hypothesis_pays_the_brevity_penalty():
    references = [[["the", "cat", "sat", "on", "the", "mat"]]]
    short = [["the", "cat", "sat", "on"]]                     # every n-gram matches: precision alone gives 1
    assert math.isclose(corpus_bleu(references, short), math.exp(1 - 6 / 4))
