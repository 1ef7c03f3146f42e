"""Diagnostics that teach: say *how* a result is wrong, not only that it is.

Every function here compares host (NumPy) arrays: the grader moves results to
the host before judging them.  A gradient is compared with the finite
differences of the student's own forward; when they disagree, the diagnoses
are tried from the most specific to the most general:

    dtype          float32 (or float16) where float64 is expected
    shape          a gradient whose shape is not its input's (or is its transpose)
    not finite     NaN or inf somewhere
    loop bounds    a sequence gradient that is zero at steps the backward loop never
                   visited, or wrong at the first or the last step only
    through time   right at the last time step only, wrong before it: dh_next is not carried back
    transpose      the values are the expected matrix transposed
    factor         the values are c times the expected ones (c = 2, 1/2, -1, 0, ...)
    elsewhere      where it is worst, and the two values there

Each result is a dict: ok, kind (which diagnosis: "ok", "dtype", "shape",
"nonfinite", "loop_bounds", "carry", "transpose", "factor", "zero", "values"),
max_rel_error, worst (e.g. "dx[1, 0]"), yours and expected (the two values
there) and message.  Relative errors are minigrad's one definition,
``finite_differences.relative_error``: |a - b| / max(|a|, |b|), elementwise.
"""
from fractions import Fraction

import numpy

from ...finite_differences import TINY, relative_error

LOW_PRECISION = (numpy.float16, numpy.float32)
MATMUL_ORDER = ("for y = x @ W, dW = x.T @ dout; for y = x @ W.T (weights stored (out, in), as in "
                "minigrad and PyTorch), dW = dout.T @ x")


def index_text(index):
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def close(yours, expected, atol, rtol):
    """Elementwise |yours - expected| <= atol + rtol |expected| (NaN is never close)."""
    with numpy.errstate(invalid="ignore"):
        return numpy.abs(yours - expected) <= atol + rtol * numpy.abs(expected)


def dtype_problem(name, array):
    """"" when ``array`` is float64 (or not floating point); else a message saying why float64 is expected."""
    dtype = getattr(array, "dtype", None)
    if dtype is None or dtype.type not in LOW_PRECISION:
        return ""
    return (f"{name} is {dtype.name}, but float64 is expected: the grader's inputs are float64 and a result "
            f"must keep that dtype. {dtype.name} keeps about {numpy.finfo(dtype).precision} significant "
            "digits, so its numbers can print the same as the reference's and still differ after the "
            f"{numpy.finfo(dtype).precision}th digit, and finite differences, (L(x + eps) - L(x - eps)) / 2 eps, "
            "lose about half of the digits to cancellation, too few left to judge a gradient. The values "
            "may well be right: look for dtype=numpy.float32, .astype(...) or an array made without "
            "the inputs' dtype (e.g. xp.zeros(shape, dtype=x.dtype) keeps it)")


def _failure(name, kind, message):
    return {"ok": False, "kind": kind, "max_rel_error": float("inf"), "worst": name, "yours": None,
            "expected": None, "message": message}


def compare(name, yours, expected, atol, rtol, check_dtype=True):
    """Compare two arrays by tolerance: ``yours`` against ``expected``.

    Returns a dict: ok, kind, max_rel_error (the largest elementwise relative
    error), worst (e.g. "dx[1, 0]", the element furthest outside the tolerance,
    or the largest error when all are inside), yours and expected (the two
    values there) and message (empty when ok).  With ``check_dtype`` a
    float32 ``yours`` fails with ``dtype_problem``'s message.
    """
    problem = dtype_problem(name, yours) if check_dtype else ""
    if problem:
        return _failure(name, "dtype", problem)
    yours = numpy.asarray(yours, dtype=numpy.float64)
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if yours.shape != expected.shape:
        return _failure(name, "shape", f"{name} has shape {yours.shape}, expected {expected.shape}")
    if yours.size == 0:
        return {"ok": True, "kind": "ok", "max_rel_error": 0.0, "worst": name, "yours": None, "expected": None,
                "message": ""}
    errors = relative_error(yours, expected)
    ok = close(yours, expected, atol, rtol)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        excess = numpy.where(ok, 0.0, numpy.abs(yours - expected) / (atol + rtol * numpy.abs(expected)))
    excess = numpy.where(numpy.isnan(excess), numpy.inf, excess)
    flat = int(numpy.argmax(excess)) if not ok.all() else int(numpy.argmax(errors))
    index = numpy.unravel_index(flat, yours.shape)
    result = {
        "ok": bool(ok.all()), "kind": "ok" if ok.all() else "values",
        "max_rel_error": float(numpy.nan_to_num(errors, nan=numpy.inf).max()),
        "worst": name + (index_text(index) if yours.ndim else ""),     # a number (BLEU) has no index
        "yours": float(yours[index]), "expected": float(expected[index]),
        "message": "",
    }
    if not result["ok"]:
        result["message"] = (f"{result['worst']} is {result['yours']:.6g}, expected {result['expected']:.6g} "
                             f"(max relative error {result['max_rel_error']:.2e})")
    return result


