"""Every learning-rate schedule against torch.optim.lr_scheduler: the same get_last_lr() sequence
(and, for the cyclic ones, the same momentum or beta1), step by step, two parameter groups.

Each case is a function of the library L (minigrad or torch) and its optimizer, so one line
builds both; ``metric`` feeds ReduceLROnPlateau a loss curve that plateaus.
"""
import math

import numpy
import pytest

import minigrad
from optional_torch import needs_torch, torch

STEPS = 40


def sgd(L, momentum=0.9):
    groups = [{"params": [L.zeros(2, requires_grad=True)]}, {"params": [L.zeros(1, requires_grad=True)], "lr": 0.3}]
    return L.optim.SGD(groups, lr=0.1, momentum=momentum)


def adam(L):
    groups = [{"params": [L.zeros(2, requires_grad=True)]}, {"params": [L.zeros(1, requires_grad=True)], "lr": 0.3}]
    return L.optim.Adam(groups, lr=0.1)


def S(L):
    return L.optim.lr_scheduler


CASES = {
    "StepLR": (sgd, lambda L, o: S(L).StepLR(o, step_size=3, gamma=0.5)),
    "MultiStepLR": (sgd, lambda L, o: S(L).MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    "MultiStepLR at 0": (sgd, lambda L, o: S(L).MultiStepLR(o, milestones=[0, 4], gamma=0.5)),
    "ExponentialLR": (sgd, lambda L, o: S(L).ExponentialLR(o, gamma=0.9)),
    "MultiplicativeLR": (sgd, lambda L, o: S(L).MultiplicativeLR(o, lambda e: 0.95 if e % 2 else 1.01)),
    "LambdaLR": (sgd, lambda L, o: S(L).LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])),
    "ConstantLR": (sgd, lambda L, o: S(L).ConstantLR(o, factor=0.25, total_iters=4)),
    "LinearLR": (sgd, lambda L, o: S(L).LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=7)),
    "PolynomialLR": (sgd, lambda L, o: S(L).PolynomialLR(o, total_iters=12, power=2.0)),
    "CosineAnnealingLR": (sgd, lambda L, o: S(L).CosineAnnealingLR(o, T_max=9, eta_min=0.01)),
    "CosineAnnealingWarmRestarts": (sgd, lambda L, o: S(L).CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                                         eta_min=0.001)),
    "CyclicLR triangular": (sgd, lambda L, o: S(L).CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4,
                                                             step_size_down=6)),
    "CyclicLR triangular2 Adam": (adam, lambda L, o: S(L).CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                                    mode="triangular2")),
    "CyclicLR exp_range": (sgd, lambda L, o: S(L).CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range",
                                                            gamma=0.97, cycle_momentum=False)),
    "CyclicLR scale_fn": (sgd, lambda L, o: S(L).CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                           scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations")),
    "OneCycleLR cos": (sgd, lambda L, o: S(L).OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS)),
    "OneCycleLR linear three-phase Adam": (adam, lambda L, o: S(L).OneCycleLR(
        o, max_lr=0.2, epochs=4, steps_per_epoch=10, pct_start=0.25, anneal_strategy="linear", three_phase=True)),
    "SequentialLR": (sgd, lambda L, o: S(L).SequentialLR(o, [S(L).LinearLR(o, start_factor=0.1, total_iters=4),
                                                             S(L).ExponentialLR(o, gamma=0.9)], milestones=[5])),
    "SequentialLR three": (sgd, lambda L, o: S(L).SequentialLR(
        o, [S(L).ConstantLR(o, factor=0.5, total_iters=3), S(L).CosineAnnealingLR(o, T_max=8),
            S(L).StepLR(o, step_size=2, gamma=0.7)], milestones=[4, 12])),
    "ChainedScheduler": (sgd, lambda L, o: S(L).ChainedScheduler([S(L).ConstantLR(o, factor=0.1, total_iters=3),
                                                                  S(L).ExponentialLR(o, gamma=0.9)])),
    "ChainedScheduler cosine": (sgd, lambda L, o: S(L).ChainedScheduler(
        [S(L).CosineAnnealingLR(o, T_max=6), S(L).MultiStepLR(o, milestones=[3, 10], gamma=0.5)])),
}


def metric(epoch):
    """A validation loss that falls, then plateaus with noise, then falls again."""
    return 1.0 / (1 + epoch) if epoch < 8 else 0.12 + 0.001 * math.sin(epoch) - (0.05 if epoch > 25 else 0)


