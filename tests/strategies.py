"""Hypothesis strategies for shapes and for small float64 inputs.

Shapes are small (sides 0..3) so that a full finite-difference gradcheck stays
cheap, and include size-1 dimensions (broadcasting) and size-0 dimensions
(empty tensors).  Values come from a NumPy generator seeded by a drawn
integer: hypothesis explores shapes and seeds, NumPy fills the arrays.

Inputs are kept away from the points where a function has a kink or a pole
(relu and abs at 0, log and 1/x at 0, max with ties), so that central
differences are a fair judge.
"""
import numpy
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad

seeds = st.integers(0, 2**32 - 1)


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=3):
    """A shape such as (), (3,), (2, 0, 1)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3):
    """``num_shapes`` shapes that broadcast together, e.g. ((2, 1, 3), (4, 3))."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side).map(lambda b: b.input_shapes)


@st.composite
def matmul_shapes(draw, max_side=3):
    """(a_shape, b_shape) for a @ b: 1-D operands, batched operands, broadcasting batch dimensions."""
    n, k, m = (draw(st.integers(1, max_side)) for _ in range(3))
    batch_a, batch_b = draw(broadcastable_shapes(2, max_dims=2, min_side=1, max_side=2))
    a_shape = (k,) if draw(st.booleans()) and not batch_a else batch_a + (n, k)
    b_shape = (k,) if draw(st.booleans()) and not batch_b else batch_b + (k, m)
    return a_shape, b_shape


@st.composite
def shape_and_dim(draw, min_dims=1, max_dims=3, min_side=0, max_side=3):
    """A shape and one valid dimension of it, possibly negative."""
    shape = draw(shapes(min_dims, max_dims, min_side, max_side))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return shape, dim


@st.composite
def reduction_dims(draw, shape):
    """None, one int (possibly negative), or a tuple of distinct dims of ``shape``."""
    ndim = len(shape)
    if ndim == 0 or draw(st.booleans()):
        return None
    dims = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    if len(dims) == 1:
        return dims[0] - ndim if draw(st.booleans()) else dims[0]
    return tuple(dims)


def randn(shape, device, seed, requires_grad=True):
    """Standard normal float64 values (a leaf tensor)."""
    values = numpy.random.default_rng(seed).standard_normal(shape)
    return minigrad.tensor(values, dtype=minigrad.float64, device=device, requires_grad=requires_grad)


def away_from_zero(shape, device, seed, low=0.2, high=2.0, positive=False):
    """Values with |x| in [low, high): fair for relu, abs (kink at 0) and 1/x, log (pole at 0)."""
    rng = numpy.random.default_rng(seed)
    values = rng.uniform(low, high, size=shape)
    if not positive:
        values *= rng.choice([-1.0, 1.0], size=shape)
    return minigrad.tensor(values, dtype=minigrad.float64, device=device, requires_grad=True)


def distinct(shape, device, seed):
    """Values at least 0.1 apart, so that max never ties (a tie is a kink)."""
    rng = numpy.random.default_rng(seed)
    size = int(numpy.prod(shape))
    values = (rng.permutation(size) * 0.1 + rng.uniform(0, 0.01, size=size)).reshape(shape)
    return minigrad.tensor(values, dtype=minigrad.float64, device=device, requires_grad=True)


def integers(low, high, shape, device, seed):
    """An int64 tensor (token ids, class targets, index arrays) with values in [low, high)."""
    values = numpy.random.default_rng(seed).integers(low, high, size=shape)
    return minigrad.tensor(values, dtype=minigrad.int64, device=device)


def mask(shape, device, seed, p=0.5):
    """A boolean tensor, True with probability p."""
    values = numpy.random.default_rng(seed).random(shape) < p
    return minigrad.tensor(values, device=device)
