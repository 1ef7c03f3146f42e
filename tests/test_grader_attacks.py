"""Submissions that attack the grader instead of solving the assignment.

Each must score exactly the honest credit of the work it contains (usually 0)
and leave the report intact, also 3 s after the grader has exited.  Most run
on tests/coursework_fixture/tinyrnn, a private assignment (nothing of it is
installed), against one Grader whose reference answers are computed once.

The grader's defences differ with its user: run as root (Docker, Gradescope,
and this suite's machine) the worker runs as a uid of its own and the folders
it must not read are covered; as another user some attacks on the grader's
own processes and files remain possible (coursework/README.md, "Security
model").  Where the outcome differs, the test asserts each mode's guarantee.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from minigrad.coursework import Grader, load_assignment, make_assignment
from minigrad.coursework.grading.gradebook import grade_folder

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")
ROOT = os.geteuid() == 0
FORWARD_POINTS = 2      # step 1 + sequence 1: the fixture's forward parts
FULL = 5


@pytest.fixture(scope="module")
def grader():
    with Grader(FIXTURE, seed=20240611) as grader:
        yield grader


def reference_text():
    with open(os.path.join(FIXTURE, "tinyrnn.py")) as f:
        return f.read()


def stubs_text(tmp_path):
    """The student version: every solution block replaced by `raise NotImplementedError`."""
    make_assignment(FIXTURE, tmp_path / "_student")
    return (tmp_path / "_student" / "tinyrnn.py").read_text()


def forward_only_text():
    """Right forwards, backwards not written: honest credit FORWARD_POINTS."""
    text = reference_text()
    text = text.replace("    da = dh * (1 - h ** 2)\n", "    raise NotImplementedError\n")
    return text.replace("        dx[:, t], dh_prev, dWx_t",
                        "        raise NotImplementedError\n        dx[:, t], dh_prev, dWx_t")


def write(folder, text, prelude=""):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "tinyrnn.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(prelude) + "\n" + text)
    return path


def score(results):
    return sum(r["score"] for r in results)


def processes_with(marker):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


# ----------------------------------------------------------------------------- honest baselines

def test_honest_baselines(grader, tmp_path):
    assert score(grader.grade(write(tmp_path / "ref", reference_text()))) == FULL
    assert score(grader.grade(write(tmp_path / "fwd", forward_only_text()))) == FORWARD_POINTS
    assert score(grader.grade(write(tmp_path / "stub", stubs_text(tmp_path)))) == 0


# ----------------------------------------------------------------------------- in-process attacks

PATCH_GRADER_AND_NUMPY = """
    import numpy as np
    np.abs = lambda x: x * 0                     # every |error| is 0
    np.allclose = lambda *args, **kwargs: True
    np.isfinite = lambda x: np.ones(np.shape(x), dtype=bool)
    try:
        import minigrad.coursework.grading.grader as grader
        grader.Grader.result = lambda *args, **kwargs: {"passed": True, "score": 100}
        import minigrad.coursework.grading.diagnostics as diagnostics
        diagnostics.compare = lambda *args, **kwargs: {"ok": True, "max_rel_error": 0.0, "worst": "", "message": ""}
    except ImportError:
        pass
"""


def test_patching_the_grader_or_numpy_at_import_changes_nothing(grader, tmp_path):
    results = grader.grade(write(tmp_path / "s", forward_only_text(), PATCH_GRADER_AND_NUMPY))
    assert score(results) == FORWARD_POINTS
    assert all(r["backward"] is False for r in results)


DELEGATE = """
    import gc, sys

    def _borrow(name):
        for module in list(sys.modules.values()):
            found = getattr(module, name, None)
            if callable(found) and getattr(module, "__name__", "") != __name__:
                return found
        for thing in gc.get_objects():
            if callable(thing) and getattr(thing, "__name__", "") == name and thing.__module__ != __name__:
                return thing
        raise NotImplementedError(name + ": no reference found to delegate to")

    def step_forward(*args): return _borrow("step_forward")(*args)
    def step_backward(*args): return _borrow("step_backward")(*args)
    def sequence_forward(*args): return _borrow("sequence_forward")(*args)
    def sequence_backward(*args): return _borrow("sequence_backward")(*args)
