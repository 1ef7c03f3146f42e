"""The backward of every differentiable name added for classic teaching programs (issue 18), against
finite differences in float64, on every device of the ``device`` fixture.  Inputs keep away from
kinks (clamp bounds, |d| = beta, ties), as finite differences need."""
import numpy
import pytest

import minigrad
from minigrad import functional as F, nn


def tensor(values, device):
    return minigrad.tensor(values, dtype=minigrad.float64, device=device, requires_grad=True)


def check(fn, *inputs):
    assert minigrad.gradcheck(fn, inputs)


RNG = numpy.random.default_rng(18)
VALUES = RNG.standard_normal((3, 4))
POSITIVE = RNG.uniform(0.3, 2.0, (3, 4))
AWAY = numpy.sign(VALUES) * numpy.where(numpy.abs(VALUES) < 0.5, 0.25, numpy.abs(VALUES) + 0.75)   # |x| not near 0.5, 1


@pytest.mark.parametrize("name, fn", [
    ("cumprod", lambda a: a.cumprod(1) + minigrad.cumprod(a, 0)),
    ("logsumexp", lambda a: a.logsumexp(1) + minigrad.logsumexp(a * 30, dim=0, keepdim=True).sum()),
    ("roll", lambda a: a.roll((1, -2), (0, 1)) * a + minigrad.roll(a, 3)),
    ("mT", lambda a: a.mT @ a),
    ("outer_dot_mv", lambda a: a[0].outer(a[1]) * a[2].dot(a[1]) + minigrad.mv(a, a[0, :4]).sum()),
    ("axis_aliases", lambda a: a.sum(axis=0) + a.mean(axis=0, keepdims=True) + a.std(axis=0) + a.logsumexp(axis=0)),
    ("clamp_", lambda a: (a * 1).clamp_(-0.5, 0.5) + (a * 1).clip_(max=0.5)),
    ("value_methods_", lambda a: (a * 1).tanh_().exp_().mul_(a).sin_().cos_().sigmoid_().neg_().square_()),
    ("abs_relu_pow_", lambda a: (a * 1).abs_() + (a * 1).relu_() + (a * 1).pow_(3)),
    ("addcmul_addcdiv_", lambda a: (a * 1).addcmul_(a, a.tanh(), value=0.3).addcdiv_(a, a.exp(), value=-2)),
    ("legacy_add_", lambda a: (a * 1).add_(-0.1, a.tanh()).sub_(2.0, a)),
    ("shape_methods_", lambda a: (a * 2).unsqueeze_(1).squeeze_(1).transpose_(0, 1).t_().unsqueeze_(0).tanh_()),
    ("prod", lambda a: a.prod(1) + minigrad.prod(a[:2, :2]) * a.prod(axis=0, keepdims=True).sum()),
    ("remainder_sign", lambda a: ((a.abs() * 0.1 + 0.05) % 0.7) * minigrad.remainder(a * 0.1 + 0.5, 1.3) + a.sign() * a),
    ("tril_triu_", lambda a: (a * 1).tril_(-1) + (a * 2).triu_(1)),
    ("round_floor_ceil_trunc", lambda a: (a.round() + minigrad.floor(a) * a.ceil()) * a + minigrad.trunc(a * 3)
     + a.round(decimals=1) * minigrad.round(a * 10, decimals=-1)),
    ("smooth_l1_loss", lambda a: F.smooth_l1_loss(a, a.detach() * 0) + nn.SmoothL1Loss(beta=0.25)(a, a.detach() * 0)),
    ("huber_loss", lambda a: F.huber_loss(a, a.detach() * 0, reduction="sum", delta=0.5)),
])
def test_backward_matches_finite_differences(device, name, fn):
    values = {"cumprod": VALUES, "value_methods_": VALUES * 0.5}.get(name, AWAY)
    check(fn, tensor(values, device))


def test_cumprod_and_prod_with_zeros(device):
    values = VALUES.copy()
    values[0, 1] = values[2, 0] = values[2, 2] = 0.0          # one zero, and two in one row
    check(lambda a: a.cumprod(1), tensor(values, device))
    check(lambda a: a.prod(1) + a.prod(0).sum(), tensor(values, device))


def test_logs_and_roots_in_place(device):
    check(lambda p: (p * 1).log_() + (p * 1).sqrt_() + (p * 1).rsqrt_(), tensor(POSITIVE, device))


def test_cross_entropy_with_class_probabilities(device):
    probabilities = minigrad.tensor(RNG.dirichlet(numpy.ones(4), 3), dtype=minigrad.float64, device=device,
                                    requires_grad=True)
    check(lambda z, p: F.cross_entropy(z, p, label_smoothing=0.1), tensor(VALUES, device), probabilities)
    check(lambda z, p: F.cross_entropy(z, p, reduction="none"), tensor(VALUES, device), probabilities)


def test_div_with_rounding_is_flat():
    a = minigrad.tensor(VALUES + 0.05, dtype=minigrad.float64, requires_grad=True)
    a.div(0.3, rounding_mode="floor").sum().backward()
    assert numpy.array_equal(a.grad.numpy(), numpy.zeros((3, 4)))   # a step function: zero gradient, as torch
    with pytest.raises(ValueError, match='rounding_mode must be None, "trunc" or "floor"'):
        a.div(2, rounding_mode="round")
