"""Public tests: run them with  python -m pytest test_attention.py"""
import numpy as np

from attention import (attention_backward, attention_forward, layer_norm_backward, layer_norm_forward,
                       softmax_backward, softmax_forward)
from minigrad.coursework import check_backward

rng = np.random.default_rng(0)


def test_softmax():
    x = rng.standard_normal((3, 4))
    y, _ = softmax_forward(x + 1000.0)                  # no overflow
    assert np.allclose(y.sum(axis=-1), 1.0)
    check_backward(softmax_forward, softmax_backward, [x], names=["dx"])


def test_layer_norm():
    x, weight, bias = rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal(5)
    y, _ = layer_norm_forward(x, np.ones(5), np.zeros(5))
    assert np.allclose(y.mean(axis=-1), 0.0) and np.allclose(y.var(axis=-1), 1.0, atol=1e-3)
    check_backward(layer_norm_forward, layer_norm_backward, [x, weight, bias], names=["dx", "dweight", "dbias"])
    x = rng.standard_normal((2, 3, 4))                  # over the last two dimensions: (3, 4) per row
    weight, bias = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    check_backward(lambda x, w, b: layer_norm_forward(x, w, b, 1e-5, 2), layer_norm_backward, [x, weight, bias],
                   names=["dx", "dweight", "dbias"])


def test_attention():
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 2))
    causal = np.where(np.triu(np.ones((3, 3), dtype=bool), k=1), -np.inf, 0.0)   # B = -inf: the keys after the query
    out, _ = attention_forward(q, k, v, causal)
    assert np.allclose(out[:, 0], v[:, 0])              # the first query can only see the first key
    check_backward(lambda q, k, v: attention_forward(q, k, v, causal), lambda dout, cache: attention_backward(dout, cache)[:3],
                   [q, k, v], names=["dq", "dk", "dv"])


def test_attention_with_a_learned_bias():
    q, k, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    bias = rng.standard_normal((4, 5))                  # added to the scores of every batch element
    check_backward(attention_forward, attention_backward, [q, k, v, bias], names=["dq", "dk", "dv", "dbias"])