"""


def test_delegating_to_a_reference_loaded_in_the_grader_finds_none(grader, tmp_path):
    folder = tmp_path / "s"
    os.makedirs(folder)
    (folder / "tinyrnn.py").write_text(textwrap.dedent(DELEGATE))
    results = grader.grade(str(folder))
    assert score(results) == 0
    assert "no reference found" in results[0]["message"]


def test_importing_the_installed_reference_fails_and_a_private_assignment_is_not_installed(tmp_path):
    attack = "from minigrad.coursework.assignments.rnn.rnn import *\n"
    shipped = load_assignment("rnn")
    private = tmp_path / "private_rnn"
    shutil.copytree(shipped.path, private)            # a private assignment: the instructor's own folder
    os.chmod(tmp_path, 0o700)
    for assignment in (shipped.path, str(private)):
        with Grader(assignment, seed=7) as grader:
            folder = tmp_path / ("s-" + os.path.basename(assignment))
            os.makedirs(folder)
            (folder / shipped.module).write_text(attack)
            results = grader.grade(str(folder))
            assert score(results) == 0
            assert "cannot be imported while grading" in results[0]["message"]


READ_BY_PATH = """
    import os, minigrad
    _path = os.path.join(os.path.dirname(minigrad.__file__), "coursework", "assignments", "rnn", "rnn.py")
    try:
        exec(open(_path).read())
    except OSError as error:
        raise ImportError(f"cannot read {_path}: {error}")
