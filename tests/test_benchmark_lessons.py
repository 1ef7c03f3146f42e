"""The lessons benchmark's PyTorch twins stay the same models as minigrad's, on both tiers
(benchmarks/bench_lessons.py: lessons 3, 4, 9, 10 and 11, which train on the reference tier).

The benchmark asserts this before it times anything; these tests check it at small sizes, so a
change to a lesson's model, a tier or a layer that breaks the comparison shows in the suite.
"""
import os
import sys

import pytest

from optional_torch import needs_torch, torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import bench_lessons  # noqa: E402
from minigrad import functions as fn  # noqa: E402

pytestmark = needs_torch


def _agree_twice(steps, what):
    """Equal first losses on both tiers and in torch, and again after one Adam step each."""
    bench_lessons.check_first_losses(steps, what)
    bench_lessons.check_first_losses(steps, what)


def test_the_truncated_bptt_twins_give_the_same_losses():
    _agree_twice(bench_lessons.truncated_bptt_steps(torch, k=5, N=3, H=4), "NextValue")


@pytest.mark.parametrize("heads", [1, 2])
def test_the_lesson_9_twins_give_the_same_losses(heads):
    _agree_twice(bench_lessons.neighbours_steps(torch, heads, N=4, T=5, symbols=3), "Neighbours")


@pytest.mark.parametrize("cell", ["RNN", "LSTM", "GRU"])
def test_the_adding_problem_twins_give_the_same_losses(cell):
    _agree_twice(bench_lessons.adding_steps(torch, cell, T=6, N=3, H=5), cell)


@pytest.mark.parametrize("model", ["TransformerTranslator", "Seq2Seq"])
def test_the_lesson_10_twins_give_the_same_losses(model):
    _agree_twice(bench_lessons.translation_steps(torch, model, 4), model)


@pytest.mark.parametrize("model", ["LSTMClassifier", "TransformerClassifier"])
def test_the_lesson_11_twins_give_the_same_losses_on_a_padded_batch(model):
    _, _, lengths, _ = bench_lessons.review_batch(6, 10)
    assert int(lengths.min()) < 10                      # some reviews are padded: the lengths matter
    _agree_twice(bench_lessons.classifier_steps(torch, model, 6, 10), model)


@pytest.mark.parametrize("case,reference_function,fast_function", [
    (lambda: bench_lessons.adding_steps(torch, "LSTM", T=6, N=3, H=5), fn.LSTMFunction, fn.FastLSTMFunction),
    (lambda: bench_lessons.translation_steps(torch, "TransformerTranslator", 2), fn.ScaledDotProductAttention,
     fn.FastScaledDotProductAttention),
], ids=["lesson 4 LSTM", "lesson 10 translator"])
def test_each_step_runs_its_own_tier(monkeypatch, case, reference_function, fast_function):
    """The reference step runs the reference tier's Function and not the fast one; the fast step the other way."""
    ran = []
    for function in (reference_function, fast_function):
        def spy(ctx, *args, function=function, forward=function.forward):
            ran.append(function)
            return forward(ctx, *args)
        monkeypatch.setattr(function, "forward", staticmethod(spy))
    fast, reference, _ = case()
    fast()
    assert fast_function in ran and reference_function not in ran
    ran.clear()
    reference()
    assert reference_function in ran and fast_function not in ran


def test_the_evaluation_decodes_the_same_tokens_on_both_tiers():
    fast, reference, theirs = bench_lessons.evaluation_decodes(torch, 3)
    assert fast() == reference() == theirs()[0]


def test_a_different_model_fails_the_loss_check():
    fast, reference, _ = bench_lessons.adding_steps(torch, "LSTM", T=6, N=3, H=5)
    _, _, other = bench_lessons.adding_steps(torch, "GRU", T=6, N=3, H=5)
    with pytest.raises(AssertionError, match="first-step losses differ"):
        bench_lessons.check_first_losses([fast, reference, other], "mismatch")


def test_a_lstm_twin_that_ignores_the_lengths_fails_the_loss_check(monkeypatch):
    """torch's LSTM over the padded batch as if every review were full length: other final states."""
    def padded(torch, vocab_size, *sizes):
        model = real(torch, vocab_size, *sizes)
        model.forward = lambda ids, lengths: model.classifier(model.lstm(model.embedding(ids))[1][0][-1])
        return model
    real = bench_lessons.torch_lstm_classifier
    monkeypatch.setattr(bench_lessons, "torch_lstm_classifier", padded)
    with pytest.raises(AssertionError, match="first-step losses differ"):
        bench_lessons.check_first_losses(bench_lessons.classifier_steps(torch, "LSTMClassifier", 6, 10), "lengths")
