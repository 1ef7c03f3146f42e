"""gradcheck: compare hand-written backwards with finite differences.

For outputs y_k = fn(x) and fixed random upstream gradients v_k, the scalar

    L(x) = sum_k <v_k, y_k(x)>

has dL/dx = sum_k J_k^T v_k, which is exactly what backward computes.  Each
element x_i is then nudged by +-eps and the central difference

    n_i = (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)

is compared with the analytic a_i:  pass when |a_i - n_i| <= atol + rtol |n_i|.
Why float64: the difference quotient loses about half the digits of the dtype
to cancellation, so float32 (7 digits) leaves ~3 digits, too few to tell a
right backward from a slightly wrong one.

At a kink (relu at 0, max with a tie) the one-sided differences
(L(x + eps e_i) - L(x)) / eps and (L(x) - L(x - eps e_i)) / eps disagree, and
the central difference is their average, not a derivative.  An analytic value
between the two one-sided ones is then reported as "kink", not as a failure.
"""
import numpy

from . import backend
from .autograd import no_grad
from .tensor import Tensor

EPS_BY_DTYPE = {numpy.dtype("float64"): 1e-6}
TINY = 1e-300


class GradcheckError(RuntimeError):
    """Raised by gradcheck when an analytic gradient differs from finite differences."""

    def __init__(self, report):
        super().__init__("gradcheck failed:\n" + report.table())
        self.report = report


class GradcheckReport:
    """The result of a gradient check: one row per checked input or parameter.

    Each row is a dict with: name, shape, max_abs_error, max_rel_error,
    worst_index, analytic, numeric, status ("ok", "FAIL", "kink"), note.
    ``bool(report)`` is True when every row passed.
    """

    def __init__(self, rows):
        self.rows = rows

    @property
    def passed(self):
        return all(row["status"] != "FAIL" for row in self.rows)

    def __bool__(self):
        return self.passed

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


class _Objective:
    """L(x) = sum_k <v_k, y_k(x)>, with v_k drawn once from a seeded generator."""

    def __init__(self, fn, args, seed):
        self.fn, self.args = fn, args
        self.rng_state = backend.host_generator().bit_generator.state
        outputs = self._call()
        rng = numpy.random.default_rng(seed)
        self.upstream = []
        for out in outputs:
            if isinstance(out, Tensor) and out.dtype.kind == "f":
                v = rng.standard_normal(out.shape)
                self.upstream.append(backend.asarray(v, dtype=out.dtype, device=out.device))
            else:
                self.upstream.append(None)
        self.outputs = outputs

    def _call(self):
        # the same random draws (dropout) in every evaluation
        backend.host_generator().bit_generator.state = self.rng_state
        return _as_tuple(self.fn(*self.args))

    def value(self):
        with no_grad():
            outputs = self._call()
        total = 0.0
        for out, v in zip(outputs, self.upstream):
            if v is not None:
                total += float((out.data * v).sum())
        return total

    def backward(self):
        """Run backward once per output with its v_k; gradients add up in .grad."""
        outputs = [(o, v) for o, v in zip(self.outputs, self.upstream) if v is not None and o.requires_grad]
        for position, (out, v) in enumerate(outputs):
            out.backward(v, retain_graph=position < len(outputs) - 1)


def _compare(name, tensor, analytic, plus, minus, center, eps, atol, rtol):
    """One report row from host arrays of analytic and perturbed objective values."""
    numeric = (plus - minus) / (2 * eps)
    abs_error = numpy.abs(analytic - numeric)
    rel_error = abs_error / numpy.maximum(numpy.maximum(numpy.abs(analytic), numpy.abs(numeric)), TINY)
    allowed = atol + rtol * numpy.abs(numeric)
    failing = abs_error > allowed
    status, note = "ok", ""
    if failing.any() and center is not None:
        right = (plus - center) / eps
        left = (center - minus) / eps
        one_sided_gap = numpy.abs(right - left)
        kink = one_sided_gap > 10 * allowed
        between = ((analytic >= numpy.minimum(left, right) - allowed)
                   & (analytic <= numpy.maximum(left, right) + allowed))
        explained = failing & kink & between
        if explained.any():
            status = "kink"
            where = tuple(int(i) for i in numpy.unravel_index(numpy.argmax(explained), analytic.shape))
            note = (f"{int(explained.sum())} element(s), e.g. {where}, sit at a kink (one-sided differences "
                    f"{left[where]:.4g} and {right[where]:.4g} disagree); the analytic value lies between them, "
                    "so central differences cannot judge it. Move the inputs away from the kink to check it.")
        failing = failing & ~explained
    if failing.any():
        status = "FAIL"
        worst = numpy.argmax(numpy.where(failing, abs_error / allowed, -1.0))
    else:
        worst = numpy.argmax(abs_error) if abs_error.size else 0
    worst_index = tuple(int(i) for i in numpy.unravel_index(worst, analytic.shape)) if analytic.size else ()
    pick = (lambda a: float(a[worst_index])) if analytic.size else (lambda a: 0.0)
    return {
        "name": name, "shape": tuple(tensor.shape),
        "max_abs_error": float(abs_error.max()) if abs_error.size else 0.0,
        "max_rel_error": float(rel_error.max()) if rel_error.size else 0.0,
        "worst_index": worst_index, "analytic": pick(analytic), "numeric": pick(numeric),
        "status": status, "note": note,
    }


