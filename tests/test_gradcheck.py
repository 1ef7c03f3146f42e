"""gradcheck must pass right backwards and FAIL wrong ones, naming the input and the element.

The broken Functions below each carry one classic mistake a student makes:
a dropped product-rule term, a transposed matrix, a missing accumulation
over repeated indices, a wrong constant factor.
"""
import numpy
import pytest
from hypothesis import given, strategies as st

import minigrad
from minigrad import backend, nn
from minigrad.autograd import Function
from minigrad.gradient_check import GradcheckError, check_module, gradcheck

F64 = minigrad.float64


def leaf(values, device=None):
    return minigrad.tensor(numpy.asarray(values, dtype=numpy.float64), dtype=F64, device=device,
                           requires_grad=True)


def randn(*shape, device=None):
    return minigrad.randn(*shape, dtype=F64, device=device, requires_grad=True)


# --------------------------------------------------------------------- broken backwards

class TimesSquareDroppedTerm(Function):
    """y = a * b * b.   Right: dy/db = 2 a b.  Broken: a b (one product-rule term dropped)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b * b

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        return dout * b * b, dout * a * b          # should be 2 * dout * a * b


class MatMulTransposedGradient(Function):
    """Y = A @ B.   Right: dA = dY @ B^T.  Broken: dY @ B (fits the shape only when B is square)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        return dout @ b, a.T @ dout                # dA should be dout @ b.T


class MatMulTransposedWrongShape(Function):
    """Y = A @ B with dB = (A^T dY)^T: a transposed gradient of the wrong shape on non-square B."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        return dout @ b.T, (a.T @ dout).T


class GetItemAssigns(Function):
    """y = x[ids].   Broken: dx[ids] = dy assigns, so a repeated id keeps only one contribution."""

    @staticmethod
    def forward(ctx, x, ids):
        ctx.shape, ctx.ids = x.shape, ids
        return x[ids]

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        dx = xp.zeros(ctx.shape, dtype=dout.dtype)
        dx[ctx.ids] = dout                         # should be xp.add.at(dx, ctx.ids, dout)
        return dx, None


class SquareMissingFactor(Function):
    """y = x^2.   Right: dy/dx = 2x.  Broken: x (constant factor 2 forgotten)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return (dout * x,)                         # should be 2 * dout * x


class ReLUWrongAtKink(Function):
    """y = relu(x) with dy/dx = 3 at x = 0: outside the one-sided slopes 0 and 1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * (x > 0)

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return (dout * ((x > 0) + 3 * (x == 0)),)


class SquareTimesNaN(Function):
    """y = x^2.   Broken: dy/dx = 2x * NaN (a 0/0 somewhere in backward)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return (2 * dout * x * float("nan"),)


