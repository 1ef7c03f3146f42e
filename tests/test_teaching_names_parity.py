"""Parity with PyTorch for the names added for classic teaching programs (issue 18): the same
expression, written once as ``fn(L, *inputs)`` with ``L`` the ``minigrad`` or ``torch`` module,
gives the same outputs, dtypes and input gradients (1e-10 in float64, 1e-5 in float32), on every
device of the ``device`` fixture.  In-place methods run on a copy (``a * 1``) so the gradient
reaches the input through them."""
import numpy
import pytest

import minigrad

torch = pytest.importorskip("torch")
from torch_parity import check_parity, distinct, ints, normal, positive  # noqa: E402


def with_zeros(*shape):
    return lambda rng: numpy.where(rng.random(shape) < 0.25, 0.0, rng.standard_normal(shape))


def probabilities(*shape):
    return lambda rng: rng.dirichlet(numpy.ones(shape[1]), size=shape[0])


def away_from_one(*shape):
    """|values| in [0.2, 0.8] or [1.2, 2]: smooth_l1 and huber have a kink at |d| = 1."""
    return lambda rng: rng.choice([-1.0, 1.0], shape) * numpy.where(rng.random(shape) < 0.5, rng.uniform(0.2, 0.8, shape),
                                                                    rng.uniform(1.2, 2.0, shape))


def away_from_bounds(*shape):
    """Values at least 0.1 from the clamp bounds -0.5 and 0.5."""
    return lambda rng: rng.choice([-1.0, 1.0], shape) * numpy.where(rng.random(shape) < 0.5, rng.uniform(0.0, 0.4, shape),
                                                                    rng.uniform(0.6, 2.0, shape))


