"""Grade a submission: compare each forward with the reference, then gradient-check the backward.

An assignment is a folder (see ``assignments/``) holding the reference
solution, a ``checks.json`` the grader reads and the student files.  Each check
in ``checks.json`` names one function (or layer) and how to call it:

    kind "pair"      CS231n style:  out, cache = f_forward(*inputs);  grads = f_backward(dout, cache)
    kind "function"  a minigrad Function subclass: forward(ctx, *arrays) and backward(ctx, *douts)
    kind "autograd"  a function on Tensors, or an nn.Module ("class"), differentiated by minigrad;
                     a module's parameters are copied from the reference's

For every case (hidden shapes, a fixed seed) the grader

    1. draws the inputs and runs the reference and the student's forward: a
       forward that differs fails the check, and the backward is not judged;
    2. draws upstream gradients v_k for the outputs y_k, runs the student's
       backward, and compares it with the central differences of the student's
       own forward on L = sum_k <v_k, y_k>, in float64, element by element;
    3. explains a mismatch with ``diagnostics.diagnose_gradient``.

Each check runs in its own process (``sandbox.run_check``), so checks do not
depend on one another, and a submission that hangs or crashes fails only the
check it hangs or crashes in.
"""
import errno
import importlib.util
import json
import os
import sys
import traceback

import numpy

from .diagnostics import compare, diagnose_gradient
from .hints import hints_for
from .sandbox import run_check

ASSIGNMENTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assignments")
EPS = 1e-6