class SquareInfAtOneElement(Function):
    """y = x^2.   Broken: dy/dx is inf at element 1 and right elsewhere."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        dx = 2 * dout * x
        dx[1] = float("inf")
        return (dx,)


# --------------------------------------------------------------------- right backwards pass

def test_passes_on_right_backwards(device):
    a, b = randn(3, 4, device=device), randn(4, 2, device=device)
    report = gradcheck(lambda a, b: (a @ b).tanh() * a.sum(), (a, b))
    assert report.passed and [row["status"] for row in report.rows] == ["ok", "ok"]
    assert [row["name"] for row in report.rows] == ["input 0", "input 1"]
    assert report["input 0"]["shape"] == (3, 4)
    assert report["input 1"]["max_rel_error"] < 1e-5


def test_tuple_and_nested_outputs_and_non_tensor_args():
    a, b = randn(2, 3), randn(2, 3)
    assert gradcheck(lambda a, scale, b: (a * b, ((a - b) * scale,)), (a, 2.5, b))


def test_dropout_uses_the_same_mask_in_every_evaluation():
    x = randn(4, 5)
    assert gradcheck(lambda x: minigrad.functional.dropout(x, 0.5, training=True), (x,))


def test_leaves_data_and_grad_untouched():
    x = randn(2, 3)
    before = x.numpy()
    kept = x.grad = minigrad.ones(2, 3, dtype=x.dtype, device=x.device)
    gradcheck(lambda x: x.exp(), (x,))
    assert numpy.array_equal(x.numpy(), before)
    assert x.grad is kept and numpy.array_equal(x.grad.numpy(), numpy.ones((2, 3)))


def test_input_is_restored_when_fn_raises_midway():
    x = randn(3)
    before = x.numpy()
    calls = []

    def fn(x):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("boom")
        return x * 2

    with pytest.raises(RuntimeError, match="boom"):
        gradcheck(fn, (x,))
    assert numpy.array_equal(x.numpy(), before)


# --------------------------------------------------------------------- wrong backwards fail

def test_dropped_term_fails_on_the_right_input(device):
    a, b = randn(2, 3, device=device), randn(2, 3, device=device)
    with pytest.raises(GradcheckError) as caught:
        gradcheck(TimesSquareDroppedTerm.apply, (a, b))
    report = caught.value.report
    assert report["input 0"]["status"] == "ok"
    row = report["input 1"]
    assert row["status"] == "FAIL"
    # the error a*b is largest where |a * b| is largest
    expected = numpy.unravel_index(numpy.argmax(numpy.abs(a.numpy() * b.numpy() * report_upstream(a, b))), (2, 3))
    assert row["worst_index"] == tuple(int(i) for i in expected)
    assert row["numeric"] == pytest.approx(2 * row["analytic"], rel=1e-5)
    text = str(caught.value)
    assert "input 1" in text and "FAIL" in text and "max rel err" in text


def report_upstream(a, b):
    """The upstream gradient gradcheck uses for a single (2, 3) output at seed 0."""
    return numpy.random.default_rng(0).standard_normal((2, 3))


def test_transposed_gradient_fails_on_a_square_b(device):
    a, b = randn(2, 3, device=device), randn(3, 3, device=device)
    report = gradcheck(MatMulTransposedGradient.apply, (a, b), raise_exception=False)
    assert not report
    assert report["input 0"]["status"] == "FAIL" and report["input 1"]["status"] == "ok"
    worst = report["input 0"]["worst_index"]
    assert len(worst) == 2 and 0 <= worst[0] < 2 and 0 <= worst[1] < 3


def test_transposed_gradient_of_the_wrong_shape_is_named():
    a, b = randn(2, 3), randn(3, 4)
    with pytest.raises(minigrad.autograd.GraphError, match=r"MatMulTransposedWrongShape.*\(4, 3\).*\(3, 4\)"):
        gradcheck(MatMulTransposedWrongShape.apply, (a, b))


def test_missing_accumulation_fails_at_the_repeated_index(device):
    x = randn(4, 3, device=device)
    ids = backend.asarray(numpy.array([2, 0, 2, 1]), device=device)
    report = gradcheck(lambda x: GetItemAssigns.apply(x, ids), (x,), raise_exception=False)
    row = report["input 0"]
    assert row["status"] == "FAIL"
    assert row["worst_index"][0] == 2                       # the row picked twice
    assert "1 of 12" in row["note"] or "2 of 12" in row["note"] or "3 of 12" in row["note"]
    # the engine's own GetItem accumulates and passes
    assert gradcheck(lambda x: x[ids], (x,))


def test_wrong_constant_factor_fails_where_the_error_is_largest():
    x = leaf([0.1, -3.0, 0.5, 1.0])
    report = gradcheck(SquareMissingFactor.apply, (x,), raise_exception=False)
    row = report["input 0"]
    assert row["status"] == "FAIL"
    assert row["numeric"] == pytest.approx(2 * row["analytic"], rel=1e-6)
    v = numpy.random.default_rng(0).standard_normal(4)
    assert row["worst_index"] == (int(numpy.argmax(numpy.abs(x.numpy() * v))),)


@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3))
def test_wrong_factor_always_fails_and_right_always_passes(shape):
    x = randn(*shape)
    assert not gradcheck(SquareMissingFactor.apply, (x,), raise_exception=False)
    assert gradcheck(lambda x: x * x, (x,))


def test_check_module_names_the_broken_parameter():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 2)
            self.scale = nn.Parameter(minigrad.randn(2))

        def forward(self, x):
            return SquareMissingFactor.apply(self.scale) * self.linear(x)

    module = Scaled().double()
    x = randn(4, 3)
    report = check_module(module, x, raise_exception=False)
    assert [row["name"] for row in report.rows] == ["input 0", "scale", "linear.weight", "linear.bias"]
    assert [row["status"] for row in report.rows] == ["ok", "FAIL", "ok", "ok"]
    with pytest.raises(GradcheckError, match="scale"):
        minigrad.check_module(module, x)


def test_check_module_passes_linear_and_layernorm(device):
    module = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Tanh()).double().to(device)
    report = minigrad.check_module(module, randn(2, 3, device=device))
    assert [row["name"] for row in report.rows] == ["input 0", "0.weight", "0.bias", "1.weight", "1.bias"]


# --------------------------------------------------------------------- fast mode

def test_fast_mode_catches_a_wrong_backward(device):
    a, b = randn(5, 3, device=device), randn(3, 3, device=device)
    report = gradcheck(MatMulTransposedGradient.apply, (a, b), fast_mode=True, raise_exception=False)
    assert report["input 0"]["status"] == "FAIL" and report["input 1"]["status"] == "ok"
    assert report["input 0"]["worst_index"] == "direction"
    assert report["input 0"]["shape"] == (5, 3)
    x = randn(40, 30, device=device)
    assert not gradcheck(SquareMissingFactor.apply, (x,), fast_mode=True, raise_exception=False)
    assert gradcheck(lambda x: (x * x).tanh(), (x,), fast_mode=True)


def test_a_nan_gradient_fails_and_names_the_element(device):
    x = randn(3, 2, device=device)
    report = gradcheck(SquareTimesNaN.apply, (x,), raise_exception=False)
    row = report["input 0"]
    assert not report.passed and row["status"] == "FAIL"
    assert "6 element(s) are not finite, first at (0, 0)" in row["note"] and "analytic" in row["note"]
    with pytest.raises(GradcheckError, match="not finite"):
        gradcheck(SquareTimesNaN.apply, (x,))
    assert not gradcheck(SquareTimesNaN.apply, (x,), fast_mode=True, raise_exception=False)


def test_an_inf_gradient_fails_at_that_element(device):
    x = randn(4, device=device)
    row = gradcheck(SquareInfAtOneElement.apply, (x,), raise_exception=False)["input 0"]
    assert row["status"] == "FAIL" and row["worst_index"] == (1,)
    assert "1 element(s) are not finite, first at (1,)" in row["note"]


def test_a_function_that_is_not_finite_near_x_fails_too():
    x = leaf([-1.0, 4.0])        # sqrt(-1) is NaN: the numeric gradient cannot be trusted there
    with numpy.errstate(invalid="ignore"):
        row = gradcheck(lambda x: x.sqrt(), (x,), raise_exception=False)["input 0"]
    assert row["status"] == "FAIL" and "first at (0,)" in row["note"] and "numeric" in row["note"]


def test_finite_differences_is_the_one_code_path():
    from minigrad import finite_differences as fd
    from minigrad import gradient_check
    assert gradient_check.compare is fd.compare
    assert fd.central_difference(numpy.array([3.0]), numpy.array([1.0]), 0.5).tolist() == [2.0]
    assert fd.relative_error(numpy.array([1.0, 0.0]), numpy.array([3.0, 0.0])).tolist() == [2.0 / 3.0, 0.0]
    slope = numpy.array([1.0, 2.0])        # L = <slope, x> around x = 0: L(+-eps e_i) = +-eps slope_i
    row = fd.compare("w", (2,), slope, 1e-6 * slope, -1e-6 * slope, 0.0, 1e-6, 1e-5, 1e-3, nudge=None)
    assert row["status"] == "ok" and not row["failing"].any()


def test_the_module_is_not_shadowed_by_the_function():
    import importlib
    module = importlib.import_module("minigrad.gradient_check")
    assert minigrad.gradcheck is module.gradcheck and minigrad.check_module is module.check_module
    assert not hasattr(minigrad.gradcheck, "check_module")


# --------------------------------------------------------------------- kinks

def test_relu_at_zero_is_a_kink_not_a_failure(device):
    x = leaf([-1.0, 0.0, 2.0, 0.0], device=device)
    report = gradcheck(lambda x: x.relu(), (x,))
    row = report["input 0"]
    assert report.passed and row["status"] == "kink"
    assert "2 element(s), e.g. (1,)" in row["note"] and "kink" in row["note"]


def test_max_with_ties_is_a_kink_not_a_failure():
    x = leaf([[1.0, 3.0, 3.0], [0.5, -2.0, 0.25]])
    report = gradcheck(lambda x: x.amax(dim=1), (x,))
    assert report.passed and report["input 0"]["status"] == "kink"
    assert "e.g. (0, 1)" in report["input 0"]["note"]
    report = gradcheck(lambda x: x.max(), (x,))
    assert report.passed and report["input 0"]["status"] == "kink"


def test_a_wrong_value_at_a_kink_still_fails():
    x = leaf([-1.0, 0.0, 2.0])
    report = gradcheck(ReLUWrongAtKink.apply, (x,), raise_exception=False)
    assert report["input 0"]["status"] == "FAIL" and report["input 0"]["worst_index"] == (1,)


def test_strong_curvature_is_not_mistaken_for_a_kink():
    # exp(8) has f'' = 3e3: the one-sided gap (eps f'' = 3e-3) is far above atol, yet smooth
    x = leaf([8.0, 0.5])
    report = gradcheck(lambda x: x.exp(), (x,), atol=1e-7, rtol=1e-9, raise_exception=False)
    assert report["input 0"]["status"] != "kink"
    assert gradcheck(lambda x: x.exp(), (x,))["input 0"]["status"] == "ok"


# --------------------------------------------------------------------- inputs and numbers

def test_float32_is_refused_with_advice():
    x = minigrad.randn(3, dtype=minigrad.float32, requires_grad=True)
    with pytest.raises(TypeError, match="float64"):
        gradcheck(lambda x: x * 2, (x,))
    linear = nn.Linear(3, 2)        # float32 parameters
    with pytest.raises(TypeError, match=r"weight.*float64.*double\(\)"):
        check_module(linear, randn(1, 3))
    y = randn(3)
    with pytest.raises(TypeError, match="output 0 has dtype float32"):
        gradcheck(lambda y: y.float() * 2, (y,))


def test_zero_gradients_give_zero_relative_error_not_nan():
    x = randn(2, 2)
    report = gradcheck(lambda x: x * 0.0, (x,))
    row = report["input 0"]
    assert row["max_rel_error"] == 0.0 and row["max_abs_error"] == 0.0 and row["status"] == "ok"
    report = gradcheck(lambda x, y: x * 2, (x, randn(3)))   # input 1 is unused: gradient 0
    assert report["input 1"]["max_rel_error"] == 0.0 and not numpy.isnan(report["input 1"]["analytic"])


def test_size_zero_and_scalar_inputs():
    empty = minigrad.zeros(0, 3, dtype=F64, requires_grad=True)
    scalar = leaf(0.7)
    report = gradcheck(lambda e, s: (e.sum() + s * s), (empty, scalar))
    assert report["input 0"]["worst_index"] == () and report["input 1"]["status"] == "ok"


def test_nothing_to_check_and_non_leaf_inputs_are_explained():
    with pytest.raises(ValueError, match="requires_grad"):
        gradcheck(lambda x: x * 2, (minigrad.zeros(2, dtype=F64),))
    with pytest.raises(ValueError, match="not a leaf"):
        gradcheck(lambda x: x * 2, (randn(2) * 3,))


def test_table_lists_every_column_and_the_settings():
    x = leaf([1.0, -2.0])
    text = gradcheck(SquareMissingFactor.apply, (x,), raise_exception=False).table()
    for word in ("name", "shape", "max abs err", "max rel err", "worst index", "analytic", "numeric",
                 "status", "eps=1e-06", "FAIL", "input 0", "(2,)"):
        assert word in text
