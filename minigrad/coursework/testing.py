"""Helpers for the public tests that come with each assignment."""
import numpy

from .grader import numeric_gradients


def check_backward(forward, backward, inputs, seed=0):
    """Relative error of each gradient of a CS231n-style pair, against finite differences.

    forward(*inputs) -> (*outputs, cache);  backward(*douts, cache) -> one gradient per input.
    Returns a list with, for each input, max |yours - numeric| / max |numeric|
    (inf when the shapes differ).  Everything is float64.
    """
    rng = numpy.random.default_rng(seed)
    inputs = [numpy.array(x, dtype=numpy.float64) for x in inputs]
    *outputs, cache = forward(*[x.copy() for x in inputs])
    douts = [rng.standard_normal(numpy.shape(out)) for out in outputs]
    grads = backward(*douts, cache)
    grads = grads if isinstance(grads, (tuple, list)) else (grads,)
    numeric = numeric_gradients(lambda args: forward(*args)[:-1], inputs, list(range(len(inputs))), douts)
    errors = []
    for mine, expected in zip(grads, numeric):
        mine = numpy.asarray(mine)
        if mine.shape != expected.shape:
            errors.append(float("inf"))
            continue
        errors.append(float(numpy.abs(mine - expected).max() / max(numpy.abs(expected).max(), 1e-30)))
    return errors