def run(L, make_optimizer, make_scheduler, plateau=False):
    optimizer = make_optimizer(L)
    scheduler = make_scheduler(L, optimizer)
    rates, momenta = [scheduler.get_last_lr()], []
    for epoch in range(STEPS - 1 if "OneCycle" in type(scheduler).__name__ else STEPS):
        optimizer.step()
        scheduler.step(metric(epoch)) if plateau else scheduler.step()
        rates.append(scheduler.get_last_lr())
        group = optimizer.param_groups[0]
        momenta.append(group["betas"][0] if "betas" in group else group["momentum"])
    return numpy.array(rates), numpy.array(momenta)


@needs_torch
@pytest.mark.parametrize("name", CASES)
def test_schedule_matches_torch(name):
    make_optimizer, make_scheduler = CASES[name]
    ours, theirs = run(minigrad, *CASES[name]), run(torch, *CASES[name])
    numpy.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, err_msg=f"{name}: learning rates")
    numpy.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, err_msg=f"{name}: momentum")


@needs_torch
@pytest.mark.parametrize("options", [dict(), dict(mode="max", threshold_mode="abs", threshold=0.01),
                                     dict(patience=2, cooldown=3, factor=0.5, min_lr=[0.02, 0.0]),
                                     dict(patience=0, eps=0.05)])
def test_reduce_on_plateau_matches_torch(options):
    make = lambda L, o: S(L).ReduceLROnPlateau(o, **options)  # noqa: E731
    ours, theirs = run(minigrad, sgd, make, plateau=True), run(torch, sgd, make, plateau=True)
    numpy.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert len(numpy.unique(ours[0][:, 0])) > 1 or options.get("mode") == "max"


@needs_torch
def test_warm_restarts_take_fractional_epochs_as_torch():
    """SGDR stepped per batch: step(epoch + batch / batches), as PyTorch's docs show."""
    rates = {}
    for L in (minigrad, torch):
        optimizer = sgd(L)
        scheduler = S(L).CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2, eta_min=0.01)
        rates[L.__name__] = []
        for epoch in range(9):
            for batch in range(4):
                optimizer.step()
                scheduler.step(epoch + batch / 4)
                rates[L.__name__].append(scheduler.get_last_lr())
    numpy.testing.assert_allclose(rates["minigrad"], rates["torch"], rtol=1e-12)


def test_one_cycle_refuses_to_step_past_its_end():
    optimizer = sgd(minigrad)
    scheduler = minigrad.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=3)
    for _ in range(3):
        scheduler.step()
    with pytest.raises(ValueError, match="OneCycleLR: stepped 4 times, more than total_steps=3"):
        scheduler.step()


@pytest.mark.parametrize("make, message", [
    (lambda o: minigrad.optim.lr_scheduler.CyclicLR(minigrad.optim.Adagrad(o.param_groups[0]["params"]), 0.1, 1.0),
     "cycle_momentum=True needs an optimizer with momentum"),
    (lambda o: minigrad.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.5), "factor must be < 1.0"),
    (lambda o: minigrad.optim.lr_scheduler.SequentialLR(o, [minigrad.optim.StepLR(o, 2)], milestones=[3]),
     "1 schedulers need 0 milestones"),
    (lambda o: minigrad.optim.lr_scheduler.ChainedScheduler([minigrad.optim.lr_scheduler.ReduceLROnPlateau(o)]),
     "needs the metric"),
    (lambda o: minigrad.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0), "T_0 must be a positive integer"),
    (lambda o: minigrad.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0), "give total_steps"),
])
def test_bad_arguments_say_what_to_do(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make(sgd(minigrad))


def test_state_dict_resumes_a_nested_schedule(tmp_path):
    """SequentialLR's state holds its schedulers' states; saved and loaded, the sequence goes on unchanged."""
    def build(optimizer):
        S_ = minigrad.optim.lr_scheduler
        return S_.SequentialLR(optimizer, [S_.LinearLR(optimizer, start_factor=0.2, total_iters=3),
                                           S_.CosineAnnealingLR(optimizer, T_max=10)], milestones=[4])
    optimizer = sgd(minigrad)
    scheduler = build(optimizer)
    for _ in range(6):
        scheduler.step()
    minigrad.save({"scheduler": scheduler.state_dict(), "optimizer": optimizer.state_dict()}, tmp_path / "s.npz")
    expected = []
    for _ in range(5):
        scheduler.step()
        expected.append(scheduler.get_last_lr())
    state = minigrad.load(tmp_path / "s.npz")
    optimizer = sgd(minigrad)
    resumed = build(optimizer)
    optimizer.load_state_dict(state["optimizer"])
    resumed.load_state_dict(state["scheduler"])
    got = []
    for _ in range(5):
        resumed.step()
        got.append(resumed.get_last_lr())
    numpy.testing.assert_allclose(got, expected, rtol=1e-12)
