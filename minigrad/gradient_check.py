"""gradcheck and check_module: compare hand-written backwards with finite differences.

For outputs y_k = fn(x) and fixed random upstream gradients v_k, the scalar

    L(x) = sum_k <v_k, y_k(x)>

has dL/dx = sum_k J_k^T v_k, which is exactly what backward computes: the
"analytic" gradient a.  Each element x_i is then nudged by +-eps and the
central difference

    n_i = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)

is the "numeric" one.  Element i passes when |a_i - n_i| <= atol + rtol |n_i|.
``fast_mode`` nudges x along one random unit direction u instead, and compares
<a, u> with (L(x + eps u) - L(x - eps u)) / (2 eps): two evaluations per input
instead of two per element.

The numbers are judged by ``finite_differences.compare``, the one
central-difference code path (with its kink policy and relative error) that
the lessons and the coursework grader use too.  float32 inputs are refused:
the difference quotient keeps too few correct digits in float32 to judge a
backward (see finite_differences).  A NaN or inf in either gradient fails.
"""
import numpy

from . import backend
from .autograd import no_grad
from .finite_differences import EPS, TINY, compare
from .tensor import Tensor

# gradcheck's own random stream, never the one manual_seed(seed) gives: an upstream gradient
# equal to the test's first random input would hide bugs that x^T x symmetry masks
_STREAM = 0x67726164


class GradcheckError(RuntimeError):
    """Raised by gradcheck when an analytic gradient differs from finite differences."""

    def __init__(self, report, message=None):
        super().__init__(message or "gradcheck failed:\n" + report.table())
        self.report = report


class GradcheckReport:
    """The result of a gradient check: one row per checked input or parameter.

    Each row is a dict with: name, shape, max_abs_error, max_rel_error,
    worst_index, analytic, numeric (both at worst_index), status ("ok",
    "kink" or "FAIL") and note.  ``bool(report)`` is True when no row failed.
    ``report["weight"]`` is the row named "weight".
    """

    def __init__(self, rows, settings=""):
        self.rows = rows
        self.settings = settings

    @property
    def passed(self):
        return all(row["status"] != "FAIL" for row in self.rows)

    def __bool__(self):
        return self.passed

    def __getitem__(self, name):
        for row in self.rows:
            if row["name"] == name:
                return row
        raise KeyError(f"no row named {name!r}; rows: {[row['name'] for row in self.rows]}")

    def table(self):
        header = ("name", "shape", "max abs err", "max rel err", "worst index", "analytic", "numeric", "status")
        lines = [header]
        for row in self.rows:
            lines.append((
                row["name"], str(row["shape"]), f"{row['max_abs_error']:.3e}", f"{row['max_rel_error']:.3e}",
                str(row["worst_index"]), f"{row['analytic']:.6g}", f"{row['numeric']:.6g}", row["status"],
            ))
        widths = [max(len(line[c]) for line in lines) for c in range(len(header))]
        text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
        text.insert(1, "  ".join("-" * w for w in widths))
        if self.settings:
            text.insert(0, self.settings)
        notes = [f"{row['name']}: {row['note']}" for row in self.rows if row["note"]]
        return "\n".join(text + notes)

    def __str__(self):
        return self.table()

    __repr__ = __str__


def _as_tuple(outputs):
    """Flatten nested tuples of outputs, such as LSTM's (output, (h_n, c_n))."""
    if not isinstance(outputs, (tuple, list)):
        return (outputs,)
    flat = []
    for out in outputs:
        flat.extend(_as_tuple(out))
    return tuple(flat)


def _refuse_low_precision(what, dtype):
    if dtype != numpy.float64:
        raise TypeError(
            f"gradcheck: {what} has dtype {dtype}; gradcheck needs float64 (a finite difference in "
            f"{dtype} keeps too few correct digits to judge a backward). Create the inputs with "
            "dtype=minigrad.float64, and call module.double() on a Module."
        )


class _Objective:
    """L(x) = sum_k <v_k, y_k(x)>, with v_k drawn once from a seeded generator."""

    def __init__(self, fn, args, seed, checked_elements=1):
        self.fn, self.args = fn, args
        self.rng_state = backend.host_generator().bit_generator.state
        outputs = self._call()
        rng = numpy.random.default_rng([seed, _STREAM])
        self.upstream = []
        for position, out in enumerate(outputs):
            if isinstance(out, Tensor) and out.dtype.kind == "f":
                _refuse_low_precision(f"output {position}", out.dtype)
                v = rng.standard_normal(out.shape)
                self.upstream.append(backend.asarray(v, dtype=out.dtype, device=out.device))
            else:                   # integer outputs (argmax indices) carry no gradient
                self.upstream.append(None)
        self.outputs = outputs
        # inputs with no elements have nothing to compare either way; any other must reach an output
        if checked_elements and not any(v is not None and out.requires_grad for out, v in zip(outputs, self.upstream)):
            kinds = ", ".join(type(out).__name__ if not isinstance(out, Tensor) else
                              f"Tensor({out.dtype}, requires_grad={out.requires_grad})" for out in outputs)
            raise GradcheckError(None, (
                f"gradcheck: fn returned no floating Tensor that depends on the inputs (got: {kinds}), so "
                "there is nothing to compare and every row would pass vacuously. Return the Tensor itself: "
                "not .item(), .tolist(), .numpy() or a Tensor rebuilt from them, and not a detach()ed one"))

    def _call(self):
        # the same random draws (dropout masks) in every evaluation
        backend.host_generator().bit_generator.state = self.rng_state
        return _as_tuple(self.fn(*self.args))

    def value(self):
        with no_grad():
            outputs = self._call()
        total = 0.0
        for out, v in zip(outputs, self.upstream):
            if v is not None:
                total += float((out._data * v).sum())
        return total

    def backward(self):
        """Run backward once per output with its v_k; the gradients add up in .grad."""
        outputs = [(o, v) for o, v in zip(self.outputs, self.upstream) if v is not None and o.requires_grad]
        for position, (out, v) in enumerate(outputs):
            out.backward(v, retain_graph=position < len(outputs) - 1)


