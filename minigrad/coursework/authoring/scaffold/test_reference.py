"""Public tests: run them with  python -m pytest test_ASSIGNMENT_NAME.py"""
import numpy as np

from ASSIGNMENT_NAME import affine_backward, affine_forward, leaky_relu_backward, leaky_relu_forward
from minigrad.coursework import check_backward

rng = np.random.default_rng(0)
N, D, M = 2, 3, 4


def test_affine_forward():
    x = np.array([[1.0, 2.0, 3.0]])
    w = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])          # (M, D) = (2, 3)
    y, _ = affine_forward(x, w, np.array([0.5, -1.0]))
    assert np.allclose(y, [[1.5, 4.0]])


def test_affine_backward():
    inputs = [rng.standard_normal(s) for s in [(N, D), (M, D), (M,)]]
    check_backward(affine_forward, affine_backward, inputs, names=["dx", "dw", "db"])


def test_leaky_relu():
    y, _ = leaky_relu_forward(np.array([-2.0, 3.0]), 0.1)
    assert np.allclose(y, [-0.2, 3.0])
    x = rng.standard_normal((N, D))
    x = x + np.sign(x) * 0.1                                  # away from the kink at 0
    check_backward(lambda x: leaky_relu_forward(x, 0.1), leaky_relu_backward, [x], names=["dx"])
