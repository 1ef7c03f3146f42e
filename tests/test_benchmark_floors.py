"""benchmarks/floors.py: its BLAS table makes the same products with NumPy and with PyTorch, and the script runs."""
import os
import subprocess
import sys

import numpy
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import floors  # noqa: E402
from minigrad.functions import attention_fast  # noqa: E402
from optional_torch import needs_torch, torch  # noqa: E402


class _Recording:
    """A stand-in for numpy or torch that records the shapes of every matmul it is asked for."""

    def __init__(self, lib):
        self.lib, self.shapes = lib, []

    def matmul(self, a, b, out=None):
        self.shapes.append((tuple(a.shape), tuple(b.shape)))
        return self.lib.matmul(a, b) if out is None else self.lib.matmul(a, b, out=out)

    def from_numpy(self, array):
        return array if self.lib is numpy else self.lib.from_numpy(array)


def _recorded_calls(make_products):
    """({"numpy": shapes, "torch": shapes}, calls): the (a, b) shapes of every matmul of one step of
    ``make_products(lib)`` with each library, and the number of calls the step says it makes."""
    calls = {}
    for name, lib in (("numpy", numpy), ("torch", torch)):
        recording = _Recording(lib)
        step, count = make_products(recording)
        recording.shapes.clear()
        step()
        calls[name] = recording.shapes
    return calls, count


@needs_torch
@pytest.mark.parametrize("T, N, D, H", [(3, 2, 4, 8), (2, 33, 8, 128)])
def test_lstm_products_are_the_same_calls_in_numpy_and_torch(T, N, D, H):
    calls, count = _recorded_calls(lambda lib: floors.lstm_products(lib, T, N, D, H))
    assert count == 2 * T + 7
    assert calls["numpy"] == calls["torch"]
    assert len(calls["numpy"]) == 2 * T + 3          # + the four dx products written with @
    assert calls["numpy"][1][1] == (4, H, H)            # whole products since issue 37 (no column blocks)


@needs_torch
def test_linear_products_run_in_both_libraries():
    for lib in (numpy, torch):
        step, count = floors.linear_products(lib, 5, [(4, 3), (3, 2)])
        step()
        assert count == 6


@needs_torch
@pytest.mark.parametrize("B, T, d, heads, block", [(2, 8, 8, 2, None), (3, 64, 16, 4, 2 * 64 * 64)])
def test_attention_products_are_the_same_calls_in_numpy_and_torch(B, T, d, heads, block, monkeypatch):
    """One block for all, and (block = 2 heads' scores) blocks of one example and two heads."""
    if block is not None:
        monkeypatch.setattr(attention_fast, "BLOCK_ELEMENTS", block)
    calls, count = _recorded_calls(lambda lib: floors.attention_products(lib, B, T, d, heads))
    assert len(calls["numpy"]) == count
    assert calls["numpy"] == calls["torch"]
    hd = d // heads
    per_block = calls["numpy"][1]                                       # the first block's S^T = K (Q scale)^T
    assert per_block[0][-2:] == (T, hd) and per_block[1][-2:] == (hd, T)
    assert count == 6 + 6 * (1 if block is None else B * heads // 2)
    assert per_block[0][:2] == ((B, heads) if block is None else (1, 2))


@needs_torch
def test_the_script_prints_a_row():
    """floors.py end to end (its main, the thread limit, the three tables) on one quick row."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "floors.py")
    environment = dict(os.environ, MINIGRAD_DEVICE="cpu")     # the strict device exists in this process only
    result = subprocess.run([sys.executable, script, "--quick", "--rows", "forward only, no_grad"],
                            capture_output=True, text=True, timeout=300, env=environment)
    assert result.returncode == 0, result.stderr
    row = [line for line in result.stdout.splitlines() if line.startswith("| chain of 1000 tiny ops")]
    assert len(row) == 1 and row[0].count("x |") == 2                   # floor / torch, minigrad / floor
    assert "The BLAS share" in result.stdout
