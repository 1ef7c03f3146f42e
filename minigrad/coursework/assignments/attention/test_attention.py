"""Public tests: run them with  python -m pytest test_attention.py"""
import numpy as np

from attention import (attention_backward, attention_forward, layernorm_backward, layernorm_forward,
                       softmax_backward, softmax_forward)
from minigrad.coursework import check_backward

rng = np.random.default_rng(0)


def test_softmax():
    x = rng.standard_normal((3, 4))
    y, _ = softmax_forward(x + 1000.0)                  # no overflow
    assert np.allclose(y.sum(axis=-1), 1.0)
    assert max(check_backward(softmax_forward, softmax_backward, [x])) < 1e-6


def test_layernorm():
    x, gamma, beta = rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal(5)
    y, _ = layernorm_forward(x, np.ones(5), np.zeros(5))
    assert np.allclose(y.mean(axis=-1), 0.0) and np.allclose(y.var(axis=-1), 1.0, atol=1e-3)
    errors = check_backward(layernorm_forward, layernorm_backward, [x, gamma, beta])
    assert max(errors) < 1e-6, dict(zip(["dx", "dgamma", "dbeta"], errors))


def test_attention():
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 2))
    causal = np.tril(np.ones((3, 3), dtype=bool))
    out, _ = attention_forward(q, k, v, causal)
    assert np.allclose(out[:, 0], v[:, 0])              # the first query can only see the first key
    errors = check_backward(lambda q, k, v: attention_forward(q, k, v, causal), attention_backward, [q, k, v])
    assert max(errors) < 1e-6, dict(zip(["dq", "dk", "dv"], errors))
