"""Parity with PyTorch: every primitive and every loss gives the same outputs and
input gradients as PyTorch from the same inputs and the same upstream gradient,
within 1e-10 in float64 and 1e-5 in float32.

Each case is written once, as ``fn(L, *inputs)``: ``L`` is either minigrad or
torch seen through the same small adapter (``L.F``, ``L.cat``, ``L.stack``,
``L.where``), so both libraries run literally the same expression.
"""
import numpy
import pytest

import minigrad
from minigrad import functional as MF

torch = pytest.importorskip("torch")
from torch_parity import check_parity, distinct, ints, normal, positive  # noqa: E402


class Minigrad:
    F, cat, stack, where = MF, staticmethod(minigrad.cat), staticmethod(minigrad.stack), staticmethod(minigrad.where)


class Torch:
    F, cat, stack, where = torch.nn.functional, staticmethod(torch.cat), staticmethod(torch.stack), staticmethod(torch.where)


def away_from_zero(*shape):
    return lambda rng: rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def bools(*shape):
    return lambda rng: rng.random(shape) < 0.5


def targets_with_ignored(c, *shape):
    def make(rng):
        t = rng.integers(0, c, shape)
        t.flat[0] = -100
        return t
    return make


# name: (float inputs that get gradients, other inputs (ints, bools), fn(L, *floats, *others))
CASES = {
    "add": ([normal(3, 1, 4), normal(2, 4)], [], lambda L, a, b: a + b),
    "sub": ([normal(2, 1), normal(3)], [], lambda L, a, b: a - b),
    "mul": ([normal(3, 1, 4), normal(2, 4)], [], lambda L, a, b: a * b * 1.5),
    "div": ([normal(2, 3), away_from_zero(3)], [], lambda L, a, b: a / b + 2.0 / b),
    "neg": ([normal(2, 3)], [], lambda L, a: -a),
    "pow_number": ([positive(2, 3)], [], lambda L, a: a ** 2.5 + a ** -1.5),
    "pow_at_zero": ([lambda rng: numpy.array([0.0, 1.5, -2.0])], [], lambda L, a: a ** 0 + a ** 2 + a ** 1),
    "pow_tensor": ([positive(2, 3), normal(3)], [], lambda L, a, p: a ** p),
    "rpow": ([normal(4)], [], lambda L, p: 2.0 ** p),
    "matmul_batched_broadcast": ([normal(2, 1, 3, 4), normal(5, 4, 2)], [], lambda L, a, b: a @ b),
    "matmul_shared_weight": ([normal(2, 3, 4), normal(4, 5)], [], lambda L, a, b: a @ b),
    "matmul_vector_matrix": ([normal(4), normal(4, 3)], [], lambda L, a, b: a @ b),
    "matmul_matrix_vector": ([normal(2, 3, 4), normal(4)], [], lambda L, a, b: a @ b),
    "matmul_vector_vector": ([normal(4), normal(4)], [], lambda L, a, b: a @ b),
    "exp": ([normal(2, 3)], [], lambda L, a: a.exp()),
    "log": ([positive(2, 3)], [], lambda L, a: a.log()),
    "tanh": ([normal(2, 3)], [], lambda L, a: a.tanh()),
    "sigmoid": ([normal(2, 3)], [], lambda L, a: a.sigmoid()),
    "sigmoid_large": ([lambda rng: rng.standard_normal((2, 3)) * 50], [], lambda L, a: a.sigmoid()),
    "relu": ([away_from_zero(2, 3)], [], lambda L, a: a.relu()),
    "abs": ([away_from_zero(2, 3)], [], lambda L, a: a.abs()),
    "sum_all": ([normal(2, 3, 4)], [], lambda L, a: a.sum()),
    "sum_dims_keepdim": ([normal(2, 3, 4)], [], lambda L, a: a.sum((0, 2), keepdim=True)),
    "mean_dim": ([normal(2, 3, 4)], [], lambda L, a: a.mean(-1)),
    "amax_dim": ([distinct(2, 3, 4)], [], lambda L, a: a.amax(1, keepdim=True)),
    "amax_ties": ([lambda rng: numpy.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])], [], lambda L, a: a.amax(1)),
    "max_all": ([distinct(3, 4)], [], lambda L, a: a.max()),
    "max_dim_values": ([distinct(3, 4)], [], lambda L, a: a.max(0)[0]),
    "reshape": ([normal(2, 3, 4)], [], lambda L, a: a.reshape(4, -1) * a.reshape(4, 6)),
    "permute": ([normal(2, 3, 4)], [], lambda L, a: a.permute(2, 0, 1)),
    "transpose": ([normal(2, 3, 4)], [], lambda L, a: a.transpose(0, 2)),
    "unsqueeze_squeeze_expand": ([normal(3, 1)], [], lambda L, a: a.unsqueeze(0).expand(2, 3, 4).squeeze(0)),
    "getitem_slices": ([normal(4, 5)], [], lambda L, a: a[1:, 1:4] * a[:-1, ::2]),
    "getitem_repeated_ids": ([normal(4, 3)], [ints(0, 4, 7)], lambda L, a, ids: a[ids]),
    "getitem_ids_second_dim": ([normal(4, 3)], [ints(0, 3, 5)], lambda L, a, ids: a[:, ids]),
    "getitem_bool_mask": ([normal(4, 3)], [bools(4, 3)], lambda L, a, m: a[m]),
    "cat": ([normal(2, 3), normal(2, 1), normal(2, 2)], [], lambda L, a, b, c: L.cat([a, b, c], dim=1)),
    "stack": ([normal(2, 3), normal(2, 3)], [], lambda L, a, b: L.stack([a, b], dim=1)),
    "split_sizes": ([normal(5, 2)], [], lambda L, a: a.split(2, 0)),
    "split_sections": ([normal(2, 6)], [], lambda L, a: a.split([1, 3, 2], 1)),
    "where": ([normal(2, 3), normal(3)], [bools(2, 3)], lambda L, a, b, c: L.where(c, a, b)),
    "masked_fill": ([normal(2, 3)], [bools(3)], lambda L, a, m: a.masked_fill(m, -1e9)),
    "softmax": ([normal(2, 3, 4)], [], lambda L, a: a.softmax(1)),
    "log_softmax": ([normal(2, 3, 4)], [], lambda L, a: a.log_softmax(-1)),
    "softmax_large_logits": ([lambda rng: rng.standard_normal((2, 5)) * 1e4], [], lambda L, a: a.log_softmax(-1)),
    "embedding": ([normal(5, 3)], [ints(0, 5, 2, 4)], lambda L, w, ids: L.F.embedding(ids, w)),
    "embedding_padding_idx": ([normal(5, 3)], [ints(0, 5, 2, 6)],
                              lambda L, w, ids: L.F.embedding(ids, w, padding_idx=1)),
    "layer_norm": ([normal(2, 3, 4), normal(4), normal(4)], [],
                   lambda L, x, w, b: L.F.layer_norm(x, (4,), w, b)),
    "layer_norm_2d_no_affine": ([normal(2, 3, 4)], [], lambda L, x: L.F.layer_norm(x, (3, 4))),
    "cross_entropy": ([normal(6, 4)], [ints(0, 4, 6)], lambda L, z, t: L.F.cross_entropy(z, t)),
    "cross_entropy_sum_smoothing": ([normal(6, 4)], [ints(0, 4, 6)],
                                    lambda L, z, t: L.F.cross_entropy(z, t, reduction="sum", label_smoothing=0.1)),
    "cross_entropy_ignore_index": ([normal(6, 4)], [targets_with_ignored(4, 6)],
                                   lambda L, z, t: L.F.cross_entropy(z, t, ignore_index=-100, label_smoothing=0.2)),
    "cross_entropy_none_NCd": ([normal(2, 4, 3)], [targets_with_ignored(4, 2, 3)],
                               lambda L, z, t: L.F.cross_entropy(z, t, reduction="none")),
    "cross_entropy_mean_NCd": ([normal(2, 4, 3)], [ints(0, 4, 2, 3)], lambda L, z, t: L.F.cross_entropy(z, t)),
    "cross_entropy_large_logits": ([lambda rng: rng.standard_normal((3, 4)) * 1e4], [ints(0, 4, 3)],
                                   lambda L, z, t: L.F.cross_entropy(z, t)),
    "nll_loss": ([normal(6, 4)], [ints(0, 4, 6)], lambda L, a, t: L.F.nll_loss(a.log_softmax(1), t)),
    "nll_loss_sum_ignore": ([normal(6, 4)], [targets_with_ignored(4, 6)],
                            lambda L, a, t: L.F.nll_loss(a, t, reduction="sum")),
    "nll_loss_none_NCd": ([normal(2, 4, 3)], [ints(0, 4, 2, 3)],
                          lambda L, a, t: L.F.nll_loss(a, t, reduction="none")),
    "mse_loss": ([normal(3, 4), normal(3, 4)], [], lambda L, a, b: L.F.mse_loss(a, b)),
    "mse_loss_sum": ([normal(3, 4), normal(3, 4)], [], lambda L, a, b: L.F.mse_loss(a, b, reduction="sum")),
    "mse_loss_none": ([normal(3, 4), normal(3, 4)], [], lambda L, a, b: L.F.mse_loss(a, b, reduction="none")),
    "bce_with_logits": ([normal(3, 4), positive(3, 4)], [],
                        lambda L, x, y: L.F.binary_cross_entropy_with_logits(x, y / 2)),
    "bce_with_logits_sum": ([normal(3, 4), positive(3, 4)], [],
                            lambda L, x, y: L.F.binary_cross_entropy_with_logits(x, y / 2, reduction="sum")),
    "bce_with_logits_none_large": ([lambda rng: rng.standard_normal((3, 4)) * 1e4, positive(3, 4)], [],
                                   lambda L, x, y: L.F.binary_cross_entropy_with_logits(x, y / 2, reduction="none")),
    "linear": ([normal(2, 3, 4), normal(5, 4), normal(5)], [], lambda L, x, w, b: L.F.linear(x, w, b)),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_pytorch(device, name, dtype):
    check_parity(CASES[name], sorted(CASES).index(name), dtype, device, Minigrad, Torch, torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("repeats", [1, 5, 40])
def test_relu_at_infinities_nan_and_signed_zeros_is_pytorchs(dtype, repeats):
    """relu(-inf) = 0 (x * (x > 0) gave NaN), NaN stays NaN, and the sign of relu(-0.0) is torch's on the
    same device (-0.0 on the CPU; on a GPU both take the device's max); the gradient is 0 at x <= 0
    and 1 at NaN, as torch's.  Repeated so NumPy's vector loops and their tails both run."""
    on_cuda = minigrad.backend.default_device() == "cuda"
    values = numpy.array([-numpy.inf, -1.0, -0.0, 0.0, 2.0, numpy.nan, numpy.inf] * repeats, dtype=dtype)
    x = minigrad.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True, device="cuda" if on_cuda and torch.cuda.is_available() else "cpu")
    y, ty = MF.relu(x), torch.relu(tx)
    y.sum().backward()
    ty.sum().backward()
    ours, theirs = y.detach().numpy(), ty.detach().cpu().numpy()
    numpy.testing.assert_array_equal(ours, theirs)                                   # NaN == NaN here
    if str(tx.device).startswith("cuda") == on_cuda:                                 # the sign of 0: same device only
        numpy.testing.assert_array_equal(numpy.signbit(ours), numpy.signbit(theirs))
    numpy.testing.assert_array_equal(x.grad.numpy(), tx.grad.cpu().numpy())