"""


def test_reading_the_installed_reference_by_its_path(tmp_path):
    """As root the coursework folder is covered in the worker (where the OS allows mounts): nothing to read."""
    with Grader("rnn", seed=7) as grader:
        folder = tmp_path / "s"
        os.makedirs(folder)
        (folder / "rnn.py").write_text(textwrap.dedent(READ_BY_PATH))
        results = grader.grade(str(folder))
    if ROOT and _mounts_allowed(tmp_path):
        assert score(results) == 0 and "cannot read" in results[0]["message"]
    else:   # documented limit: the practice references are public files
        assert score(results) in (0, sum(c.points for c in grader.checks))


def _mounts_allowed(tmp_path):
    """Whether this machine lets the worker cover folders (root with CAP_SYS_ADMIN)."""
    from minigrad.coursework.sandbox import Worker
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "probe.py").write_text("")
    with Worker(str(tmp_path / "probe"), "probe.py") as worker:
        return bool(worker.hidden)


def test_gradients_looked_up_from_the_shipped_seeds_score_the_forward_only(grader, tmp_path):
    """A table of backward answers for the inputs the shipped checks.json seeds would draw: useless."""
    assignment = load_assignment(FIXTURE)
    sys.path.insert(0, FIXTURE)
    try:
        import tinyrnn as reference
    finally:
        sys.path.remove(FIXTURE)
    table = {}
    for check in assignment.checks:
        for number, case in enumerate(check.cases):
            for seed in (0, 1, 42):   # what an older grader used (no shipped file has a seed any more)
                rng = np.random.default_rng([seed, number])
                from minigrad.coursework.grading.cases import make_inputs
                args = make_inputs(check, case, rng)
                out, cache = getattr(reference, check.calls["forward"])(*args)
                dout = rng.standard_normal(out.shape)
                grads = getattr(reference, check.calls["backward"])(dout, cache)
                table[args[0].tobytes().hex()[:32]] = [g.tolist() for g in grads]
    lookup = f"""
        import numpy as _np
        _TABLE = {json.dumps(table)}
        def _answer(x, shapes):
            found = _TABLE.get(x.tobytes().hex()[:32])
            return tuple(_np.array(g) for g in found) if found else tuple(_np.zeros(s) for s in shapes)
    """
    text = reference_text()
    text = text.replace("def step_backward(dh, cache):\n    x, h_prev, Wx, Wh, h = cache\n",
                        "def step_backward(dh, cache):\n    x, h_prev, Wx, Wh, h = cache\n"
                        "    return _answer(x, [x.shape, h_prev.shape, Wx.shape, Wh.shape, Wh.shape[:1]])\n")
    text = text.replace("def sequence_backward(dh, caches):\n",
                        "def sequence_backward(dh, caches):\n    x = _np.stack([c[0] for c in caches], 1)\n"
                        "    return _answer(x, [x.shape, caches[0][1].shape, caches[0][2].shape, "
                        "caches[0][3].shape, caches[0][3].shape[:1]])\n")
    results = grader.grade(write(tmp_path / "s", text, lookup))
    assert score(results) == FORWARD_POINTS


def test_processes_a_submission_starts_do_not_survive_it(grader, tmp_path):
    marker = f"minigrad-survivor-{os.getpid()}-{time.time_ns()}"
    prelude = f"""
        import os, subprocess, sys
        subprocess.Popen(["{marker}", "300"], executable="sleep", start_new_session=True)
        subprocess.Popen(["sh", "-c", "sleep 300; : {marker}"])
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["{marker}", "301"])
            os._exit(0)
    """
    results = grader.grade(write(tmp_path / "s", reference_text(), prelude))
    assert score(results) == FULL            # the work is right: survivors cost nothing, and earn nothing
    assert processes_with(marker) == []


def test_killing_its_parent_is_the_students_failure_only(grader, tmp_path):
    prelude = """
        import os, signal
        for pid in (os.getppid(), int(open(f"/proc/{os.getppid()}/stat").read().rsplit(")", 1)[1].split()[1])):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    """
    results = grader.grade(write(tmp_path / "s", stubs_text(tmp_path), prelude))
    assert score(results) == 0
    assert score(grader.grade(write(tmp_path / "ref", reference_text()))) == FULL   # the grader goes on


def test_hang_crash_and_exit_fail_their_own_check_only(grader, tmp_path):
    text = reference_text().replace("    da = dh * (1 - h ** 2)\n", "    while True:\n        pass\n")
    from minigrad.coursework.sandbox import Limits
    slow = Grader(FIXTURE, seed=3, limits=Limits(time_s=1))
    try:
        results = slow.grade(write(tmp_path / "hang", text))
        assert "stopped after 1 s" in results[0]["message"]
        assert results[0]["forward"] and results[0]["score"] == 1
        exits = reference_text().replace("    h = np.tanh(x @ Wx + h_prev @ Wh + b)\n",
                                         "    import os\n    os._exit(0)\n")
        results = slow.grade(write(tmp_path / "exit", exits))
        assert score(results) == 0 and "exit code 0" in results[0]["message"]
    finally:
        slow.close()



def test_a_check_that_ends_the_process_quotes_what_it_printed_last(grader, tmp_path):
    """death_reason quotes the worker's log: close() reads it before removing its folder (it used to read it
    after, and found nothing)."""
    exits = reference_text().replace("    h = np.tanh(x @ Wx + h_prev @ Wh + b)\n",
                                     "    import os, sys\n    print('leaving at step', 7, flush=True)\n"
                                     "    sys.stderr.write('and saying so\\n')\n    sys.stderr.flush()\n"
                                     "    os._exit(3)\n")
    message = grader.grade(write(tmp_path / "exit", exits))[0]["message"]
    assert "exit code 3" in message and "last lines of your output:\nleaving at step 7\nand saying so" in message, \
        message


# ----------------------------------------------------------------------------- attacks on the report

STACK_WALK_AND_LATE_REWRITE = """
    import inspect, json, os, sys, time

    FORGED = json.dumps({"score": 100, "passed": True, "tests": []})

    def _ancestors():
        pid, found = os.getpid(), []
        while pid > 1:
            try:
                pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
            found.append(pid)
        return found

    def _targets():
        paths = set()
        for pid in _ancestors():
            try:
                argv = open(f"/proc/{pid}/cmdline", "rb").read().decode().split("\\0")
            except OSError:
                continue
            paths.update(a for a in argv if a.endswith((".json", ".txt")))
            try:
                paths.add(os.readlink(f"/proc/{pid}/fd/1"))
            except OSError:
                pass
        for info in inspect.stack():
            paths.update(v for v in info.frame.f_locals.values() if isinstance(v, str) and v.endswith(".json"))
        return [p for p in paths if p.startswith("/")]

    def _forge():
        for path in _targets():
            try:
                with open(path, "w") as f:
                    f.write(FORGED)
            except OSError:
                pass

    if os.fork() == 0:                       # a double-forked setsid process that outlives the grader
        os.setsid()
        if os.fork() == 0:
            watched = _ancestors()
            deadline = time.time() + 60
            while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in watched[1:3]):
                time.sleep(0.05)
            _forge()
            os._exit(0)
        os._exit(0)

    def step_forward(*args):
        _forge()
        os._exit(0)                         # "passed", then leave before the grader can look