def factor_text(c):
    """2.0 -> "2", 0.5 -> "1/2", -1 -> "-1", 0.3333 -> "1/3", 1.37 -> "1.37"."""
    fraction = Fraction(c).limit_denominator(8)
    if abs(float(fraction) - c) <= 1e-6 * max(1.0, abs(c)):
        return str(fraction)
    return f"{c:.4g}"


def constant_factor(yours, expected, atol, rtol):
    """The c with yours = c * expected (c != 1), or None when there is none."""
    norm = float((expected * expected).sum())
    if norm <= TINY:
        return None
    c = float((yours * expected).sum()) / norm
    if abs(c - 1) < 1e-6 or not close(yours, c * expected, atol, rtol).all():
        return None
    return c


def steps_errors(yours, expected, time_axis):
    """The largest relative error of each time step (elementwise, as ``relative_error``)."""
    errors = relative_error(numpy.moveaxis(yours, time_axis, 0), numpy.moveaxis(expected, time_axis, 0))
    return [float(numpy.nan_to_num(step, nan=numpy.inf).max()) for step in errors]


def _steps_text(steps):
    return ", ".join(f"t={t}" for t in steps)


def time_diagnosis(name, yours, expected, atol, rtol, time_axis):
    """(kind, message) for a sequence gradient wrong at some steps, or None when no pattern fits.

    Tells the loop's bounds (a step never visited, the first or the last step
    alone wrong) from a missing carry (right at the last step only, wrong at
    every step before it, where the gradient from later steps should add up).
    """
    ys, es = numpy.moveaxis(yours, time_axis, 0), numpy.moveaxis(expected, time_axis, 0)
    T = len(ys)
    right = [bool(close(y, e, atol, rtol).all()) for y, e in zip(ys, es)]
    zero = [not right[t] and not ys[t].any() and bool(es[t].any()) for t in range(T)]
    listing = ", ".join(f"t={t}: {e:.1e}" for t, e in enumerate(steps_errors(yours, expected, time_axis)))
    wrong = [t for t in range(T) if not right[t]]
    if any(zero):
        skipped = [t for t in range(T) if zero[t]]
        ends = {0: "the first step", T - 1: "the last step"}
        which = " and ".join(ends[t] for t in skipped if t in ends) or "steps in the middle"
        rest = [t for t in wrong if t not in skipped]
        return "loop_bounds", (
            f"{name} is all zeros at {_steps_text(skipped)} ({which}) but should not be: your backward loop "
            "over time never visits it. Check the loop's bounds: for t in reversed(range(T)) visits every "
            "step, T-1 down to 0 (range(1, T) skips the first, range(T - 1) the last)"
            + (f". The errors at {_steps_text(rest)} may follow from it" if rest else "")
            + f" (relative error per step: {listing})")
    if T >= 3 and wrong == [0]:
        return "loop_bounds", (
            f"{name} is wrong at the first step t=0 only and right at every other step (relative error per "
            f"step: {listing}). The gradient flows back correctly, so look at what is special about t=0: the "
            "loop's bounds (does it reach t=0?) and the initial state h0 that step 0 reads as its h_prev")
    if T >= 3 and wrong == [T - 1]:
        return "loop_bounds", (
            f"{name} is wrong at the last step t={T - 1} only and right before it (relative error per step: "
            f"{listing}). Look at what is special about the last step: the loop's first iteration, where no "
            "gradient comes back from a later step yet (dh_next starts at zero)")
    if right[-1] and wrong and wrong == list(range(wrong[-1] + 1)):
        first_right = wrong[-1] + 1
        return "carry", (
            f"{name} is right at the last time step only (from t={first_right} on) and wrong before it "
            f"(relative error per step: {listing}). Your backward is missing the gradient carried "
            "through time: at step t the hidden state receives dout[t] plus the gradient coming "
            "back from step t+1 (dh_next, CS231n's dprev_h)")
    return None


