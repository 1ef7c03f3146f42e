"""An assignment folder, its checks.json read and validated before any student is graded.

An assignment is a shipped name ("rnn") or the path of any folder holding a
checks.json (a private assignment: nothing of it is installed with minigrad).
``Assignment`` validates checks.json up front: a typo in the instructor's file
is the instructor's problem, reported as a SpecError naming the file and the
field, never shown to a student as a failed check.

Loading also fills in every setting once (``Check``: its tolerances, points,
hints with the assignment's hint policy, gradient names, timing budget, and
``uses``: the other checks its reference functions call).  The grading code
reads these fields and never defaults a setting again.
"""
import ast
import json
import os
from dataclasses import dataclass, replace

from ... import __version__
from .hints import Hints, problems as hint_problems

ASSIGNMENTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assignments")
KINDS = {"pair": ("forward", "backward"), "function": ("class",), "autograd": (), "output": ("function",)}
KINDS_CALLS = ("forward", "backward", "class", "function")   # the names a check calls, by kind
TOLERANCES = ("atol", "rtol", "forward_atol", "forward_rtol")
ASSIGNMENT_FIELDS = {"name", "order", "title", "module", "checks", "hint_policy", "description", "answer_modules"}
CHECK_FIELDS = {"name", "kind", "forward", "backward", "class", "function", "kwargs", "inputs", "outputs", "grads",
                "cases", "points", "forward_points", "backward_points", "hints", "forward_hints", "hint", "atol", "rtol",
                "forward_atol", "forward_rtol", "timing"}
INPUT_FIELDS = {"name", "shape", "value", "causal", "scale", "shift", "grad", "time_axis"}


