"""Finite differences: the one numeric-gradient code path of minigrad.

The library's ``gradcheck``, the lessons and the coursework grader all judge an
analytic gradient here, on host (NumPy) arrays of float64.  The caller picks a
scalar objective L(x) (gradcheck uses L = sum_k <v_k, y_k(x)> for random
upstream gradients v_k) and evaluates it at x nudged by +-eps along each
element e_i; this module turns those values into a verdict:

    numeric_i  = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)        central difference
    error_i    = |a_i - numeric_i|
    rel_i      = |a_i - numeric_i| / max(|a_i|, |numeric_i|, TINY)   relative error
    element i passes when  error_i <= atol + rtol |numeric_i|

A NaN or inf in either gradient fails, whatever the tolerance (a NaN compares
False with everything, so ``error > allowed`` alone would let it pass).

Kinks.  At a kink (relu at 0, max with a tie) the one-sided differences

    right_i = (L(x + eps e_i) - L(x)) / eps,   left_i = (L(x) - L(x - eps e_i)) / eps

disagree, and the central difference is their average, not a derivative.
Where they disagree by much more than the tolerance (and than rounding
noise), the gap is measured again with a step ten times smaller: a smooth
function's gap (about eps |f''|) shrinks tenfold with the step, a kink's does
not.  At a confirmed kink an analytic value between the two one-sided values
is reported as "kink", not as a failure.

Why float64: the central difference's truncation error (~eps^2) and rounding
error (~u / eps, u the dtype's unit roundoff) balance at eps ~ u^(1/3), where it
keeps about two thirds of the dtype's digits: ~10 of float64's 16, ~4-5 of
float32's 7 for a well-scaled function, and fewer where the higher derivatives
are large (lesson 0 measures 9 and 3.5 on tanh(x) exp(x)).  3-5 digits are too
few to tell a right backward from a slightly wrong one.
"""
import numpy

EPS = 1e-6       # about the cube root of float64's epsilon
TINY = 1e-300    # |a - n| / max(|a|, |n|, TINY): 0 / 0 reads as 0


def central_difference(plus, minus, eps):
    """(L(x + eps) - L(x - eps)) / (2 eps), elementwise."""
    return (numpy.asarray(plus, dtype=numpy.float64) - numpy.asarray(minus, dtype=numpy.float64)) / (2 * eps)


def relative_error(analytic, numeric):
    """|a - n| / max(|a|, |n|, TINY), elementwise; NaN where either is NaN."""
    analytic = numpy.asarray(analytic, dtype=numpy.float64)
    numeric = numpy.asarray(numeric, dtype=numpy.float64)
    with numpy.errstate(invalid="ignore"):
        return numpy.abs(analytic - numeric) / numpy.maximum(numpy.maximum(numpy.abs(analytic), numpy.abs(numeric)), TINY)


def _index(flat, shape):
    return tuple(int(i) for i in numpy.unravel_index(flat, shape))


def _confirmed_kinks(shape, gap, allowed, center, eps, nudge):
    """Elements whose one-sided gap does not shrink tenfold with a tenfold smaller step."""
    kink = numpy.zeros(shape, dtype=bool)
    small = eps / 10
    rounding = 4 * numpy.finfo(numpy.float64).eps * max(abs(center), 1.0) / small   # noise in a gap at `small`
    for index in numpy.ndindex(*shape):
        if gap[index] > 10 * allowed[index] and gap[index] > 10 * rounding:
            small_gap = abs((nudge(index, small) - center) / small - (center - nudge(index, -small)) / small)
            kink[index] = abs(small_gap - gap[index] / 10) > gap[index] / 20   # a curve shrinks it tenfold
    return kink


