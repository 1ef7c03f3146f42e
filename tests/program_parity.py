"""Shared steps of the program-pattern tests (tests/test_program_*.py): the same model, written
once against a library ``L`` (minigrad or torch), built in both, given torch's weights, and
compared in float64 (or float32, with TOLERANCES) - outputs, every gradient, and the parameters after
optimizer steps."""
import numpy

import minigrad

TOLERANCE = 1e-10
TOLERANCES = {"float64": 1e-10, "float32": 2e-5}


def close(ours, theirs, what, tolerance=TOLERANCE):
    ours = ours.numpy() if hasattr(ours, "numpy") else numpy.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else numpy.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shapes {ours.shape} and {theirs.shape}"
    error = float(numpy.max(numpy.abs(ours - theirs))) if ours.size else 0.0
    assert error <= tolerance * max(1.0, float(numpy.max(numpy.abs(theirs))) if theirs.size else 1.0), \
        f"{what}: max abs difference {error:.3e}"


def twins(build, torch, seed=0, dtype="float64"):
    """(ours, theirs): build(L) in both libraries, in ``dtype``, torch's initial weights copied into ours."""
    torch.manual_seed(seed)
    theirs = build(torch).to(getattr(torch, dtype))
    minigrad.manual_seed(seed)
    ours = build(minigrad).to(dtype=getattr(minigrad, dtype))
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def same_gradients(ours, theirs, tolerance=TOLERANCE):
    their_parameters = dict(theirs.named_parameters())
    names = [name for name, _ in ours.named_parameters()]
    assert names == list(their_parameters), "the two models name their parameters differently"
    for name, parameter in ours.named_parameters():
        their_grad = their_parameters[name].grad
        if their_grad is None:
            assert parameter.grad is None or not numpy.any(parameter.grad), f"{name}: gradient only in minigrad"
            continue
        assert parameter.grad is not None, f"{name}: no gradient in minigrad"
        assert str(parameter.grad.dtype) == str(their_grad.dtype).replace("torch.", ""), f"dtype of {name}'s gradient"
        close(parameter.grad.numpy(), their_grad, f"gradient of {name}", tolerance)


def same_parameters(ours, theirs, when, tolerance=TOLERANCE):
    their_parameters = dict(theirs.named_parameters())
    for name, parameter in ours.named_parameters():
        assert str(parameter.dtype) == str(their_parameters[name].dtype).replace("torch.", ""), f"dtype of {name}"
        close(parameter, their_parameters[name], f"{name} {when}", tolerance)


def train_side_by_side(ours, theirs, optimizers, loss_of, steps=3, clip=None):
    """``steps`` optimizer steps in both; after each, the losses, gradients and parameters agree.

    optimizers: (ours, theirs); loss_of(L, model, step) -> a scalar loss; clip: max gradient norm.
    """
    import torch
    for step in range(steps):
        losses = []
        for library, model, optimizer in ((minigrad, ours, optimizers[0]), (torch, theirs, optimizers[1])):
            optimizer.zero_grad()
            loss = loss_of(library, model, step)
            loss.backward()
            if clip is not None:
                library.nn.utils.clip_grad_norm_(model.parameters(), clip)
            losses.append(loss)
        close(losses[0], losses[1], f"loss at step {step}")
        same_gradients(ours, theirs)
        optimizers[0].step()
        optimizers[1].step()
        same_parameters(ours, theirs, f"after step {step + 1}")
