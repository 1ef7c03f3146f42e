"""Losses against torch.nn.functional: values and input gradients for every reduction,
ignore_index, label smoothing, (N, C) and (N, C, d1, ...) inputs, and huge logits."""
import numpy as np
import pytest

import minigrad
from minigrad import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float64": 1e-10, "float32": 1e-5}
REDUCTIONS = ["mean", "sum", "none"]


def _pair(array, device, requires_grad=True):
    return (minigrad.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _check(ours, theirs, inputs, dtype, device):
    """Compare the losses, then d(<v, loss>)/d(input) for each (ours, theirs) input pair."""
    tol = TOL[dtype]
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    v = np.random.default_rng(5).standard_normal(theirs.shape).astype(dtype) + 2.0
    ours.backward(minigrad.tensor(v, device=device))
    theirs.backward(torch.tensor(v))
    for x, tx in inputs:
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


def _logits_and_targets(shape, dtype, ignore=None, scale=1.0):
    rng = np.random.default_rng(0)
    z = (scale * rng.standard_normal(shape)).astype(dtype)
    t = rng.integers(0, shape[1], (shape[0],) + tuple(shape[2:]))
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return z, t


SHAPES = [(6, 5), (3, 4, 5), (2, 3, 2, 2)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[2]], ids=["NC", "NCdd"])
@pytest.mark.parametrize("smoothing, ignore", [(0.0, None), (0.0, 1), (0.25, None), (0.1, -100)],
                         ids=["plain", "ignore", "smooth", "smooth-ignore"])
def test_cross_entropy(shape, reduction, dtype, smoothing, ignore, device):
    z, t = _logits_and_targets(shape, dtype, ignore=None if ignore is None else ignore)
    (x, tx), (target, ttarget) = _pair(z, device), _pair(t, device, requires_grad=False)
    kwargs = dict(reduction=reduction, label_smoothing=smoothing)
    if ignore is not None:
        kwargs["ignore_index"] = ignore
    _check(F.cross_entropy(x, target, **kwargs), TF.cross_entropy(tx, ttarget, **kwargs), [(x, tx)], dtype, device)


@pytest.mark.filterwarnings("ignore:invalid value")
def test_cross_entropy_all_targets_ignored_gives_nan_mean_like_torch():
    z, t = _logits_and_targets((3, 4), "float64")
    t[:] = -100
    ours = F.cross_entropy(minigrad.tensor(z), minigrad.tensor(t)).item()
    assert np.isnan(ours) and np.isnan(TF.cross_entropy(torch.tensor(z), torch.tensor(t)).item())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES[:2], ids=["NC", "NCd"])
def test_nll_loss(shape, reduction, dtype, device):
    z, t = _logits_and_targets(shape, dtype, ignore=2)
    (x, tx), (target, ttarget) = _pair(z, device), _pair(t, device, requires_grad=False)
    ours = F.nll_loss(F.log_softmax(x, dim=1), target, ignore_index=2, reduction=reduction)
    theirs = TF.nll_loss(TF.log_softmax(tx, dim=1), ttarget, ignore_index=2, reduction=reduction)
    _check(ours, theirs, [(x, tx)], dtype, device)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss(reduction, dtype, device):
    rng = np.random.default_rng(1)
    (x, tx), (y, ty) = (_pair(rng.standard_normal((4, 3)).astype(dtype), device) for _ in range(2))
    _check(F.mse_loss(x, y, reduction=reduction), TF.mse_loss(tx, ty, reduction=reduction),
           [(x, tx), (y, ty)], dtype, device)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction, dtype, device):
    rng = np.random.default_rng(2)
    logits = (3 * rng.standard_normal((5, 3))).astype(dtype)
    labels = rng.uniform(size=(5, 3)).astype(dtype)        # soft labels: the target gets a gradient too
    (x, tx), (y, ty) = _pair(logits, device), _pair(labels, device)
    _check(F.binary_cross_entropy_with_logits(x, y, reduction=reduction),
           TF.binary_cross_entropy_with_logits(tx, ty, reduction=reduction), [(x, tx), (y, ty)], dtype, device)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_huge_logits_give_finite_losses_and_gradients(dtype, device):
    z = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 1e4], [5e3, 1e4, -1e4]], dtype=dtype)
    t = np.array([1, 0, 2])
    (x, tx), (target, ttarget) = _pair(z, device), _pair(t, device, requires_grad=False)
    loss = F.cross_entropy(x, target, label_smoothing=0.1)
    loss.backward()
    assert np.isfinite(loss.item()) and np.all(np.isfinite(x.grad.numpy()))
    expected = TF.cross_entropy(tx, ttarget, label_smoothing=0.1)
    expected.backward()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-6)

    labels = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.5], [1.0, 1.0, 0.0]], dtype=dtype)
    (x, tx), (y, ty) = _pair(z, device), _pair(labels, device, requires_grad=False)
    loss = F.binary_cross_entropy_with_logits(x, y)
    loss.backward()
    expected = TF.binary_cross_entropy_with_logits(tx, ty)
    expected.backward()
    assert np.isfinite(loss.item()) and np.all(np.isfinite(x.grad.numpy()))
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-6)


def test_losses_reject_bad_targets():
    z = minigrad.randn(4, 3)
    with pytest.raises(TypeError, match="integer class indices"):
        F.cross_entropy(z, minigrad.tensor([0.0, 1.0, 2.0, 0.0]))
    with pytest.raises(ValueError, match=r"needs targets of shape \(4,\)"):
        F.cross_entropy(z, minigrad.tensor([0, 1]))
    with pytest.raises(IndexError, match="not a class index"):
        F.cross_entropy(z, minigrad.tensor([0, 1, 3, 0]))
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(z, z, reduction="avg")
    with pytest.raises(ValueError, match="same shape"):
        F.binary_cross_entropy_with_logits(z, minigrad.rand(3, 4))
