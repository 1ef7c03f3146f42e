"""Grade a submission: the grader draws, compares and scores; the worker only computes.

The grader never imports a submission.  For every check of ``checks.json``:

    1. (cases.py) it draws the inputs from the grading run's seed (``--seed``,
       or MINIGRAD_GRADING_SEED, or a fresh one it reports; never shipped), and
       asks a trusted reference worker for the reference's outputs at those
       inputs and at every input nudged by +-eps, element by element: one
       request per case, once per grading run, shared by every student;
    2. it asks the student's worker (sandbox.py) for the same outputs, and
       compares them all with the reference's: the FORWARD part;
    3. it asks the student's worker for the backward at random upstream
       gradients v_k, and judges each gradient against the central differences
       of L = sum_k <v_k, y_k> over the student's own (checked) outputs, with
       ``finite_differences.compare`` (minigrad's one numeric-gradient path):
       the BACKWARD part, judged only when the forward part passed.

Every returned array is checked here (count, shape, dtype float64, finite).
A float32 (or float16) output fails its part, forward or backward alike, with
``diagnostics.dtype_problem``'s explanation.  A check scores
``forward_points`` and ``backward_points`` separately (without them, the
check is all or nothing).  A check whose functions call another check's (found
by reading the reference's source) is not diagnosed again for the other's
bug: its message points to the check the bug is in (the part still scores 0:
it cannot be judged apart from the functions it calls).
"""
import os
import time

import numpy

from ..finite_differences import EPS, central_difference, compare as judge_gradient, relative_error
from .assignment import find_submission, load_assignment
from .cases import Reference, arguments, grading_seed, objective, uses
from .diagnostics import compare, diagnose_gradient, dtype_problem
from .hints import hints_for
from .sandbox import Limits, NotGraded, Worker, WorkerFailed, isolation

def _largest_error(name, analytic, numeric, atol):
    """(max relative error, where) over the elements larger than atol: a 1e-12 next to a 0 is not an error of 1."""
    errors = numpy.where(numpy.maximum(abs(analytic), abs(numeric)) > atol, relative_error(analytic, numeric), 0.0)
    index = numpy.unravel_index(int(numpy.argmax(errors)), errors.shape) if errors.size else ()
    return (float(errors[index]) if errors.size else 0.0), f"{name}{[int(i) for i in index]}"


def _float64_problem(name, array):
    """"" for a float64 array; else why not: float32 and float16 explained (diagnostics.dtype_problem)."""
    if array.dtype == numpy.float64:
        return ""
    return dtype_problem(name, array) or f"{name} has dtype {array.dtype}, expected float64"