class SpecError(ValueError):
    """A mistake in an assignment's checks.json: the message names the file and the field."""


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate(spec, filename, folder):
    """Raise SpecError for the first problems found in ``spec`` (a checks.json read as a dict)."""
    problems = []

    def need(condition, where, text):
        if not condition:
            problems.append(f"{filename}: {where}: {text}")
        return condition

    if not isinstance(spec, dict):
        raise SpecError(f"{filename}: the file must hold a JSON object with \"module\" and \"checks\"")
    for key in sorted(set(spec) - ASSIGNMENT_FIELDS):
        problems.append(f"{filename}: unknown field {key!r} (known: {', '.join(sorted(ASSIGNMENT_FIELDS))})")
    module = spec.get("module")
    if need(isinstance(module, str) and module.endswith(".py"), "module", f"the student's file, e.g. \"rnn.py\", "
            f"got {module!r}"):
        need(os.path.isfile(os.path.join(folder, module)), "module", f"no file {module} (the reference) next to it")
    answers = spec.get("answer_modules", [])
    need(isinstance(answers, list) and all(isinstance(a, str) and a.startswith("minigrad.") for a in answers),
         "answer_modules", f"a list of minigrad modules that implement the answer, got {answers!r}")
    checks = spec.get("checks")
    if not need(isinstance(checks, list) and checks, "checks", "a non-empty list of checks"):
        raise SpecError("\n".join(problems))
    seen = set()
    for number, check in enumerate(checks):
        where = f"checks[{number}]"
        if not need(isinstance(check, dict), where, "a check is an object"):
            continue
        name = check.get("name")
        where = f"checks[{number}] ({name})"
        need(isinstance(name, str) and name and name not in seen, where + ".name", "a unique non-empty name")
        seen.add(name)
        if "seed" in check:
            problems.append(f"{filename}: {where}.seed: no longer read: the grading run draws the inputs from its own "
                            "seed (--seed, or MINIGRAD_GRADING_SEED), which is not shipped; remove the field")
        for key in sorted(set(check) - CHECK_FIELDS - {"seed"}):
            problems.append(f"{filename}: {where}: unknown field {key!r} (known: {', '.join(sorted(CHECK_FIELDS))})")
        kind = check.get("kind")
        if need(kind in KINDS, where + ".kind", f"one of {', '.join(KINDS)}, got {kind!r}"):
            for key in KINDS[kind]:
                need(isinstance(check.get(key), str), f"{where}.{key}", f"a check of kind {kind} names its {key}")
            if kind == "autograd":
                need(("function" in check) != ("class" in check), where, "an autograd check names a \"function\" "
                     "or a \"class\" (one of them)")
        cases = check.get("cases")
        if need(isinstance(cases, list) and cases and all(isinstance(c, dict) for c in cases), where + ".cases",
                "a non-empty list of objects of sizes, e.g. [{\"N\": 3, \"D\": 4}]"):
            for c, case in enumerate(cases):
                for key, size in case.items():
                    need(isinstance(size, int) and not isinstance(size, bool) and size > 0,
                         f"{where}.cases[{c}].{key}", f"a positive integer, got {size!r}")
        inputs = check.get("inputs")
        differentiable = 0
        if need(isinstance(inputs, list) and inputs, where + ".inputs", "a non-empty list of inputs"):
            for i, entry in enumerate(inputs):
                at = f"{where}.inputs[{i}]"
                named = isinstance(entry, dict) and isinstance(entry.get("name"), str)
                if not need(named, at, "an object with a name"):
                    continue
                at = f"{where}.inputs[{i}] ({entry['name']})"
                for key in sorted(set(entry) - INPUT_FIELDS):
                    problems.append(f"{filename}: {at}: unknown field {key!r} "
                                    f"(known: {', '.join(sorted(INPUT_FIELDS))})")
                sources = [k for k in ("shape", "value", "causal") if k in entry]
                need(len(sources) == 1, at, "exactly one of \"shape\", \"value\", \"causal\"")
                for key in ("scale", "shift"):
                    need(key not in entry or _number(entry[key]), f"{at}.{key}", f"a number, got {entry.get(key)!r}")
                if "shape" in entry:
                    shape = entry["shape"]
                    if need(isinstance(shape, list), at + ".shape", "a list of sizes (numbers or case letters)"):
                        for d in shape:
                            if isinstance(d, str) and isinstance(cases, list):
                                need(all(isinstance(c, dict) and d in c for c in cases), at + ".shape",
                                     f"{d!r} is not given in every case")
                            else:
                                need(isinstance(d, int) and not isinstance(d, bool) and d >= 0, at + ".shape",
                                     f"a size must be a number or a case letter, got {d!r}")
                    if entry.get("grad", True) and kind != "output":
                        differentiable += 1
                    axis = entry.get("time_axis")
                    need(axis is None or (isinstance(axis, int) and isinstance(shape, list) and 0 <= axis < len(shape)),
                         at + ".time_axis", f"an axis of the shape, got {axis!r}")
                if "causal" in entry and isinstance(cases, list):
                    need(all(isinstance(c, dict) and entry["causal"] in c for c in cases), at + ".causal",
                         f"{entry['causal']!r} is not given in every case")
        if "timing" in check:
            timing = check["timing"]
            if need(isinstance(timing, dict) and isinstance(timing.get("case"), dict) and kind in ("pair", "function"),
                    where + ".timing", "{\"case\": {sizes}, \"budget\": 20} for a check of kind pair or function"):
                for key, size in timing["case"].items():
                    need(isinstance(size, int) and not isinstance(size, bool) and size > 0,
                         f"{where}.timing.case.{key}", f"a positive integer, got {size!r}")
                sizes = set(timing["case"])
                letters = {d for e in (inputs or []) if isinstance(e, dict) for d in e.get("shape", [])
                           if isinstance(d, str)} | {e["causal"] for e in (inputs or []) if isinstance(e, dict)
                                                      and "causal" in e}
                need(letters <= sizes, where + ".timing.case", f"gives no size for {sorted(letters - sizes)}")
                budget = timing.get("budget", TimingCase.budget)
                need(_number(budget) and budget >= 1, where + ".timing.budget",
                     "a number >= 1: how many times the reference's backward time the student's may take")
        outputs = check.get("outputs")
        need(isinstance(outputs, list) and outputs and all(isinstance(o, str) for o in outputs), where + ".outputs",
             "a non-empty list of output names")
        if "grads" in check:
            grads = check["grads"]
            need(isinstance(grads, list) and len(grads) == differentiable, where + ".grads",
                 f"one gradient name per differentiable input ({differentiable}), got {grads!r}")
        for key in ("points", "forward_points", "backward_points"):
            need(key not in check or (_number(check[key]) and check[key] >= 0), f"{where}.{key}",
                 f"a number >= 0, got {check.get(key)!r}")
        for key in TOLERANCES:
            default = getattr(Tolerances, key)
            need(key not in check or (_number(check[key]) and 0 <= check[key] < 1), f"{where}.{key}",
                 f"a tolerance is a number from 0 up to 1 (not included), e.g. {default:g} (the default: leave "
                 f"the field out to use it), got {check.get(key)!r}")
        if "forward_points" in check or "backward_points" in check:
            split = [check.get("forward_points"), check.get("backward_points")]
            if need(all(_number(p) for p in split), where, "give both forward_points and backward_points"):
                need(abs(sum(split) - check.get("points", sum(split))) < 1e-9, where + ".points",
                     f"forward_points + backward_points = {sum(split):g}, but points = {check.get('points')!r}")
    problems.extend(hint_problems(spec, filename))
    if problems:
        raise SpecError("\n".join(problems))


