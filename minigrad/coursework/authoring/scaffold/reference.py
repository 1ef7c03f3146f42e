"""Assignment ASSIGNMENT_NAME: an affine layer and a leaky ReLU, forward and backward, on arrays.

This is the reference solution; students get it with every block between
``# BEGIN SOLUTION`` and ``# END SOLUTION`` replaced by a ``raise`` (the
``# HINT:`` lines stay).  Replace the example with your own exercise.

Shapes: N batch, D input features, M output features.
    x (N, D)   w (M, D)   b (M,)   y (N, M)

Weights are stored (out, in), as in minigrad and PyTorch: y = x w^T + b.
"""
from minigrad import backend


def affine_forward(x, w, b):
    """x (N, D), w (M, D), b (M,) -> y (N, M), cache."""
    # BEGIN SOLUTION
    # HINT: w is stored (out, in), so x @ w.T is (N, M)
    y = x @ w.T + b
    cache = (x, w)
    # END SOLUTION
    return y, cache


def affine_backward(dy, cache):
    """dy (N, M) -> dx (N, D), dw (M, D), db (M,)."""
    # BEGIN SOLUTION
    # HINT: each gradient has the shape of its input; b was added to every row of the batch
    x, w = cache
    dx = dy @ w                    # (N, M) @ (M, D)
    dw = dy.T @ x                  # (M, N) @ (N, D)
    db = dy.sum(axis=0)            # b was broadcast over the batch
    # END SOLUTION
    return dx, dw, db


def leaky_relu_forward(x, slope):
    """y = x where x > 0, slope * x elsewhere.   x any shape, slope a float -> y, cache."""
    xp = backend.array_module(x)
    # BEGIN SOLUTION
    y = xp.where(x > 0, x, slope * x)
    cache = (x, slope)
    # END SOLUTION
    return y, cache


def leaky_relu_backward(dy, cache):
    """dy (the shape of x) -> dx."""
    xp = backend.array_module(dy)
    # BEGIN SOLUTION
    # HINT: the function is linear on each side of 0: what is its slope on each side?
    x, slope = cache
    dx = xp.where(x > 0, dy, slope * dy)
    # END SOLUTION
    return dx