def _nudged_value(objective, data, index, step):
    """L(x) with x[index] moved by ``step``; x is restored even if fn raises."""
    original = data[index].copy()
    data[index] = original + step
    try:
        return objective.value()
    finally:
        data[index] = original


def _check(fn, args, named, eps, atol, rtol, fast_mode, raise_exception, seed):
    for name, tensor in named:
        _refuse_low_precision(name, tensor.dtype)
        if tensor.grad_fn is not None:
            raise ValueError(
                f"gradcheck: {name} is not a leaf (it was computed by {tensor.grad_fn.name()}); "
                "pass x.detach().requires_grad_() and do the computation inside fn"
            )
    if eps is None:
        eps = EPS

    # the analytic gradient, leaving any .grad the caller had untouched
    saved_grads = [t.grad for _, t in named]
    for _, tensor in named:
        tensor.grad = None
    try:
        objective = _Objective(fn, args, seed, sum(t.numel() for _, t in named))
        objective.backward()
        analytic = [numpy.zeros(t.shape) if t.grad is None else backend.to_numpy(t.grad._data) for _, t in named]
    finally:
        for (_, tensor), grad in zip(named, saved_grads):
            tensor.grad = grad

    rows = []
    rng = numpy.random.default_rng([seed, _STREAM + 1])
    center = objective.value()
    for (name, tensor), grad in zip(named, analytic):
        data = tensor._data
        analytic_nonzero = bool((grad != 0).any())
        if fast_mode:   # one random unit direction u:  <grad, u>  vs  (L(x + eps u) - L(x - eps u)) / (2 eps)
            u = rng.standard_normal(tensor.shape)
            u /= max(float(numpy.linalg.norm(u)), TINY)

            def nudge(index, step, data=data, u=u, device=tensor.device):
                return _nudged_value(objective, data, Ellipsis,
                                     backend.asarray(u * step, dtype=data.dtype, device=device))

            shape = ()
            grad = numpy.array(float((grad * u).sum()))
        else:
            def nudge(index, step, data=data):
                return _nudged_value(objective, data, index, step)

            shape = tuple(tensor.shape)
        plus = numpy.zeros(shape)
        minus = numpy.zeros(shape)
        for index in numpy.ndindex(*shape):
            plus[index] = nudge(index, eps)
            minus[index] = nudge(index, -eps)
        row = compare(name, shape, grad, plus, minus, center, eps, atol, rtol, nudge)
        del row["failing"], row["nonfinite"]
        if not analytic_nonzero and (plus != minus).any():     # vacuous: the graph never reached x
            row["status"] = "FAIL"
            vacuous = (f"the analytic gradient is identically zero but finite differences are not (max |numeric| "
                       f"= {float(abs(plus - minus).max() / (2 * eps)):.3g}): fn's output does not reach this input "
                       "through the graph (.item(), .numpy(), detach(), or a Tensor rebuilt from raw data?)")
            row["note"] = (row["note"] + " " if row["note"] else "") + vacuous
        if fast_mode:
            row["shape"], row["worst_index"] = tuple(tensor.shape), "direction"
        rows.append(row)
    mode = "fast mode: one random direction per input" if fast_mode else "every element"
    report = GradcheckReport(rows, f"gradcheck ({mode}; eps={eps:g}, atol={atol:g}, rtol={rtol:g})")
    if raise_exception and not report.passed:
        raise GradcheckError(report)
    return report


def _inputs_to_check(inputs):
    named = []
    for position, value in enumerate(inputs):
        if isinstance(value, Tensor) and value.requires_grad:
            named.append((f"input {position}", value))
    return named


def gradcheck(fn, inputs, *, eps=None, atol=1e-5, rtol=1e-3, fast_mode=False,
              raise_exception=True, seed=0):
    """Check the gradient of ``fn`` for every input that requires grad.

    fn:      called as fn(*inputs); returns a Tensor or a (nested) tuple of Tensors
    inputs:  a Tensor or a tuple of Tensors (and other arguments); the ones to
             check are float64 leaves with requires_grad=True
    eps:     finite-difference step (None: finite_differences.EPS, 1e-6)
    atol, rtol: an element passes when |analytic - numeric| <= atol + rtol |numeric|
    fast_mode: compare one random directional derivative per input instead
               of every element (for large tensors)
    seed:    seeds the random upstream gradients and directions

    Returns a GradcheckReport (truthy when no input failed; print it for the
    table); raises GradcheckError, whose text is the table, when one fails and
    ``raise_exception``.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    named = _inputs_to_check(inputs)
    if not named:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    return _check(fn, inputs, named, eps, atol, rtol, fast_mode, raise_exception, seed)


def check_module(module, *inputs, eps=None, atol=1e-5, rtol=1e-3, fast_mode=False,
                 raise_exception=True, seed=0):
    """gradcheck over the inputs that require grad and every parameter of ``module``.

    Rows are named "input 0", ... and by parameter name ("weight", "layers.0.bias", ...).
    Call ``module.double()`` and pass float64 inputs first.
    """
    named = _inputs_to_check(inputs)
    named += [(name, p) for name, p in module.named_parameters() if p.requires_grad]
    if not named:
        raise ValueError("check_module: nothing requires grad (no parameters and no input with requires_grad)")
    return _check(lambda *args: module(*args), inputs, named, eps, atol, rtol, fast_mode,
                  raise_exception, seed)

