"""Every primitive's hand-written backward against finite differences, in float64,
on hypothesis-drawn shapes (broadcasting, size-1 and size-0 dimensions), on
every device of the ``device`` fixture."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import functional as F
from strategies import (
    away_from_zero, broadcastable_shapes, distinct, integers, mask, matmul_shapes, randn, reduction_dims,
    seeds, shape_and_dim, shapes,
)


def check(fn, *inputs):
    assert minigrad.gradcheck(fn, inputs)


# ---------------------------------------------------------------------------- arithmetic

@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@given(pair=broadcastable_shapes(2), seed=seeds)
def test_binary_broadcasting(device, op, pair, seed):
    a = randn(pair[0], device, seed)
    b = away_from_zero(pair[1], device, seed + 1)          # 1/b has a pole at 0
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
          "mul": lambda a, b: a * b, "div": lambda a, b: a / b}[op]
    check(fn, a, b)


@given(shape=shapes(), seed=seeds)
def test_python_number_operands(device, shape, seed):
    a = away_from_zero(shape, device, seed)
    check(lambda a: 2.5 + a, a)
    check(lambda a: 2.5 - a, a)
    check(lambda a: 1.5 * a - a * 0.5, a)
    check(lambda a: 3.0 / a + a / 4.0, a)


@given(shape=shapes(), seed=seeds)
def test_neg(device, shape, seed):
    check(lambda a: -a, randn(shape, device, seed))


@pytest.mark.parametrize("p", [2, 3, 0.5, -1.5])
@given(shape=shapes(), seed=seeds)
def test_pow_number_exponent(device, p, shape, seed):
    check(lambda a: a ** p, away_from_zero(shape, device, seed, positive=True))


@given(pair=broadcastable_shapes(2), seed=seeds)
def test_pow_tensor_exponent(device, pair, seed):
    base = away_from_zero(pair[0], device, seed, low=0.5, positive=True)   # log(base) needs base > 0
    exponent = randn(pair[1], device, seed + 1)
    check(lambda a, p: a ** p, base, exponent)
    check(lambda p: 2.0 ** p, exponent)


@given(pair=matmul_shapes(), seed=seeds)
def test_matmul(device, pair, seed):
    a, b = randn(pair[0], device, seed), randn(pair[1], device, seed + 1)
    check(lambda a, b: a @ b, a, b)


def test_matmul_one_dimensional_cases(device):
    v, w = randn((3,), device, 0), randn((3,), device, 1)
    m, batch = randn((3, 2), device, 2), randn((2, 4, 3), device, 3)
    check(lambda v, w: v @ w, v, w)               # vector . vector -> scalar
    check(lambda v, m: v @ m, v, m)               # row vector
    check(lambda batch, v: batch @ v, batch, v)   # batched matrix @ vector
    check(lambda batch, m: batch @ m, batch, m)   # a shared right operand


# ---------------------------------------------------------------------------- elementwise

@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid"])
@given(shape=shapes(), seed=seeds)
def test_smooth_elementwise(device, name, shape, seed):
    check(lambda a: getattr(a, name)(), randn(shape, device, seed))


@given(shape=shapes(), seed=seeds)
def test_log(device, shape, seed):
    check(lambda a: a.log(), away_from_zero(shape, device, seed, positive=True))


@pytest.mark.parametrize("name", ["relu", "abs"])
@given(shape=shapes(), seed=seeds)
def test_kinked_elementwise(device, name, shape, seed):
    check(lambda a: getattr(a, name)(), away_from_zero(shape, device, seed))   # both sides of the kink


# ---------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("name", ["sum", "mean"])
@given(data=st.data(), shape=shapes(min_side=1), seed=seeds, keepdim=st.booleans())
def test_sum_mean(device, name, data, shape, seed, keepdim):
    dim = data.draw(reduction_dims(shape))
    check(lambda a: getattr(a, name)(dim, keepdim), randn(shape, device, seed))


@given(data=st.data(), shape=shapes(min_side=0), seed=seeds)
def test_sum_over_empty(device, data, shape, seed):
    dim = data.draw(reduction_dims(shape))
    check(lambda a: a.sum(dim), randn(shape, device, seed))


@given(data=st.data(), shape=shapes(min_side=1), seed=seeds, keepdim=st.booleans())
def test_amax(device, data, shape, seed, keepdim):
    dim = data.draw(reduction_dims(shape))
    check(lambda a: a.amax(dim, keepdim), distinct(shape, device, seed))


@given(shape_dim=shape_and_dim(min_side=1), seed=seeds)
def test_max_with_dim_returns_values_and_indices(device, shape_dim, seed):
    shape, dim = shape_dim
    a = distinct(shape, device, seed)
    check(lambda a: a.max(dim)[0], a)
    values, indices = a.max(dim)
    assert (indices.numpy() == a.numpy().argmax(dim)).all()


# ---------------------------------------------------------------------------- shape

@given(shape=shapes(), seed=seeds)
def test_reshape(device, shape, seed):
    a = randn(shape, device, seed)
    check(lambda a: a.reshape(-1), a)
    check(lambda a: a.reshape(tuple(reversed(shape))), a)
    check(lambda a: a.unsqueeze(0).flatten(), a)


@given(data=st.data(), shape=shapes(min_dims=1), seed=seeds)
def test_permute_transpose(device, data, shape, seed):
    dims = tuple(data.draw(st.permutations(range(len(shape)))))
    d0, d1 = data.draw(st.integers(-len(shape), len(shape) - 1)), data.draw(st.integers(0, len(shape) - 1))
    a = randn(shape, device, seed)
    check(lambda a: a.permute(dims), a)
    check(lambda a: a.transpose(d0, d1), a)
    check(lambda a: a.T, a)


@given(pair=broadcastable_shapes(2, min_side=1), seed=seeds)
def test_expand(device, pair, seed):
    target = minigrad.backend.broadcast_shape(*pair)
    check(lambda a: a.expand(target), randn(pair[0], device, seed))


@st.composite
def slices(draw, shape):
    parts = []
    for side in shape:
        start = draw(st.integers(-side - 1, side + 1) | st.none())
        stop = draw(st.integers(-side - 1, side + 1) | st.none())
        step = draw(st.sampled_from([None, 1, 2, -1]))
        parts.append(draw(st.sampled_from([slice(start, stop, step), min(side - 1, 0)])) if side else slice(None))
    return tuple(parts)


@given(data=st.data(), shape=shapes(min_dims=1), seed=seeds)
def test_getitem_slices(device, data, shape, seed):
    index = data.draw(slices(shape))
    check(lambda a: a[index], randn(shape, device, seed))


@given(shape=shapes(min_dims=1, min_side=1), n=st.integers(0, 6), seed=seeds)
def test_getitem_integer_array_with_repeats(device, shape, n, seed):
    ids = integers(0, shape[0], (n,), device, seed)   # repeats are likely: gradients must add up
    a = randn(shape, device, seed)
    check(lambda a: a[ids], a)
    check(lambda a: a[ids.numpy().tolist()] if n else a[ids], a)   # a Python list index
    if len(shape) > 1:
        ids1 = integers(0, shape[1], (n,), device, seed + 1)
        check(lambda a: a[:, ids1], a)
        check(lambda a: a[ids, ids1], a)


def test_getitem_repeated_index_accumulates(device):
    a = minigrad.zeros(3, dtype=minigrad.float64, device=device, requires_grad=True)
    a[minigrad.tensor([0, 0, 2, 0], device=device)].sum().backward()
    assert a.grad.numpy().tolist() == [3.0, 0.0, 1.0]


@given(shape=shapes(min_dims=1), seed=seeds)
def test_getitem_boolean_mask(device, shape, seed):
    keep = mask(shape, device, seed)
    check(lambda a: a[keep], randn(shape, device, seed))
    if len(shape) > 1:
        rows = mask(shape[:1], device, seed + 1)
        check(lambda a: a[rows], randn(shape, device, seed))


@given(shape_dim=shape_and_dim(), sizes=st.lists(st.integers(0, 3), min_size=1, max_size=3), seed=seeds)
def test_cat(device, shape_dim, sizes, seed):
    shape, dim = shape_dim
    parts = [randn(shape[:dim % len(shape)] + (n,) + shape[dim % len(shape) + 1:], device, seed + i)
             for i, n in enumerate(sizes)]
    check(lambda *parts: minigrad.cat(parts, dim), *parts)


@given(data=st.data(), shape=shapes(max_dims=2), count=st.integers(1, 3), seed=seeds)
def test_stack(device, data, shape, count, seed):
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    parts = [randn(shape, device, seed + i) for i in range(count)]
    check(lambda *parts: minigrad.stack(parts, dim), *parts)


@given(shape_dim=shape_and_dim(), size=st.integers(1, 3), seed=seeds, data=st.data())
def test_split_and_chunk(device, shape_dim, size, seed, data):
    shape, dim = shape_dim
    a = randn(shape, device, seed)
    check(lambda a: a.split(size, dim), a)
    sections = data.draw(st.lists(st.integers(0, 3), max_size=3).filter(lambda s: sum(s) == shape[dim]) |
                         st.just([shape[dim]]))
    check(lambda a: a.split(sections, dim), a)
    check(lambda a: a.split(size, dim)[0], a)             # unused pieces get a zero gradient
    if shape[dim]:
        check(lambda a: a.chunk(2, dim), a)


# ---------------------------------------------------------------------------- selection

@given(shapes3=broadcastable_shapes(3), seed=seeds)
def test_where(device, shapes3, seed):
    cond = mask(shapes3[0], device, seed)
    a, b = randn(shapes3[1], device, seed + 1), randn(shapes3[2], device, seed + 2)
    check(lambda a, b: minigrad.where(cond, a, b), a, b)
    check(lambda a: minigrad.where(cond, a, 0.0), a)


@given(pair=broadcastable_shapes(2), seed=seeds)
def test_masked_fill(device, pair, seed):
    target = minigrad.backend.broadcast_shape(*pair)
    filled = mask(pair[1][len(pair[1]) - len(target):] if len(pair[1]) > len(target) else pair[1], device, seed)
    a = randn(target, device, seed + 1)
    check(lambda a: a.masked_fill(filled, -1e4), a)


# ---------------------------------------------------------------------------- softmax

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@given(shape_dim=shape_and_dim(), seed=seeds)
def test_softmax(device, name, shape_dim, seed):
    shape, dim = shape_dim
    check(lambda a: getattr(a, name)(dim), randn(shape, device, seed))


# ---------------------------------------------------------------------------- layers as functions

@given(ids_shape=shapes(max_dims=2), vocab=st.integers(1, 4), dim=st.integers(0, 3), seed=seeds)
def test_embedding(device, ids_shape, vocab, dim, seed):
    weight = randn((vocab, dim), device, seed)
    ids = integers(0, vocab, ids_shape, device, seed + 1)
    check(lambda w: F.embedding(ids, w), weight)


@given(n=st.integers(1, 8), seed=seeds)
def test_embedding_padding_row_gets_no_gradient(device, n, seed):
    weight = randn((4, 3), device, seed)
    ids = integers(0, 4, (n,), device, seed + 1)
    F.embedding(ids, weight, padding_idx=2).sum().backward()
    with_padding = weight.grad.numpy()
    weight.grad = None
    F.embedding(ids, weight).sum().backward()
    without = weight.grad.numpy()
    assert (with_padding[2] == 0).all()
    assert (with_padding[[0, 1, 3]] == without[[0, 1, 3]]).all()


@given(shape=shapes(min_dims=1, min_side=1), p=st.sampled_from([0.1, 0.5, 0.9]), seed=seeds)
def test_dropout(device, shape, p, seed):
    # gradcheck replays the generator's state before every evaluation, so each sees the same mask
    check(lambda a: F.dropout(a, p), randn(shape, device, seed))


@given(batch=shapes(max_dims=2), normalized=shapes(min_dims=1, max_dims=2, min_side=1), seed=seeds,
       affine=st.booleans())
def test_layer_norm(device, batch, normalized, seed, affine):
    x = randn(batch + normalized, device, seed)
    if affine:
        w, b = randn(normalized, device, seed + 1), randn(normalized, device, seed + 2)
        check(lambda x, w, b: F.layer_norm(x, normalized, w, b), x, w, b)
    else:
        check(lambda x: F.layer_norm(x, normalized), x)


@given(n=st.integers(1, 4), c=st.integers(1, 4), extra=shapes(max_dims=1, min_side=1, max_side=2),
       reduction=st.sampled_from(["mean", "sum", "none"]), smoothing=st.sampled_from([0.0, 0.2]),
       ignore=st.booleans(), seed=seeds)
def test_cross_entropy(device, n, c, extra, reduction, smoothing, ignore, seed):
    logits = randn((n, c) + extra, device, seed)                      # (N, C) or (N, C, d)
    target = integers(0, c, (n,) + extra, device, seed + 1)
    if ignore:                                                        # ignore the first position
        target[(0,) * target.ndim] = -100
        if reduction == "mean" and target.numel() == 1:
            return                                                    # 0 / 0: nothing left to average
    check(lambda z: F.cross_entropy(z, target, reduction=reduction, label_smoothing=smoothing), logits)


@given(n=st.integers(1, 4), c=st.integers(1, 4), extra=shapes(max_dims=1, min_side=1, max_side=2),
       reduction=st.sampled_from(["mean", "sum", "none"]), seed=seeds)
def test_nll_loss(device, n, c, extra, reduction, seed):
    log_probs = randn((n, c) + extra, device, seed)
    target = integers(0, c, (n,) + extra, device, seed + 1)
    target[(0,) * target.ndim] = 1 if c > 1 else 0
    check(lambda a: F.nll_loss(a, target, reduction=reduction), log_probs)
    if target.numel() > 1:
        target[(0,) * target.ndim] = -100
        check(lambda a: F.nll_loss(a, target, ignore_index=-100, reduction=reduction), log_probs)


@given(shape=shapes(min_side=1), reduction=st.sampled_from(["mean", "sum", "none"]), seed=seeds)
def test_mse_loss(device, shape, reduction, seed):
    check(lambda a, b: F.mse_loss(a, b, reduction=reduction), randn(shape, device, seed), randn(shape, device, seed + 1))


@given(shape=shapes(min_side=1), reduction=st.sampled_from(["mean", "sum", "none"]), seed=seeds)
def test_binary_cross_entropy_with_logits(device, shape, reduction, seed):
    logits = randn(shape, device, seed)
    target = away_from_zero(shape, device, seed + 1, low=0.0, high=1.0, positive=True)  # soft labels in [0, 1)
    check(lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction), logits, target)


# ---------------------------------------------------------------------------- devices and dtypes

@settings(max_examples=5)
@given(shape=shapes(), seed=seeds)
def test_to_device_and_cast(device, shape, seed):
    a = randn(shape, "cpu", seed)
    check(lambda a: a.to(device) * 2, a)
    check(lambda a: a.to(device).to("cpu").clone(), a)