# --------------------------------------------------------------------------- the loaded model

@dataclass(frozen=True)
class Tolerances:
    """How close is right: |yours - expected| <= atol + rtol |expected|, elementwise.

    atol, rtol:                  a gradient against the finite differences of the student's own forward
    forward_atol, forward_rtol:  an output against the reference's (both exact computations: much tighter)"""
    atol: float = 1e-5
    rtol: float = 1e-3
    forward_atol: float = 1e-9
    forward_rtol: float = 1e-6


@dataclass(frozen=True)
class Input:
    """One input of a check (checks.json "inputs"): drawn at random ("shape"), a constant ("value"), or a
    causal mask of a case's size ("causal"); ``differentiable`` inputs get a gradient."""
    name: str
    source: str                  # "shape", "value" or "causal": where its value comes from
    shape: tuple = ()            # sizes and case letters ("N", "T", ...), for "shape"
    value: object = None         # for "value"
    causal: str = ""             # the case letter of the mask's size, for "causal"
    scale: float = 1.0           # a drawn input is standard normal * scale + shift
    shift: float = 0.0
    grad: bool = True
    time_axis: int = None        # for a sequence: its axis of time steps (the diagnosis per step)

    @property
    def differentiable(self):
        return self.source == "shape" and self.grad


@dataclass(frozen=True)
class TimingCase:
    """checks.json "timing": the sizes of a larger case, and how many times the reference's backward time
    the student's may take."""
    sizes: dict
    budget: float = 20


@dataclass(frozen=True)
class Check:
    """One check of an assignment, every setting filled in (defaults included) when checks.json is loaded.

    calls:  what the worker calls, by kind: {"forward": ..., "backward": ...} (pair), {"class": ...}
            (function), {"function": ...} or {"class": ...} (autograd), {"function": ...} (output: a function
            with no backward, e.g. sampling or BLEU, whose outputs alone are graded: all its points are forward's)
    grads:  the gradients' names, one per differentiable input ("d" + the input's name by default)
    differentiable: the positions of the inputs that get a gradient
    uses:   the other checks whose functions this check's reference functions call (read from the
            reference's source when the assignment loads): a failure there is reported there, once"""
    name: str
    kind: str
    calls: dict
    kwargs: dict
    inputs: tuple
    outputs: tuple
    grads: tuple
    cases: tuple
    points: float
    forward_points: float
    backward_points: float
    tolerances: Tolerances
    hints: Hints
    differentiable: tuple
    timing: TimingCase = None
    uses: tuple = ()


def _given(entry, keys):
    """The fields of ``keys`` that checks.json gives: the others keep the defaults written in the model above."""
    return {k: entry[k] for k in keys if k in entry}


def _input(entry):
    source = next(k for k in ("shape", "value", "causal") if k in entry)
    given = _given(entry, ("value", "causal", "scale", "shift", "grad", "time_axis"))
    return Input(entry["name"], source, shape=tuple(entry.get("shape", ())), **given)


def _check(entry, assignment_spec):
    """A validated check of checks.json as a Check, its defaults filled in (``uses`` comes later)."""
    inputs = tuple(_input(e) for e in entry["inputs"])
    if entry["kind"] == "output":           # no backward: no input gets a gradient
        inputs = tuple(replace(e, grad=False) for e in inputs)
    grads = entry.get("grads") or ["d" + e.name for e in inputs if e.differentiable]
    points = entry.get("points", 1)
    forward_points = entry.get("forward_points", points if entry["kind"] == "output" else 0)
    tolerances = Tolerances(**_given(entry, TOLERANCES))
    timing = entry.get("timing")
    return Check(
        name=entry["name"], kind=entry["kind"], calls={k: entry[k] for k in KINDS_CALLS if k in entry},
        kwargs=dict(entry.get("kwargs", {})), inputs=inputs, outputs=tuple(entry["outputs"]), grads=tuple(grads),
        cases=tuple(dict(c) for c in entry["cases"]), points=points,
        differentiable=tuple(i for i, e in enumerate(inputs) if e.differentiable), forward_points=forward_points,
        backward_points=entry.get("backward_points", points - forward_points), tolerances=tolerances,
        hints=Hints.of(entry, assignment_spec),
        timing=None if timing is None else TimingCase(dict(timing["case"]), **_given(timing, ("budget",))))