"""


def test_forged_results_and_a_late_rewrite_leave_the_report_intact(tmp_path):
    folder = tmp_path / "mallory"
    write(folder, forward_only_text() + textwrap.dedent(STACK_WALK_AND_LATE_REWRITE))   # its step_forward last
    report, out, printed = tmp_path / "results.json", tmp_path / "report.txt", tmp_path / "printed.txt"
    with open(printed, "w") as stdout:
        code = subprocess.run([sys.executable, "-m", "minigrad.cli", "check", str(folder), "--assignment", FIXTURE,
                               "--json", str(report), "--report", str(out), "--seed", "5"],
                              stdout=stdout, stderr=subprocess.PIPE, timeout=120).returncode
    assert code == 1
    at_exit = [p.read_text() for p in (report, out, printed)]
    time.sleep(3)
    assert [p.read_text() for p in (report, out, printed)] == at_exit
    data = json.loads(at_exit[0])
    assert data["score"] == 0          # both forwards call the step_forward that exits
    assert "exit code 0" in data["tests"][0]["output"]


def test_a_folder_run_saboteur_changes_no_classmates_grade(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "grades"
    for name in ("alice", "bob"):
        write(submissions / name, reference_text())
    write(submissions / "carol", forward_only_text())
    saboteur = f"""
        import glob, os
        for path in glob.glob("{submissions}/*/*.py") + glob.glob("{out}/**/*", recursive=True):
            for how in ("w", "a"):
                try:
                    with open(path, how) as f:
                        f.write("raise SystemExit('sabotaged')\\n")
                except OSError:
                    pass
        for folder in glob.glob("{submissions}/*"):
            try:
                os.rename(folder, folder + "-gone")
            except OSError:
                pass
    """
    write(submissions / "aaron", stubs_text(tmp_path), saboteur)     # graded first
    originals = {n: (submissions / n / "tinyrnn.py").read_text() for n in ("alice", "bob", "carol")}
    rows = {r["student"]: r for r in grade_folder(submissions, FIXTURE, out, jobs=2, seed=11, progress=None)}
    assert {n: rows[n]["total"] for n in rows} == {"aaron": 0, "alice": FULL, "bob": FULL, "carol": FORWARD_POINTS}
    if ROOT:   # the worker's uid may not write the class's files (and cannot see them where mounts are allowed)
        assert {n: (submissions / n / "tinyrnn.py").read_text() for n in originals} == originals


# ----------------------------------------------------------------------------- without a uid of its own

def test_without_a_uid_of_its_own_the_supervisor_still_cleans_up(tmp_path):
    """The mechanisms a grader not running as root relies on: the session kill and the subreaper."""
    from minigrad.coursework.sandbox import NotGraded, Worker
    marker = f"minigrad-orphan-{os.getpid()}-{time.time_ns()}"
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "m.py").write_text(textwrap.dedent(f"""
        import os, subprocess
        subprocess.Popen(["{marker}", "300"], executable="sleep", start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["{marker}", "301"])
            os._exit(0)
    """))
    with Worker(str(folder), "m.py", trusted=True) as worker:     # trusted: runs as the grader's own user
        deadline = time.time() + 10
        while len(processes_with(marker)) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert len(processes_with(marker)) == 2
    assert processes_with(marker) == []
    # the kill, then (as an attacker that answers only once the supervisor is gone) wait until it has exited:
    # a SIGKILLed process on a loaded machine can take a while to exit, and until then it looks alive
    (folder / "m.py").write_text("import os, signal, time\nparent = os.getppid()\nos.kill(parent, signal.SIGKILL)\n"
                                 "deadline = time.time() + 10\n"
                                 "while os.getppid() == parent and time.time() < deadline:\n    time.sleep(0.01)\n")
    with pytest.raises(NotGraded, match="the process supervising the worker was lost"):   # not a grade
        with Worker(str(folder), "m.py", trusted=True) as worker:
            worker.request({"op": "forward", "target": {"name": "x", "kind": "pair"}, "args": []}, [], timeout=5)


def test_a_fork_bomb_is_capped_and_cleaned_up(tmp_path):
    from minigrad.coursework.sandbox import Limits
    marker = f"minigrad-bomb-{os.getpid()}-{time.time_ns()}"
    text = reference_text().replace("    h = np.tanh(x @ Wx + h_prev @ Wh + b)\n", f"""    import os
    while True:              # as many sleepers as RLIMIT_NPROC lets it start, and it never returns
        try:
            if os.fork() == 0:
                os.execvp("sleep", ["{marker}", "300"])
        except OSError:
            pass
