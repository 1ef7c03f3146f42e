"""benchmarks/common.py's limit_threads: the limit takes, or it raises (a harness that limited
threadpoolctl's pools before NumPy was loaded measured 2 BLAS threads as one)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import common  # noqa: E402
import threadpoolctl  # noqa: E402


def test_limit_threads_leaves_every_pool_at_the_count():
    torch = common.torch_or_none()
    torch_threads = None if torch is None else torch.get_num_threads()
    limiter = common.limit_threads(1)
    try:
        pools = threadpoolctl.threadpool_info()
        assert any(pool["user_api"] == "blas" for pool in pools)        # NumPy's BLAS was found
        assert all(pool["num_threads"] == 1 for pool in pools)
        assert torch is None or torch.get_num_threads() == 1
    finally:
        limiter.restore_original_limits()
        if torch is not None:
            torch.set_num_threads(torch_threads)


def test_limit_threads_raises_when_a_pool_kept_its_threads(monkeypatch):
    monkeypatch.setattr(threadpoolctl, "threadpool_limits", lambda count: None)       # limits nothing
    monkeypatch.setattr(threadpoolctl, "threadpool_info",
                        lambda: [{"internal_api": "openblas", "user_api": "blas", "num_threads": 2}])
    torch = common.torch_or_none()
    torch_threads = None if torch is None else torch.get_num_threads()
    try:
        with pytest.raises(RuntimeError, match=r"limit_threads\(1\): still more than 1: openblas \(2 threads\)"):
            common.limit_threads(1)
    finally:
        if torch is not None:
            torch.set_num_threads(torch_threads)