class Grader:
    """Grades submissions of one assignment with one seed; the reference runs once for all of them.

        grader = Grader("rnn", seed=1234)
        results = grader.grade("submissions/alice")      # a folder, or the student's file
        grader.close()
    """

    def __init__(self, assignment, seed=None, only=None, limits=None, hide=()):
        self.assignment = load_assignment(assignment)
        self.hide = [self.assignment.path] + [os.path.abspath(p) for p in hide]   # covered in students' workers
        self.seed = grading_seed(seed)
        self.limits = limits or Limits()
        names = self.assignment.names()
        unknown = [n for n in (only or []) if n not in names]
        if unknown:
            raise KeyError(f"assignment {self.assignment.name} has no check named "
                           f"{', '.join(map(repr, unknown))}: the checks are {', '.join(names)}")
        self.checks = [c for c in self.assignment.checks if only is None or c["name"] in only]
        self.uses = uses(self.assignment)
        self.reference = Reference(self.assignment, self.seed)
        self.answers = self.assignment.spec.get("answer_modules", [])
        self.isolation = None   # the isolation the last submission was graded under (sandbox.ISOLATION)

    def close(self):
        self.reference.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ one submission

    def grade(self, submission):
        """One result dict per check (see ``result``); the submission is a folder or its file.

        Raises NotGraded when the grader's side fails (no space, a worker killed from outside, a lost
        supervisor, any error of the grader's own): that is never the student's grade."""
        try:
            return self._grade(submission)
        except NotGraded:
            raise
        except Exception as error:   # a student's failure is a result; anything else is the grader's side
            raise NotGraded(f"the grader failed ({type(error).__name__}: {error})") from error

    def _grade(self, submission):
        folder, module = find_submission(submission, self.assignment)
        for check in self.checks:
            self.reference.prepare(check)
        outcomes, worker, stopped = {}, None, None
        self.isolation = isolation()[0]
        try:
            for check in self.checks:
                if stopped is not None:
                    outcomes[check["name"]] = stopped
                    continue
                if worker is None or worker.closed:
                    try:
                        worker = Worker(folder, module, self.limits, hide=self.hide + [folder],
                                        python_only=not os.path.isdir(submission), answers=self.answers)
                    except WorkerFailed as failure:
                        stopped = {"forward": (False, "your file could not be imported: " + failure.reason),
                                   "status": "import"}
                        outcomes[check["name"]] = stopped
                        continue
                outcomes[check["name"]] = self.run_check(worker, check)
        finally:
            if worker is not None:
                worker.close()
        return [self.result(check, outcomes[check["name"]], outcomes) for check in self.checks]

    def run_check(self, worker, check):
        """{"forward": (ok, message), "backward": (ok, message) or absent, "error": (max rel error, worst)}.

        The forward part over every case first; the backward part only when all of it passed."""
        values = []
        for case in self.reference.cases[check["name"]]:
            try:
                forward = self._forward(worker, check, case)
            except WorkerFailed as failure:
                return {"forward": (False, failure.reason), "status": failure.status}
            if not forward[0]:
                return {"forward": forward}
            values.append(forward[1])
        worst = (0.0, "")
        for case, value in zip(self.reference.cases[check["name"]], values):
            try:
                backward = self._backward(worker, check, case, value)
            except WorkerFailed as failure:
                return {"forward": (True, ""), "backward": (False, failure.reason), "status": failure.status}
            if not backward[0]:
                return {"forward": (True, ""), "backward": backward[:2], "error": backward[2]}
            worst = max(worst, backward[2])
        timing = self.reference.timings.get(check["name"])
        if timing is not None:
            problem = self._timed_backward(worker, timing)
            if problem:
                return {"forward": (True, ""), "backward": (False, problem), "error": worst, "status": "timing"}
        return {"forward": (True, ""), "backward": (True, ""), "error": worst}

    @staticmethod
    def _timed_backward(worker, timing):
        """"" when the backward at the timing case's sizes finishes within its budget; else why not.

        A backward computed by finite differences of the forward is right at the small cases but costs two
        forwards per input element: at these sizes, hundreds of times an analytic backward."""
        entries, arrays = arguments(timing.args)
        sizes = ", ".join(f"{k}={v}" for k, v in timing.sizes.items())
        start = time.perf_counter()
        try:
            header, grads = worker.request({"op": "backward", "target": timing.target, "args": entries,
                                            "douts": len(arrays)}, arrays + timing.douts, timeout=timing.limit(),
                                           max_payload=64 * sum(8 * a.size for a in arrays) + (1 << 20))
        except WorkerFailed as failure:
            if failure.status != "timeout":
                return f"at a larger size ({sizes}) the backward failed: {failure.reason}"
            return (f"your backward took more than {timing.budget:g}x the reference's time at a larger size "
                    f"({sizes}: stopped after {timing.limit():.2f} s; the reference takes {timing.seconds:.3f} s): "
                    "is it computing finite differences of the forward? Write it with the chain rule")
        took = time.perf_counter() - start
        if header.get("status") != "ok":
            return f"at a larger size ({sizes}) the backward failed: {str(header.get('message'))[:1000]}"
        if took > timing.limit():
            return (f"your backward took {took / timing.seconds:.0f}x the reference's time at a larger size "
                    f"({sizes}: {took:.2f} s against {timing.seconds:.3f} s): is it computing finite differences "
                    "of the forward? Write it with the chain rule")
        return ""

    def _forward(self, worker, check, case):
        """(ok, message) or (True, the student's objective values at every point)."""
        entries, arrays = arguments(case.args)
        reply_bytes = 8 * (1 + len(case.points)) * sum(y.size for y in case.outputs)
        header, out = worker.request({"op": "forward", "target": case.target, "args": entries,
                                      "perturbations": case.perturbations}, arrays,
                                     max_payload=64 * reply_bytes + (1 << 20))   # room for wrong shapes, not floods
        if header.get("status") != "ok":
            return False, str(header.get("message", "the forward failed"))[:2000]   # as the worker caps it
        n = len(check["outputs"])
        if len(out) != n * (1 + len(case.points)):
            return False, "the worker returned the wrong number of outputs"
        for name, yours, expected in zip(check["outputs"], out[:n], case.outputs):
            problem = self._array_problem(name, yours, expected.shape)
            if problem:
                return False, problem
            result = compare(name, yours, expected, check.get("forward_atol", 1e-9), check.get("forward_rtol", 1e-6))
            if not result["ok"]:
                return False, result["message"]
        for k, name in enumerate(check["outputs"]):
            yours = [out[n + p * n + k] for p in range(len(case.points))]
            if any(y.shape != case.outputs[k].shape or y.dtype != numpy.float64 for y in yours):
                return False, f"{name} changes shape or dtype when the inputs change slightly"
            expected = numpy.stack([point[k] for point in case.points]) if yours else case.outputs[k][None]
            yours = numpy.stack(yours) if yours else out[k][None]
            result = compare(f"{name} at nudged inputs", yours, expected, check.get("forward_atol", 1e-9),
                             check.get("forward_rtol", 1e-6))
            if not result["ok"]:
                return False, ("right at the grader's inputs, but wrong when they are nudged by 1e-6: "
                               + result["message"])
        values = [objective(out[n + p * n:n + p * n + n], case.douts) for p in range(len(case.points))]
        return True, (objective(out[:n], case.douts), values)

    @staticmethod
    def _array_problem(name, array, shape):
        if array.shape != shape:
            return f"{name} has shape {array.shape}, expected {shape}"
        problem = _float64_problem(name, array)
        if problem:
            return problem
        if not numpy.isfinite(array).all():
            index = tuple(int(i) for i in numpy.argwhere(~numpy.isfinite(array))[0])
            return f"{name} contains NaN or inf (first at {name}{list(index)})"
        return ""

    def _backward(self, worker, check, case, values):
        """(ok, message, (max rel error, worst element))."""
        center, points = values
        entries, arrays = arguments(case.args)
        reply_bytes = 8 * sum(case.args[position].size for _, _, position in case.slots)
        header, grads = worker.request({"op": "backward", "target": case.target, "args": entries,
                                        "douts": len(arrays)}, arrays + case.douts,
                                       max_payload=64 * reply_bytes + (1 << 20))
        if header.get("status") != "ok":
            return False, str(header.get("message", "the backward failed"))[:2000], (float("inf"), "")
        missing = header.get("missing", [])
        if not (isinstance(missing, list) and all(type(k) is int and 0 <= k < len(case.slots) for k in missing)
                and len(set(missing)) == len(missing)):   # the worker's word: checked like its arrays
            return False, "the backward's list of missing gradients is malformed", (float("inf"), "")
        if len(grads) + len(missing) != len(case.slots):
            return False, f"the backward returned {len(grads) + len(missing)} gradients, expected {len(case.slots)}", \
                (float("inf"), "")
        grads = iter(grads)
        grads = [None if k in missing else next(grads) for k in range(len(case.slots))]
        failures, worst, start = [], (0.0, ""), 0
        for (input_name, grad_name, position), grad in zip(case.slots, grads):
            x = case.args[position]
            plus = numpy.array(points[start:start + 2 * x.size:2]).reshape(x.shape)
            minus = numpy.array(points[start + 1:start + 2 * x.size:2]).reshape(x.shape)
            start += 2 * x.size
            entry = check["inputs"][position] if position < case.n_inputs else {}
            numeric = central_difference(plus, minus, EPS)
            problem = "" if grad is None else _float64_problem(grad_name, grad)
            if problem:
                failures.append(problem)
                continue
            if grad is None or grad.shape != x.shape or not numpy.isfinite(grad).all():
                failures.append(diagnose_gradient(grad_name, input_name, grad, numeric, check.get("atol", 1e-5),
                                                  check.get("rtol", 1e-3), entry.get("time_axis"))["message"])
                continue
            row = judge_gradient(grad_name, x.shape, grad, plus, minus, center, EPS, check.get("atol", 1e-5),
                                 check.get("rtol", 1e-3), self.reference.nudge(case, position))
            if row["status"] == "FAIL":
                message = diagnose_gradient(grad_name, input_name, grad, numeric, check.get("atol", 1e-5),
                                            check.get("rtol", 1e-3), entry.get("time_axis"))
                failures.append(message["message"] if not message["ok"] else f"{grad_name}: {row['note']}")
            worst = max(worst, _largest_error(grad_name, grad, numeric, check.get("atol", 1e-5)))
        if failures:
            return False, "\n".join(failures), worst
        return True, "", worst

    # ------------------------------------------------------------------ credit

    def result(self, check, outcome, outcomes):
        """A check's result: name, passed, score, max_score, forward/backward (True, False or None: not judged),
        forward_score, backward_score, max_rel_error, worst, message, outcome, hints, hint."""
        points = check.get("points", 1)
        forward_points = check.get("forward_points", 0)
        backward_points = check.get("backward_points", points - forward_points)
        forward_ok, message = outcome["forward"]
        backward_ok = outcome["backward"][0] if "backward" in outcome else None
        if "backward" in outcome and not backward_ok:
            message = outcome["backward"][1]
        elif not forward_ok and backward_points and outcome.get("status") != "import":
            message += "\n(the backward was not judged: it is checked against a right forward only)"
        failed_part = "forward" if not forward_ok else ("backward" if backward_ok is False else None)
        implemented = "not implemented yet" not in message
        if failed_part:
            causes = [other for other in self.uses.get(check["name"], [])
                      if other in outcomes and self._failed(outcomes[other], failed_part)]
            if causes and "not implemented" not in message and outcome.get("status") != "import":
                message = (f"not judged on its own: it uses the functions of {', '.join(causes)}, whose "
                           f"{failed_part} fails (reported there, once). Fix {causes[0]} first.")
        error, worst = outcome.get("error", (None, ""))
        result = {
            "name": check["name"], "passed": bool(forward_ok and backward_ok),
            "forward": forward_ok, "backward": backward_ok,
            "forward_score": forward_points if forward_ok else 0,
            "backward_score": backward_points if backward_ok else 0,
            "max_score": points, "max_rel_error": None if error is None else float(error), "worst": worst,
            "message": message.strip(), "status": outcome.get("status", ""),
            "outcome": "passed" if forward_ok and backward_ok else ("failed" if implemented else "not implemented"),
        }
        result["score"] = result["forward_score"] + result["backward_score"]
        dtype = "but float64 is expected" in message or "expected float64" in message
        # a dtype failure is not what the hints are about: they would send the student looking elsewhere
        ran = outcome.get("status") != "import"   # until the code imports and runs a check: the first hint only
        result["hints"] = [] if dtype else hints_for(self.assignment.spec, check, result["outcome"] if ran
                                                     else "not implemented", failed_part)
        result["hint"] = "\n".join(result["hints"])
        return result

    @staticmethod
    def _failed(outcome, part):
        if not outcome["forward"][0]:
            return True
        return part == "backward" and "backward" in outcome and not outcome["backward"][0]


def grade(submission, assignment, only=None, time_limit=10.0, memory_mb=1024, seed=None):
    """Grade one submission (a folder, or the student's file); one result dict per check (Grader.result)."""
    with Grader(assignment, seed=seed, only=only, limits=Limits(time_s=time_limit, memory_mb=memory_mb)) as grader:
        return grader.grade(submission)

