"""Hints teach (issue 38 item 8): a graded run shows at most the first level; `check` shows the next level
once the student's own result is "failed" rather than "not implemented"; the last level (the formula) only
when checks.json asks for it; an empty file or an untouched stub gets the first hint only."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from minigrad.coursework import load_assignment
from minigrad.coursework.authoring.make import student_version
from minigrad.coursework.grading.grader import Grader
from minigrad.coursework.spec.hints import Hints
from minigrad.coursework.grading.report import gradescope

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RNN = load_assignment("rnn")
STEP_HINTS = RNN.spec["checks"][0]["hints"]            # nudge, idea, formula ("da = dh * (1 - h**2); ...")
FORMULA = STEP_HINTS[-1]


def wrong_sign():
    """The issue's student: one wrong sign in tanh's derivative, the rest right."""
    text = student_version(RNN.reference, solutions=True)
    assert text.count("da = dh * (1 - h * h)") == 1
    return text.replace("da = dh * (1 - h * h)", "da = dh * (1 + h * h)")


def submit(folder, text):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rnn.py"), "w") as f:
        f.write(text)
    return str(folder)


@pytest.fixture(scope="module")
def graders():
    """The student's own tool (check) and a graded run, on the step check."""
    with Grader("rnn", seed=4, only=["rnn_step"], graded=False) as check, \
            Grader("rnn", seed=4, only=["rnn_step"]) as graded:
        yield check, graded


def test_the_policy_in_one_table():
    hints = Hints.of({"hints": ["nudge", "idea", "formula"]}, {})
    assert hints.shown("not implemented") == ["nudge"]
    assert hints.shown("failed") == ["nudge", "idea"]                   # the next level, never the formula
    assert hints.shown("failed", graded=True) == ["nudge"]              # grade, Gradescope: level 1 at most
    asked = Hints.of({"hints": ["nudge", "idea", "formula"]}, {"hint_policy": {"failed": "all"}})
    assert asked.shown("failed") == ["nudge", "idea", "formula"] and asked.shown("failed", graded=True) == ["nudge"]
    both = Hints.of({"hints": ["nudge", "idea", "formula"]}, {"hint_policy": {"failed": "all", "graded": "all"}})
    assert both.shown("failed", graded=True) == ["nudge", "idea", "formula"]


def test_a_wrong_sign_gets_the_next_level_in_check_and_the_first_in_a_graded_run(graders, tmp_path):
    check, graded = graders
    folder = submit(tmp_path / "sign", wrong_sign())
    (mine,) = check.grade(folder)
    assert mine["outcome"] == "failed" and mine["hints"] == STEP_HINTS[:2], mine["hints"]
    (theirs,) = graded.grade(folder)
    assert theirs["hints"] == STEP_HINTS[:1]
    output = json.dumps(gradescope([theirs]))
    assert FORMULA not in output and STEP_HINTS[1] not in output and STEP_HINTS[0] in output


def test_an_empty_file_and_an_untouched_stub_get_the_first_hint_only(graders, tmp_path):
    check, _ = graders
    for name, text in (("empty", ""), ("stub", student_version(RNN.reference))):
        (result,) = check.grade(submit(tmp_path / name, text))
        assert result["outcome"] == "not implemented", (name, result["message"])
        assert result["hints"] == [RNN.spec["checks"][0]["forward_hints"][0]], (name, result["hints"])
    (result,) = check.grade(submit(tmp_path / "empty", ""))
    assert "your file has no rnn_step_forward" in result["message"]


def test_the_formula_appears_when_checks_json_asks_for_it(tmp_path):
    private = tmp_path / "rnn_private"
    shutil.copytree(RNN.path, private)
    spec = json.loads((private / "checks.json").read_text())
    spec["hint_policy"] = {"failed": "all"}
    (private / "checks.json").write_text(json.dumps(spec))
    with Grader(str(private), seed=4, only=["rnn_step"], graded=False) as grader:
        (result,) = grader.grade(submit(tmp_path / "sign", wrong_sign()))
    assert result["hints"] == STEP_HINTS


def test_minigrad_check_prints_the_next_level_and_not_the_formula(tmp_path):
    folder = submit(tmp_path / "sign", wrong_sign())
    done = subprocess.run([sys.executable, "-m", "minigrad.cli", "check", folder, "--assignment", "rnn",
                           "--only", "rnn_step", "--seed", "4"], capture_output=True, text=True, cwd=REPO,
                          timeout=300)
    assert done.returncode == 1, done.stderr
    assert f"hint 2: {STEP_HINTS[1]}" in done.stdout and "hint 3" not in done.stdout, done.stdout
    assert FORMULA not in done.stdout