def dependencies(reference, checks):
    """{check name: names of the other checks whose functions its reference functions call}, read from the
    reference's source (never run): the grader reports a bug once, in the check it is in."""
    try:
        with open(reference, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except SyntaxError as error:
        raise SpecError(f"{reference}: the reference does not parse (line {error.lineno}: {error.msg}): fix it "
                        "before making or grading the assignment")
    bodies = {node.name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} |
              {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
              for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    own = {c.name: set(c.calls.values()) for c in checks}
    found = {}
    for check in checks:
        called = set().union(*(bodies.get(f, set()) for f in own[check.name]))
        found[check.name] = tuple(other for other, names in own.items() if other != check.name and names & called)
    return found


# --------------------------------------------------------------------------- the assignment

class Assignment:
    """An assignment folder, loaded once: ``path``, ``name``, ``title``, ``module`` (the file students write),
    ``reference`` (the reference solution's file), ``checks`` (Check objects, every setting filled in),
    ``answer_modules``, ``order``; ``spec`` is its checks.json as read (for the tools that rewrite it)."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        filename = os.path.join(self.path, "checks.json")
        try:
            with open(filename, encoding="utf-8") as f:
                self.spec = json.load(f)
        except ValueError as error:
            raise SpecError(f"{filename}: not valid JSON: {error}")
        validate(self.spec, filename, self.path)
        self.name = self.spec.get("name", os.path.basename(self.path))
        self.title = self.spec.get("title", self.name)
        self.module = self.spec["module"]
        self.reference = os.path.join(self.path, self.module)   # the reference solution's file
        self.order = self.spec.get("order", 99)
        self.answer_modules = list(self.spec.get("answer_modules", []))
        checks = [_check(entry, self.spec) for entry in self.spec["checks"]]
        uses = dependencies(self.reference, checks)
        self.checks = [replace(check, uses=uses[check.name]) for check in checks]
        self.shipped = os.path.dirname(self.path) == ASSIGNMENTS_DIR

    def check(self, name):
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"assignment {self.name} has no check named {name!r}: use one of {', '.join(self.names())}")

    def names(self):
        return [c.name for c in self.checks]


def list_assignments():
    """The shipped assignments, in course order."""
    found = []
    for name in sorted(os.listdir(ASSIGNMENTS_DIR)):
        if os.path.isfile(os.path.join(ASSIGNMENTS_DIR, name, "checks.json")):
            found.append(Assignment(os.path.join(ASSIGNMENTS_DIR, name)))
    return sorted(found, key=lambda a: (a.order, a.name))


def infer_assignment(submission):
    """The shipped assignment a submission belongs to, from the folder ``minigrad assignment make`` wrote: the
    assignment's file and its public tests side by side (rnn.py and test_rnn.py).  Raises ValueError, saying
    what was looked for, when no one assignment fits (a private one is never guessed: pass --assignment)."""
    folder = submission if os.path.isdir(submission) else os.path.dirname(os.path.abspath(submission))
    present = set(os.listdir(folder))
    found = [a.name for a in list_assignments() if a.module in present and "test_" + a.module in present
             and (os.path.isdir(submission) or os.path.basename(submission) == a.module)]
    if len(found) != 1:
        raise ValueError(f"cannot tell which assignment {submission} is: "
                         + (f"it could be {' or '.join(found)}" if found else
                            "no shipped assignment's file and its test_ file are there (as `minigrad assignment "
                            "make` writes them)") + ": pass --assignment NAME (or the assignment's folder)")
    return found[0]


def load_assignment(name_or_path):
    """A shipped assignment by name ("rnn"), or any assignment folder by path."""
    if isinstance(name_or_path, Assignment):
        return name_or_path
    if os.path.isfile(os.path.join(name_or_path, "checks.json")):
        return Assignment(name_or_path)
    shipped = os.path.join(ASSIGNMENTS_DIR, name_or_path)
    if os.sep not in name_or_path and os.path.isfile(os.path.join(shipped, "checks.json")):
        return Assignment(shipped)
    names = [n for n in sorted(os.listdir(ASSIGNMENTS_DIR))
             if os.path.isfile(os.path.join(ASSIGNMENTS_DIR, n, "checks.json"))]
    raise ValueError(f"no assignment named {name_or_path!r}: the shipped ones are {', '.join(names)} "
                     "(or pass the path of a folder with a checks.json)")


def minigrad_version():
    """minigrad/__init__.py's __version__, which the autograder and the gradebook record (the one source:
    the distribution, minigrad-seq, reads it too)."""
    return __version__