# name: (float inputs that get gradients, other inputs (ints), fn(L, *floats, *others))
CASES = {
    "cumprod": ([with_zeros(3, 5)], [], lambda L, a: (L.cumprod(a, 1), a.cumprod(dim=0), a.cumprod(-1))),
    "logsumexp": ([normal(3, 4, 2)], [], lambda L, a: (L.logsumexp(a, 1), a.logsumexp(dim=-1, keepdim=True),
                                                      a.logsumexp((0, 2)), (a * 40).logsumexp(0))),
    "roll": ([normal(3, 4)], [], lambda L, a: (L.roll(a, 1), a.roll(-2, 1), a.roll((1, 3), (0, 1)), a.roll(5, dims=0))),
    "outer_dot_mv": ([normal(3), normal(4), normal(4, 3)], [], lambda L, u, v, m: (
        L.outer(u, v), u.outer(m[0]), L.dot(u, m[1]), v.dot(v), L.mv(m, u), m.mv(u))),
    "mT": ([normal(2, 3, 4)], [], lambda L, a: (a.mT, a.mT @ a, a[0].mT)),
    "div_rounding_mode": ([normal(3, 4), positive(4)], [], lambda L, a, b: (
        L.div(a * 5, b, rounding_mode="floor"), (a * 5).div(b, rounding_mode="trunc"), a.div(b),
        L.divide(a, 2.0, rounding_mode="trunc"))),
    "axis_keepdims_aliases": ([distinct(3, 4)], [], lambda L, a: (
        L.sum(a, axis=1), a.sum(axis=0, keepdims=True), L.mean(a, axis=1, keepdims=True), a.max(axis=1)[0],
        L.min(a, axis=0).values, a.amax(axis=1),
        L.amin(a, axis=0, keepdims=True), a.std(axis=1), L.var(a, axis=0, keepdims=True), a.cumsum(axis=1),
        L.cumprod(a, axis=0), a.logsumexp(axis=1))),
    "in_place_values": ([away_from_bounds(3, 4), positive(3, 4)], [], lambda L, a, p: (
        (a * 1).clamp_(-0.5, 0.5), (a * 1).clip_(min=-0.5), (a * 1).clamp_min_(0.5), (a * 1).clamp_max_(-0.5),
        (a * 1).neg_(), (a * 1).abs_(), (a * 1).exp_(), (p * 1).log_(), (p * 1).sqrt_(), (p * 1).rsqrt_(),
        (a * 1).square_(), (a * 1).pow_(3), (a * 1).tanh_(), (a * 1).sigmoid_(), (a * 1).relu_(), (a * 1).sin_(),
        (a * 1).cos_(), (a * 1).mul_(2).add_(p).sub_(1.5).div_(p))),
    "in_place_chained_on_one_tensor": ([normal(3, 4)], [], lambda L, a: (a * 1).mul_(3).add_(1).clamp_(-1, 2).sub_(0.5)
                                       .sin_().pow_(2).mul_(3).sin_().exp_()),
    "addcmul_addcdiv": ([normal(3, 4), normal(3, 4), positive(3, 4)], [], lambda L, a, b, c: (
        (a * 1).addcmul_(b, c, value=0.5), (a * 1).addcdiv_(b, c), (a * 1).addcdiv_(b, c, value=-2))),
    "legacy_add_alpha_first": ([normal(3, 4), normal(3, 4)], [], lambda L, a, g: (
        (a * 1).add_(-0.1, g), (a * 1).sub_(0.5, g), (a * 1).add_(g, alpha=-0.1))),
    "in_place_shapes": ([normal(3, 4)], [], lambda L, a: (
        (a * 1).unsqueeze_(1), (a * 1).unsqueeze_(-1).squeeze_(), (a[:1] * 1).squeeze_(0), (a * 1).transpose_(0, 1),
        (a * 2).t_(), (a * 1).unsqueeze_(0).tanh_())),
    "smooth_l1_huber": ([normal(4, 3), away_from_one(4, 3)], [], lambda L, x, d: (
        L.nn.functional.smooth_l1_loss(x, x.detach() + d), L.nn.SmoothL1Loss(reduction="none")(x, x.detach() - d),
        L.nn.functional.smooth_l1_loss(x, x.detach() + d, beta=0.5, reduction="sum"),
        L.nn.SmoothL1Loss(beta=0.0)(x, x.detach() + d), L.nn.functional.huber_loss(x, x.detach() + d, delta=1.0),
        L.nn.HuberLoss(delta=0.5, reduction="sum")(x, x.detach() + d))),
    "cross_entropy_class_probabilities": ([normal(5, 4), probabilities(5, 4)], [], lambda L, z, p: (
        L.nn.functional.cross_entropy(z, p), L.nn.functional.cross_entropy(z, p, reduction="sum"),
        L.nn.functional.cross_entropy(z, p, label_smoothing=0.2, reduction="none"),
        L.nn.CrossEntropyLoss(label_smoothing=0.1)(z, p))),
    "cross_entropy_probabilities_per_position": ([normal(2, 4, 3), lambda rng: rng.dirichlet(numpy.ones(4), (2, 3)).transpose(0, 2, 1)],
                                                 [], lambda L, z, p: L.nn.functional.cross_entropy(z, p)),
    "type_legacy": ([normal(3)], [], lambda L, a: ((a.type(L.FloatTensor) * 2).type(a.dtype), a.type(a.dtype))),
    "normal_uniform_then_use": ([normal(3, 4)], [], lambda L, a: (a + L.zeros_like(a).normal_() * 0,
                                                                  a * L.ones_like(a).uniform_(1.0, 1.0))),
    "prod_sign_tril_remainder": ([with_zeros(3, 4), positive(3, 4)], [], lambda L, a, p: (
        L.prod(a, 1), a.prod(), a.prod(dim=0, keepdim=True), p.prod(axis=1), L.sign(a) * a, L.clone(a) * 2,
        L.detach(a) * 0 + a, (a * 1).tril_(), (a * 1).triu_(1), L.remainder(p, 0.7), (p * 3) % 0.7)),
    "parameter_list": ([normal(3, 2), normal(2, 2)], [], lambda L, w, v: _parameter_list_forward(L, w, v)),
    "round_floor_ceil_trunc": ([normal(3, 4)], [], lambda L, a: (      # steps: zero gradient, as torch
        L.round(a * 3) * a, (a * 3).floor() * a, L.ceil(a * 3) + a, L.trunc(a * 3), a.fix() * a,
        (a * 30).round(decimals=1), L.round(a * 300, decimals=-1) * a, L.round(L.sigmoid(a * 9)) * a)),
}