class Assignment:
    """An assignment folder: ``path``, ``name``, ``spec`` (its checks.json), ``module`` (the file students write)."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        with open(os.path.join(self.path, "checks.json"), encoding="utf-8") as f:
            self.spec = json.load(f)
        self.name = self.spec.get("name", os.path.basename(self.path))
        self.title = self.spec.get("title", self.name)
        self.module = self.spec["module"]
        self.checks = self.spec["checks"]

    @property
    def reference(self):
        return os.path.join(self.path, self.module)

    def check(self, name):
        for check in self.checks:
            if check["name"] == name:
                return check
        raise KeyError(f"assignment {self.name} has no check named {name!r}: "
                       f"use one of {', '.join(c['name'] for c in self.checks)}")


def list_assignments():
    """The shipped assignments, in course order."""
    found = []
    for name in sorted(os.listdir(ASSIGNMENTS_DIR)):
        if os.path.isfile(os.path.join(ASSIGNMENTS_DIR, name, "checks.json")):
            found.append(Assignment(os.path.join(ASSIGNMENTS_DIR, name)))
    return sorted(found, key=lambda a: (a.spec.get("order", 99), a.name))


def load_assignment(name_or_path):
    """A shipped assignment by name ("rnn"), or any assignment folder by path."""
    if isinstance(name_or_path, Assignment):
        return name_or_path
    if os.path.isfile(os.path.join(name_or_path, "checks.json")):
        return Assignment(name_or_path)
    shipped = {a.name: a for a in list_assignments()}
    if name_or_path not in shipped:
        raise ValueError(f"no assignment named {name_or_path!r}: the shipped ones are "
                         f"{', '.join(shipped)} (or pass the path of a folder with a checks.json)")
    return shipped[name_or_path]


def find_submission(path, assignment):
    """The student's file: ``path`` itself, or the assignment's module file inside the folder ``path``."""
    if os.path.isdir(path):
        return os.path.join(path, assignment.module)
    return path


# --------------------------------------------------------------------------- the parent side

def grade(submission, assignment, only=None, time_limit=10.0, memory_mb=1024):
    """Grade one submission; returns one result dict per check.

    Each result: name, passed, score, max_score, max_rel_error, worst, message, hint.
    ``only`` restricts grading to some check names.  The submission is first
    imported once on its own: when the import fails, every check fails with
    that reason and no check is run.
    """
    assignment = load_assignment(assignment)
    submission = find_submission(submission, assignment)
    checks = [c for c in assignment.checks if only is None or c["name"] in only]
    if not os.path.isfile(submission):
        probe = {"passed": False, "message": f"no file {submission} (the assignment's file is {assignment.module})"}
    else:
        probe = run_check(assignment.path, submission, "__import__", time_limit, memory_mb)
    results = []
    for check in checks:
        if probe["passed"]:
            outcome = run_check(assignment.path, submission, check["name"], time_limit, memory_mb)
        else:
            outcome = dict(probe, message="your file could not be imported: " + probe["message"])
        points = check.get("points", 1)
        results.append({
            "name": check["name"], "passed": bool(outcome["passed"]),
            "score": points if outcome["passed"] else 0, "max_score": points,
            "max_rel_error": outcome.get("max_rel_error"), "worst": outcome.get("worst", ""),
            "message": outcome.get("message", ""),
            # i11-content: hints in levels (hints.py); i11-engine's rewrite of this file supersedes it at merge
            "hint": "" if outcome["passed"] or "but float64 is expected" in outcome.get("message", "") else "\n".join(hints_for(
                assignment.spec, check,
                "not implemented" if "not implemented yet" in outcome.get("message", "") else "failed")),
        })
    return results


def table(results):
    """A plain-text table: check, result, max relative error, worst element, diagnosis; then the details."""
    rows = [("check", "result", "max rel err", "worst", "diagnosis")]
    for r in results:
        error = "-" if r["max_rel_error"] is None else f"{r['max_rel_error']:.2e}"
        first = r["message"].splitlines()[0] if r["message"] else ""
        rows.append((r["name"], "pass" if r["passed"] else "FAIL", error, r["worst"] or "-",
                     first if len(first) <= 60 else first[:57] + "..."))
    widths = [max(len(row[c]) for row in rows) for c in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    score = sum(r["score"] for r in results)
    total = sum(r["max_score"] for r in results)
    lines.append(f"\nscore: {score:g} / {total:g}")
    for r in results:
        if not r["passed"]:
            lines.append(f"\n{r['name']}: {r['message']}")
            if r["hint"]:
                lines.append(f"  hint: {r['hint']}")
    return "\n".join(lines)


def gradescope(results):
    """The results as Gradescope's autograder reads them (results.json)."""
    tests = []
    for r in results:
        output = "passed" if r["passed"] else r["message"] + (f"\nHint: {r['hint']}" if r["hint"] else "")
        if r["max_rel_error"] is not None:
            output += f"\nmax relative error {r['max_rel_error']:.2e}" + (f" at {r['worst']}" if r["worst"] else "")
        tests.append({"name": r["name"], "score": r["score"], "max_score": r["max_score"],
                      "status": "passed" if r["passed"] else "failed", "output": output})
    return {"score": sum(r["score"] for r in results), "tests": tests}


# --------------------------------------------------------------------------- the child side

class Failure(Exception):
    """A check that fails for a reason already put into words: Failure(message[, max_rel_error, worst])."""


