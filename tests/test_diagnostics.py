"""Diagnoses on host arrays: loop bounds vs a missing carry, float32, NaN, transposes, factors."""
import numpy as np
import pytest

from minigrad.coursework.grading.diagnostics import compare, diagnose_gradient, dtype_problem, factor_text
from minigrad.functions.rnn_steps import rnn_step_backward, rnn_step_forward

T, N, D, H = 5, 2, 3, 4
ATOL, RTOL = 1e-5, 1e-3


def rnn_dx(loop="right"):
    """dx (T, N, D) of an RNN over T steps, from a correct BPTT loop or from one of the usual mistakes."""
    rng = np.random.default_rng(0)
    x, h = rng.standard_normal((T, N, D)), rng.standard_normal((N, H))
    w_ih, w_hh = 0.5 * rng.standard_normal((H, D)), 0.5 * rng.standard_normal((H, H))
    caches = []
    for t in range(T):
        h, cache = rnn_step_forward(x[t], h, w_ih, w_hh)
        caches.append(cache)
    dh = rng.standard_normal((T, N, H))
    dx = np.zeros((T, N, D))
    dh_next = np.zeros((N, H))
    steps = {"right": range(T), "skips t=0": range(1, T), "skips the last step": range(T - 1),
             "no carry": range(T)}[loop]
    for t in reversed(steps):
        upstream = dh[t] if loop == "no carry" else dh[t] + dh_next
        dx[t], dh_next, *_ = rnn_step_backward(upstream, caches[t])
    return dx


def diagnose(yours, expected, **options):
    return diagnose_gradient("dx", "x", yours, expected, ATOL, RTOL, **options)


def test_a_loop_that_skips_t0_is_a_loop_bound_not_a_missing_carry():
    result = diagnose(rnn_dx("skips t=0"), rnn_dx(), time_axis=0)
    assert not result["ok"] and result["kind"] == "loop_bounds"
    assert "all zeros at t=0 (the first step)" in result["message"] and "range(1, T) skips the first" in result["message"]
    assert "carried through time" not in result["message"]


def test_a_loop_that_skips_the_last_step_is_a_loop_bound():
    result = diagnose(rnn_dx("skips the last step"), rnn_dx(), time_axis=0)
    assert result["kind"] == "loop_bounds"
    assert f"all zeros at t={T - 1} (the last step)" in result["message"]
    assert "carried through time" not in result["message"]


def test_a_missing_carry_is_right_at_the_last_step_only():
    result = diagnose(rnn_dx("no carry"), rnn_dx(), time_axis=0)
    assert result["kind"] == "carry"
    assert f"right at the last time step only (from t={T - 1} on)" in result["message"]
    assert "missing the gradient carried through time" in result["message"]


def test_wrong_only_at_the_first_or_the_last_step_is_named_as_such():
    expected = rnn_dx()
    first, last = expected.copy(), expected.copy()
    first[0] *= 1.5
    last[-1] += 0.3
    assert "wrong at the first step t=0 only" in diagnose(first, expected, time_axis=0)["message"]
    assert diagnose(first, expected, time_axis=0)["kind"] == "loop_bounds"
    assert f"wrong at the last step t={T - 1} only" in diagnose(last, expected, time_axis=0)["message"]
    # without a time axis nothing is said about steps
    assert diagnose(first, expected)["kind"] == "values"


def test_float32_is_a_dtype_problem_with_no_backward_hint():
    expected = rnn_dx()
    message = dtype_problem("dx", expected.astype(np.float32))
    assert "dx is float32, but float64 is expected" in message and "finite differences" in message
    assert "print the same" in message
    assert dtype_problem("dx", expected) == "" and dtype_problem("n", np.arange(3)) == ""
    result = diagnose(expected.astype(np.float32), expected, time_axis=0)   # right values, wrong dtype
    assert not result["ok"] and result["kind"] == "dtype" and result["message"] == message
    forward = compare("h", expected.astype(np.float32), expected, 1e-9, 1e-6)
    assert not forward["ok"] and forward["kind"] == "dtype" and "float64 is expected" in forward["message"]
    assert "carried" not in forward["message"] and "backward" not in forward["message"]
    # the values themselves are within the tolerance here: only the dtype is wrong
    assert compare("h", expected.astype(np.float32), expected, 1e-9, 1e-6, check_dtype=False)["ok"]