def _parameter_list_forward(L, w, v):
    weights = L.nn.ParameterList([L.nn.Parameter(w.detach()), L.nn.Parameter(v.detach())])
    assert [name for name, _ in weights.named_parameters()] == ["0", "1"] and len(weights) == 2
    return (w @ weights[1]) @ weights[-1] + w @ v


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_pytorch(device, name, dtype):
    check_parity(CASES[name], sorted(CASES).index(name), dtype, device, minigrad, torch, torch)


# outputs without a gradient (integers, indices): values and dtypes compared
VALUE_CASES = {
    "div_rounding_integers": lambda L, i, j: (L.div(i, j, rounding_mode="floor"), i.div(j, rounding_mode="trunc"),
                                              L.div(i, -j, rounding_mode="trunc"), L.div(-i, j, rounding_mode="floor")),
    "argmax_argmin_aliases": lambda L, i, j: (L.argmax(i, axis=0), i.argmin(axis=0, keepdims=True),
                                              L.sum(i, axis=0, keepdims=True)),
    "type_legacy_integers": lambda L, i, j: (i.type(L.FloatTensor), i.type("torch.FloatTensor"), i.type(L.LongTensor),
                                             (i > 0).type(L.FloatTensor)),
    "type_name": lambda L, i, j: [i.type(), i.float().type(), i.double().type(), (i > 0).type()],
    "nonzero": lambda L, i, j: (L.nonzero(i > 0), *L.nonzero(i > 0, as_tuple=True), L.nonzero(i.data == 3)),
    "isnan_isinf_allclose_equal": lambda L, i, j: (L.isnan(i / i), (i / i).isinf(), (i * 1.0 / 0).isinf(),
                                                   [L.allclose(i * 1.0, i + 1e-9), L.equal(i, i), L.equal(i, j)],
                                                   L.remainder(i, 4), i % -3, i // 4, L.floor_divide(i, -3),
                                                   L.as_tensor(i), L.as_tensor([1, 2]),
                                                   L.as_tensor(i, dtype=L.float64)),
    "index_of_a_tensor": lambda L, i, j: [[10, 20, 30, 40][j[0, 0]], list(range(L.tensor(3)))],
    "rounding_integers": lambda L, i, j: (L.round(i), i.floor(), L.ceil(i), i.trunc()),
    "rounding_halves_to_even": lambda L, i, j: (L.round(i / 2), (i / 2).round(), L.round(i / 20, decimals=1),
                                                (i * 5.0).round(decimals=-1), L.floor(-(i / 2)), (i / 2).ceil(),
                                                L.trunc(i / -4)),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_torch(name):
    rng = numpy.random.default_rng(7)
    i, j = rng.integers(-9, 9, (3, 5)), rng.integers(1, 4, (3, 5))
    ours = VALUE_CASES[name](minigrad, minigrad.tensor(i), minigrad.tensor(j))
    theirs = VALUE_CASES[name](torch, torch.tensor(i), torch.tensor(j))
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs):
        if isinstance(reference, list):
            assert mine == reference
        elif isinstance(reference, torch.Tensor):
            assert str(mine.dtype) == str(reference.dtype).replace("torch.", "")
            numpy.testing.assert_array_equal(mine.numpy(), reference.numpy())
        else:
            assert mine == reference


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rounding_is_torchs_bit_for_bit(dtype):
    """Halves to even, signed zeros, NaN, inf and 2000 random values: round with decimals -2..3 (x * 10^d,
    rint, / 10^d in torch's order; d < 0: / and *; float16 in float32, as torch), floor, ceil, trunc."""
    special = [-2.5, -1.5, -0.5, -0.4, -0.0, 0.0, 0.5, 1.5, 2.5, 2.6, 1.234567, -7.891, 123.456,
               numpy.nan, numpy.inf, -numpy.inf]
    values = numpy.concatenate([special, numpy.random.default_rng(22).standard_normal(2000) * 50]).astype(dtype)
    rounded = {}
    for L in (minigrad, torch):
        x = L.tensor(values)
        rounded[L] = [L.round(x, decimals=d) for d in (-2, -1, 0, 1, 2, 3)] + [x.floor(), L.ceil(x), x.trunc(),
                                                                               x.round(decimals=numpy.int64(1))]
    for ours, theirs in zip(rounded[minigrad], rounded[torch]):
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        numpy.testing.assert_array_equal(ours.numpy(), theirs.numpy())                      # NaN == NaN here
        numpy.testing.assert_array_equal(numpy.signbit(ours.numpy()), numpy.signbit(theirs.numpy()))


