"""The timing case of a check (checks.json "timing"): is the backward an honest one, at a larger size?

A backward computed as finite differences of the student's own forward is right at the small cases but costs
two forwards per input element.  At the timing case's size (tens of thousands of input elements) the grader:

    1. asks the student's forward there: its values against the reference's (a forward must be right at
       every size), and its CPU cost per call (``repeat``: one request, many calls);
    2. asks the backward there, watching the worker's CPU seconds as the kernel counts them
       (``Worker.cpu_seconds``: the machine's load does not change them), and checks its values against
       the reference's at the same inputs (a backward that returns zeros at large sizes fails here);
    3. judges its CPU seconds against two costs measured in this run (cases.Timing):

        within allowance()                         passed
        over it, under FD_SHARE x finite diffs     passed, with a flag for the course staff, its numbers
        over both (the backward is stopped there)  failed: it costs what finite differences cost

The allowance is budget x the reference's backward, or ROOM x a Python loop over every gradient entry at
every step (``dw[i, j] = sum(da[:, i] * x[:, j])``, the slowest honest backward), whichever is larger.
Where the OS has no /proc (macOS), the wall clock stands in for the CPU seconds.
"""
import time
from dataclasses import replace

from ..sandbox import Failure, WorkerFailed
from .cases import arguments
from .diagnostics import compare
from .outcome import NO_GRADIENTS, WORKER_FAILURES, Outcome, Part, Status, Worst, array_problem, float64_problem, \
    student_failure


def timed(worker, check, timing, worst, limits):
    """The timing case (checks.json "timing"): the forward and the backward at a larger size, their values
    checked against the reference's there, and the backward's CPU seconds (Worker.cpu_seconds) judged:

        within timing.allowance()                    passed
        over it, under FD_SHARE x finite differences passed, with a flag for the course staff (its numbers)
        over both (the backward is stopped there)    failed: it costs what finite differences cost

    A finite-difference backward costs two of the student's own forwards per input element, measured here."""
    sizes = ", ".join(f"{k}={v}" for k, v in timing.sizes.items())
    at = f"at a larger size ({sizes}) "
    entries, arrays = arguments(timing.args)
    request = {"op": "forward", "target": timing.target, "args": entries}
    try:   # the values, then the cost of one forward: what each nudge of finite differences pays
        before = _clock(worker)
        header, out = worker.request(request, arrays, max_payload=64 * sum(8 * y.size for y in timing.outputs)
                                     + (1 << 20))
        if header.get("status") == "ok":
            runs = timing.repeats(time.perf_counter() - before[1])   # the wall clock: never under the CPU's
            before = _clock(worker)
            worker.request(dict(request, repeat=runs), arrays, timeout=limits.time_s + 20,
                           max_payload=64 * sum(8 * y.size for y in timing.outputs) + (1 << 20))
            forward_seconds = _used(worker, before) / runs
    except WorkerFailed as failure:
        return Outcome(WORKER_FAILURES[failure.kind], Part.FORWARD, at + "the forward failed: " + failure.reason)
    if header.get("status") != "ok":
        return replace(student_failure(header, Part.FORWARD, "the forward failed"), message=at + "the forward "
                       "failed: " + str(header.get("message", ""))[:1000])
    n = len(check.outputs)
    for name, yours, expected in zip(check.outputs, out[:n], timing.outputs):
        problem = array_problem(name, yours, expected.shape)
        if problem is None:
            result = compare(name, yours, expected, check.tolerances.forward_atol, check.tolerances.forward_rtol)
            problem = None if result["ok"] else Outcome(Status.WRONG, Part.FORWARD, result["message"])
        if problem is not None:
            return replace(problem, message=at + problem.message + ": a forward must be right at every size")
    return _timed_backward(worker, check, timing, worst, forward_seconds, at)