def diagnose_gradient(name, input_name, yours, expected, atol, rtol, time_axis=None, check_dtype=True):
    """Judge one gradient ``yours`` against the finite differences ``expected``.

    name:        the gradient's name, as the student wrote it ("dw_hh")
    input_name:  the input it belongs to ("w_hh")
    time_axis:   for sequence inputs, the axis of time steps (0 for x of shape (T, N, D))
    check_dtype: a float32 gradient fails, with ``dtype_problem``'s message

    Returns compare()'s dict, with ``message`` telling what is wrong and ``kind`` which diagnosis it is.
    """
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if yours is None:
        return _failure(name, "shape", f"{name} is None: your backward returned no gradient for {input_name}")
    problem = dtype_problem(name, yours) if check_dtype else ""
    if problem:
        return _failure(name, "dtype", problem)
    yours = numpy.asarray(yours, dtype=numpy.float64)
    if yours.shape != expected.shape:
        message = (f"{name} has shape {yours.shape}, but {input_name} has shape {expected.shape}: "
                   "a gradient has the shape of its input")
        if yours.shape == expected.shape[::-1] and yours.ndim == 2:
            if close(yours.T, expected, atol, rtol).all():
                message = (f"{name} has shape {yours.shape}: it is the transpose of the right gradient "
                           f"(shape {expected.shape}). Swap the operands of the matmul: " + MATMUL_ORDER)
            else:
                message += " (yours is transposed, and its values are wrong too)"
        return _failure(name, "shape", message)
    result = compare(name, yours, expected, atol, rtol, check_dtype=False)
    if result["ok"]:
        return result
    if not numpy.isfinite(yours).all():
        first = index_text(numpy.argwhere(~numpy.isfinite(yours))[0])
        result.update(kind="nonfinite", message=f"{name} contains NaN or inf (first at {name}{first})")
        return result
    if time_axis is not None and yours.shape[time_axis] > 1:
        found = time_diagnosis(name, yours, expected, atol, rtol, time_axis)
        if found is not None:
            result["kind"], result["message"] = found
            return result
        listing = ", ".join(f"t={t}: {e:.1e}" for t, e in enumerate(steps_errors(yours, expected, time_axis)))
        result["message"] += f"; relative error per time step: {listing}"
    if yours.ndim == 2 and yours.shape[0] == yours.shape[1] and not close(expected, expected.T, atol, rtol).all():
        if close(yours, expected.T, atol, rtol).all():
            result.update(kind="transpose", message=(
                f"{name} equals the transpose of the right gradient. Check the order of "
                "the matmul operands: " + MATMUL_ORDER))
            return result
    c = constant_factor(yours, expected, atol, rtol)
    if c is not None:
        if abs(c) < 1e-9:
            result.update(kind="zero", message=(
                f"{name} is all zeros: no gradient reaches {input_name} (a forgotten term, "
                "or a graph cut by .data, .detach() or NumPy)"))
        elif abs(c + 1) < 1e-6:
            result.update(kind="factor", message=f"{name} has the wrong sign: it is -1 times the right gradient")
        else:
            result.update(kind="factor", message=(
                f"{name} is {factor_text(c)} times the right gradient: off by a constant "
                f"factor of {factor_text(c)}. Look for a stray factor (a derivative taken "
                "twice, a missing 1/2 or 1/N, a gradient added twice)"))
        return result
    result["message"] = "differs from finite differences: " + result["message"]
    return result