def _check(fn, args, named, eps, atol, rtol, fast_mode, raise_exception, seed):
    for name, tensor in named:
        if tensor.dtype != numpy.float64:
            raise TypeError(
                f"gradcheck: {name} has dtype {tensor.dtype}; finite differences need float64 "
                "(float32 keeps only ~3 correct digits of a difference quotient). Create the inputs "
                "with dtype=minigrad.float64 and call module.double()."
            )
    if eps is None:
        eps = EPS_BY_DTYPE[numpy.dtype("float64")]
    saved_grads = [t.grad for _, t in named]
    for _, tensor in named:
        tensor.grad = None
    objective = _Objective(fn, args, seed)
    objective.backward()
    analytic = []
    for name, tensor in named:
        grad = tensor.grad
        analytic.append(numpy.zeros(tensor.shape) if grad is None else backend.to_numpy(grad))
    for (_, tensor), grad in zip(named, saved_grads):
        tensor.grad = grad

    rows = []
    rng = numpy.random.default_rng(seed + 1)
    center = None if fast_mode else objective.value()
    for (name, tensor), grad in zip(named, analytic):
        data = tensor.data
        if fast_mode:  # one random direction u:  <grad, u>  vs  (L(x + eps u) - L(x - eps u)) / (2 eps)
            u = rng.standard_normal(tensor.shape)
            u /= max(numpy.linalg.norm(u), TINY)
            original = data.copy()
            step = backend.asarray(u * eps, dtype=data.dtype, device=tensor.device)
            data[...] = original + step
            plus = objective.value()
            data[...] = original - step
            minus = objective.value()
            data[...] = original
            row = _compare(name, tensor, numpy.array(float((grad * u).sum())),
                           numpy.array(plus), numpy.array(minus), None, eps, atol, rtol)
            row["worst_index"] = "direction"
            rows.append(row)
            continue
        plus = numpy.zeros(tensor.shape)
        minus = numpy.zeros(tensor.shape)
        for index in numpy.ndindex(*tensor.shape):
            original = float(data[index])
            data[index] = original + eps
            plus[index] = objective.value()
            data[index] = original - eps
            minus[index] = objective.value()
            data[index] = original
        rows.append(_compare(name, tensor, grad, plus, minus, numpy.full(tensor.shape, center),
                             eps, atol, rtol))
    report = GradcheckReport(rows)
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

    fn:      called as fn(*inputs); returns a Tensor or a tuple of Tensors
    inputs:  a Tensor or a tuple of Tensors (and other arguments); float64
    eps:     finite-difference step (default 1e-6 for float64)
    atol, rtol: an element passes when |analytic - numeric| <= atol + rtol |numeric|
    fast_mode: compare one random directional derivative per input instead
               of every element (for large tensors)

    Returns a GradcheckReport (truthy when every input passed); raises
    GradcheckError with the report's table when one fails and raise_exception.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    named = _inputs_to_check(inputs)
    if not named:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    return _check(fn, inputs, named, eps, atol, rtol, fast_mode, raise_exception, seed)


def check_module(module, *inputs, eps=None, atol=1e-5, rtol=1e-3, fast_mode=False,
                 raise_exception=True, seed=0):
    """gradcheck over the inputs that require grad and every parameter of ``module``.

    Rows are named "input 0", ... and by parameter name ("weight", "bias_hh_l0", ...).
    """
    named = _inputs_to_check(inputs)
    named += [(name, p) for name, p in module.named_parameters() if p.requires_grad]
    if not named:
        raise ValueError("check_module: nothing requires grad (no parameters and no input with requires_grad)")
    return _check(lambda *args: module(*args), inputs, named, eps, atol, rtol, fast_mode,
                  raise_exception, seed)


gradcheck.check_module = check_module  # so that minigrad.gradcheck.check_module(...) works
