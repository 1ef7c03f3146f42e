"""Shared fixtures: the ``device`` parameter, the hypothesis profile, a fixed seed per test.

Op and layer tests take the ``device`` fixture and create their inputs with
``device=device``; they then run on

    "cpu"     NumPy
    "strict"  tests/strict_backend.py: NumPy behind CuPy's rules (no implicit
              conversion to NumPy, no host arrays mixed into device ops), so
              code that would break on a GPU breaks here, on CI's CPU
    "cuda"    CuPy, only when MINIGRAD_DEVICE=cuda (on a machine with a GPU)
"""
import os

import pytest
from hypothesis import HealthCheck, settings

import minigrad
from strict_backend import StrictArray, strict

minigrad.backend.register_device("strict", strict, StrictArray)

# CI: few examples, no deadline (2 shared cores are noisy), the same examples on every run.
settings.register_profile(
    "ci", max_examples=20, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# A longer, random search for a developer hunting bugs: HYPOTHESIS_PROFILE=dev pytest ...
settings.register_profile(
    "dev", max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DEVICES = ["cpu", "strict"] + (["cuda"] if os.environ.get("MINIGRAD_DEVICE") == "cuda" else [])


@pytest.fixture(params=DEVICES)
def device(request, monkeypatch):
    """The device name a test runs on: "cpu", "strict" (and "cuda" when MINIGRAD_DEVICE=cuda).

    It is also the test's default device (MINIGRAD_DEVICE), so a module or tensor the
    test makes without ``device=`` lands there too: under MINIGRAD_DEVICE=cuda the
    "cpu" case stays wholly on the CPU, and the "strict" case checks every array."""
    monkeypatch.setenv("MINIGRAD_DEVICE", request.param)
    return request.param


@pytest.fixture(autouse=True)
def _seed_and_dtype():
    """Every test starts from seed 0 and float32 defaults, whatever the previous test did."""
    minigrad.manual_seed(0)
    dtype = minigrad.get_default_dtype()
    yield
    minigrad.set_default_dtype(dtype)


@pytest.fixture(params=["fast", "reference"])
def tier(request):
    """Which tier of the recurrent and attention Functions a test runs: "fast" (the
    layers' default) or "reference"; pass ``reference=(tier == "reference")`` to the layer or function."""
    return request.param