def _where(error, path):
    """" (rnn.py line 42)" for the last frame of ``error`` inside the student's file."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.abspath(f.filename) == path]
    return f" ({os.path.basename(path)} line {frames[-1].lineno})" if frames else ""


def _student(what, path, function, *args):
    """Call student code, turning whatever it raises into a Failure that says what happened."""
    try:
        return function(*args)
    except NotImplementedError as error:
        detail = "" if "not implemented yet" in str(error) or not str(error) else f" ({error})"
        raise Failure(f"{what} is not implemented yet{detail}")
    except SystemExit as error:
        raise Failure(f"{what} called sys.exit({error.code!r}){_where(error, path)}: a submission must not exit")
    except MemoryError as error:
        raise Failure(f"{what} ran out of memory{_where(error, path)} (the limit is set by the grader)")
    except OSError as error:
        if error.errno != errno.EFBIG:  # the sandbox's limit on the size of what is printed
            raise Failure(f"{what} raised {type(error).__name__}: {error}{_where(error, path)}")
        raise Failure(f"{what} printed more than the 64 MB of output the grader allows{_where(error, path)}")
    except RecursionError as error:
        raise Failure(f"{what} recursed too deeply{_where(error, path)}")
    except Exception as error:
        raise Failure(f"{what} raised {type(error).__name__}: {error}{_where(error, path)}")


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _get(module, name, path):
    value = getattr(module, name, None)
    if value is None:
        raise Failure(f"{os.path.basename(path)} has no {name}: keep the names of the assignment's file")
    return value


def make_inputs(check, case, seed):
    """The inputs of one case: seeded random float64 arrays of the case's shapes, and constants."""
    rng = numpy.random.default_rng(seed)
    values = []
    for entry in check["inputs"]:
        if "value" in entry:
            values.append(entry["value"])
        elif "causal" in entry:
            size = case[entry["causal"]]
            # i11-content: the library's mask convention, True = may NOT attend (COMMON.md); one line so
            # i11-engine's rewrite of this file supersedes it at merge
            values.append(numpy.triu(numpy.ones((size, size), dtype=bool), k=1))
        else:
            shape = tuple(case[d] if isinstance(d, str) else d for d in entry["shape"])
            values.append(rng.standard_normal(shape) * entry.get("scale", 1.0) + entry.get("shift", 0.0))
    return values, rng


def _differentiable(check):
    return [i for i, e in enumerate(check["inputs"])
            if "value" not in e and "causal" not in e and e.get("grad", True)]


def _outputs_tuple(value, count, what):
    if count == 1 and not isinstance(value, (tuple, list)):
        return (value,)
    if not isinstance(value, (tuple, list)) or len(value) != count:
        raise Failure(f"{what} should return {count} value(s), got "
                      f"{len(value) if isinstance(value, (tuple, list)) else 1}")
    return tuple(value)


class PairHarness:
    """out, cache = f_forward(*inputs);  grads = f_backward(*douts, cache)."""

    def __init__(self, module, check, path):
        self.check, self.path = check, path
        self.forward_fn = _get(module, check["forward"], path)
        self.backward_fn = _get(module, check["backward"], path)
        self.n_out = len(check["outputs"])

    def slots(self, inputs):
        names = [self.check["inputs"][i]["name"] for i in _differentiable(self.check)]
        grads = self.check.get("grads", ["d" + n for n in names])
        return [(names[k], grads[k], inputs[i]) for k, i in enumerate(_differentiable(self.check))]

    def _run_forward(self, args):
        result = _student(self.check["forward"], self.path, self.forward_fn, *args)
        if not isinstance(result, tuple) or len(result) != self.n_out + 1:
            raise Failure(f"{self.check['forward']} should return ({', '.join(self.check['outputs'])}, cache)")
        return result[:-1], result[-1]

    def forward(self, args):
        return self._run_forward(args)[0]

    def backward(self, args, douts):
        _, cache = self._run_forward(args)
        grads = _student(self.check["backward"], self.path, self.backward_fn, *douts, cache)
        return _outputs_tuple(grads, len(_differentiable(self.check)), self.check["backward"])


class FunctionHarness:
    """A Function subclass called as the engine calls it: forward(ctx, *args), backward(ctx, *douts)."""

    def __init__(self, module, check, path):
        self.check, self.path = check, path
        self.cls = _get(module, check["class"], path)

    def slots(self, inputs):
        return [(self.check["inputs"][i]["name"], "d" + self.check["inputs"][i]["name"], inputs[i])
                for i in _differentiable(self.check)]

    def _context(self, args):
        from ..autograd import Context
        needs = tuple(i in _differentiable(self.check) for i in range(len(args)))
        return Context(self.cls, (None,) * len(args), needs)

    def forward(self, args):
        output = _student(f"{self.check['class']}.forward", self.path, self.cls.forward, self._context(args), *args)
        return _outputs_tuple(output, len(self.check["outputs"]), f"{self.check['class']}.forward")

    def backward(self, args, douts):
        ctx = self._context(args)
        _student(f"{self.check['class']}.forward", self.path, self.cls.forward, ctx, *args)
        grads = _student(f"{self.check['class']}.backward", self.path, self.cls.backward, ctx, *douts)
        grads = _outputs_tuple(grads, len(args), f"{self.check['class']}.backward (one gradient per forward argument)")
        return [grads[i] for i in _differentiable(self.check)]


