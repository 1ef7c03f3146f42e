"""minigrad assignment make: solution markers, hidden parts, determinism, the CLI."""
import os
import re

import pytest

from minigrad.cli import main
from minigrad.coursework import list_assignments, load_assignment, make_assignment, strip_solutions
from minigrad.coursework.authoring.make import BEGIN, END, MarkerError, expand_library, keep_solutions

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
    trainers = sorted(n for n in os.listdir(assignment.path) if n.startswith("train_") and n.endswith(".py"))
    assert names == sorted([assignment.module, "README.md", f"test_{assignment.name}.py"] + trainers)
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    with open(assignment.reference, encoding="utf-8") as f:
        reference = expand_library(f.read())
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
    assert "These are practice sets" in listing and "minigrad assignment new NAME DIR" in listing
    assert main(["assignment", "make", "rnn", str(tmp_path / "hw")]) == 0
    assert (tmp_path / "hw" / "rnn.py").exists() and not (tmp_path / "hw" / "checks.json").exists()
    assert main(["assignment", "make", "nope", str(tmp_path / "x")]) == 2
    assert "no assignment named 'nope'" in capsys.readouterr().err


def test_make_refuses_to_overwrite_unless_forced(tmp_path, capsys):
    out = tmp_path / "hw"
    assert main(["assignment", "make", "rnn", str(out)]) == 0
    (out / "rnn.py").write_text("# my work so far\n")
    capsys.readouterr()
    assert main(["assignment", "make", "rnn", str(out)]) == 2
    error = capsys.readouterr().err
    assert "already exists and is not empty" in error and "--force" in error
    assert (out / "rnn.py").read_text() == "# my work so far\n"
    with pytest.raises(FileExistsError, match="already exists and is not empty: minigrad assignment make does not"):
        make_assignment(list_assignments()[0].path, out)
    assert main(["assignment", "make", "rnn", str(out), "--force"]) == 0
    assert "NotImplementedError" in (out / "rnn.py").read_text()
    source = tmp_path / "mine"
    main(["assignment", "new", "mine", str(source)])
    with pytest.raises(FileExistsError, match="the assignment's own folder"):
        make_assignment(str(source), str(source), force=True)


# ----------------------------------------------------------------------------- one textbook: the library's step functions

def _without_markers(text):
    return [line for line in text.splitlines() if "# BEGIN SOLUTION" not in line and "# END SOLUTION" not in line]


@pytest.mark.parametrize("name", ["rnn", "lstm_gru"])
def test_rnn_and_lstm_gru_are_built_from_the_library_s_own_step_functions(name, tmp_path):
    """The grader's reference runs minigrad/functions/rnn_steps.py, and the student file holds its text."""
    import importlib.util
    import inspect

    from minigrad.functions import rnn_steps
    assignment = load_assignment(name)
    spec = importlib.util.spec_from_file_location(f"reference_{name}", assignment.reference)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    steps = [n for n in ("rnn_step_forward", "rnn_step_backward", "lstm_step_forward", "lstm_step_backward",
                         "gru_step_forward", "gru_step_backward") if hasattr(reference, n)]
    assert len(steps) == {"rnn": 2, "lstm_gru": 4}[name]
    make_assignment(assignment.path, tmp_path / "key", solutions=True)
    make_assignment(assignment.path, tmp_path / "student")
    key = (tmp_path / "key" / assignment.module).read_text()
    student = (tmp_path / "student" / assignment.module).read_text()
    for step in steps:
        assert getattr(reference, step) is getattr(rnn_steps, step)        # no copy to drift
        library = inspect.getsource(getattr(rnn_steps, step))
        assert "\n".join(_without_markers(library)) in key                 # the key is the library's text
        signature = library.splitlines()[0]
        assert signature in student and f"NotImplementedError(\"{step}: not implemented yet." in student.replace("'", '"')
    compile(key, "key.py", "exec")
    assert "from minigrad import backend" in key and "from .." not in key


