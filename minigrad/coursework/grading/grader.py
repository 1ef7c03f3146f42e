"""Grade a submission: the grader draws, compares and scores; the worker only computes.

The grader never imports a submission.  For every check of ``checks.json``:

    1. (cases.py) it draws the inputs from the grading run's seed (``--seed``,
       or MINIGRAD_GRADING_SEED, or a fresh one it reports; never shipped), and
       asks a trusted reference worker for the reference's outputs at those
       inputs and at every input nudged by +-eps, element by element: one
       request per case, once per grading run, shared by every student;
    2. it asks the student's worker (sandbox/) for the same outputs, and
       compares them all with the reference's: the FORWARD part;
    3. it asks the student's worker for the backward at random upstream
       gradients v_k, and judges each gradient against the central differences
       of L = sum_k <v_k, y_k> over the student's own (checked) outputs, with
       ``finite_differences.compare`` (minigrad's one numeric-gradient path):
       the BACKWARD part, judged only when the forward part passed (a check
       of kind "output", a function with no backward, has the forward part only).

Every returned array is checked here (count, shape, dtype float64, finite).
A float32 (or float16) output fails its part, forward or backward alike, with
``diagnostics.dtype_problem``'s explanation.  A check scores
``forward_points`` and ``backward_points`` separately (without them, the
check is all or nothing).  A check whose functions call another check's
(``Check.uses``, read from the reference's source when the assignment loads)
is not diagnosed again for the other's bug: its message points to the check
the bug is in (the part still scores 0: it cannot be judged apart from the
functions it calls).

Every decision is made on data: each part ends in an ``Outcome`` (outcome.py)
whose Status comes from the worker's reply, the sandbox or the checks here;
the words a student reads are carried along and never searched.  Every setting
of a check (tolerances, points, hints) is a field of its ``Check``, filled in
when the assignment loaded.
"""
import os

import numpy

from ...finite_differences import EPS, central_difference, compare as judge_gradient, relative_error
from ..spec.assignment import load_assignment
from ..sandbox import Limits, NotGraded, Worker, WorkerFailed, check_installation, isolation
from .cases import Reference, arguments, grading_seed, objective
from .diagnostics import close, compare, diagnose_gradient
from .outcome import (NO_GRADIENTS, NONE_YET, STATUS_WORDS, WORKER_FAILURES, Outcome, Part, Status, Worst, array_problem,
                      float64_problem, student_failure)
from .timing import timed


def find_submission(path, module):
    """(folder, file name) of a submission given as its folder (holding the file ``module``) or as its file."""
    if os.path.isdir(path):
        return os.path.abspath(path), module
    return os.path.dirname(os.path.abspath(path)), os.path.basename(path)


def _largest_error(name, analytic, numeric, atol):
    """The Worst element over those larger than atol: a 1e-12 next to a 0 is not an error of 1."""
    errors = numpy.where(numpy.maximum(abs(analytic), abs(numeric)) > atol, relative_error(analytic, numeric), 0.0)
    index = numpy.unravel_index(int(numpy.argmax(errors)), errors.shape) if errors.size else ()
    return Worst(float(errors[index]) if errors.size else 0.0, f"{name}{[int(i) for i in index]}")


