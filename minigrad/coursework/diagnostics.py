"""Diagnostics that teach: say *how* a gradient is wrong, not only that it is.

Every function here compares host (NumPy) arrays: the grader moves results to
the host before judging them.  A gradient is compared with the finite
differences of the student's own forward; when they disagree, the diagnoses
are tried from the most specific to the most general:

    shape          a gradient whose shape is not its input's (or is its transpose)
    not finite     NaN or inf somewhere
    through time   right at the last time step only: dh_next is not carried back
    transpose      the values are the expected matrix transposed
    factor         the values are c times the expected ones (c = 2, 1/2, -1, 0, ...)
    elsewhere      where it is worst, and the two values there
"""
from fractions import Fraction

import numpy

TINY = 1e-30


def index_text(index):
    return "[" + ", ".join(str(i) for i in index) + "]"


def close(yours, expected, atol, rtol):
    """Elementwise |yours - expected| <= atol + rtol |expected| (NaN is never close)."""
    return numpy.abs(yours - expected) <= atol + rtol * numpy.abs(expected)


def compare(name, yours, expected, atol, rtol):
    """Compare two arrays by tolerance.

    Returns a dict: ok, max_rel_error, worst (e.g. "dx[1, 0]"), yours, expected
    (the two values at the worst element) and message (empty when ok).
    max_rel_error is max |yours - expected| / max |expected|: relative to the
    array's scale (and at least atol), so an element near 0 does not make it huge.
    """
    yours = numpy.asarray(yours, dtype=numpy.float64)
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if yours.shape != expected.shape:
        return {"ok": False, "max_rel_error": float("inf"), "worst": name, "yours": None, "expected": None,
                "message": f"{name} has shape {yours.shape}, expected {expected.shape}"}
    if yours.size == 0:
        return {"ok": True, "max_rel_error": 0.0, "worst": name, "yours": None, "expected": None, "message": ""}
    scale = max(float(numpy.abs(expected).max()), atol, TINY)
    errors = numpy.abs(yours - expected) / scale
    ok = close(yours, expected, atol, rtol)
    excess = numpy.where(ok, 0.0, numpy.abs(yours - expected) / (atol + rtol * numpy.abs(expected)))
    excess = numpy.where(numpy.isnan(excess), numpy.inf, excess)
    flat = int(numpy.argmax(excess)) if not ok.all() else int(numpy.argmax(numpy.nan_to_num(errors)))
    index = numpy.unravel_index(flat, yours.shape)
    result = {
        "ok": bool(ok.all()),
        "max_rel_error": float(numpy.nan_to_num(errors, nan=numpy.inf).max()),
        "worst": name + index_text(index),
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
    """Relative error of each time step: ||yours_t - expected_t|| / ||expected_t||."""
    yours = numpy.moveaxis(yours, time_axis, 0)
    expected = numpy.moveaxis(expected, time_axis, 0)
    return [float(numpy.linalg.norm(y - e) / max(numpy.linalg.norm(e), numpy.linalg.norm(y), TINY))
            for y, e in zip(yours, expected)]


def diagnose_gradient(name, input_name, yours, expected, atol, rtol, time_axis=None):
    """Judge one gradient ``yours`` against the finite differences ``expected``.

    name:       the gradient's name, as the student wrote it ("dWh")
    input_name: the input it belongs to ("Wh")
    time_axis:  for sequence inputs, the axis of time steps (1 for x of shape (N, T, D))

    Returns compare()'s dict, with ``message`` telling what is wrong.
    """
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if yours is None:
        return {"ok": False, "max_rel_error": float("inf"), "worst": name, "yours": None, "expected": None,
                "message": f"{name} is None: your backward returned no gradient for {input_name}"}
    yours = numpy.asarray(yours, dtype=numpy.float64)
    if yours.shape != expected.shape:
        message = (f"{name} has shape {yours.shape}, but {input_name} has shape {expected.shape}: "
                   "a gradient has the shape of its input")
        if yours.shape == expected.shape[::-1] and yours.ndim == 2:
            if close(yours.T, expected, atol, rtol).all():
                message = (f"{name} has shape {yours.shape}: it is the transpose of the right gradient "
                           f"(shape {expected.shape}). Swap the operands of the matmul, e.g. "
                           "dW = x.T @ dout rather than dout.T @ x")
            else:
                message += " (yours is transposed, and its values are wrong too)"
        return {"ok": False, "max_rel_error": float("inf"), "worst": name, "yours": None, "expected": None,
                "message": message}
    result = compare(name, yours, expected, atol, rtol)
    if result["ok"]:
        return result
    if not numpy.isfinite(yours).all():
        result["message"] = f"{name} contains NaN or inf (first at {name}{index_text(numpy.argwhere(~numpy.isfinite(yours))[0])})"
        return result
    if time_axis is not None and yours.shape[time_axis] > 1:
        errors = steps_errors(yours, expected, time_axis)
        steps = numpy.moveaxis(yours, time_axis, 0), numpy.moveaxis(expected, time_axis, 0)
        right = [bool(close(y, e, atol, rtol).all()) for y, e in zip(*steps)]
        listing = ", ".join(f"t={t}: {e:.1e}" for t, e in enumerate(errors))
        if right[-1] and not all(right):
            first_right = len(right) - right[::-1].index(False)
            result["message"] = (
                f"{name} is right at the last time step only (from t={first_right} on) and wrong before it "
                f"(relative error per step: {listing}). Your backward is missing the gradient carried "
                "through time: at step t the hidden state receives dout[t] plus the gradient coming "
                "back from step t+1 (dprev_h)."
            )
            return result
        result["message"] += f"; relative error per time step: {listing}"
    if yours.ndim == 2 and yours.shape[0] == yours.shape[1] and not close(expected, expected.T, atol, rtol).all():
        if close(yours, expected.T, atol, rtol).all():
            result["message"] = (f"{name} equals the transpose of the right gradient. Check the order of "
                                 "the matmul operands, e.g. dW = x.T @ dout rather than dout.T @ x")
            return result
    c = constant_factor(yours, expected, atol, rtol)
    if c is not None:
        if abs(c) < 1e-9:
            result["message"] = (f"{name} is all zeros: no gradient reaches {input_name} (a forgotten term, "
                                 "or a graph cut by .data, .detach() or NumPy)")
        elif abs(c + 1) < 1e-6:
            result["message"] = f"{name} has the wrong sign: it is -1 times the right gradient"
        else:
            result["message"] = (f"{name} is {factor_text(c)} times the right gradient: off by a constant "
                                 f"factor of {factor_text(c)}. Look for a stray factor (a derivative taken "
                                 "twice, a missing 1/2 or 1/N, a gradient added twice)")
        return result
    result["message"] = "differs from finite differences: " + result["message"]
    return result
