"""minigrad check: references pass, student versions and buggy submissions fail with the right diagnosis.

Every submission runs in a child process (forked: milliseconds each), so a
submission that hangs or crashes cannot take the test run down with it.
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from minigrad.cli import main
from minigrad.coursework import grade as grade_with_limits, list_assignments, load_assignment, make_assignment
from minigrad.coursework.grading.diagnostics import diagnose_gradient, factor_text
from minigrad.coursework.authoring.make import student_version

ASSIGNMENTS = list_assignments()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def grade(path, assignment, **options):
    """The grader with a generous time limit: 2 shared cores can be slow (the hang test sets its own)."""
    options.setdefault("time_limit", 60)
    options.setdefault("seed", 1)       # the same inputs in every call of one test
    return grade_with_limits(path, assignment, **options)


def by_name(results):
    return {r["name"]: r for r in results}


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.name)
def test_reference_passes_and_student_version_is_not_implemented(assignment, tmp_path):
    # the reference as a student hands it in: library code inlined (primitives, rnn, lstm_gru and attention import
    # their answer from the library's answer_modules, which a student's worker does not provide)
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / assignment.module).write_text(student_version(assignment.reference, solutions=True))
    results = grade(tmp_path / "ref" / assignment.module, assignment)
    assert [r["name"] for r in results] == [c.name for c in assignment.checks]
    assert all(r["passed"] for r in results), [(r["name"], r["message"]) for r in results if not r["passed"]]
    assert sum(r["score"] for r in results) == sum(c.points for c in assignment.checks)

    make_assignment(assignment.path, tmp_path / "student")
    results = grade(tmp_path / "student", assignment)           # a folder: the grader finds the module in it
    for r, check in zip(results, assignment.checks):
        assert not r["passed"] and r["score"] == 0
        assert "not implemented yet" in r["message"], r["message"]
        assert r["hints"] == list(check.hints.forward_levels[:1])   # the nudge of the part to write


def test_a_wrong_forward_gets_the_forward_hints_not_the_backward_formula(tmp_path):
    path = submission(tmp_path, "rnn", ("h = xp.tanh(a) if", "h = xp.tanh(2 * a) if"))
    result = by_name(grade(path, "rnn", only=["rnn_step"]))["rnn_step"]
    assert result["forward"] is False and result["score"] == 0
    forward_levels = list(load_assignment("rnn").check("rnn_step").hints.forward_levels)
    assert result["hints"] == forward_levels[:1]          # a graded run: the first level (hints.py)
    assert "da = dh" not in result["hint"] and result["hint"] == forward_levels[0]


def _junit_counts(path):
    suite = ElementTree.parse(path).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    return int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))


def test_the_public_tests_fail_on_student_versions_and_pass_on_references(tmp_path):
    """Test the tests: one pytest run over every student version, one over every reference."""
    for a in ASSIGNMENTS:
        make_assignment(a.path, tmp_path / "student" / a.name)
        make_assignment(a.path, tmp_path / "reference" / a.name, solutions=True)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # no plugins: a faster start
    counts = {}
    for version in ("student", "reference"):
        report = tmp_path / f"{version}.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                        str(tmp_path / version), f"--junitxml={report}", str(tmp_path / version)],
                       cwd=tmp_path / version, env=env, capture_output=True, timeout=300)
        counts[version] = _junit_counts(report)
    tests, failed = counts["student"]
    assert tests >= 3 * len(ASSIGNMENTS) and failed == tests, counts
    tests, failed = counts["reference"]
    assert tests >= 3 * len(ASSIGNMENTS) and failed == 0, counts


# ----------------------------------------------------------------------------- buggy submissions

def submission(tmp_path, name, *edits):
    """The reference of assignment ``name`` with text edits (old, new), written to tmp_path."""
    assignment = load_assignment(name)
    text = student_version(assignment.reference, solutions=True)   # i11-content: library code inlined (rnn, lstm_gru)
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / assignment.module
    path.write_text(text)
    return path


def test_missing_recurrence_term_is_named(tmp_path):
    path = submission(tmp_path, "rnn", ("rnn_step_backward(dh[t] + dh_next,", "rnn_step_backward(dh[t],"))
    results = by_name(grade(path, "rnn"))
    assert results["rnn_step"]["passed"]
    message = results["rnn_sequence"]["message"]
    assert not results["rnn_sequence"]["passed"]
    assert "right at the last time step only" in message and "missing the gradient carried through time" in message


def test_transposed_weight_gradient_is_named(tmp_path):
    # i11-content: the rnn assignment now uses the library's layout, w_ih (H, D), and its _weight_grads
    path = submission(tmp_path, "rnn", ("dw_hh = da_h.T @ h_prev", "dw_hh = h_prev.T @ da_h"),
                      ("dw_ih = da_x.T @ x", "dw_ih = x.T @ da_x"))
    result = grade(path, "rnn", only=["rnn_step"])[0]
    assert not result["passed"]
    assert "dw_hh equals the transpose of the right gradient" in result["message"]
    assert "dw_ih has shape (5, 4): it is the transpose of the right gradient" in result["message"]


def test_wrong_sigmoid_derivative_scaled_gradient_and_wrong_forward(tmp_path):
    path = submission(tmp_path, "primitives",
                      ("return (dout * y * (1 - y),)", "return (dout * (1 - y),)"),          # wrong derivative
                      ("return (dout * (1 - y * y),)", "return (2 * dout * (1 - y * y),)"),  # scaled by 2
                      ("return _matmul(a, b)", "return _matmul(a, b) + 1"))                  # wrong forward
    results = by_name(grade(path, "primitives"))
    sigmoid = results["Sigmoid"]
    assert not sigmoid["passed"] and "differs from finite differences: dx[" in sigmoid["message"]
    assert sigmoid["hint"].startswith("The saved tensor is the output y") and sigmoid["worst"].startswith("dx[")
    assert "y * (1 - y)" not in sigmoid["hint"]          # the formula: only when checks.json asks (hints.py)
    assert "off by a constant factor of 2" in results["Tanh"]["message"]
    assert "(the backward was not judged" in results["MatMul"]["message"]
    assert all(results[name]["passed"] for name in ("Mul", "Sum", "Softmax"))
    assert sum(r["score"] for r in results.values()) == 3


def test_hangs_exits_and_memory_exhaustion_fail_only_their_check(tmp_path):
    path = submission(
        tmp_path, "primitives",
        ("        return (dout * (1 - y * y),)", "        while True:\n            pass"),       # Tanh
        ("        return (dout * y * (1 - y),)", "        import sys\n        sys.exit(3)"),     # Sigmoid
        ("    inner = (dy * y)", "    junk = bytearray(1 << 40)\n    inner = (dy * y)"),         # Softmax
        ("            da = _matmul(dout2", "            import os\n            os._exit(4)\n            da = _matmul(dout2"),  # MatMul
        ("        dout = _restore(dout, ctx.axes, ctx.keepdim)", "        while True:\n            print('spam' * 1000)"),  # Sum
    )
    results = by_name(grade(path, "primitives", time_limit=2))
    assert "stopped after 2 s" in results["Tanh"]["message"]
    assert "called sys.exit(3)" in results["Sigmoid"]["message"]
    assert "ran out of memory" in results["Softmax"]["message"]
    assert "exit code 4" in results["MatMul"]["message"]
    assert "printed more than the 64 MB of output" in results["Sum"]["message"]
    assert results["Mul"]["passed"]


@pytest.mark.parametrize("code, reason", [
    ("raise RuntimeError('oops')\n", "RuntimeError: oops (primitives.py line 1)"),
    ("import sys\nsys.exit(1)\n", "called sys.exit(1)"),
])
def test_import_failures_fail_every_check_with_the_reason(tmp_path, code, reason):
    path = submission(tmp_path, "primitives", ('"""Assignment', code + '"""Assignment'))
    results = grade(path, "primitives")
    assert len(results) == 6
    for r in results:
        assert not r["passed"] and "could not be imported" in r["message"] and reason in r["message"]


def test_an_infinite_loop_at_import_is_stopped(tmp_path):
    path = submission(tmp_path, "rnn", ('"""Assignment', 'while True:\n    pass\n"""Assignment'))
    results = grade(path, "rnn", time_limit=1)
    assert all(r["score"] == 0 and "could not be imported: stopped after 1 s" in r["message"] for r in results)


def test_checks_do_not_depend_on_their_order(tmp_path):
    path = submission(tmp_path, "attention", ("dbias = dy.sum(axis=rows)", "dbias = 0.5 * dy.sum(axis=rows)"))
    forward = by_name(grade(path, "attention", only=["softmax", "layer_norm"]))
    backward = by_name(grade(path, "attention", only=["layer_norm", "softmax"]))
    assert forward == backward
    assert "dbias is 1/2 times the right gradient" in forward["layer_norm"]["message"]


def test_attention_gradients_of_the_bias_and_the_scale_are_judged(tmp_path):
    # the attention set's answer is the library's attention_backward (functions/attention.py): the bias B's gradient
    # is dS summed over the batch it was broadcast across, and dQ carries the scale
    path = submission(tmp_path, "attention", ("dq = (ds @ k) * scale", "dq = ds @ k"),
                      ("dbias = None if bias_shape is None else unbroadcast(ds, bias_shape)", "dbias = ds[0]"))
    result = grade(path, "attention", only=["attention"])[0]
    assert result["forward"] and not result["passed"] and result["score"] == 1     # the forward's point only
    assert "dq" in result["message"] and "dbias" in result["message"]


def test_cli_check_writes_gradescope_json_and_exits_nonzero(tmp_path, capsys):
    # i11-content: library names (dc_prev), a third check (gru_step_reset_before) and 3-point checks
    path = submission(tmp_path, "lstm_gru", ("dc_prev = dc_total * f", "dc_prev = dc_total"))
    report = tmp_path / "results.json"
    assert main(["check", str(path), "--assignment", "lstm_gru", "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "lstm_step              pass     FAIL" in out and "gru_step               pass     pass" in out
    data = json.loads(report.read_text())
    assert data["score"] == 5      # lstm_step's forward is right: its forward point
    assert [(t["name"], t["score"], t["max_score"]) for t in data["tests"]] == [
        ("lstm_step", 1, 3), ("gru_step", 3, 3), ("gru_step_reset_before", 1, 1)]
    assert "dc_prev" in data["tests"][0]["output"]
    (tmp_path / "ref").mkdir()   # the reference as handed in (its LIBRARY block inlined: it imports its answer)
    reference = tmp_path / "ref" / "lstm_gru.py"
    reference.write_text(student_version(load_assignment("lstm_gru").reference, solutions=True))
    assert main(["check", str(reference), "--assignment", "lstm_gru"]) == 0


def test_a_broken_graph_fails_the_autograd_check(tmp_path):
    path = submission(tmp_path, "transformer", ("return x + self.ff(self.ln2(x))",
                                                "return x + self.ff(self.ln2(x)).detach()"))
    result = grade(path, "transformer", only=["TransformerBlock"])[0]
    assert not result["passed"] and "grad of ff.2.weight is all zeros: no gradient reaches" in result["message"]


# ----------------------------------------------------------------------------- diagnostics alone

def test_diagnoses_on_arrays():
    rng = np.random.default_rng(0)
    expected = rng.standard_normal((3, 3))
    assert diagnose_gradient("dW", "W", expected.copy(), expected, 1e-5, 1e-3)["ok"]
    assert "transpose" in diagnose_gradient("dW", "W", expected.T, expected, 1e-5, 1e-3)["message"]
    assert "factor of 1/2" in diagnose_gradient("dW", "W", expected / 2, expected, 1e-5, 1e-3)["message"]
    assert "wrong sign" in diagnose_gradient("dW", "W", -expected, expected, 1e-5, 1e-3)["message"]
    assert "all zeros" in diagnose_gradient("dW", "W", 0 * expected, expected, 1e-5, 1e-3)["message"]
    assert "is None" in diagnose_gradient("dW", "W", None, expected, 1e-5, 1e-3)["message"]
    nan = expected.copy()
    nan[1, 2] = np.nan
    assert "NaN or inf (first at dW[1, 2])" in diagnose_gradient("dW", "W", nan, expected, 1e-5, 1e-3)["message"]
    wrong = expected.copy()
    wrong[0, 1] += 1.0
    result = diagnose_gradient("dW", "W", wrong, expected, 1e-5, 1e-3)
    assert result["worst"] == "dW[0, 1]" and "differs from finite differences" in result["message"]
    sequence = rng.standard_normal((2, 4, 3))
    early_wrong = sequence.copy()
    early_wrong[:, :3] *= 0.3
    message = diagnose_gradient("dx", "x", early_wrong, sequence, 1e-5, 1e-3, time_axis=1)["message"]
    assert "right at the last time step only (from t=3 on)" in message
    assert [factor_text(c) for c in (2.0, 0.5, -1.0, 1 / 3, 1.37)] == ["2", "1/2", "-1", "1/3", "1.37"]


# ----------------------------------------------------------------------------- credit, on a private assignment

FIXTURE = os.path.join(ROOT, "tests", "coursework_fixture", "tinyrnn")


@pytest.fixture(scope="module")
def tiny():
    from minigrad.coursework import Grader
    with Grader(FIXTURE, seed=99) as grader:
        yield grader


def tiny_submission(tmp_path, *edits):
    text = open(os.path.join(FIXTURE, "tinyrnn.py")).read()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "tinyrnn.py").write_text(text)
    return str(tmp_path)


def credit(results):
    return [(r["name"], r["forward_score"], r["backward_score"]) for r in results]


def test_forward_and_backward_points_are_separate(tiny, tmp_path):
    tanh = tiny.grade(tiny_submission(tmp_path / "a", ("da = dh * (1 - h ** 2)", "da = dh * (1 - h)")))
    assert credit(tanh) == [("step", 1, 0), ("sequence", 1, 0)]
    carry = tiny.grade(tiny_submission(tmp_path / "b", ("dh[:, t] + dh_prev", "dh[:, t]")))
    assert credit(carry) == [("step", 1, 1), ("sequence", 1, 0)]
    forward = tiny.grade(tiny_submission(tmp_path / "c", ("h = np.tanh(x @ Wx + h_prev @ Wh + b)",
                                                          "h = np.tanh(x @ Wx + h_prev @ Wh - b)")))
    assert credit(forward) == [("step", 0, 0), ("sequence", 0, 0)]
    assert "(the backward was not judged" in forward[0]["message"]


def test_a_step_bug_is_reported_once_not_again_in_the_sequence(tiny, tmp_path):
    results = tiny.grade(tiny_submission(tmp_path, ("da = dh * (1 - h ** 2)", "da = dh * (1 - h)")))
    step, sequence = results
    assert "dx" in step["message"]
    assert sequence["message"].startswith("not judged on its own: it uses the functions of step, whose backward fails")
    assert "dx" not in sequence["message"]


def test_float32_fails_the_part_it_is_in_forward_and_backward_alike(tiny, tmp_path):
    forward = tiny.grade(tiny_submission(tmp_path / "f", ("    return h, (x, h_prev, Wx, Wh, h)",
                                                          "    return h.astype(np.float32), (x, h_prev, Wx, Wh, h)")))
    assert credit(forward)[0] == ("step", 0, 0)
    assert "float32" in forward[0]["message"] and "float64" in forward[0]["message"]
    backward = tiny.grade(tiny_submission(tmp_path / "b", ("    return dx, dh_prev, dWx, dWh, db",
                                                           "    return dx.astype(np.float32), dh_prev, dWx, dWh, db")))
    assert credit(backward)[0] == ("step", 1, 0)
    assert "float32" in backward[0]["message"] and "float64" in backward[0]["message"]


def test_nan_gradients_fail_the_backward(tiny, tmp_path):
    results = tiny.grade(tiny_submission(tmp_path, ("dWx, dWh, db = x.T @ da, h_prev.T @ da, da.sum(axis=0)",
                                                    "dWx, dWh, db = x.T @ da, h_prev.T @ da, da.sum(axis=0) * np.nan")))
    assert credit(results)[0] == ("step", 1, 0)
    assert "NaN" in results[0]["message"] and "db" in results[0]["message"]


def test_a_backward_loop_that_skips_t0_fails_the_sequence_backward_only(tiny, tmp_path):
    results = tiny.grade(tiny_submission(tmp_path, ("for t in reversed(range(T)):", "for t in reversed(range(1, T)):")))
    assert credit(results) == [("step", 1, 1), ("sequence", 1, 0)]
    assert "dx" in results[1]["message"]


def test_helper_modules_of_the_submission_import(tiny, tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    text = open(os.path.join(FIXTURE, "tinyrnn.py")).read()
    helper, _, rest = text.partition("def sequence_forward")
    (folder / "helpers.py").write_text(helper)
    (folder / "tinyrnn.py").write_text("from helpers import step_forward, step_backward\nimport numpy as np\n\n"
                                       "def sequence_forward" + rest)
    assert sum(r["score"] for r in tiny.grade(str(folder))) == 5


@pytest.mark.parametrize("shape", [[0] * 65, [0, 2 ** 29, 2 ** 29, 2 ** 29], [-1], [1.5], [2 ** 40]])
def test_a_malformed_array_layout_is_a_protocol_error_not_a_crash(shape):
    # the worker's reply is the submission's to forge: any shape NumPy would refuse must be refused first
    import io
    import struct
    from minigrad.coursework.sandbox import protocol
    header = json.dumps({"status": "ok", "arrays": [{"shape": shape, "dtype": "<f8"}]}).encode()
    with pytest.raises(protocol.ProtocolError):
        protocol.read_message(io.BytesIO(struct.pack(">I", len(header)) + header))


def test_a_message_round_trips():
    import io
    from minigrad.coursework.sandbox import protocol
    arrays = [np.arange(6.0).reshape(2, 3), np.zeros((0, 4), dtype=np.int32), np.array(True)]
    header, out = protocol.read_message(io.BytesIO(protocol.encode({"status": "ok"}, arrays)))
    assert header == {"status": "ok"}
    assert all(a.dtype == b.dtype and a.shape == b.shape and (a == b).all() for a, b in zip(arrays, out))


def test_the_command_line_shows_a_warning_as_one_line(capsys, monkeypatch):
    import warnings
    from minigrad import cli

    def run(args):
        warnings.warn("the worker's uid cannot read /opt/python", RuntimeWarning)
        return 0

    monkeypatch.setattr(cli, "_list", run)
    with warnings.catch_warnings():
        warnings.simplefilter("default")    # Python's own default for a RuntimeWarning (pytest may set others)
        assert main(["assignment", "list"]) == 0
    assert capsys.readouterr().err == "minigrad: warning: the worker's uid cannot read /opt/python\n"


def test_a_failing_public_test_shows_the_diagnosis_not_the_checkers_code(tmp_path):
    """check_backward hides its frames from pytest's traceback (__tracebackhide__): the student reads their own
    test line and the diagnosis, not minigrad's code."""
    (tmp_path / "test_mine.py").write_text(
        "import numpy as np\nfrom minigrad.coursework import check_backward\n\n"
        "def forward(x):\n    y = np.tanh(x)\n    return y, y\n\n"
        "def backward(dy, y):\n    return dy * (1 - y)\n\n"
        "def test_tanh():\n    check_backward(forward, backward, [np.ones((2, 3))], names=['dx'])\n")
    env = dict(os.environ, PYTHONPATH=ROOT, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "the backward is wrong" in done.stdout
    assert "check_backward(forward, backward" in done.stdout          # the student's own line
    assert "raise AssertionError(" not in done.stdout and "def check_backward" not in done.stdout