class Grader:
    """Grades submissions of one assignment with one seed; the reference runs once for all of them.

        grader = Grader("rnn", seed=1234)
        results = grader.grade("submissions/alice")      # a folder, or the student's file
        grader.close()
    """

    def __init__(self, assignment, seed=None, only=None, limits=None, hide=(), graded=True):
        """``graded``: a graded run (``grade``, Gradescope) shows at most the hint_policy's "graded" levels;
        ``minigrad check``, the student's own tool, passes False (hints.py)."""
        self.assignment = load_assignment(assignment)
        self.graded = graded
        self.hide = [self.assignment.path] + [os.path.abspath(p) for p in hide]   # covered in students' workers
        self.seed = grading_seed(seed)
        self.limits = limits or Limits()
        names = [c.name for c in self.assignment.checks]
        unknown = [n for n in (only or []) if n not in names]
        if unknown:
            raise KeyError(f"assignment {self.assignment.name} has no check named "
                           f"{', '.join(map(repr, unknown))}: the checks are {', '.join(names)}")
        self.checks = [c for c in self.assignment.checks if only is None or c.name in only]
        check_installation()    # a worker that cannot import what Python has would cost students points: refuse
        self.reference = Reference(self.assignment, self.seed)
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
        folder, module = find_submission(submission, self.assignment.module)
        for check in self.checks:
            self.reference.prepare(check)
        outcomes, worker, stopped = {}, None, None
        self.isolation = isolation()[0]
        try:
            for check in self.checks:
                if stopped is not None:
                    outcomes[check.name] = stopped
                    continue
                if worker is None or worker.closed:
                    try:
                        worker = Worker(folder, module, self.limits, hide=self.hide + [folder],
                                        python_only=not os.path.isdir(submission),
                                        answers=self.assignment.answer_modules)
                    except WorkerFailed as failure:
                        stopped = Outcome(Status.IMPORT, Part.FORWARD,
                                          "your file could not be imported: " + failure.reason)
                        outcomes[check.name] = stopped
                        continue
                outcomes[check.name] = self.run_check(worker, check)
        finally:
            if worker is not None:
                worker.close()
        return [self.result(check, outcomes[check.name], outcomes) for check in self.checks]

    def run_check(self, worker, check):
        """The check's Outcome: the forward part over every case first; the backward part only when all of
        it passed, then the timing case (checks.json "timing")."""
        values = []
        for case in self.reference.cases[check.name]:
            try:
                forward = self._forward(worker, check, case)
            except WorkerFailed as failure:
                return Outcome(WORKER_FAILURES[failure.kind], Part.FORWARD, failure.reason)
            if isinstance(forward, Outcome):
                return forward
            values.append(forward)
        if check.kind == "output":       # a function with no backward: its outputs are all there is to judge
            return Outcome(Status.PASSED)
        worst = NONE_YET
        for case, value in zip(self.reference.cases[check.name], values):
            try:
                backward = self._backward(worker, check, case, value)
            except WorkerFailed as failure:
                return Outcome(WORKER_FAILURES[failure.kind], Part.BACKWARD, failure.reason)
            if not backward.passed:
                return backward
            worst = max(worst, backward.worst, key=_worst_order)
        timing = self.reference.timings.get(check.name)
        if timing is not None:
            return timed(worker, check, timing, worst, self.limits)
        return Outcome(Status.PASSED, worst=worst)

    def _forward(self, worker, check, case):
        """A failed Outcome of the forward part, or the student's objective values (at the inputs, and at
        every nudged point) for the backward part."""
        tolerances = check.tolerances
        entries, arrays = arguments(case.args)
        reply_bytes = 8 * (1 + len(case.points)) * sum(y.size for y in case.outputs)
        header, out = worker.request({"op": "forward", "target": case.target, "args": entries,
                                      "perturbations": case.perturbations}, arrays,
                                     max_payload=64 * reply_bytes + (1 << 20))   # room for wrong shapes, not floods
        if header.get("status") != "ok":
            return student_failure(header, Part.FORWARD, "the forward failed")
        n = len(check.outputs)
        if len(out) != n * (1 + len(case.points)):
            return Outcome(Status.WRONG, Part.FORWARD, "the worker returned the wrong number of outputs")
        for name, yours, expected in zip(check.outputs, out[:n], case.outputs):
            problem = array_problem(name, yours, expected.shape)
            if problem is not None:
                return problem
            result = compare(name, yours, expected, tolerances.forward_atol, tolerances.forward_rtol)
            if not result["ok"]:
                return Outcome(Status.WRONG, Part.FORWARD, result["message"])
        for k, name in enumerate(check.outputs):
            yours = [out[n + p * n + k] for p in range(len(case.points))]
            if any(y.shape != case.outputs[k].shape or y.dtype != numpy.float64 for y in yours):
                return Outcome(Status.WRONG, Part.FORWARD,
                               f"{name} changes shape or dtype when the inputs change slightly")
            expected = numpy.stack([point[k] for point in case.points]) if yours else case.outputs[k][None]
            yours = numpy.stack(yours) if yours else out[k][None]
            result = compare(f"{name} at nudged inputs", yours, expected, tolerances.forward_atol,
                             tolerances.forward_rtol)
            if not result["ok"]:
                return Outcome(Status.WRONG, Part.FORWARD, "right at the grader's inputs, but wrong when they are "
                               "nudged by 1e-6: " + result["message"])
        values = [objective(out[n + p * n:n + p * n + n], case.douts) for p in range(len(case.points))]
        return objective(out[:n], case.douts), values

    def _backward(self, worker, check, case, values):
        """The backward part's Outcome at one case: every gradient judged, the Worst element measured."""
        center, points = values
        tolerances = check.tolerances
        entries, arrays = arguments(case.args)
        reply_bytes = 8 * sum(case.args[slot.position].size for slot in case.slots)
        header, grads = worker.request({"op": "backward", "target": case.target, "args": entries,
                                        "douts": len(arrays)}, arrays + case.douts,
                                       max_payload=64 * reply_bytes + (1 << 20))
        if header.get("status") != "ok":
            return student_failure(header, Part.BACKWARD, "the backward failed")
        missing = header.get("missing", [])
        if not (isinstance(missing, list) and all(type(k) is int and 0 <= k < len(case.slots) for k in missing)
                and len(set(missing)) == len(missing)):   # the worker's word: checked like its arrays
            return Outcome(Status.WRONG, Part.BACKWARD, "the backward's list of missing gradients is malformed",
                           NO_GRADIENTS)
        if len(grads) + len(missing) != len(case.slots):
            return Outcome(Status.WRONG, Part.BACKWARD, f"the backward returned {len(grads) + len(missing)} "
                           f"gradients, expected {len(case.slots)}", NO_GRADIENTS)
        grads = iter(grads)
        grads = [None if k in missing else next(grads) for k in range(len(case.slots))]
        failures, worst, start = [], NONE_YET, 0
        wrong = []              # (the slot, the Worst as its diagnosis names it) of each failed gradient
        wrong_dtype = False
        for slot, grad in zip(case.slots, grads):
            input_name, grad_name, position = slot.input_name, slot.grad_name, slot.position
            x = case.args[position]
            plus = numpy.array(points[start:start + 2 * x.size:2]).reshape(x.shape)
            minus = numpy.array(points[start + 1:start + 2 * x.size:2]).reshape(x.shape)
            start += 2 * x.size
            time_axis = check.inputs[position].time_axis if position < case.n_inputs else None
            numeric = central_difference(plus, minus, EPS)
            problem = None if grad is None else float64_problem(grad_name, grad)
            if problem is not None:
                wrong_dtype = True
                failures.append(problem.message)
                wrong.append((slot, Worst(float("inf"), grad_name)))
                continue
            if grad is None or grad.shape != x.shape or not numpy.isfinite(grad).all():
                found = diagnose_gradient(grad_name, input_name, grad, numeric, tolerances.atol, tolerances.rtol,
                                          time_axis)
                failures.append(found["message"])
                wrong.append((slot, Worst(found["max_rel_error"], found["worst"])))   # none measured: inf
                continue
            largest = _largest_error(grad_name, grad, numeric, tolerances.atol)
            row = judge_gradient(grad_name, x.shape, grad, plus, minus, center, EPS, tolerances.atol,
                                 tolerances.rtol, self.reference.nudge(case, position))
            if row["status"] == "FAIL":
                found = diagnose_gradient(grad_name, input_name, grad, numeric, tolerances.atol, tolerances.rtol,
                                          time_axis)
                failures.append(found["message"] if not found["ok"] else f"{grad_name}: {row['note']}")
                wrong.append((slot, Worst(found["max_rel_error"], found["worst"]) if not found["ok"] else largest))
            worst = max(worst, largest, key=_worst_order)
        timed = [k for k, entry in enumerate(check.inputs) if entry.time_axis is not None]
        if failures and timed and not wrong_dtype and all(slot.position not in timed for slot, _ in wrong):
            for k, (slot, _) in enumerate(wrong):   # every gradient along time is right, a shared weight's not
                if self._right_for_one_step(worker, check, case, slot, timed[0]):
                    steps = case.args[timed[0]].shape[check.inputs[timed[0]].time_axis]
                    failures[k] = (f"{slot.grad_name} is right for a sequence of one step and wrong for {steps} "
                                   f"steps: {slot.input_name} is used at every step, so its gradient is the sum "
                                   f"of every step's. Add each step's {slot.grad_name} up over t (+=), instead of "
                                   f"keeping one step's ({failures[k]})")
        if failures:   # the table names what the details name first: never a passing gradient's error
            status = Status.DTYPE if wrong_dtype else Status.WRONG
            return Outcome(status, Part.BACKWARD, "\n".join(failures), wrong[0][1])
        return Outcome(Status.PASSED, worst=worst)

    def _right_for_one_step(self, worker, check, case, slot, position):
        """Whether the student's gradient of ``slot`` is right when the sequence has one step (the first of
        the case): central differences of their own forward there, as the backward part judges it."""
        axis = check.inputs[position].time_axis
        steps = case.args[position].shape[axis]
        args = [a.take([0], axis=check.inputs[k].time_axis) if k < case.n_inputs and
                check.inputs[k].time_axis is not None else a for k, a in enumerate(case.args)]
        douts = [d.take([0], axis=axis) if d.ndim > axis and d.shape[axis] == steps else d for d in case.douts]
        size = args[slot.position].size
        nudges = [[slot.position, i, sign * EPS] for i in range(size) for sign in (1, -1)]
        entries, arrays = arguments(args)
        try:
            header, out = worker.request({"op": "forward", "target": case.target, "args": entries,
                                          "perturbations": nudges}, arrays)
            if header.get("status") != "ok":
                return False
            n = len(check.outputs)
            values = [objective(out[n + p * n:n + p * n + n], douts) for p in range(len(nudges))]
            numeric = central_difference(numpy.array(values[0::2]), numpy.array(values[1::2]), EPS)
            header, grads = worker.request({"op": "backward", "target": case.target, "args": entries,
                                            "douts": len(arrays)}, arrays + douts)
        except (WorkerFailed, ValueError, IndexError):
            return False
        missing = header.get("missing", [])
        if header.get("status") != "ok" or not isinstance(missing, list) or len(grads) + len(missing) != len(case.slots):
            return False
        grads = iter(grads)
        grads = [None if k in missing else next(grads) for k in range(len(case.slots))]
        mine = grads[case.slots.index(slot)]
        return mine is not None and mine.shape == args[slot.position].shape and mine.dtype == numpy.float64 \
            and bool(close(mine, numeric.reshape(mine.shape), check.tolerances.atol, check.tolerances.rtol).all())

    # ------------------------------------------------------------------ credit

    def result(self, check, outcome, outcomes):
        """A check's result, for the reports: name, passed, score, max_score, forward/backward (True, False or
        None: not judged), forward_score, backward_score, max_rel_error, worst, message, status, outcome, hints,
        hint.  Rendered from the Outcome: nothing here is decided by reading a message."""
        forward_ok, backward_ok = outcome.forward_ok, outcome.backward_ok
        if check.kind == "output":
            backward_ok = None           # nothing to judge: shown as "-"
        failed_part = outcome.part
        message = outcome.message
        if failed_part is Part.FORWARD and check.backward_points and outcome.status is not Status.IMPORT:
            message += "\n(the backward was not judged: it is checked against a right forward only)"
        causes = []
        if failed_part is not None and outcome.status not in (Status.NOT_IMPLEMENTED, Status.IMPORT):
            causes = [other for other in check.uses if other in outcomes and outcomes[other].failed(failed_part)]
            if causes:
                message = (f"not judged on its own: it uses the functions of {', '.join(causes)}, whose "
                           f"{failed_part.value} fails (reported there, once). Fix {causes[0]} first.")
        if outcome.passed:
            words = "passed"
        elif outcome.status is Status.NOT_IMPLEMENTED:
            words = "not implemented"
        else:
            words = "failed"
        worst = outcome.worst
        result = {
            "name": check.name, "passed": outcome.passed,
            "forward": forward_ok, "backward": backward_ok,
            "forward_score": check.forward_points if forward_ok else 0,
            "backward_score": check.backward_points if backward_ok else 0,
            "max_score": check.points, "max_rel_error": None if worst is None else float(worst.error),
            "worst": "" if worst is None else worst.where,
            "message": message.strip(), "status": STATUS_WORDS.get(outcome.status, ""), "outcome": words,
            "flags": list(outcome.flags),
        }
        result["score"] = result["forward_score"] + result["backward_score"]
        part = None if failed_part is None else failed_part.value
        if outcome.status is Status.DTYPE and not causes:
            result["hints"] = []   # a dtype failure is not what the hints are about: they would mislead
        elif outcome.status is Status.IMPORT:
            # nothing ran yet: the first hint only
            result["hints"] = check.hints.shown("not implemented", part, self.graded)
        else:
            result["hints"] = check.hints.shown(words, part, self.graded)
        result["hint"] = "\n".join(result["hints"])
        return result


def _worst_order(worst):
    return worst.error, worst.where


def grade(submission, assignment, only=None, time_limit=10.0, memory_mb=1024, seed=None):
    """Grade one submission (a folder, or the student's file); one result dict per check (Grader.result)."""
    with Grader(assignment, seed=seed, only=only, limits=Limits(time_s=time_limit, memory_mb=memory_mb)) as grader:
        return grader.grade(submission)

