"""The backward of every differentiable name added for PyTorch programs (issue 13), against finite
differences in float64, on hypothesis-drawn shapes, on every device of the ``device`` fixture."""
import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
from minigrad import functional as F
from minigrad.backend import to_numpy
from strategies import away_from_zero, broadcastable_shapes, distinct, integers, randn, seeds, shape_and_dim, shapes


def check(fn, *inputs):
    assert minigrad.gradcheck(fn, inputs)


@given(shape=shapes(), seed=seeds)
def test_sin_cos(device, shape, seed):
    a = randn(shape, device, seed)
    check(lambda a: a.sin(), a)
    check(lambda a: a.cos(), a)
    check(lambda a: minigrad.sin(a) * minigrad.cos(a), a)


@given(shape=shapes(), seed=seeds)
def test_gelu_tanh_approximation(device, shape, seed):
    check(lambda a: F.gelu(a, approximate="tanh"), randn(shape, device, seed))


@given(shape=shapes(), seed=seeds)
def test_rsqrt_square(device, shape, seed):
    check(lambda a: a.rsqrt() + a.square(), away_from_zero(shape, device, seed, positive=True))


@given(shape=shapes(), seed=seeds)
def test_clamp_away_from_the_bounds(device, shape, seed):
    rng = numpy.random.default_rng(seed)
    values = rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.6, 2.0, size=shape)   # |x| >= 0.6 > 0.5
    values = numpy.where(rng.random(shape) < 0.3, rng.uniform(-0.4, 0.4, size=shape), values)
    a = minigrad.tensor(values, dtype=minigrad.float64, device=device, requires_grad=True)
    check(lambda a: a.clamp(-0.5, 0.5), a)
    check(lambda a: a.clamp(min=-0.5), a)
    check(lambda a: minigrad.clamp(a, max=0.5), a)


@given(pair=broadcastable_shapes(2), seed=seeds)
def test_maximum_minimum_away_from_ties(device, pair, seed):
    rng = numpy.random.default_rng(seed)          # a in Z + 1/4, b in Z + 3/4: never within 1/2 (a tie is a kink)
    a = minigrad.tensor(rng.integers(-3, 3, pair[0]) + 0.25, device=device, requires_grad=True)
    b = minigrad.tensor(rng.integers(-3, 3, pair[1]) + 0.75, device=device, requires_grad=True)
    check(lambda a, b: minigrad.maximum(a, b), a, b)
    check(lambda a, b: a.minimum(b), a, b)


@given(shape_dim=shape_and_dim(min_side=1), seed=seeds)
def test_gather_with_repeated_indices(device, shape_dim, seed):
    shape, dim = shape_dim
    index_shape = tuple(max(1, n - 1) if d != dim % len(shape) else n + 2 for d, n in enumerate(shape))
    index = integers(0, shape[dim], index_shape, device, seed)      # repeats are likely: gradients add up
    check(lambda a: a.gather(dim, index), randn(shape, device, seed))


@given(shape_dim=shape_and_dim(min_side=1), data=st.data(), seed=seeds)
def test_scatter_with_unique_positions(device, shape_dim, data, seed):
    shape, dim = shape_dim
    dim = dim % len(shape)
    k = data.draw(st.integers(0, shape[dim]))
    rng = numpy.random.default_rng(seed)
    order = numpy.argsort(rng.random(shape), axis=dim)              # a permutation along dim in every slice
    index = minigrad.tensor(numpy.take(order, range(k), axis=dim), device=device)
    check(lambda a, s: a.scatter(dim, index, s), randn(shape, device, seed), randn(index.shape, device, seed + 1))
    check(lambda a: minigrad.scatter(a, dim, index, 0.5), randn(shape, device, seed))


@given(shape_dim=shape_and_dim(min_side=1), data=st.data(), seed=seeds)
def test_topk_sort_values(device, shape_dim, data, seed):
    shape, dim = shape_dim
    k = data.draw(st.integers(0, shape[dim]))
    a = distinct(shape, device, seed)
    check(lambda a: a.topk(k, dim).values, a)
    check(lambda a: a.topk(k, dim, largest=False)[0], a)
    check(lambda a: a.sort(dim, descending=True).values, a)


@given(shape_dim=shape_and_dim(min_side=1), seed=seeds, keepdim=st.booleans())
def test_min_max_with_dim_and_amin(device, shape_dim, seed, keepdim):
    shape, dim = shape_dim
    a = distinct(shape, device, seed)
    check(lambda a: a.min(dim, keepdim).values, a)
    check(lambda a: a.max(dim, keepdim).values, a)
    check(lambda a: a.amin(dim, keepdim), a)
    check(lambda a: a.min(), a)


