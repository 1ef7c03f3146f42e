"""What a grading run asks: the inputs of every case, and the reference's answers to them.

The inputs come from the run's seed (``grading_seed``), the check's name and
the case's number; the reference's outputs, at the inputs and at every input
nudged by +-EPS element by element, come from a trusted worker running the
assignment's reference (``Reference``), once per run, shared by every student.
The student's worker is asked the same questions (grader.py); ``target_of``
is all it is told about a check: names to call and counts, never an answer.
"""
import os
import secrets
import threading
import time
import zlib
from dataclasses import dataclass

import numpy

from ...finite_differences import EPS
from ..sandbox import Limits, Worker


def grading_seed(seed=None):
    """The run's seed: ``seed``, else MINIGRAD_GRADING_SEED, else a fresh random one (report it to reproduce)."""
    if seed is None:
        seed = os.environ.get("MINIGRAD_GRADING_SEED") or secrets.randbits(62)
    return int(seed)


def make_inputs(check, case, rng):
    """The inputs of one case: random float64 arrays of the case's shapes, constants, causal masks."""
    values = []
    for entry in check.inputs:
        if entry.source == "value":
            values.append(entry.value)
        elif entry.source == "causal":
            size = case[entry.causal]
            values.append(~numpy.tril(numpy.ones((size, size), dtype=bool)))   # True = may not attend (blocked)
        else:
            shape = tuple(case[d] if isinstance(d, str) else d for d in entry.shape)
            values.append(rng.standard_normal(shape) * entry.scale + entry.shift)
    return values


@dataclass(frozen=True)
class Slot:
    """One gradient a case asks for: of which input (or module parameter), its name, its position in the args."""
    input_name: str
    grad_name: str
    position: int


class Case:
    """One case of one check, prepared once per grading run: the inputs and the reference's answers."""

    def __init__(self, target, args, n_inputs, slots, perturbations, douts, outputs, points):
        self.target, self.args, self.n_inputs, self.slots = target, args, n_inputs, slots
        self.perturbations, self.douts = perturbations, douts
        self.outputs, self.points = outputs, points   # reference outputs at x, and at each perturbation


def arguments(args):
    """The "args" of a request and its arrays: arrays by number, constants by value."""
    entries, arrays = [], []
    for a in args:
        if isinstance(a, numpy.ndarray):
            entries.append({"array": len(arrays)})
            arrays.append(a)
        else:
            entries.append({"value": a})
    return entries, arrays


def target_of(check, parameters=None):
    """What the worker needs to know of a check: names to call, counts; nothing about expected answers."""
    target = dict(check.calls, name=check.name, kind=check.kind, n_outputs=len(check.outputs),
                  n_inputs=len(check.inputs), differentiable=check.differentiable)
    if check.kwargs:
        target["kwargs"] = check.kwargs
    if parameters is not None:
        target["parameters"] = parameters
    return target


def objective(outputs, douts):
    """L = sum_k <v_k, y_k>, in float64."""
    return sum(float(numpy.sum(numpy.asarray(y, dtype=numpy.float64) * v)) for y, v in zip(outputs, douts))


# The timing case judges CPU seconds, as the kernel counts them for the worker (Worker.cpu_seconds): what the
# machine's load does not change.  Two costs frame it, both measured in this run on this machine:
#   honest   a backward with a Python loop over every gradient entry (the slowest honest way to write it:
#            dw[i, j] = sum(da[:, i] * x[:, j])), at every time step: entries * PER_ENTRY seconds
#   numeric  finite differences of the student's own forward: two forwards per input element
ROOM = 4          # an honest backward may take ROOM times the per-entry loop's cost (and budget x the reference's)
FD_SHARE = 0.25   # a backward over both its allowance and this share of the numeric cost: finite differences


def per_entry_seconds(count=20000):
    """CPU seconds (this thread's) of one step of a per-entry loop over a weight gradient, as a beginner writes it."""
    rng = numpy.random.default_rng(0)
    da, x = rng.standard_normal((8, 64)), rng.standard_normal((8, 64))
    dw = numpy.zeros((64, 64))
    start = time.thread_time()
    for k in range(count):
        i, j = divmod(k % 4096, 64)
        dw[i, j] = numpy.sum(da[:, i] * x[:, j])
    return (time.thread_time() - start) / count