def test_nan_and_inf_fail_and_say_where():
    expected = rnn_dx()
    for bad in (np.nan, np.inf):
        yours = expected.copy()
        yours[1, 0, 2] = bad
        result = diagnose(yours, expected, time_axis=0)
        assert not result["ok"] and result["kind"] == "nonfinite"
        assert "NaN or inf (first at dx[1, 0, 2])" in result["message"]
    assert not compare("h", np.full(3, np.nan), np.zeros(3), 1e-9, 1e-6)["ok"]


def test_shapes_transposes_factors_and_plain_differences():
    rng = np.random.default_rng(1)
    expected = rng.standard_normal((3, 4))
    assert diagnose(expected.copy(), expected)["ok"]
    assert "it is the transpose of the right gradient" in diagnose(expected.T.copy(), expected)["message"]
    assert "shape (2, 4), but x has shape (3, 4)" in diagnose(expected[:2], expected)["message"]
    square = rng.standard_normal((3, 3))
    assert diagnose(square.T.copy(), square)["kind"] == "transpose"
    assert "factor of 2" in diagnose(2 * expected, expected)["message"]
    assert "wrong sign" in diagnose(-expected, expected)["message"]
    assert diagnose(0 * expected, expected)["kind"] == "zero"
    assert "is None" in diagnose(None, expected)["message"]
    wrong = expected.copy()
    wrong[2, 1] += 1.0
    result = diagnose(wrong, expected)
    assert result["worst"] == "dx[2, 1]" and result["kind"] == "values"
    assert [factor_text(c) for c in (2.0, 0.5, -1.0, 1 / 3, 1.37)] == ["2", "1/2", "-1", "1/3", "1.37"]


def test_max_rel_error_is_the_shared_definition():
    from minigrad.finite_differences import relative_error
    yours, expected = np.array([1.0, 2.0, 0.0]), np.array([1.0, 2.5, 1e-3])
    assert compare("y", yours, expected, 1e-9, 1e-6)["max_rel_error"] == pytest.approx(relative_error(yours, expected).max())


# ----------------------------------------------------------------------------- the students' check_backward

def sigmoid_forward(x):
    y = 1 / (1 + np.exp(-x))
    return y, y


def sigmoid_backward(dout, y):
    return dout * y * (1 - y)


def test_check_backward_passes_a_right_backward_and_returns_rows():
    from minigrad.coursework import check_backward
    rows = check_backward(sigmoid_forward, sigmoid_backward, [np.linspace(-2, 2, 6).reshape(2, 3)], names=["dx"])
    assert [row["status"] for row in rows] == ["ok"] and rows[0]["max_rel_error"] < 1e-6


def test_check_backward_fails_on_a_single_nan():
    """max() over [1e-10, nan] is 1e-10: a NaN used to pass the public tests the grader failed."""
    from minigrad.coursework import check_backward

    def nan_backward(dout, y):
        dx = sigmoid_backward(dout, y)
        dx[1, 2] = np.nan
        return dx

    with pytest.raises(AssertionError, match=r"dx contains NaN or inf \(first at dx\[1, 2\]\)"):
        check_backward(sigmoid_forward, nan_backward, [np.linspace(-2, 2, 6).reshape(2, 3)], names=["dx"])


def test_check_backward_fails_on_float32_and_on_a_wrong_gradient():
    from minigrad.coursework import check_backward
    x = [np.linspace(-2, 2, 6).reshape(2, 3)]
    with pytest.raises(AssertionError, match="dx is float32, but float64 is expected"):
        check_backward(sigmoid_forward, lambda d, y: sigmoid_backward(d, y).astype(np.float32), x, names=["dx"])
    with pytest.raises(AssertionError, match="float32, but float64 is expected"):
        check_backward(lambda x: sigmoid_forward(x.astype(np.float32)), sigmoid_backward, x, names=["dx"])
    with pytest.raises(AssertionError, match="factor of 2"):
        check_backward(sigmoid_forward, lambda d, y: 2 * sigmoid_backward(d, y), x, names=["dx"])
