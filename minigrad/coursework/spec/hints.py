"""Hints in levels: a nudge first, the formula only after a real attempt.

Each check of ``checks.json`` lists its hints from the gentlest to the most
explicit:

    "hints": ["a nudge that does not give the answer",
              "the idea, in words",
              "the formula"]

How many a student sees depends on what happened and where, as the
assignment's optional ``hint_policy`` says (the defaults below):

    "hint_policy": {"not_implemented": 1, "failed": 2, "graded": 1}

    not implemented   the function still raises NotImplementedError, is missing (an empty file), or the
                      file does not import: the first hint only
    failed            the student tried and got it wrong: the next level (the first N); the LAST level
                      (the formula) only when checks.json asks for it ("failed": "all", or a number that
                      reaches it)
    passed            no hint
    graded            in a graded run (``minigrad grade``, the Gradescope autograder) at most this many
                      levels, whatever happened; ``minigrad check``, the student's own tool, is not capped

A check whose forward the student writes too can have hints of its own for
the forward part, shown when that part fails (or is not written yet); the
``"hints"`` are then about the backward only:

    "forward_hints": ["a nudge for the forward", "its formula"]

An instructor's file that still has the single ``"hint"`` of older versions
reads as a one-level list.  ``Hints.of`` reads all of this once, when the assignment
loads; ``Hints.shown`` picks what one outcome shows.
"""
import dataclasses

OUTCOMES = ("not implemented", "failed", "passed")
DEFAULT_POLICY = {"not_implemented": 1, "failed": 2, "graded": 1}


@dataclasses.dataclass(frozen=True)
class Hints:
    """One check's hints, filled in when its assignment loads (spec/assignment.py).

    levels:          "hints" (or the older single "hint"), gentlest first: about the check, or about its
                     backward when the check has forward hints
    forward_levels:  "forward_hints", shown when the forward part fails; ``levels`` when there are none
    not_implemented, failed: how many levels each outcome shows (None: all), from the hint_policy
    graded:          the most levels a graded run shows (None: no cap)
    last:            whether a failure may show the last level (the formula): checks.json set "failed" """
    levels: tuple = ()
    forward_levels: tuple = ()
    not_implemented: int = 1
    failed: int = 2
    graded: int = 1
    last: bool = False

    @classmethod
    def of(cls, check_spec, assignment_spec):
        """The hints of a validated check of checks.json, with the assignment's hint_policy."""
        asked = assignment_spec.get("hint_policy", {})
        policy = dict(DEFAULT_POLICY, **asked)
        if "hints" in check_spec:
            levels = tuple(check_spec["hints"])
        else:
            levels = (check_spec["hint"],) if check_spec.get("hint") else ()
        forward = tuple(check_spec["forward_hints"]) if "forward_hints" in check_spec else levels
        count = {k: (None if v == "all" else v) for k, v in policy.items()}
        return cls(levels, forward, count["not_implemented"], count["failed"], count["graded"], "failed" in asked)

    def shown(self, outcome, part=None, graded=False):
        """The hints to show: a list of strings, gentlest first.

        outcome: "not implemented", "failed" or "passed"
        part:    "forward" or "backward": the part that failed (None: the check as a whole)
        graded:  a graded run (``grade``, Gradescope): at most ``self.graded`` levels"""
        if outcome not in OUTCOMES:
            raise ValueError(f"Hints.shown: outcome must be one of {', '.join(map(repr, OUTCOMES))}, got {outcome!r}")
        if outcome == "passed":
            return []
        levels = list(self.forward_levels if part == "forward" else self.levels)
        asked = self.not_implemented if outcome == "not implemented" else self.failed
        count = len(levels) if asked is None else asked
        if outcome == "failed" and not self.last:
            count = min(count, max(1, len(levels) - 1))       # the formula only when checks.json asks
        if graded and self.graded is not None:
            count = min(count, self.graded)
        return levels[:count]


def problems(assignment_spec, filename="checks.json"):
    """What is wrong with the hint fields of an assignment spec: a list of messages naming file and field."""
    found = []
    policy = assignment_spec.get("hint_policy", {})
    if not isinstance(policy, dict):
        found.append(f"{filename}: hint_policy must be an object like {DEFAULT_POLICY}, got {policy!r}")
        policy = {}
    for key, value in policy.items():
        if key not in DEFAULT_POLICY:
            found.append(f"{filename}: hint_policy has an unknown key {key!r} (use not_implemented, failed, graded)")
        elif value != "all" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            found.append(f"{filename}: hint_policy.{key} must be a number of hints (0, 1, 2, ...) or \"all\", "
                         f"got {value!r}")
    for number, check in enumerate(assignment_spec.get("checks", [])):
        where = f"{filename}: checks[{number}] ({check.get('name', '?')})"
        if "hint" in check and "hints" in check:
            found.append(f"{where} has both \"hint\" and \"hints\": keep the list \"hints\" only")
        for field in ("hints", "forward_hints"):
            hints = check.get(field, [])
            if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
                found.append(f"{where}: \"{field}\" must be a list of non-empty strings, gentlest first")
        if "hint" in check and not isinstance(check["hint"], str):
            found.append(f"{where}: \"hint\" must be a string (better: a list \"hints\", gentlest first)")
    return found