class Timing:
    """A check's timing case (checks.json "timing"): inputs at a larger size, the reference's answers there, and
    the costs that frame a backward's CPU time (see ROOM, FD_SHARE).

    seconds                    the reference's backward, CPU seconds
    outputs, grads             the reference's outputs and gradients (None where it has none) at these inputs
    elements                   input elements a finite-difference backward must nudge (two forwards each)
    entries                    gradient entries, times the time steps: what a per-entry loop computes"""

    def __init__(self, target, args, douts, sizes, budget, seconds, outputs, grads, elements, entries, per_entry):
        self.target, self.args, self.douts, self.sizes = target, args, douts, sizes
        self.budget, self.seconds = budget, seconds
        self.outputs, self.grads, self.elements, self.entries = outputs, grads, elements, entries
        self.per_entry = per_entry

    def allowance(self):
        """CPU seconds any honest backward may take: budget x the reference's, or ROOM x a per-entry loop."""
        return max(self.budget * self.seconds, ROOM * self.per_entry * self.entries)

    def numeric(self, forward_seconds):
        """CPU seconds of finite differences over a forward taking ``forward_seconds``: two per input element."""
        return 2 * self.elements * forward_seconds

    def stop_at(self, forward_seconds):
        """CPU seconds after which a backward is judged a finite-difference one (and stopped)."""
        return max(self.allowance(), FD_SHARE * self.numeric(forward_seconds))

    @staticmethod
    def repeats(seconds):
        """Forwards for about 0.05 s, at ``seconds`` each: the kernel counts CPU time in ticks of 10 ms."""
        return int(min(250, max(2, 0.05 // max(seconds, 2e-4))))


class Reference:
    """The assignment's reference in a trusted worker, and the cases it answered (cached per check)."""

    def __init__(self, assignment, seed):
        self.assignment, self.seed = assignment, seed
        self.worker = None
        self.lock = threading.Lock()
        self.cases = {}
        self.timings = {}   # check name -> Timing, for checks with "timing"
        self.per_entry = None   # per_entry_seconds(), measured once per run

    def _reference(self):
        if self.worker is None or self.worker.closed:
            self.worker = Worker(self.assignment.path, self.assignment.module, Limits(time_s=300), trusted=True)
        return self.worker

    def _ask_reference(self, header, arrays):
        header, out = self._reference().request(header, arrays, timeout=300)
        if header.get("status") != "ok":
            raise ValueError(f"the reference solution of {self.assignment.name} ({self.assignment.reference}) "
                             f"fails: {header.get('message')}: fix the assignment before grading")
        return header, out

    def prepare(self, check):
        """The cases of ``check``: inputs drawn from the seed, and the reference's outputs (computed once)."""
        if check.name in self.cases:
            return self.cases[check.name]
        with self.lock:
            if check.name not in self.cases:
                if check.timing is not None:
                    self.timings[check.name] = self._time(check)
                self.cases[check.name] = [self._prepare_case(check, number, case)
                                          for number, case in enumerate(check.cases)]
        return self.cases[check.name]

    def _cpu_per_request(self, header, arrays, runs):
        """The reference's CPU seconds per computation of ``header``'s request (``runs`` in each), and its reply."""
        worker, used, requests, reply = self._reference(), 0.0, 0, None
        while requests < 20 and (requests < 2 or used < 0.03):
            before, wall = worker.cpu_seconds(), time.perf_counter()
            reply = self._ask_reference(header, arrays)
            after = worker.cpu_seconds()
            used += (after - before) if before is not None and after is not None else time.perf_counter() - wall
            requests += 1
        return used / (requests * runs), reply

    def _time(self, check):
        """The timing case of ``check``: inputs from the seed at its sizes, the reference's answers and its
        backward's CPU seconds there (repeated until the kernel's ticks of 10 ms are a small part of them)."""
        timing = check.timing
        rng = numpy.random.default_rng([self.seed, zlib.crc32(check.name.encode()), 1 << 20])
        args = make_inputs(check, timing.sizes, rng)
        target = target_of(check)
        entries, arrays = arguments(args)
        _, outputs = self._ask_reference({"op": "forward", "target": target, "args": entries}, arrays)
        douts = [rng.standard_normal(y.shape) for y in outputs]
        seconds, (header, grads) = self._cpu_per_request({"op": "backward", "target": target, "args": entries,
                                                          "douts": len(arrays)}, arrays + douts, 1)
        grads = iter(grads)
        grads = [None if k in header.get("missing", []) else next(grads) for k in range(len(check.differentiable))]
        elements = sum(args[i].size for i in check.differentiable)
        steps = max([args[i].shape[e.time_axis] for i, e in enumerate(check.inputs) if e.time_axis is not None],
                    default=1)
        if self.per_entry is None:
            self.per_entry = per_entry_seconds()
        return Timing(target, args, douts, timing.sizes, timing.budget, seconds, outputs, grads, elements,
                      steps * sum(g.size for g in grads if g is not None), self.per_entry)

    def _prepare_case(self, check, number, case):
        rng = numpy.random.default_rng([self.seed, zlib.crc32(check.name.encode()), number])
        args = make_inputs(check, case, rng)
        slots = [Slot(check.inputs[i].name, check.grads[j], i) for j, i in enumerate(check.differentiable)]
        target = target_of(check)
        if check.kind == "autograd" and "class" in check.calls:
            target["init_seed"] = int(rng.integers(2 ** 31))
            header, values = self._ask_reference({"op": "parameters", "target": target}, [])
            target = target_of(check, header["names"])
            for name, value in zip(header["names"], values):
                slots.append(Slot(name, f"grad of {name}", len(args)))
                args.append(value)
        perturbations = [[slot.position, index, sign * EPS] for slot in slots
                         for index in range(args[slot.position].size) for sign in (1, -1)]
        entries, arrays = arguments(args)
        _, out = self._ask_reference({"op": "forward", "target": target, "args": entries,
                                      "perturbations": perturbations}, arrays)
        n = len(check.outputs)
        outputs, points = out[:n], [out[k:k + n] for k in range(n, len(out), n)]
        douts = [rng.standard_normal(y.shape) for y in outputs]
        return Case(target, args, len(check.inputs), slots, perturbations, douts, outputs, points)

    def nudge(self, case, position):
        """L with one element of input ``position`` moved: finite_differences calls it at suspected kinks only."""
        def nudge(index, step):
            flat = int(numpy.ravel_multi_index(index, case.args[position].shape))
            entries, arrays = arguments(case.args)
            with self.lock:
                _, out = self._ask_reference({"op": "forward", "target": case.target, "args": entries,
                                              "perturbations": [[position, flat, step]]}, arrays)
            return objective(out[len(case.outputs):], case.douts)
        return nudge

    def close(self):
        if self.worker is not None:
            self.worker.close()
