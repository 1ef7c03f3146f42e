"""Hints in levels: what a student sees before trying, after failing, after passing."""
import re

import pytest

from minigrad.coursework import list_assignments
from minigrad.coursework.spec.hints import Hints, problems

CHECK = {"name": "step", "hints": ["a nudge", "the idea", "the formula"]}


def hints_for(assignment_spec, check_spec, outcome, part=None):
    """What a check of checks.json shows: its Hints, filled in once as the assignment loads, for one outcome."""
    return Hints.of(check_spec, assignment_spec).shown(outcome, part)


def test_not_implemented_shows_the_first_hint_and_a_failure_the_next_one_never_the_formula():
    assert hints_for({}, CHECK, "not implemented") == ["a nudge"]
    assert hints_for({}, CHECK, "failed") == ["a nudge", "the idea"]
    assert hints_for({}, CHECK, "passed") == []
    assert hints_for({}, dict(CHECK, hints=["a nudge", "the formula"]), "failed") == ["a nudge"]
    assert hints_for({"hint_policy": {"failed": "all"}}, CHECK, "failed") == CHECK["hints"]   # asked for


def test_the_assignment_sets_how_many_levels_each_outcome_shows():
    spec = {"hint_policy": {"not_implemented": 0, "failed": 2}}
    assert hints_for(spec, CHECK, "not implemented") == []
    assert hints_for(spec, CHECK, "failed") == ["a nudge", "the idea"]
    assert hints_for({"hint_policy": {"not_implemented": "all"}}, CHECK, "not implemented") == CHECK["hints"]


def test_an_older_single_hint_is_one_level_and_no_hint_is_none():
    assert hints_for({}, {"hint": "the formula"}, "failed") == ["the formula"]
    assert hints_for({}, {"name": "x"}, "failed") == []


def test_a_failed_forward_gets_the_forward_hints_never_the_backward_formula():
    check = dict(CHECK, forward_hints=["a forward nudge", "the forward formula"])
    assert hints_for({}, check, "not implemented", "forward") == ["a forward nudge"]
    assert hints_for({}, check, "failed", "forward") == ["a forward nudge"]
    assert hints_for({}, check, "failed", "backward") == CHECK["hints"][:2]
    assert hints_for({}, CHECK, "failed", "forward") == CHECK["hints"][:2]   # no forward hints: the check's own


def test_an_unknown_outcome_is_an_error():
    with pytest.raises(ValueError, match="outcome must be one of"):
        hints_for({}, CHECK, "crashed")


def test_problems_name_the_file_and_the_field():
    spec = {"hint_policy": {"failed": -1, "sometimes": 1},
            "checks": [{"name": "a", "hint": "x", "hints": ["y"]}, {"name": "b", "hints": "just a string"}]}
    found = "\n".join(problems(spec, "hw/checks.json"))
    assert "hw/checks.json: hint_policy.failed must be a number" in found
    assert "unknown key 'sometimes'" in found
    assert "checks[0] (a) has both" in found
    assert "checks[1] (b): \"hints\" must be a list" in found
    assert problems({"checks": [CHECK]}) == []


@pytest.mark.parametrize("assignment", list_assignments(), ids=lambda a: a.name)
def test_shipped_checks_have_levelled_hints_and_no_seed(assignment):
    assert problems(assignment.spec) == []
    assert "seed" not in assignment.spec
    for check in assignment.spec["checks"]:      # the file as written
        assert "seed" not in check and "hint" not in check, check["name"]
        levels = check["hints"]
        assert len(levels) >= 2, check["name"]
        # level 1 is a nudge: no gradient formula such as "dx = ..." in it
        assert not re.search(r"\bd\w* =", levels[0]), (check["name"], levels[0])
        assert levels[-1] not in levels[0]
        if "forward_points" in check or "backward_points" in check:
            assert check["forward_points"] + check["backward_points"] == check["points"], check["name"]
        if check.get("forward_points") and check["kind"] == "pair":   # the student writes the forward too
            forward_levels = check["forward_hints"]
            assert len(forward_levels) >= 2 and not any(re.search(r"\bd\w* =", h) for h in forward_levels)
