"""The grader decides on data: an Outcome (Status, Part, message, Worst) from the worker's reply, the
sandbox and the checks; and every setting of a check is filled in once, when checks.json loads.

A student's exception whose words say "not implemented yet" or "float64 is expected" is a failure like
any other: the grader once searched the message for those words, and took such an exception for a
function not written yet (first hint only) or for a float32 result (no hints at all).
"""
import json
import os
import shutil

import pytest

from minigrad.coursework import Grader, SpecError, load_assignment
from minigrad.coursework.spec.assignment import Tolerances
from minigrad.coursework.grading.outcome import NO_GRADIENTS, Outcome, Part, Status

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")
STEP_FORWARD = "    h = np.tanh(x @ Wx + h_prev @ Wh + b)\n"
STEP_BACKWARD = "    da = dh * (1 - h ** 2)\n"
MISLEADING = "step is not implemented yet, but float64 is expected (my own words)"


@pytest.fixture(scope="module")
def grader():
    with Grader(FIXTURE, seed=20240611) as grader:
        yield grader


def submission(tmp_path, old, new):
    with open(os.path.join(FIXTURE, "tinyrnn.py"), encoding="utf-8") as f:
        text = f.read()
    assert old in text
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "tinyrnn.py").write_text(text.replace(old, new, 1))
    return str(tmp_path)


def by_name(results):
    return {r["name"]: r for r in results}


def test_words_in_a_students_exception_decide_nothing(grader, tmp_path):
    results = by_name(grader.grade(submission(tmp_path, STEP_FORWARD, f"    raise ValueError({MISLEADING!r})\n")))
    step, sequence = results["step"], results["sequence"]
    hints = load_assignment(FIXTURE).check("step").hints
    assert step["forward"] is False and step["backward"] is None and step["score"] == 0
    assert MISLEADING in step["message"]                      # the student still reads their own words
    assert step["outcome"] == "failed"                        # not "not implemented"
    assert step["hints"] == hints.shown("failed", "forward", graded=True) == [hints.levels[0]]   # not a dtype case
    # the sequence calls step: reported once, in step (the words no longer hide the dependency)
    assert sequence["outcome"] == "failed" and sequence["message"].startswith("not judged on its own: it uses "
                                                                              "the functions of step")


def test_a_backwards_words_decide_nothing_either(grader, tmp_path):
    path = submission(tmp_path, STEP_BACKWARD, f"    raise RuntimeError({MISLEADING!r})\n")
    step = by_name(grader.grade(path))["step"]
    assert step["forward"] is True and step["backward"] is False and step["score"] == 1
    assert step["outcome"] == "failed" and step["max_rel_error"] == float("inf") and step["status"] == ""
    assert len(step["hints"]) == 1                                # a graded run: the first level only


def test_not_implemented_and_a_wrong_dtype_are_said_by_the_worker_and_the_checks(grader, tmp_path):
    # NotImplementedError whatever its words: the worker's reply says so in its "failure" field
    step = by_name(grader.grade(submission(tmp_path / "a", STEP_BACKWARD,
                                           "    raise NotImplementedError('ran out of time')\n")))["step"]
    assert step["outcome"] == "not implemented" and step["hints"] == ["go back through tanh first"]
    # a float32 result: the check finds it (Status.DTYPE), and hints about the maths would mislead
    step = by_name(grader.grade(submission(tmp_path / "b", "    return h, (x, h_prev, Wx, Wh, h)\n",
                                           "    return h.astype(np.float32), (x, h_prev, Wx, Wh, h)\n")))["step"]
    assert step["forward"] is False and step["outcome"] == "failed" and step["hints"] == []
    assert "float32, but float64 is expected" in step["message"]


def test_an_outcome_says_which_part_was_judged():
    forward = Outcome(Status.WRONG, Part.FORWARD, "h is wrong")
    assert (forward.forward_ok, forward.backward_ok, forward.passed) == (False, None, False)
    assert forward.failed(Part.FORWARD) and forward.failed(Part.BACKWARD)   # a backward needs a right forward
    backward = Outcome(Status.RAISED, Part.BACKWARD, "raised", NO_GRADIENTS)
    assert (backward.forward_ok, backward.backward_ok) == (True, False)
    assert backward.failed(Part.BACKWARD) and not backward.failed(Part.FORWARD)
    passed = Outcome(Status.PASSED)
    assert (passed.forward_ok, passed.backward_ok, passed.passed) == (True, True, True)


# ---------------------------------------------------------------------------- settings, filled in once

def assignment_with(tmp_path, change):
    folder = tmp_path / "tinyrnn"
    shutil.copytree(FIXTURE, folder)
    spec = json.loads((folder / "checks.json").read_text())
    change(spec)
    (folder / "checks.json").write_text(json.dumps(spec))
    return str(folder)


@pytest.mark.parametrize("value", ["1e-5", 2, -1e-5, True])
def test_a_bad_tolerance_is_refused_when_the_assignment_loads(tmp_path, value):
    folder = assignment_with(tmp_path, lambda spec: spec["checks"][0].update(atol=value))
    with pytest.raises(SpecError) as error:
        load_assignment(folder)
    message = str(error.value)
    assert os.path.join(folder, "checks.json") in message           # the file
    assert "checks[0] (step).atol" in message                       # the check and the field
    assert f"got {value!r}" in message and "e.g. 1e-05 (the default: leave the field out" in message   # the fix


def test_every_setting_is_filled_in_at_load(tmp_path):
    def change(spec):
        spec["hint_policy"] = {"failed": 1}
        spec["checks"][0]["rtol"] = 0.01
        for key in ("forward_points", "backward_points"):
            del spec["checks"][1][key]
        del spec["checks"][1]["grads"]
        del spec["checks"][1]["timing"]["budget"]
    step, sequence = load_assignment(assignment_with(tmp_path, change)).checks
    assert step.tolerances == Tolerances(rtol=0.01) and sequence.tolerances == Tolerances()
    assert (step.points, step.forward_points, step.backward_points) == (2, 1, 1)
    assert (sequence.points, sequence.forward_points, sequence.backward_points) == (3, 0, 3)
    assert sequence.grads == ("dx", "dh0", "dWx", "dWh", "db") and sequence.timing.budget == 20
    assert step.hints.shown("failed") == ["go back through tanh first"]           # the policy's one level
    assert sequence.uses == ("step",) and step.uses == ()                         # read from the reference
    assert [entry.scale for entry in step.inputs] == [1.0, 1.0, 0.5, 0.5, 1.0]
    assert sequence.inputs[0].time_axis == 1 and step.differentiable == (0, 1, 2, 3, 4)


def test_a_reference_that_does_not_parse_is_the_instructors_error(tmp_path):
    folder = assignment_with(tmp_path, lambda spec: None)
    with open(os.path.join(folder, "tinyrnn.py"), "a", encoding="utf-8") as f:
        f.write("\ndef broken(:\n")
    with pytest.raises(SpecError, match="tinyrnn.py: the reference does not parse"):
        load_assignment(folder)
