"""What happened to one check of one submission, as data: the grader decides on it, the words come last.

    Outcome(status, part, message, worst)

    status   a Status: passed, or how it failed (wrong values, a result not float64, not implemented,
             raised, did not import, crashed, timed out, too slow at the timing case)
    part     the Part that failed, forward or backward (None when passed): the backward is judged
             only when the forward passed, so the part also says what was judged
    message  the words the student reads, written where the failure was found
    worst    a Worst (max relative error, where) of the backward's gradients, when it was measured
    flags    notes for the course staff that change no points (a slow backward that is not finite differences)

Who makes the status: the worker's reply says whether the student's code raised
NotImplementedError (its "failure" field, protocol.NOT_IMPLEMENTED), the sandbox
whether the worker crashed, timed out or did not import (``WorkerFailed.kind``),
the grader's checks whether an array is not float64 (``diagnostics.dtype_problem``
writes the words).  Nothing is read back out of a message: a student's exception
that says "not implemented" or "float64" in its text is a failure like any other.
"""
import enum
from dataclasses import dataclass, replace

import numpy

from ..sandbox import Failure, protocol
from .diagnostics import dtype_problem


class Part(enum.Enum):
    FORWARD = "forward"
    BACKWARD = "backward"


class Status(enum.Enum):
    """How a check ended (the values are the words of grade.json's "status" where it has them)."""
    PASSED = "passed"
    WRONG = "wrong"                        # answered, and the answer is wrong (values, shape, count, NaN)
    DTYPE = "dtype"                        # an array not float64 (float32 and float16 lose the digits judged)
    NOT_IMPLEMENTED = "not implemented"    # the student's code raised NotImplementedError
    RAISED = "raised"                      # the student's code raised anything else
    IMPORT = "import"                      # the file did not import: no check of it ran
    CRASHED = "crashed"                    # the worker process died (a limit, a crash)
    TIMEOUT = "timeout"                    # no answer within the wall-clock limit
    TOO_SLOW = "timing"                    # the backward at the timing case's sizes took too long


WORKER_FAILURES = {Failure.IMPORT: Status.IMPORT, Failure.CRASHED: Status.CRASHED, Failure.TIMEOUT: Status.TIMEOUT}

# The words of the result's "status" field (grade.json, the gradebook's reports): the worker's failures only.
STATUS_WORDS = {Status.IMPORT: "import", Status.CRASHED: "crashed", Status.TIMEOUT: "timeout",
                Status.TOO_SLOW: "timing"}


@dataclass(frozen=True)
class Worst:
    """The largest relative error of a backward's gradients, and where it is (e.g. "dx[1, 0]")."""
    error: float
    where: str = ""


NO_GRADIENTS = Worst(float("inf"))   # the backward gave no gradients to measure (it raised, or too few)
NONE_YET = Worst(0.0)                # before the first gradient is measured


@dataclass(frozen=True)
class Outcome:
    status: Status
    part: Part = None
    message: str = ""
    worst: Worst = None
    flags: tuple = ()

    @property
    def passed(self):
        return self.status is Status.PASSED

    def failed(self, part):
        """Whether ``part`` of the check failed: a failed forward fails its backward too (not judged apart)."""
        return self.part is Part.FORWARD or (self.part is part is Part.BACKWARD)

    @property
    def forward_ok(self):
        return self.part is not Part.FORWARD

    @property
    def backward_ok(self):
        """True, False, or None when the backward was not judged (the forward failed)."""
        return None if self.part is Part.FORWARD else self.part is not Part.BACKWARD


# ----------------------------------------------------------------------------- a worker's reply, as an Outcome

def float64_problem(name, array):
    """None for a float64 array; else a DTYPE Outcome saying why not (float32 and float16 explained by
    diagnostics.dtype_problem).  Its part is set by the caller."""
    if array.dtype == numpy.float64:
        return None
    return Outcome(Status.DTYPE, message=dtype_problem(name, array) or f"{name} has dtype {array.dtype}, "
                                                                           "expected float64")


def student_failure(header, part, default):
    """The Outcome of a reply whose status is not "ok": the worker says as data whether the student's code
    raised NotImplementedError ("failure"); the message is only carried to the student."""
    status = Status.NOT_IMPLEMENTED if header.get("failure") == protocol.NOT_IMPLEMENTED else Status.RAISED
    return Outcome(status, part, str(header.get("message", default))[:2000],   # as the worker caps it
                   NO_GRADIENTS if part is Part.BACKWARD else None)


def array_problem(name, array, shape):
    """None for a finite float64 array of ``shape``; else the forward part's failed Outcome."""
    if array.shape != shape:
        return Outcome(Status.WRONG, Part.FORWARD, f"{name} has shape {array.shape}, expected {shape}")
    problem = float64_problem(name, array)
    if problem is not None:
        return replace(problem, part=Part.FORWARD)
    if not numpy.isfinite(array).all():
        index = tuple(int(i) for i in numpy.argwhere(~numpy.isfinite(array))[0])
        return Outcome(Status.WRONG, Part.FORWARD, f"{name} contains NaN or inf (first at {name}{list(index)})")
    return None
