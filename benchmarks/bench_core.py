"""Core suite: the autograd engine's per-op overhead, and one small training step.

per-op overhead   a chain of 1,000 ops on a (4,) tensor (alternating x * 0.5,
                  x + 1, tanh(x)), forward and backward: with 4 elements the
                  arithmetic is free, so the time is the engine's bookkeeping
                  (Function.apply, the Tensor, the graph, the backward walk).
                  Reported per op.
training step     Linear(512, 512) -> LayerNorm(512) -> ReLU -> Linear(512, 10),
                  batch 64, float32, cross_entropy, backward, optimizer step, timed
                  as loops of consecutive steps (common.loop_times).
"""
import numpy

import minigrad
from minigrad import functional as F, nn

from common import interleaved_times, loop_times, timed_row, torch_or_none

CHAIN = 1000


def _chain(make_leaf, tanh, grad_enabled):
    """One forward (+ backward) through CHAIN tiny ops; the same code for both frameworks."""
    x = make_leaf()

    def run():
        y = x
        for i in range(CHAIN):
            step = i % 3
            if step == 0:
                y = y * 0.5
            elif step == 1:
                y = y + 1.0
            else:
                y = tanh(y)
        if grad_enabled:
            y.sum().backward()
    return run


def per_op_cases(quick):
    torch = torch_or_none()
    repeat = 5 if quick else 25
    rows = []
    for grad_enabled, label in ((True, "forward + backward"), (False, "forward only, no_grad")):
        mg = _chain(lambda: minigrad.ones(4, requires_grad=True), lambda y: y.tanh(), grad_enabled)
        mg_run = mg if grad_enabled else minigrad.no_grad()(mg)
        fns = [mg_run]
        if torch is not None:
            th = _chain(lambda: torch.ones(4, requires_grad=True), torch.tanh, grad_enabled)
            fns.append(th if grad_enabled else torch.no_grad()(th))
        per_op = [[t / CHAIN for t in bucket] for bucket in interleaved_times(fns, repeat=repeat)]
        rows.append(timed_row(f"chain of {CHAIN} tiny ops on (4,), {label}", per_op[0],
                              per_op[1] if torch is not None else None, "per op"))
    return rows


def _minigrad_step(batch, features, classes, optimizer):
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(features, features), nn.LayerNorm(features), nn.ReLU(),
                          nn.Linear(features, classes))
    x = minigrad.randn(batch, features)
    target = minigrad.randint(0, classes, (batch,))
    opt = None
    if optimizer == "adam":
        opt = minigrad.optim.Adam(model.parameters(), lr=1e-3)
    elif optimizer == "sgd":
        opt = minigrad.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)

    def step():
        model.zero_grad()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        if opt is not None:
            opt.step()
    return step


def _torch_step(torch, batch, features, classes, optimizer):
    torch.manual_seed(0)
    tnn = torch.nn
    model = tnn.Sequential(tnn.Linear(features, features), tnn.LayerNorm(features), tnn.ReLU(),
                           tnn.Linear(features, classes))
    x = torch.randn(batch, features)
    target = torch.randint(0, classes, (batch,))
    opt = None
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    elif optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)

    def step():
        model.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        if opt is not None:
            opt.step()
    return step


def training_step_cases(quick):
    torch = torch_or_none()
    batch, features, classes = 64, 512, 10
    repeat = 5 if quick else 30
    rows = []
    for optimizer in ("none", "sgd", "adam"):
        fns = [_minigrad_step(batch, features, classes, optimizer)]
        if torch is not None:
            fns.append(_torch_step(torch, batch, features, classes, optimizer))
        times = loop_times(fns, repeat)
        what = "forward + backward" if optimizer == "none" else f"forward + backward + {optimizer} step"
        case = f"Linear-LayerNorm-ReLU-Linear + cross_entropy, ({batch}, {features}) -> {classes}, {what}"
        rows.append(timed_row(case, times[0], times[1] if torch is not None else None,
                              "float32" + (", SGD momentum 0.9" if optimizer == "sgd" else "")))
    return rows


def run(quick):
    assert numpy.dtype(minigrad.get_default_dtype()) == numpy.float32
    return per_op_cases(quick) + training_step_cases(quick)
