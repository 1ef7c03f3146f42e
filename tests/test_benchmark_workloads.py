"""The workloads benchmark's PyTorch twins stay the same models as minigrad's (benchmarks/bench_workloads.py).

The benchmark asserts this before it times anything; these tests check it at small sizes in
well under a second, so a change to a model, to decoding.py or to the layers that breaks
the comparison shows in the suite, not only when someone runs the benchmarks.
"""
import os
import sys

import pytest

from optional_torch import needs_torch, torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import bench_workloads  # noqa: E402
import profile_rows  # noqa: E402

pytestmark = needs_torch


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_the_char_lm_twins_give_the_same_first_loss(cell):
    mine, reference, count = bench_workloads.char_lm_pair(torch, cell, 2, 5, 8)
    assert count == sum(p.numel() for p in bench_workloads.torch_rnn_lm(torch, 69, 32, 8, cell).parameters())
    bench_workloads._check_first_loss(mine, reference, cell)
    bench_workloads._check_first_loss(mine, reference, cell)       # after one Adam step each: still equal


def test_the_causal_lm_twins_give_the_same_first_loss():
    mine, reference, _ = bench_workloads.causal_lm_pair(torch, 2, 6)
    bench_workloads._check_first_loss(mine, reference, "CausalLM")
    bench_workloads._check_first_loss(mine, reference, "CausalLM")


@pytest.mark.parametrize("model", ["GRU char LM", "LSTM char LM", "CausalLM"])
@pytest.mark.parametrize("search", ["greedy", "beam"])
def test_the_torch_decoding_loops_decode_what_minigrad_decodes(model, search):
    mine, reference = bench_workloads.decoding_pair(torch, model, search, 8)
    assert bench_workloads._check_same_tokens(mine, reference, model) >= 1


def test_the_seq2seq_twins_give_the_same_first_loss():
    mine, reference, count = bench_workloads.seq2seq_training_pair(torch, 4)
    bench_workloads._check_first_loss(mine, reference, "Seq2Seq")
    bench_workloads._check_first_loss(mine, reference, "Seq2Seq")       # after one Adam step each: still equal


@pytest.mark.parametrize("search", ["greedy", "beam"])
def test_the_seq2seq_twins_decode_the_same_tokens(search):
    mine, reference = bench_workloads.seq2seq_decoding_pair(torch, search)
    assert bench_workloads._check_same_tokens(mine, reference, "Seq2Seq") >= 1


@pytest.mark.parametrize("search,batch", [("greedy", 1), ("greedy", 3), ("beam", 1)])
def test_the_translator_twins_decode_the_same_tokens(search, batch):
    mine, reference = bench_workloads.translator_pair(torch, search, batch)
    assert bench_workloads._check_same_tokens(mine, reference, "translator") >= 1


def test_a_different_translator_fails_the_token_check(monkeypatch):
    """A torch twin with other positional encodings (a table outside the state dict, so minigrad's
    model keeps its own) decodes other tokens, and the check says so."""
    real = bench_workloads.torch_translator

    def shifted(torch, src_v, tgt_v, positions, **sizes):
        return real(torch, src_v, tgt_v, positions[::-1].copy(), **sizes)
    monkeypatch.setattr(bench_workloads, "torch_translator", shifted)
    mine, reference = bench_workloads.translator_pair(torch, "greedy", 3)
    with pytest.raises(AssertionError, match="minigrad decoded"):
        bench_workloads._check_same_tokens(mine, reference, "translator")


def test_a_different_model_fails_the_loss_check():
    mine, _, _ = bench_workloads.char_lm_pair(torch, "gru", 2, 5, 8)
    _, other, _ = bench_workloads.char_lm_pair(torch, "lstm", 2, 5, 8)
    with pytest.raises(AssertionError, match="first-step losses differ"):
        bench_workloads._check_first_loss(mine, other, "mismatch")


def test_the_profile_sorts_samples_by_where_they_ran():
    blas = "/x/numpy.libs/libscipy_openblas64_-32a4b2a6.so"
    umath = "/x/numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so"
    assert profile_rows._category("sgemm_kernel_SKYLAKEX", blas) == "BLAS"
    assert profile_rows._category("FLOAT_multiply_AVX512F", umath) == "NumPy loops"
    assert profile_rows._category("ufunc_generic_fastcall", umath) == "NumPy per call"
    assert profile_rows._category("default_malloc", umath) == "allocation"
    assert profile_rows._category("_int_free", "/usr/lib/x86_64-linux-gnu/libc.so.6") == "allocation"
    assert profile_rows._category("clear_page_erms", "[kernel.kallsyms]") == "allocation"
    assert profile_rows._category("_PyEval_EvalFrameDefault", "/x/libpython3.11.so.1.0") == "Python"