class AutogradHarness:
    """A function on Tensors, or a Module (its parameters become extra inputs), differentiated by minigrad."""

    def __init__(self, module, check, path, parameters=None):
        import minigrad
        self.check, self.path = check, path
        self.name = check.get("class") or check["function"]
        target = _get(module, self.name, path)
        self.module = None
        if "class" in check:
            minigrad.manual_seed(check.get("seed", 0))
            self.module = _student(f"{self.name}(...)", path, lambda: target(**check.get("kwargs", {})).double())
            if parameters is not None:
                try:
                    self.module.load_state_dict(parameters)
                except Exception as error:
                    raise Failure(f"{self.name}'s parameters are not the reference's ({error}): keep the "
                                  "layers that __init__ creates, with their names")
            named = dict(self.module.named_parameters())
            order = [n for n in parameters if n in named] if parameters is not None else list(named)
            self.params = [named[n] for n in order]   # in the reference's order
            self.param_names = order
        else:
            self.params, self.param_names = [], []
        self.fn = self.module if self.module is not None else target

    def slots(self, inputs):
        slots = [(self.check["inputs"][i]["name"], "d" + self.check["inputs"][i]["name"], inputs[i])
                 for i in _differentiable(self.check)]
        return slots + [(n, f"grad of {n}", p.data.copy()) for n, p in zip(self.param_names, self.params)]

    def _call(self, args, requires_grad):
        from ..tensor import Tensor
        differentiable = _differentiable(self.check)
        tensors = [Tensor(a, requires_grad=requires_grad and i in differentiable) if isinstance(a, numpy.ndarray)
                   else a for i, a in enumerate(args)]
        n_inputs = len(self.check["inputs"])
        for p, value in zip(self.params, args[n_inputs:]):
            p.data = numpy.array(value, dtype=numpy.float64)
            p.grad = None
        outputs = _student(self.name, self.path, self.fn, *tensors[:n_inputs])
        outputs = _outputs_tuple(outputs, len(self.check["outputs"]), self.name)
        for out in outputs:
            if not isinstance(out, Tensor):
                raise Failure(f"{self.name} should return minigrad Tensors, got {type(out).__name__}")
        return tensors, outputs

    def forward(self, args):
        from ..autograd import no_grad
        with no_grad():
            return tuple(out.data for out in self._call(args, False)[1])

    def backward(self, args, douts):
        tensors, outputs = self._call(args, True)
        for k, (out, v) in enumerate(zip(outputs, douts)):
            if not out.requires_grad:
                raise Failure(f"{self.name}'s output {k} has no graph: did the forward use .data or numpy?")
            _student(f"backward through {self.name}", self.path, out.backward, v, k < len(outputs) - 1)
        leaves = [tensors[i] for i in _differentiable(self.check)] + self.params
        # no gradient at all means the graph never reached the leaf: report it as zeros
        return [numpy.zeros(t.shape) if t.grad is None else t.grad for t in leaves]


HARNESSES = {"pair": PairHarness, "function": FunctionHarness, "autograd": AutogradHarness}


