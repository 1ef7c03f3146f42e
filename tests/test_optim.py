"""Optimizers, clip_grad_norm_ and schedulers: the same numbers as torch.optim.

Parameters and gradients are drawn once in NumPy, copied into minigrad (on
each device) and into PyTorch, then both take a few steps with fresh
gradients each step.  Tolerance: 1e-10 in float64, 1e-5 in float32.
"""
import numpy as np
import pytest

import minigrad
from minigrad import nn, optim
from minigrad.autograd import GraphError

from optional_torch import needs_torch, torch  # noqa: E402  (the comparisons skip without PyTorch)

TOL = {"float64": 1e-10, "float32": 1e-5}
SHAPES = [(3, 4), (4,), (2, 3, 2)]

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.3)),
]


def _draw(rng, dtype):
    return [rng.standard_normal(shape).astype(dtype) for shape in SHAPES]


def _pair(values, device):
    ours = [nn.Parameter(minigrad.tensor(v, device=device)) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    return ours, theirs


def _set_grads(ours, theirs, grads, device):
    for p, tp, g in zip(ours, theirs, grads):
        p.grad = minigrad.tensor(g, device=device)
        tp.grad = torch.tensor(g)


def _assert_close(ours, theirs, tol):
    for p, tp in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=tol, atol=tol)


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=[f"{n}-{sorted(k)}" for n, k in CONFIGS])
def test_steps_match_torch(name, kwargs, dtype, device):
    rng = np.random.default_rng(1)
    ours, theirs = _pair(_draw(rng, dtype), device)
    opt = getattr(optim, name)(ours, **kwargs)
    topt = getattr(torch.optim, name)(theirs, **kwargs)
    for step in range(3):
        _set_grads(ours, theirs, _draw(rng, dtype), device)
        opt.step()
        topt.step()
        _assert_close(ours, theirs, TOL[dtype])
    assert all(p.device == device and p.dtype == np.dtype(dtype) for p in ours)


@needs_torch
def test_param_groups_and_none_grads_match_torch(device):
    rng = np.random.default_rng(2)
    ours, theirs = _pair(_draw(rng, "float64"), device)
    opt = optim.Adam([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.1, "weight_decay": 0.5}], lr=0.01)
    topt = torch.optim.Adam([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.1, "weight_decay": 0.5}],
                            lr=0.01)
    for step in range(3):
        _set_grads(ours, theirs, _draw(rng, "float64"), device)
        ours[1].grad, theirs[1].grad = None, None         # skipped: no grad, no state, no change
        opt.step()
        topt.step()
    _assert_close(ours, theirs, 1e-10)
    assert ours[1] not in opt.state
    assert opt.param_groups[0]["lr"] == 0.01 and opt.param_groups[1]["lr"] == 0.1


def test_step_bumps_version_so_a_stale_graph_raises():
    w = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    optim.SGD([w], lr=0.1).step()
    with pytest.raises(GraphError, match="modified in place"):
        loss.backward()


def test_step_updates_data_in_place_and_not_the_gradient():
    w = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    data, grad = w._data, minigrad.tensor([1.0, 1.0])
    w.grad = grad
    optim.SGD([w], lr=0.5, momentum=0.9, weight_decay=0.1).step()
    assert w._data is data                                   # same array, new values
    np.testing.assert_allclose(w.numpy(), [1 - 0.5 * 1.1, 2 - 0.5 * 1.2], rtol=1e-6)
    assert w.grad is grad and grad.tolist() == [1.0, 1.0]    # the gradient is untouched


def test_zero_grad():
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(minigrad.randn(4, 3)).sum().backward()
    old = model.weight.grad
    opt.zero_grad(set_to_none=False)
    assert model.weight.grad is old and (old == 0).all()        # zeroed in place, as PyTorch's
    opt.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None


def test_bad_arguments_raise_clear_errors():
    w = nn.Parameter(minigrad.zeros(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="nesterov"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="betas"):
        optim.Adam([w], betas=(1.0, 0.9))


# ---------------------------------------------------------------------- clipping

@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype, device):
    rng = np.random.default_rng(3)
    tol = TOL[dtype]
    ours, theirs = _pair(_draw(rng, dtype), device)
    _set_grads(ours, theirs, _draw(rng, dtype), device)
    before = [p.grad for p in ours]
    before_torch = [tp.grad for tp in theirs]
    total = optim.clip_grad_norm_(iter(ours), max_norm, norm_type)        # a generator is fine
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert isinstance(total, minigrad.Tensor) and total.shape == () and total.dtype == np.dtype(dtype)
    assert total.item() == pytest.approx(expected.item(), rel=tol)
    for p, tp, old, their_old in zip(ours, theirs, before, before_torch):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol)
        assert p.grad.dtype == np.dtype(dtype)
        assert p.grad is old and tp.grad is their_old          # scaled in place, as PyTorch's
    if max_norm < expected.item():
        clipped = sum(float((abs(p.grad) ** norm_type).sum()) for p in ours) ** (1 / norm_type) \
            if norm_type != float("inf") else max(float(abs(p.grad).max()) for p in ours)
        assert clipped == pytest.approx(max_norm, rel=1e-4)