@given(shape=shapes(min_dims=2), diagonal=st.integers(-3, 3), seed=seeds)
def test_tril_triu(device, shape, diagonal, seed):
    a = randn(shape, device, seed)
    check(lambda a: a.tril(diagonal), a)
    check(lambda a: minigrad.triu(a, diagonal=diagonal), a)


@given(b=st.integers(0, 3), n=st.integers(1, 3), m=st.integers(1, 3), p=st.integers(1, 3), seed=seeds)
def test_bmm_mm(device, b, n, m, p, seed):
    x, y = randn((b, n, m), device, seed), randn((b, m, p), device, seed + 1)
    check(lambda x, y: minigrad.bmm(x, y), x, y)
    check(lambda x, y: x.mm(y), randn((n, m), device, seed), randn((m, p), device, seed + 1))


@given(shape=shapes(min_dims=1, min_side=2), data=st.data(), seed=seeds, keepdim=st.booleans())
def test_var_std(device, shape, data, seed, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1) | st.none())
    a = randn(shape, device, seed)
    check(lambda a: a.var(dim, keepdim=keepdim), a)
    check(lambda a: a.std(dim, unbiased=False, keepdim=keepdim), a)


@given(shape=shapes(max_dims=2), data=st.data(), seed=seeds)
def test_repeat_and_repeat_interleave(device, shape, data, seed):
    sizes = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 1)))
    a = randn(shape, device, seed)
    check(lambda a: a.repeat(*sizes), a)
    check(lambda a: a.repeat_interleave(2), a)
    if shape:
        check(lambda a: a.repeat_interleave(3, dim=-1), a)


@given(shape=shapes(min_dims=1, max_dims=3), data=st.data(), seed=seeds)
def test_pad_and_crop(device, shape, data, seed):
    n_dims = data.draw(st.integers(1, len(shape)))
    pad = []
    for d in range(n_dims):
        side = shape[len(shape) - 1 - d]
        before = data.draw(st.integers(-(side // 2), 2))
        pad += [before, data.draw(st.integers(-(side - max(-before, 0)), 2))]
    check(lambda a: F.pad(a, pad, value=0.5), randn(shape, device, seed))


@given(shape=shapes(min_dims=1, min_side=1), seed=seeds)
def test_l1_kl_div(device, shape, seed):
    a, b = randn(shape, device, seed), randn(shape, device, seed + 1)
    a = minigrad.tensor(to_numpy(a._data) + numpy.sign(to_numpy(a._data) - to_numpy(b._data)) * 0.3,
                        dtype=minigrad.float64, device=device, requires_grad=True)     # |a - b| >= 0.3: no kink
    check(lambda a, b: F.l1_loss(a, b), a, b)
    target = away_from_zero(shape, device, seed + 2, positive=True)
    check(lambda a, t: F.kl_div(a, t, reduction="batchmean"), a, target)
    check(lambda a, t: F.kl_div(a, t, reduction="sum", log_target=True), a, b)


@given(shape_dim=shape_and_dim(min_side=0), seed=seeds)
def test_cumsum_flip(device, shape_dim, seed):
    shape, dim = shape_dim
    a = randn(shape, device, seed)
    check(lambda a: a.cumsum(dim), a)
    check(lambda a: a.flip(dim), a)
    check(lambda a: minigrad.flip(a, tuple(range(len(shape)))), a)


@given(shape=shapes(min_dims=1, min_side=1), seed=seeds)
def test_binary_cross_entropy_normalize_cosine(device, shape, seed):
    rng = numpy.random.default_rng(seed)
    p = minigrad.tensor(rng.uniform(0.1, 0.9, shape), dtype=minigrad.float64, device=device, requires_grad=True)
    t = minigrad.tensor(rng.uniform(0.0, 1.0, shape), dtype=minigrad.float64, device=device, requires_grad=True)
    check(lambda p, t: F.binary_cross_entropy(p, t), p, t)
    x, y = away_from_zero(shape, device, seed), away_from_zero(shape, device, seed + 1)
    check(lambda x: F.normalize(x, dim=-1), x)
    check(lambda x, y: F.cosine_similarity(x, y, dim=-1), x, y)


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), "fro"])
@given(shape=shapes(min_dims=1, min_side=1), data=st.data(), seed=seeds, keepdim=st.booleans())
def test_norm(device, p, shape, data, seed, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1) | st.none())
    a = distinct(shape, device, seed) if p == float("inf") else away_from_zero(shape, device, seed)
    check(lambda a: a.norm(p, dim=dim, keepdim=keepdim), a)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "abs", "square"])
def test_module_level_elementwise_equals_the_method(device, name):
    a = away_from_zero((2, 3), device, 0, positive=True)
    ours = getattr(minigrad, name)(a)
    assert ours.grad_fn is not None
    numpy.testing.assert_array_equal(to_numpy(ours._data), to_numpy(getattr(a, name)()._data))
    check(getattr(minigrad, name), a)