def _timed_backward(worker, check, timing, worst, forward_seconds, at):
    """The backward at the timing case: its values, then its CPU seconds (the module docstring's table)."""
    entries, arrays = arguments(timing.args)
    stop_at = timing.stop_at(forward_seconds)
    before = _clock(worker)
    try:
        header, grads = worker.request({"op": "backward", "target": timing.target, "args": entries,
                                        "douts": len(arrays)}, arrays + timing.douts,
                                       timeout=10 * stop_at + 10, cpu_limit=stop_at,
                                       max_payload=64 * sum(8 * a.size for a in arrays) + (1 << 20))
    except WorkerFailed as failure:
        used = None if failure.cpu_s is None or before[0] is None else failure.cpu_s - before[0]
        if failure.kind is Failure.TIMEOUT and (failure.cpu_limit or (used is not None and used >= stop_at)):
            return Outcome(Status.TOO_SLOW, Part.BACKWARD, "your backward " + _costs(
                timing, forward_seconds, max(used or 0.0, stop_at), at, stopped=True))
        if failure.kind is Failure.TIMEOUT:
            return Outcome(Status.TIMEOUT, Part.BACKWARD, at + f"the backward gave no answer within "
                           f"{10 * stop_at + 10:.0f} s, using {used or 0:.2f} s of CPU: does it wait or sleep?")
        return Outcome(WORKER_FAILURES[failure.kind], Part.BACKWARD, at + "the backward failed: " + failure.reason)
    used = _used(worker, before)
    if header.get("status") != "ok":
        return replace(student_failure(header, Part.BACKWARD, "the backward failed"), message=at + "the "
                       "backward failed: " + str(header.get("message", ""))[:1000])
    missing = header.get("missing", [])
    expected = [g for g in timing.grads]
    if not isinstance(missing, list) or len(grads) + len(missing) != len(expected):
        return Outcome(Status.WRONG, Part.BACKWARD, at + "the backward returned another number of gradients",
                       NO_GRADIENTS)
    grads = iter(grads)
    for k, name in enumerate(check.grads):
        mine = None if k in missing else next(grads)
        if (mine is None) != (expected[k] is None):
            return Outcome(Status.WRONG, Part.BACKWARD, at + f"{name} is {'missing' if mine is None else 'given'}"
                           " where the reference's is not", Worst(float("inf"), name))
        if mine is None:
            continue
        problem = float64_problem(name, mine) if mine.shape == expected[k].shape else Outcome(
            Status.WRONG, message=f"{name} has shape {mine.shape}, expected {expected[k].shape}")
        where = Worst(float("inf"), name)
        if problem is None:
            result = compare(name, mine, expected[k], check.tolerances.atol, check.tolerances.rtol)
            problem = None if result["ok"] else Outcome(Status.WRONG, message=result["message"])
            where = Worst(result["max_rel_error"], result["worst"])
        if problem is not None:
            return Outcome(problem.status, Part.BACKWARD, at + problem.message + ": right at the small cases, "
                           "wrong here (against the reference at the same inputs): a backward must be right "
                           "at every size", where)
    if used >= stop_at:
        return Outcome(Status.TOO_SLOW, Part.BACKWARD, "your backward " + _costs(
            timing, forward_seconds, used, at))
    flags = ()
    if used > timing.allowance():
        flags = (f"{check.name}: a slow backward, not the cost of finite differences (the grade stands): it "
                 + _costs(timing, forward_seconds, used, at),)
    return Outcome(Status.PASSED, worst=worst, flags=flags)

def _costs(timing, forward_seconds, used, at, stopped=False):
    """The evidence, in numbers: what the backward used, the reference, an honest per-entry loop, and
    finite differences of the student's own forward."""
    return (f"{'was stopped after' if stopped else 'used'} {used:.2f} s of CPU {at}(the reference's: "
            f"{timing.seconds:.3f} s; a Python loop over every gradient entry at every step: about "
            f"{timing.per_entry * timing.entries:.2f} s, allowed {timing.allowance():.2f} s; finite "
            f"differences of your forward, 2 x {timing.elements} forwards of {forward_seconds * 1e3:.2f} ms: "
            f"about {timing.numeric(forward_seconds):.1f} s)" + (
                ": it costs what finite differences cost: is it computing finite differences of the forward? "
                "Write the backward with the chain rule"
                if used >= timing.stop_at(forward_seconds) else ""))


def _clock(worker):
    """(the worker's CPU seconds, the wall clock): a start for ``_used``."""
    return worker.cpu_seconds(), time.perf_counter()


def _used(worker, start):
    """Seconds the worker used since ``start`` (``_clock``): its CPU time, or the wall clock where the OS gives
    no /proc (macOS; the README says so)."""
    cpu = worker.cpu_seconds()
    return cpu - start[0] if cpu is not None and start[0] is not None else time.perf_counter() - start[1]
