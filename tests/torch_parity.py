"""The check both PyTorch parity suites run (test_ops_parity.py, test_torch_names_parity.py), and
the input makers their case tables share.

A case is ``(float input makers, other input makers, fn(L, *floats, *others))``: the same
expression runs with ``L`` standing for minigrad and for torch; the outputs, their dtypes and
the input gradients (from the same upstream gradient) must agree within TOLERANCE.
"""
import numpy

import minigrad

TOLERANCE = {"float64": 1e-10, "float32": 1e-5}


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.3, 2.0, shape)


def distinct(*shape):
    return lambda rng: rng.permutation(int(numpy.prod(shape))).reshape(shape) * 0.1 + rng.uniform(0, 0.01, shape)


def ints(low, high, *shape):
    return lambda rng: rng.integers(low, high, shape)


def _as_list(outputs):
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def check_parity(case, seed, dtype, device, ours_namespace, torch_namespace, torch):
    """Run ``case`` on both libraries from the same inputs (drawn with ``seed``) and compare."""
    make_floats, make_others, fn = case
    rng = numpy.random.default_rng(seed)
    floats = [make(rng) for make in make_floats]
    others = [make(rng) for make in make_others]

    ours = [minigrad.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in floats]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in floats]
    our_out = _as_list(fn(ours_namespace, *ours, *(minigrad.tensor(o, device=device) for o in others)))
    their_out = _as_list(fn(torch_namespace, *theirs, *(torch.tensor(o) for o in others)))

    tol = TOLERANCE[dtype]
    upstream = [rng.standard_normal(tuple(o.shape)) for o in their_out]
    assert len(our_out) == len(their_out)
    for mine, reference in zip(our_out, their_out):
        assert mine.shape == tuple(reference.shape) and mine.device == device
        assert str(mine.dtype) == str(reference.dtype).replace("torch.", "")
        numpy.testing.assert_allclose(mine.numpy(), reference.detach().numpy(), rtol=tol, atol=tol)

    for out, v in zip(our_out, upstream):
        out.backward(minigrad.tensor(v, dtype=dtype, device=device), retain_graph=True)
    torch.autograd.backward(their_out, [torch.tensor(v, dtype=getattr(torch, dtype)) for v in upstream])
    for position, (mine, reference) in enumerate(zip(ours, theirs)):
        expected = numpy.zeros(mine.shape) if reference.grad is None else reference.grad.numpy()
        assert mine.grad is not None, f"input {position} got no gradient"
        numpy.testing.assert_allclose(mine.grad.numpy(), expected, rtol=tol, atol=tol,
                                      err_msg=f"gradient of input {position}")
