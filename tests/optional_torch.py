"""PyTorch for the comparisons, when it is installed: only the tests marked ``needs_torch`` skip without it.

A file of parity tests (test_*_parity.py) skips as a whole without PyTorch; a file that mixes
minigrad's own tests with comparisons marks the comparisons, so its own tests still run.
"""
import pytest

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch, which is not installed "
                                                       '(python -m pip install -e ".[test,parity]")')