""")
    with Grader(FIXTURE, seed=3, limits=Limits(time_s=1, processes=16)) as grader:
        results = grader.grade(write(tmp_path / "s", text))
    assert score(results) == 0 and "stopped after 1 s" in results[0]["message"]
    assert processes_with(marker) == []


def test_the_worker_runs_as_a_uid_of_its_own_when_the_grader_is_root(tmp_path):
    from minigrad.coursework.sandbox import Worker
    (tmp_path / "m.py").write_text("")
    with Worker(str(tmp_path), "m.py") as worker:
        with open(f"/proc/{worker.pid}/status") as f:
            uids = next(line.split()[1:] for line in f if line.startswith("Uid:"))
        if ROOT:
            assert worker.uid and uids == [str(worker.uid)] * 4
        else:
            assert worker.uid is None and uids[0] == str(os.getuid())


LATE_IMPORTS = """
    def _late_imports():   # first used in a function, after the worker has switched to its own uid
        import numpy.fft, numpy.linalg, numpy.random
        import minigrad.metrics, minigrad.nn.functional
        numpy.random.default_rng(0).normal(size=3)
        return numpy.linalg.norm(numpy.fft.fft(numpy.ones(4)).real)
"""


def test_honest_code_that_imports_late_is_graded_as_usual(grader, tmp_path):
    """NumPy loads numpy.random on first use: as root with Python under /root (0700) a worker that had not
    imported it before switching uid failed every honest submission that drew a random number."""
    text = reference_text().replace("def step_forward(x, h_prev, Wx, Wh, b):\n",
                                    "def step_forward(x, h_prev, Wx, Wh, b):\n    _late_imports()\n", 1)
    assert "_late_imports()" in text
    assert score(grader.grade(write(tmp_path / "s", text, LATE_IMPORTS))) == FULL


def test_a_flood_of_output_arrays_is_refused_without_reading_it(grader, tmp_path):
    text = reference_text().replace("    return h, (x, h_prev, Wx, Wh, h)",
                                    "    _calls.append(1)\n"
                                    "    if len(_calls) == 1:\n"
                                    "        return np.zeros((1000, 1000)), (x, h_prev, Wx, Wh, h)   # 8 MB once\n"
                                    "    return h, (x, h_prev, Wx, Wh, h)") + "\n_calls = []\n"
    results = grader.grade(write(tmp_path / "s", text))
    assert score(results) == 0
    assert "does not accept (more than" in results[0]["message"]


def test_a_forged_list_of_missing_gradients_fails_the_backward_without_stopping_the_grader(grader, tmp_path):
    # "missing" names gradients the backward did not return; out of range or repeated, it must not crash the grader
    prelude = """
        import sys as _sys
        _operations = _sys.modules["__main__"].OPERATIONS
        _backward = _operations["backward"]
        def _forged(harness, header, arrays):
            reply, grads = _backward(harness, header, arrays)
            return dict(reply, missing=[-1]), grads[1:]
        _operations["backward"] = _forged
    """
    results = grader.grade(write(tmp_path / "s", reference_text(), prelude))
    assert score(results) == FORWARD_POINTS
    assert all(r["forward"] and r["backward"] is False for r in results)


def test_a_forged_error_message_is_capped_like_the_workers_own(grader, tmp_path):
    prelude = """
        import sys as _sys
        _operations = _sys.modules["__main__"].OPERATIONS
        _operations["forward"] = lambda harness, header, arrays: ({"status": "error", "message": "x" * 500000}, [])
    """
    results = grader.grade(write(tmp_path / "s", reference_text(), prelude))
    assert score(results) == 0
    assert all(len(r["message"]) < 3000 for r in results)