def numeric_gradients(forward, args, positions, douts, eps=EPS):
    """Central differences of L = sum_k <douts_k, forward(args)_k> for the args at ``positions``."""
    def objective():
        outputs = forward([a.copy() if isinstance(a, numpy.ndarray) else a for a in args])
        return sum(float((numpy.asarray(o, dtype=numpy.float64) * v).sum()) for o, v in zip(outputs, douts))
    grads = []
    for position in positions:
        x = args[position]
        grad = numpy.zeros_like(x)
        for index in numpy.ndindex(*x.shape):
            original = x[index]
            x[index] = original + eps
            plus = objective()
            x[index] = original - eps
            minus = objective()
            x[index] = original
            grad[index] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def _run_case(check, student, reference, inputs, rng):
    """Judge one case; returns (max relative error, worst element).  Raises Failure when it fails."""
    args = list(inputs)
    slots = student.slots(inputs)
    n_inputs = len(check["inputs"])
    args += [value for _, _, value in slots[len(_differentiable(check)):]]  # module parameters
    expected = reference.forward([a.copy() if isinstance(a, numpy.ndarray) else a for a in args])
    yours = student.forward([a.copy() if isinstance(a, numpy.ndarray) else a for a in args])
    worst_error, worst = 0.0, ""
    for name, y, e in zip(check["outputs"], yours, expected):
        result = compare(name, numpy.asarray(y), e, check.get("forward_atol", 1e-9), check.get("forward_rtol", 1e-6))
        if not result["ok"]:
            raise Failure(f"the forward is wrong, so the backward was not judged: {result['message']}",
                          result["max_rel_error"], result["worst"])
        if result["max_rel_error"] >= worst_error:
            worst_error, worst = result["max_rel_error"], result["worst"]
    douts = [rng.standard_normal(numpy.shape(e)) for e in expected]
    grads = student.backward([a.copy() if isinstance(a, numpy.ndarray) else a for a in args],
                             [d.copy() for d in douts])   # a backward that writes into dout changes only a copy
    positions = _differentiable(check) + list(range(n_inputs, len(args)))
    numeric = numeric_gradients(student.forward, args, positions, douts)
    failures = []
    for (input_name, grad_name, _), position, grad, expect in zip(slots, positions, grads, numeric):
        entry = check["inputs"][position] if position < n_inputs else {}
        grad = None if grad is None else numpy.asarray(grad)
        result = diagnose_gradient(grad_name, input_name, grad, expect, check.get("atol", 1e-5),
                                   check.get("rtol", 1e-3), entry.get("time_axis"))
        if not result["ok"]:
            failures.append(result)
        elif result["max_rel_error"] >= worst_error:
            worst_error, worst = result["max_rel_error"], result["worst"]
    if failures:
        first = failures[0]
        raise Failure("\n".join(r["message"] for r in failures), first["max_rel_error"], first["worst"])
    return worst_error, worst


def run_check_here(assignment_dir, submission, check_name, memory_mb=None):
    """Run one check in this process (the sandbox's child calls it); returns a result dict."""
    path = os.path.abspath(submission)
    try:
        student_module = _student("importing your file", path, _import, path, "submission")
    except Failure as failure:
        return {"passed": False, "message": str(failure.args[0])}
    if check_name == "__import__":
        return {"passed": True, "message": ""}
    assignment = Assignment(assignment_dir)
    check = assignment.check(check_name)
    reference_module = _import(assignment.reference, "reference")
    worst_error, worst = 0.0, ""
    try:
        harness = HARNESSES[check["kind"]]
        reference = harness(reference_module, check, assignment.reference)
        extra = {}
        if check["kind"] == "autograd" and "class" in check:
            extra["parameters"] = reference.module.state_dict()
        student = harness(student_module, check, path, **extra)
        for number, case in enumerate(check["cases"]):
            inputs, rng = make_inputs(check, case, [check.get("seed", 0), number])
            error, where = _run_case(check, student, reference, inputs, rng)
            if error >= worst_error:
                worst_error, worst = error, where
    except Failure as failure:
        message, *rest = failure.args
        error, where = (rest + [None, ""])[:2]
        return {"passed": False, "message": message, "max_rel_error": error, "worst": where}
    except MemoryError:
        return {"passed": False, "message": f"ran out of memory (the limit is {memory_mb} MB)"}
    return {"passed": True, "message": "", "max_rel_error": worst_error, "worst": worst}
