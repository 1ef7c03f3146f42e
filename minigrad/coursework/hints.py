"""Hints in levels: a nudge first, the formula only after a real attempt.

Each check of ``checks.json`` lists its hints from the gentlest to the most
explicit:

    "hints": ["a nudge that does not give the answer",
              "the idea, in words",
              "the formula"]

How many a student sees depends on what happened, as the assignment's
optional ``hint_policy`` says (the defaults below):

    "hint_policy": {"not_implemented": 1, "failed": "all"}

    not implemented   the function still raises NotImplementedError: the first hint only
    failed            the student tried and got it wrong: every hint (or the first N)
    passed            no hint

A check whose forward the student writes too can have hints of its own for
the forward part, shown when that part fails (or is not written yet); the
``"hints"`` are then about the backward only:

    "forward_hints": ["a nudge for the forward", "its formula"]

An instructor's file that still has the single ``"hint"`` of older versions
reads as a one-level list.
"""

OUTCOMES = ("not implemented", "failed", "passed")
DEFAULT_POLICY = {"not_implemented": 1, "failed": "all"}


def hint_levels(check_spec, part=None):
    """The check's hints as a list, gentlest first ("hints", or the older single "hint").

    part: "forward" when the forward part failed: its "forward_hints" where the check has them."""
    if part == "forward" and "forward_hints" in check_spec:
        return list(check_spec["forward_hints"])
    if "hints" in check_spec:
        return list(check_spec["hints"])
    return [check_spec["hint"]] if check_spec.get("hint") else []


def hint_policy(assignment_spec):
    """The assignment's hint_policy with the defaults filled in."""
    policy = dict(DEFAULT_POLICY)
    policy.update(assignment_spec.get("hint_policy", {}))
    return policy


def hints_for(assignment_spec, check_spec, outcome, part=None):
    """The hints to show for one check: a list of strings, gentlest first.

    assignment_spec: the assignment's checks.json (a dict), for its "hint_policy"
    check_spec:      the check's entry in it
    outcome:         "not implemented", "failed" or "passed"
    part:            "forward" or "backward": the part that failed (None: the check as a whole)
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"hints_for: outcome must be one of {', '.join(map(repr, OUTCOMES))}, got {outcome!r}")
    if outcome == "passed":
        return []
    levels = hint_levels(check_spec, part)
    count = hint_policy(assignment_spec)["not_implemented" if outcome == "not implemented" else "failed"]
    return levels if count == "all" else levels[:count]


def problems(assignment_spec, filename="checks.json"):
    """What is wrong with the hint fields of an assignment spec: a list of messages naming file and field."""
    found = []
    policy = assignment_spec.get("hint_policy", {})
    if not isinstance(policy, dict):
        found.append(f"{filename}: hint_policy must be an object like {DEFAULT_POLICY}, got {policy!r}")
        policy = {}
    for key, value in policy.items():
        if key not in DEFAULT_POLICY:
            found.append(f"{filename}: hint_policy has an unknown key {key!r} (use not_implemented, failed)")
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
