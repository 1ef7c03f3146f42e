"""minigrad assignment make: solution markers, hidden parts, determinism, the CLI."""
import os
import re

import pytest

from minigrad.cli import main
from minigrad.coursework import list_assignments, make_assignment, strip_solutions
from minigrad.coursework.make import BEGIN, END, MarkerError, keep_solutions

SOURCE = '''\
def f_backward(dout, cache):
    """The docstring stays."""
    y = cache
    # BEGIN SOLUTION
    # HINT: sigmoid' = y (1 - y)
    dx = dout * y * (1 - y)
    # END SOLUTION
    return dx


class Layer:
    def backward(self, dout):
        if dout is not None:
            # BEGIN SOLUTION
            return dout * 2
            # END SOLUTION
        return None

# BEGIN HIDDEN
def test_hidden():
    assert True
# END HIDDEN
'''

STUDENT = '''\
def f_backward(dout, cache):
    """The docstring stays."""
    y = cache
    # HINT: sigmoid' = y (1 - y)
    raise NotImplementedError("f_backward: not implemented yet. Hint: sigmoid' = y (1 - y)")
    return dx


class Layer:
    def backward(self, dout):
        if dout is not None:
            raise NotImplementedError('Layer.backward: not implemented yet.')
        return None

'''


def test_strip_solutions_replaces_each_block_by_a_raise_at_its_indentation():
    assert strip_solutions(SOURCE) == STUDENT
    compile(STUDENT, "student.py", "exec")


def test_keep_solutions_only_drops_the_markers_and_hidden_parts():
    kept = keep_solutions(SOURCE)
    assert "dx = dout * y * (1 - y)" in kept and "return dout * 2" in kept
    assert "SOLUTION" not in kept and "test_hidden" not in kept


@pytest.mark.parametrize("text, problem", [
    ("x = 1\n# BEGIN SOLUTION\ny = 2\n", "never closed"),
    ("x = 1\n# END SOLUTION\n", "without its BEGIN"),
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "inside the solution block"),
    ("# BEGIN HIDDEN\nx = 1\n", "never closed"),
])
def test_broken_markers_are_errors_with_the_line(text, problem):
    with pytest.raises(MarkerError, match=problem):
        strip_solutions(text, "a.py")


def _solution_lines(text):
    """Code lines inside solution blocks that appear nowhere outside them."""
    inside, outside, block = set(), set(), False
    for line in text.splitlines():
        if BEGIN.match(line) or END.match(line):
            block = BEGIN.match(line) is not None
            continue
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            (inside if block else outside).add(stripped)
    return inside - outside


@pytest.mark.parametrize("assignment", list_assignments(), ids=lambda a: a.name)
def test_make_is_deterministic_and_leaves_no_solution(assignment, tmp_path):
    first = make_assignment(assignment.path, tmp_path / "one")
    second = make_assignment(assignment.path, tmp_path / "two")
    names = sorted(os.path.basename(p) for p in first)
    assert names == sorted(os.path.basename(p) for p in second)
    assert names == sorted([assignment.module, "README.md", f"test_{assignment.name}.py"])
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    with open(assignment.reference, encoding="utf-8") as f:
        reference = f.read()
    student = (tmp_path / "one" / assignment.module).read_text()
    assert "SOLUTION" not in student and "NotImplementedError" in student
    solution = _solution_lines(reference)
    assert solution, "the reference marks no solution"
    student_lines = {line.strip() for line in student.splitlines()}
    leaked = sorted(solution & student_lines)
    assert not leaked, f"solution text left in the student version: {leaked}"
    compile(student, assignment.module, "exec")


def test_cli_lists_and_makes(tmp_path, capsys):
    assert main(["assignment", "list"]) == 0
    listing = capsys.readouterr().out
    for name in ("primitives", "rnn", "lstm_gru", "attention", "transformer"):
        assert re.search(rf"^{name}\s", listing, re.M)
    assert main(["assignment", "make", "rnn", str(tmp_path / "hw")]) == 0
    assert (tmp_path / "hw" / "rnn.py").exists() and not (tmp_path / "hw" / "checks.json").exists()
    assert main(["assignment", "make", "nope", str(tmp_path / "x")]) == 2
    assert "no assignment named 'nope'" in capsys.readouterr().err