def test_library_blocks_are_checked():
    with pytest.raises(MarkerError, match="holds only 'from minigrad"):
        expand_library("# BEGIN LIBRARY\nimport os\n# END LIBRARY\n", "a.py")
    with pytest.raises(MarkerError, match="defines no function, class or constant 'nope'"):
        expand_library("# BEGIN LIBRARY\nfrom minigrad.functions.rnn_steps import nope\n# END LIBRARY\n", "a.py")
    with pytest.raises(MarkerError, match="never closed"):
        expand_library("# BEGIN LIBRARY\nfrom minigrad.functions.rnn_steps import sigmoid\n", "a.py")
    text = expand_library("# BEGIN LIBRARY\nfrom minigrad.functions.rnn_steps import rnn_step_backward\n# END LIBRARY\n")
    assert "def _weight_grads(" in text and "def rnn_step_backward(" in text and "def lstm_step_forward(" not in text
    text = expand_library("# BEGIN LIBRARY\nfrom minigrad.finite_differences import relative_error\n# END LIBRARY\n")
    assert "import numpy" in text and "\nTINY = " in text and "def relative_error(" in text   # constants it uses
    namespace = {}
    exec(compile(text, "expanded.py", "exec"), namespace)
    assert namespace["relative_error"](2.0, 1.0) == 0.5


# ----------------------------------------------------------------------------- private assignments: assignment new

def test_assignment_new_scaffolds_a_private_assignment_that_make_and_check_accept(tmp_path, monkeypatch, capsys):
    import subprocess
    import sys

    from minigrad.coursework import grade
    monkeypatch.chdir(tmp_path)
    assert main(["assignment", "new", "hw_affine"]) == 0                  # ./hw_affine
    folder = tmp_path / "hw_affine"
    assert sorted(os.listdir(folder)) == ["README.md", "checks.json", "hw_affine.py", "test_hw_affine.py"]
    assert "minigrad check hw_affine --assignment hw_affine" in capsys.readouterr().out
    assert "hw_affine" not in [a.name for a in list_assignments()]          # nothing of it is installed
    assert main(["assignment", "new", "hw_affine"]) == 2                  # never overwritten
    assert "already exists and is not empty" in capsys.readouterr().err
    assert main(["assignment", "new", "not-a-name", "x"]) == 2
    assert "not a valid name" in capsys.readouterr().err

    results = grade(str(folder), str(folder), time_limit=60)               # the reference passes
    assert [r["name"] for r in results] == ["affine", "leaky_relu"] and all(r["passed"] for r in results), results
    assert sum(r["score"] for r in results) == 5
    assert main(["assignment", "make", str(folder), "student"]) == 0
    assert main(["assignment", "make", str(folder), "key", "--with-solutions"]) == 0
    assert sorted(os.listdir(tmp_path / "student")) == ["README.md", "hw_affine.py", "test_hw_affine.py"]
    results = grade(str(tmp_path / "student"), str(folder), time_limit=60)
    assert all(not r["passed"] and "not implemented yet" in r["message"] for r in results)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root, PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    for version, expected in (("key", "3 passed"), ("student", "3 failed")):
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", version,
                              version], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert expected in run.stdout, run.stdout


@pytest.mark.parametrize("assignment", list_assignments(), ids=lambda a: a.name)
def test_student_readmes_say_practice_set_and_the_mask_convention(assignment):
    with open(os.path.join(assignment.path, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "**A practice set.**" in readme
    if any(entry.source == "causal" for check in assignment.checks for entry in check.inputs):
        assert "True = may not attend" in readme
    if assignment.name == "rnn":      # the layout table: this assignment and minigrad vs CS231n
        assert "| input weights | `w_ih (G·H, D)` | `w_ih (G·H, D)` | `Wx (D, G·H)` = `w_ih.T` |" in readme
        assert "`x (T, N, D)`" in readme and "`prev_h`" in readme


def test_the_rnn_assignment_computes_what_minigrad_s_nn_rnn_computes():
    """The homework's sequence functions and the library's layer: same layout, same numbers."""
    import importlib.util

    import numpy as np

    import minigrad
    assignment = load_assignment("rnn")
    spec = importlib.util.spec_from_file_location("reference_rnn_sequence", assignment.reference)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    T, N, D, H = 4, 2, 3, 5
    layer = minigrad.nn.RNN(D, H).double()
    x = np.random.default_rng(0).standard_normal((T, N, D))
    h0 = np.random.default_rng(1).standard_normal((N, H))
    weights = [p.numpy() for p in (layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0, layer.bias_hh_l0)]
    h, _ = reference.rnn_forward(x, h0, *weights)
    output, _ = layer(minigrad.tensor(x), minigrad.tensor(h0[None]))
    assert np.allclose(h, output.numpy(), atol=1e-12)