def test_clip_grad_norm_float32_and_missing_grads():
    a, b = nn.Parameter(minigrad.ones(3)), nn.Parameter(minigrad.ones(2))
    a.grad = minigrad.tensor([3.0, 4.0, 0.0])
    total = optim.clip_grad_norm_([a, b], 1.0)
    assert total.dtype == np.float32 and total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad.numpy(), [0.6, 0.8, 0.0], rtol=1e-5)
    assert b.grad is None
    assert optim.clip_grad_norm_([b], 1.0).item() == 0.0


# ---------------------------------------------------------------------- schedulers

def _lrs(scheduler, optimizer, steps):
    lrs = []
    for _ in range(steps):
        lrs.append(scheduler.get_last_lr())
        optimizer.step()
        scheduler.step()
    return lrs


def _torch_opt(lr):
    return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)


def _our_opt(lr):
    return optim.SGD([nn.Parameter(minigrad.zeros(1))], lr=lr)


@needs_torch
def test_step_lr_matches_torch():
    ours, theirs = _our_opt(0.5), _torch_opt(0.5)
    got = _lrs(optim.StepLR(ours, step_size=3, gamma=0.3), ours, 12)
    want = _lrs(torch.optim.lr_scheduler.StepLR(theirs, step_size=3, gamma=0.3), theirs, 12)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _noam(d_model, warmup):
    def rate(step):   # The Annotated Transformer's schedule, with torch's LambdaLR
        step = max(step, 1)
        return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)
    return rate


@needs_torch
def test_noam_matches_torch_lambda_lr_and_peaks_at_warmup():
    ours, theirs = _our_opt(2.0), _torch_opt(2.0)
    got = _lrs(optim.NoamLR(ours, d_model=64, warmup_steps=10), ours, 40)
    want = _lrs(torch.optim.lr_scheduler.LambdaLR(theirs, _noam(64, 10)), theirs, 40)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    flat = [lr for (lr,) in got]
    assert flat.index(max(flat)) == 10
    assert flat[1] == pytest.approx(2.0 * 64 ** -0.5 * 10 ** -1.5)


@needs_torch
def test_warmup_inverse_sqrt_peaks_at_base_lr():
    ours, theirs = _our_opt(1e-3), _torch_opt(1e-3)
    got = _lrs(optim.WarmupInverseSqrtLR(ours, warmup_steps=4), ours, 20)
    want = _lrs(torch.optim.lr_scheduler.LambdaLR(
        theirs, lambda s: min(max(s, 1) / 4, (4 / max(s, 1)) ** 0.5)), theirs, 20)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert max(lr for (lr,) in got) == pytest.approx(1e-3)


def test_scheduler_state_dict_resumes(tmp_path):
    opt = _our_opt(1.0)
    scheduler = optim.NoamLR(opt, d_model=16, warmup_steps=5)
    _lrs(scheduler, opt, 7)
    minigrad.save({"scheduler": scheduler.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "s.npz")
    rest = _lrs(scheduler, opt, 5)
    opt2 = _our_opt(1.0)
    checkpoint = minigrad.load(tmp_path / "s.npz")
    opt2.load_state_dict(checkpoint["optimizer"])
    scheduler2 = optim.NoamLR(opt2, d_model=16, warmup_steps=5, last_epoch=6)
    scheduler2.load_state_dict(checkpoint["scheduler"])
    assert _lrs(scheduler2, opt2, 5) == rest


# ---------------------------------------------------------------------- checkpoints

@pytest.mark.parametrize("name, kwargs", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                          ("Adam", dict(lr=0.01, weight_decay=0.1)),
                                          ("AdamW", dict(lr=0.01))])
def test_state_dict_round_trip_continues_identically(name, kwargs, device, tmp_path):
    def make():
        minigrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double().to(device)
        return model, getattr(optim, name)(model.parameters(), **kwargs)

    x = minigrad.randn(6, 4, dtype="float64", device=device)
    target = minigrad.tensor([0, 1, 2, 0, 1, 2], device=device)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            minigrad.functional.cross_entropy(model(x), target).backward()
            opt.step()

    model, opt = make()
    train(model, opt, 3)
    minigrad.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 3}, tmp_path / "c.npz")
    train(model, opt, 3)

    model2, opt2 = make()
    checkpoint = minigrad.load(tmp_path / "c.npz", device=device)
    model2.load_state_dict(checkpoint["model"])
    opt2.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["step"] == 3
    assert opt2.param_groups[0].keys() == opt.param_groups[0].keys()
    assert all(type(opt2.param_groups[0][k]) is type(v) for k, v in opt.param_groups[0].items())
    train(model2, opt2, 3)
    for (n, p), (_, p2) in zip(model.named_parameters(), model2.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), p2.numpy(), err_msg=n)
        assert p2.device == device


def test_load_state_dict_copies_and_checks_groups():
    a = nn.Parameter(minigrad.ones(2))
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    a.grad = minigrad.tensor([1.0, 1.0])
    opt.step()
    saved = opt.state_dict()
    other = optim.SGD([nn.Parameter(minigrad.ones(2))], lr=0.5, momentum=0.9)
    other.load_state_dict(saved)
    assert other.param_groups[0]["lr"] == 0.1
    assert other.state[other.param_groups[0]["params"][0]]["momentum_buffer"] is not saved["state"][0]["momentum_buffer"]
    with pytest.raises(ValueError, match="parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [nn.Parameter(minigrad.ones(1))]}], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="group 0 has 1 parameters"):
        optim.SGD([a, nn.Parameter(minigrad.ones(1))], lr=0.1).load_state_dict(saved)