def compare(name, shape, analytic, plus, minus, center, eps, atol, rtol, nudge):
    """Judge one input's analytic gradient against central differences of L.

    analytic:     the gradient from backward, a float64 array of ``shape``
    plus, minus:  L(x + eps e_i) and L(x - eps e_i) for every element i (arrays of ``shape``)
    center:       L(x)
    nudge(index, step): L with element ``index`` moved by ``step`` (called only to confirm kinks)

    Returns a row dict: name, shape, max_abs_error, max_rel_error, worst_index,
    analytic and numeric (both at worst_index), status ("ok", "kink" or "FAIL"),
    note, and the arrays failing and nonfinite (bool, of ``shape``).
    """
    shape = tuple(shape)
    analytic = numpy.asarray(analytic, dtype=numpy.float64).reshape(shape)
    plus = numpy.asarray(plus, dtype=numpy.float64).reshape(shape)
    minus = numpy.asarray(minus, dtype=numpy.float64).reshape(shape)
    numeric = central_difference(plus, minus, eps)
    nonfinite = ~numpy.isfinite(analytic) | ~numpy.isfinite(numeric)
    with numpy.errstate(invalid="ignore"):
        abs_error = numpy.abs(analytic - numeric)
        rel_error = relative_error(analytic, numeric)
        allowed = atol + rtol * numpy.abs(numeric)
        right = (plus - center) / eps
        left = (center - minus) / eps
        gap = numpy.where(nonfinite, 0.0, numpy.abs(right - left))
        kink = _confirmed_kinks(shape, gap, allowed, center, eps, nudge) if numpy.isfinite(center) \
            else numpy.zeros(shape, dtype=bool)
        between = ((analytic >= numpy.minimum(left, right) - allowed)
                   & (analytic <= numpy.maximum(left, right) + allowed))
        failing = ((abs_error > allowed) & ~(kink & between)) | nonfinite

    status, notes = "ok", []
    accepted = kink & ~failing
    if accepted.any():
        status = "kink"
        where = _index(numpy.argmax(accepted), shape)
        notes.append(
            f"{int(accepted.sum())} element(s), e.g. {where}, sit at a kink: the one-sided differences "
            f"{left[where]:.6g} (left) and {right[where]:.6g} (right) disagree, so finite differences "
            "cannot judge the derivative there; the analytic value lies between them, so it is accepted. "
            "Move the inputs away from the kink (relu(x + 0.5), no ties in max) to check them too."
        )
    if failing.any():
        status = "FAIL"
        if nonfinite.any():
            worst = numpy.argmax(nonfinite)
            where = _index(worst, shape)
            which = "analytic" if not numpy.isfinite(analytic[where]) else "numeric"
            notes.insert(0, f"{int(nonfinite.sum())} element(s) are not finite, first at {where}: the {which} "
                            f"gradient there is {(analytic if which == 'analytic' else numeric)[where]}"
                            + (" (backward produced it)" if which == "analytic" else
                               " (the function's own values are not finite near x)"))
        else:
            worst = numpy.argmax(numpy.where(failing, abs_error / allowed, -1.0))
        at_kink = failing & kink
        notes.insert(0, f"{int(failing.sum())} of {failing.size} element(s) differ: the gradient from "
                        "backward (analytic) disagrees with finite differences (numeric)"
                        + (f"; {int(at_kink.sum())} of them at a kink, with the analytic value outside the "
                           "two one-sided differences" if at_kink.any() else ""))
    else:
        worst = numpy.argmax(abs_error) if abs_error.size else 0
    worst_index = _index(worst, shape) if abs_error.size else ()

    def pick(a):
        return float(a[worst_index]) if abs_error.size else 0.0

    def largest(a):
        if not a.size:
            return 0.0
        return float("inf") if nonfinite.any() else float(a.max())

    return {
        "name": name, "shape": shape,
        "max_abs_error": largest(abs_error), "max_rel_error": largest(rel_error),
        "worst_index": worst_index, "analytic": pick(analytic), "numeric": pick(numeric),
        "status": status, "note": "\n  ".join(notes), "failing": failing, "nonfinite": nonfinite,
    }
