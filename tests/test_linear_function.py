"""The fused Linear Function (y = x W^T + b, minigrad/functions/linalg.py): its hand-written
backward against finite differences and against PyTorch, on 1-D, 2-D and 3-D inputs."""
import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
from minigrad import functional as F
from minigrad.functions.linalg import Linear
from strategies import randn, seeds


@st.composite
def linear_shapes(draw):
    """(x shape, out_features): x is (in,), (N, in) or (B, N, in), any side possibly 0."""
    in_features, out_features = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    leading = draw(st.lists(st.integers(0, 3), min_size=0, max_size=2))
    return tuple(leading) + (in_features,), out_features


@given(shapes=linear_shapes(), bias=st.booleans(), seed=seeds)
def test_linear_gradcheck(device, shapes, bias, seed):
    x_shape, out_features = shapes
    x = randn(x_shape, device, seed)
    w = randn((out_features, x_shape[-1]), device, seed + 1)
    if bias:
        b = randn((out_features,), device, seed + 2)
        assert minigrad.gradcheck(lambda x, w, b: F.linear(x, w, b), (x, w, b))
    else:
        assert minigrad.gradcheck(lambda x, w: F.linear(x, w), (x, w))


def test_linear_weight_gradient_has_the_weight_layout(device):
    """dL/dW comes out (out, in) and C-contiguous: no transposed view for .grad to copy."""
    x = randn((4, 2, 3), device, 0)
    w = randn((5, 3), device, 1)
    F.linear(x, w).sum().backward()
    assert w.grad.shape == (5, 3) and w.grad._data.flags.c_contiguous


@pytest.mark.parametrize("rows", [63, 64, 65])
def test_linear_output_is_c_contiguous_on_both_sides_of_the_row_rule(device, rows):
    """With fewer rows than inputs the forward computes (W X^T)^T, then lays it out like X W^T."""
    x = randn((rows, 64), device, 0, requires_grad=False)
    w = randn((16, 64), device, 1, requires_grad=False)
    y = F.linear(x, w)
    assert y.shape == (rows, 16) and y._data.flags.c_contiguous        # the array itself, not a host copy
    numpy.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy().T, rtol=1e-12, atol=1e-12)


def test_linear_only_computes_the_gradients_needed(device):
    x = randn((2, 3), device, 0, requires_grad=False)
    w = randn((4, 3), device, 1)
    b = randn((4,), device, 2, requires_grad=False)
    F.linear(x, w, b).sum().backward()
    assert x.grad is None and b.grad is None and w.grad is not None


class _TransposedWeightGradient(Linear):
    """A deliberately broken backward: dW = X^T dY (the transpose), right only by accident."""

    @staticmethod
    def backward(ctx, dout):
        x, weight = ctx.saved_tensors
        dx, _, dbias = Linear.backward(ctx, dout)
        return dx, (x.reshape(-1, x.shape[-1]).T @ dout.reshape(-1, dout.shape[-1])), dbias


def test_gradcheck_rejects_a_transposed_weight_gradient(device):
    x = randn((4, 3), device, 0)
    w = randn((3, 3), device, 1)          # square, so the wrong gradient has the right shape
    assert not minigrad.gradcheck(lambda x, w: _TransposedWeightGradient.apply(x, w, None), (x, w),
                                  raise_exception=False)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("x_shape", [(3,), (6, 3), (2, 4, 3), (0, 3), (2, 3), (3, 3), (1, 2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_parity_with_pytorch(device, dtype, x_shape, bias):
    """Rows M on both sides of the forward's M < in rule: 0, 1 and 2 rows take Y = (W X^T)^T, 3 and more X W^T."""
    torch = pytest.importorskip("torch")
    rng = numpy.random.default_rng(len(x_shape))
    arrays = [rng.standard_normal(x_shape), rng.standard_normal((5, 3)), rng.standard_normal(5)]
    if not bias:
        arrays = arrays[:2]
    ours = [minigrad.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    y, expected = F.linear(*ours), torch.nn.functional.linear(*theirs)
    tol = 1e-10 if dtype == "float64" else 1e-5
    assert y.shape == tuple(expected.shape) and y.dtype == ours[0].dtype
    numpy.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    upstream = rng.standard_normal(tuple(expected.shape))
    y.backward(minigrad.tensor(upstream, dtype=dtype, device=device))
    expected.backward(torch.tensor(upstream, dtype=getattr(torch, dtype)))
    for position, (mine, reference) in enumerate(zip(ours, theirs)):
        numpy.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(),
                                      rtol=tol, atol=tol, err_msg=f"gradient of input {position}")


def test_float32_training_step_keeps_float32_gradients(device):
    """Linear -> LayerNorm -> cross_entropy in float32: every gradient stays float32
    (a float64 gradient doubles the memory and runs the weight matmul in float64)."""
    minigrad.manual_seed(0)
    model = minigrad.nn.Sequential(minigrad.nn.Linear(6, 5), minigrad.nn.LayerNorm(5), minigrad.nn.ReLU(),
                                   minigrad.nn.Linear(5, 3)).to(device)
    x = minigrad.randn(4, 6, device=device)
    target = minigrad.tensor([0, 2, 1, 2], device=device)
    for reduction in ("mean", "sum", "none"):
        model.zero_grad()
        loss = F.cross_entropy(model(x), target, reduction=reduction)
        (loss if reduction != "none" else loss.sum()).backward()
        for name, p in model.named_parameters():
            assert p.grad.dtype == minigrad.float32, f"{name}.grad is {p.grad.dtype} ({reduction})"
