"""Helpers for the public tests that come with each assignment: the grader's checks, in your process.

``check_backward`` judges a backward the way the grader does: central
differences of your own forward (``minigrad.finite_differences``, the one
numeric-gradient code path of minigrad), the same tolerances, the same rule
for NaN (always a failure) and for float32 (float64 is expected), and the
grader's diagnosis in the failure message.
"""
import numpy

from ... import finite_differences
from ..spec.assignment import Tolerances
from .diagnostics import diagnose_gradient, dtype_problem


def _grad_names(count, names):
    __tracebackhide__ = True
    names = list(names) if names is not None else [f"input {k}" for k in range(count)]
    if len(names) != count:
        raise ValueError(f"check_backward: {len(names)} names for {count} inputs")
    return names


def check_backward(forward, backward, inputs, names=None, seed=0, atol=Tolerances.atol, rtol=Tolerances.rtol,
                   time_axes=None):
    """Check the backward of a CS231n-style pair against finite differences; raise AssertionError if wrong.

    forward(*inputs) -> (*outputs, cache);  backward(*douts, cache) -> one gradient per input.
    names:     the gradients' names for the messages, e.g. ["dx", "dh_prev", ...]
    time_axes: {name: axis} for sequence gradients (per-step diagnosis, as the grader does)

    The objective is L = sum_k <v_k, y_k> for random upstream gradients v_k
    (seeded), so every element of every gradient is checked.  Its frames are
    hidden from pytest's traceback (``__tracebackhide__``): a failing public
    test shows the diagnosis first, not this function's code.  An element
    passes when |yours - numeric| <= atol + rtol |numeric| (the grader's
    default tolerances); NaN or inf never passes.  Returns one row per input
    (``finite_differences.compare``'s dict, plus ``message``) when all pass.
    """
    __tracebackhide__ = True   # pytest: the student reads the diagnosis, not the checker's code
    rng = numpy.random.default_rng(seed)
    inputs = [numpy.array(x, dtype=numpy.float64) for x in inputs]
    names = _grad_names(len(inputs), names)
    *outputs, cache = forward(*[x.copy() for x in inputs])
    problems = [dtype_problem(f"the forward's output {k}", out) for k, out in enumerate(outputs)]
    douts = [rng.standard_normal(numpy.shape(out)) for out in outputs]
    grads = backward(*[d.copy() for d in douts], cache)
    grads = grads if isinstance(grads, (tuple, list)) else (grads,)
    if len(grads) != len(inputs):
        raise AssertionError(f"the backward returned {len(grads)} gradient(s) for {len(inputs)} input(s)")

    def objective(args):
        outputs = forward(*[a.copy() for a in args])[:-1]
        return sum(float((numpy.asarray(o, dtype=numpy.float64) * v).sum()) for o, v in zip(outputs, douts))

    center = objective(inputs)
    eps = finite_differences.EPS
    rows = []
    for position, (name, grad) in enumerate(zip(names, grads)):
        x = inputs[position]

        def nudge(index, step, x=x):
            original = x[index]
            x[index] = original + step
            value = objective(inputs)
            x[index] = original
            return value

        plus = numpy.zeros(x.shape)
        minus = numpy.zeros(x.shape)
        for index in numpy.ndindex(*x.shape):
            plus[index], minus[index] = nudge(index, eps), nudge(index, -eps)
        numeric = finite_differences.central_difference(plus, minus, eps)
        input_name = name[1:] if name.startswith("d") and len(name) > 1 else name
        diagnosis = diagnose_gradient(name, input_name, None if grad is None else numpy.asarray(grad), numeric,
                                      atol, rtol, (time_axes or {}).get(name))
        if diagnosis["kind"] in ("shape", "dtype"):
            row = {"name": name, "status": "FAIL", "max_rel_error": float("inf")}
        else:
            row = finite_differences.compare(name, x.shape, numpy.asarray(grad, dtype=numpy.float64), plus, minus,
                                             center, eps, atol, rtol, nudge)
        row["message"] = diagnosis["message"] if row["status"] == "FAIL" else ""
        if row["status"] == "FAIL" and not row["message"]:
            row["message"] = row["note"]    # a kink the diagnosis does not know about
        rows.append(row)
    problems += [row["message"] for row in rows if row["status"] == "FAIL"]
    problems = [p for p in problems if p]
    if problems:
        raise AssertionError("the backward is wrong:\n  " + "\n  ".join(problems))
    return rows
