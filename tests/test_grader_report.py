"""The student's path and a report that agrees with itself (issue 38 item 10)."""
import os
import re
import subprocess
import sys

import pytest

from minigrad.coursework import load_assignment
from minigrad.coursework.spec.assignment import infer_assignment
from minigrad.coursework.authoring.make import make_assignment, student_version
from minigrad.coursework.grading.grader import Grader
from minigrad.coursework.grading.report import table

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RNN = load_assignment("rnn")
REFERENCE = student_version(RNN.reference, solutions=True)


def submit(folder, text):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rnn.py"), "w") as f:
        f.write(text)
    return str(folder)


def bug(old, new):
    assert REFERENCE.count(old) == 1, old
    return REFERENCE.replace(old, new)


def row(text, name):
    """The table row of check ``name``: its cells split on runs of two spaces."""
    line = next(line for line in text.splitlines() if line.startswith(name + " "))
    return re.split(r"\s{2,}", line)


@pytest.fixture(scope="module")
def grader():
    with Grader("rnn", seed=10, graded=False) as grader:
        yield grader


def test_the_coursework_readme_starts_with_both_paths():
    with open(os.path.join(REPO, "minigrad", "coursework", "README.md")) as f:
        top = f.read()[:1500]
    assert "**You are a student**" in top and "**You are an instructor**" in top
    assert "minigrad assignment make rnn hw2/" in top and "minigrad check " in top


def test_check_infers_the_assignment_in_a_folder_made_by_assignment_make(tmp_path):
    make_assignment(RNN.path, tmp_path / "hw2")
    assert infer_assignment(str(tmp_path / "hw2")) == "rnn" == infer_assignment(str(tmp_path / "hw2" / "rnn.py"))
    os.unlink(tmp_path / "hw2" / "test_rnn.py")
    with pytest.raises(ValueError, match="pass --assignment NAME"):
        infer_assignment(str(tmp_path / "hw2"))
    make_assignment(RNN.path, tmp_path / "hw3")
    done = subprocess.run([sys.executable, "-m", "minigrad.cli", "check", "--only", "rnn_step", "--seed", "1"],
                          capture_output=True, text=True, cwd=tmp_path / "hw3", timeout=300)
    assert "minigrad: assignment rnn (its files are in" in done.stderr, done.stderr
    assert done.returncode == 1 and "not implemented" in done.stdout, done.stdout


def test_a_syntax_error_points_at_the_student_s_file_and_line(grader, tmp_path):
    text = "import numpy as np\n\n\ndef rnn_step_forward(x, h_prev, w_ih, w_hh, b_ih, b_hh):\n    a = x @ w_ih.T +\n"
    results = grader.grade(submit(tmp_path / "syntax", text))
    message = results[0]["message"]
    assert "SyntaxError: invalid syntax (rnn.py line 5): a = x @ w_ih.T +" in message, message
    assert "importlib" not in message and "frozen" not in message


def test_the_table_s_worst_element_is_the_one_the_details_name(grader, tmp_path):
    # one entry far off, one row of the wrong sign: the largest relative error (2, the row) is not where the
    # tolerance is exceeded most (the entry); the old table named the row, the details the entry
    results = grader.grade(submit(tmp_path / "offset", bug("    dw_ih = da_x.T @ x\n", "    dw_ih = da_x.T @ x\n"
                                                             "    dw_ih[0, 0] += 100.0\n    dw_ih[2] = -dw_ih[2]\n")))
    step = results[0]
    assert step["backward"] is False
    named = re.match(r"(?:differs from finite differences: )?(dw_ih\[\d+, \d+\]) is .*\(max relative error "
                     r"([0-9.e+-]+)\)", step["message"])
    assert named, step["message"]
    cells = row(table(results), "rnn_step")
    assert cells[5] == named.group(1) == step["worst"] == "dw_ih[0, 0]", (cells, step["message"])
    assert cells[4] == named.group(2)


def test_a_fail_row_never_shows_a_passing_error(grader, tmp_path):
    results = grader.grade(submit(tmp_path / "transposed", bug("dw_ih = da_x.T @ x", "dw_ih = x.T @ da_x")))
    step = results[0]
    assert step["backward"] is False and "transpose of the right gradient" in step["message"], step["message"]
    cells = row(table(results), "rnn_step")
    assert cells[2] == "FAIL" and cells[4] in ("inf", "-") and cells[5] == "dw_ih", cells


def test_weight_gradients_not_summed_over_time_get_their_own_diagnosis(grader, tmp_path):
    text = bug("dw_ih, dw_hh = dw_ih + dw_ih_t, dw_hh + dw_hh_t", "dw_ih, dw_hh = dw_ih_t, dw_hh + dw_hh_t")
    results = grader.grade(submit(tmp_path / "not_summed", text))
    sequence = results[1]
    assert results[0]["passed"] and sequence["backward"] is False
    assert sequence["message"].startswith("dw_ih is right for a sequence of one step and wrong for 5 steps: w_ih "
                                          "is used at every step"), sequence["message"]
    assert "Add each step's dw_ih up over t" in sequence["message"]