def test_rounding_refuses_what_torch_refuses():
    for L in (minigrad, torch):
        with pytest.raises((TypeError, RuntimeError)):
            L.round(L.tensor([True, False]))
        with pytest.raises((TypeError, NotImplementedError)):
            L.tensor([1, 2]).round(decimals=1)
    with pytest.raises(TypeError, match=r"round: decimals=1 is not defined for an integer tensor.*x\.float\(\)"):
        minigrad.tensor([1, 2]).round(decimals=1)
    with pytest.raises(TypeError, match=r"floor: not defined for a bool tensor.*x\.float\(\)"):
        minigrad.tensor([True]).floor()
    with pytest.raises(TypeError, match="decimals must be an int"):
        minigrad.tensor([1.5]).round(decimals=1.0)


def test_nonzero_of_a_numpy_array_raises_in_both():
    for L in (minigrad, torch):
        with pytest.raises(TypeError, match="Tensor"):
            L.nonzero(numpy.array([[True, False], [False, True]]))
    with pytest.raises(TypeError, match=r"minigrad\.nonzero\(minigrad\.tensor\(values\)\)"):
        minigrad.nonzero(numpy.array([True]))


def test_in_place_methods_refuse_as_torch_does():
    for L in (minigrad, torch):
        leaf = L.ones(3, requires_grad=True)
        for change in (lambda t: t.clamp_(0, 1), lambda t: t.unsqueeze_(0), lambda t: t.normal_(), lambda t: t.exp_()):
            with pytest.raises(RuntimeError, match="leaf"):
                change(leaf)
        with L.no_grad():                                 # nn.init's way: allowed, unrecorded
            leaf.uniform_(-0.1, 0.1).unsqueeze_(0)
        assert tuple(leaf.shape) == (1, 3) and float(leaf.abs().max()) <= 0.1
        with pytest.raises(RuntimeError):
            L.tensor([1, 2]).clamp_(0.5, 1.5)             # a float result into an integer tensor
        with pytest.raises(RuntimeError, match="output"):  # the node saved its output: a later change is caught
            a = L.ones(2, requires_grad=True)
            y = a.exp()
            y.mul_(2)
            y.sum().backward()


def test_random_fills_follow_manual_seed():
    minigrad.manual_seed(3)
    a = minigrad.empty(1000).normal_(2.0, 0.5)
    minigrad.manual_seed(3)
    b = minigrad.empty(1000).normal_(2.0, 0.5)
    assert numpy.array_equal(a.numpy(), b.numpy()) and abs(float(a.mean()) - 2.0) < 0.1
    assert abs(float(a.std()) - 0.5) < 0.05
    u = minigrad.empty(1000, dtype=minigrad.float64).uniform_(-1, 3)
    assert u.dtype == minigrad.float64 and -1 <= float(u.min()) and float(u.max()) < 3
    coins = minigrad.empty(2000).bernoulli_(0.3)
    assert set(coins.tolist()) <= {0.0, 1.0} and abs(float(coins.mean()) - 0.3) < 0.05
