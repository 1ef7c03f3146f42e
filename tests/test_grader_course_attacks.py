"""A real course: concurrent grading runs, hostile classmates, and the cheats students actually use.

Beside test_grader_attacks.py (one student against one grader), these put a
submission among classmates or beside another grading run.  Each must leave
every other grade exactly right, score the attacker its honest credit (or mark
it "not graded" when the grader's side failed), and, where the attack is a
cheat, fail or flag it.  Most run on tests/coursework_fixture/tinyrnn (honest
credit: 5 points, forwards 2).  The grader's isolation differs by machine
(sandbox.ISOLATION): the tests assert what every mode guarantees, and more
where this machine gives more.
"""
import ast
import csv
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from minigrad.coursework import Grader, make_assignment
from minigrad.coursework.grading.gradebook import grade_folder
from minigrad.coursework.authoring.make import student_version
from minigrad.coursework.sandbox import Limits, NotGraded, isolation
from minigrad.coursework.grading.copies import reference_flags
from minigrad.coursework.grading.similarity import submission_sources

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")
ROOT = os.geteuid() == 0
NAMESPACES = isolation()[0] in ("namespaces", "user-namespaces")
FULL, FORWARD_POINTS = 5, 2


@pytest.fixture(scope="module")
def grader():
    with Grader(FIXTURE, seed=20240611) as grader:
        yield grader


def reference_text():
    with open(os.path.join(FIXTURE, "tinyrnn.py")) as f:
        return f.read()


def write(folder, text, name="tinyrnn.py"):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        f.write(textwrap.dedent(text))
    return os.path.join(folder, name)


def score(results):
    return sum(r["score"] for r in results)


def cli(*args, env=None, timeout=300):
    """`minigrad ...` as a command (its own process, as an instructor runs it)."""
    return subprocess.run([sys.executable, "-m", "minigrad.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=REPO)


def gradebook(out):
    with open(os.path.join(out, "gradebook.csv")) as f:
        return {row["student"]: row for row in csv.DictReader(f)}


# ----------------------------------------------------------------------------- two grading runs at once

def test_two_grading_runs_at_once_with_different_tmpdirs_grade_everyone_right(tmp_path):
    """Two TAs on one server: worker uids are claimed in one place for the machine, whatever TMPDIR says."""
    runs = []
    for run in ("one", "two"):
        for student in ("alice", "bob", "carol"):
            write(tmp_path / run / "class" / student, reference_text())
        (tmp_path / run / "tmp").mkdir()
        env = dict(os.environ, TMPDIR=str(tmp_path / run / "tmp"))
        runs.append(subprocess.Popen([sys.executable, "-m", "minigrad.cli", "grade", str(tmp_path / run / "class"),
                                      "--assignment", FIXTURE, "--out", str(tmp_path / run / "grades"), "-j", "2"],
                                     env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for run, process in zip(("one", "two"), runs):
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        assert "3 graded, 0 already graded (skipped), 0 not graded" in out
        assert {n: r["total"] for n, r in gradebook(tmp_path / run / "grades").items()} == \
            {"alice": "5", "bob": "5", "carol": "5"}


# ----------------------------------------------------------------------------- filling the disk

def filler(marker, places):
    """A prelude that writes 4 MB files named after ``marker`` into ``places`` until the OS refuses (64 at most)."""
    return textwrap.dedent(f"""
        import os, tempfile
        for _place in {places!r}:
            _place = {{"TMPDIR": tempfile.gettempdir(), "CWD": os.getcwd()}}.get(_place, _place)
            for _n in range(64):
                try:
                    with open(os.path.join(_place, "{marker}-%d" % _n), "wb") as _f:
                        _f.write(b"x" * (4 << 20))
                except OSError:
                    break
    """)


def leftovers(marker):
    return [p for place in ("/tmp", "/var/tmp", "/dev/shm") for p in glob.glob(f"{place}/{marker}*")]


@pytest.fixture(params=["best", "uid"])
def mode(request, monkeypatch):
    """The best isolation this machine gives, and (as root) "uid": a container without namespaces, as Docker's
    default (MINIGRAD_ISOLATION asks for less than the OS allows)."""
    if request.param == "uid":
        if not ROOT:
            pytest.skip("the uid mode is root's")
        monkeypatch.setenv("MINIGRAD_ISOLATION", "uid")
    isolation.cache_clear()
    yield isolation()[0]
    monkeypatch.delenv("MINIGRAD_ISOLATION", raising=False)
    isolation.cache_clear()


def _worker_reads_python():
    """Whether a worker's uid (not root's) can read this Python's installation without a mount namespace."""
    import numpy
    paths = [sys.base_prefix, sys.prefix, os.path.dirname(os.path.abspath(numpy.__file__))]
    return all(subprocess.run(["test", "-r", p, "-a", "-x", p], user=64999, group=64999, extra_groups=[]).returncode
               == 0 for p in paths)


@pytest.mark.parametrize("jobs", [1, 2])
def test_disk_and_tmp_fillers_graded_first_change_no_classmates_grade_and_leave_nothing(tmp_path, jobs, mode):
    marker = f"minigrad-filler-{os.getpid()}-{time.time_ns()}"
    submissions = tmp_path / "class"
    write(submissions / "aaa", filler(marker, ["CWD", "TMPDIR"]) + reference_text())         # its own folder
    write(submissions / "aab", filler(marker, ["/tmp", "/var/tmp", "/dev/shm"]) + reference_text())
    for student in ("bob", "carol"):
        write(submissions / student, reference_text())
    if mode == "uid" and not _worker_reads_python():   # e.g. Python under /root (0700), and no mount namespace
        with pytest.raises(PermissionError, match="chmod o\\+x"):   # refused: never a 0 for the grader's limit
            grade_folder(submissions, FIXTURE, tmp_path / "grades", jobs=jobs, seed=5, progress=None)
        assert not (tmp_path / "grades" / "gradebook.csv").exists()
        return
    try:
        rows = grade_folder(submissions, FIXTURE, tmp_path / "grades", jobs=jobs, seed=5,
                            limits=Limits(scratch_mb=32), progress=None)
        totals = {r["student"]: (r["status"], r["total"]) for r in rows}
        assert totals["bob"] == totals["carol"] == ("graded", FULL)
        assert {r["isolation"] for r in rows} == {mode}
        if mode in ("namespaces", "user-namespaces"):   # their scratch is full: their own writes fail
            assert totals["aaa"] == totals["aab"] == ("graded", FULL)
        else:            # their disk use is watched: stopped at the cap, their own failure
            assert {totals["aaa"][0], totals["aab"][0]} == {"graded"}
        assert leftovers(marker) == []                                        # nothing outlives the grader
    finally:
        for path in leftovers(marker):
            os.unlink(path)


# ----------------------------------------------------------------------------- a numeric backward

NUMERIC = """
    import numpy as np

    def _numeric(forward, args, dout, eps=1e-6):   # central differences of my own forward: no chain rule
        args = [a.copy() for a in args]
        grads = []
        for a in args:
            g = np.zeros_like(a)
            for i in np.ndindex(a.shape):
                old = a[i]
                a[i] = old + eps
                plus = float((forward(*args)[0] * dout).sum())
                a[i] = old - eps
                minus = float((forward(*args)[0] * dout).sum())
                a[i] = old
                g[i] = (plus - minus) / (2 * eps)
            grads.append(g)
        return tuple(grads)

    def step_forward(x, h_prev, Wx, Wh, b):
        return np.tanh(x @ Wx + h_prev @ Wh + b), (x, h_prev, Wx, Wh, b)

    def step_backward(dh, cache):
        return _numeric(step_forward, cache, dh)

    def sequence_forward(x, h0, Wx, Wh, b):
        h = np.zeros((x.shape[0], x.shape[1], h0.shape[1]))
        h_prev = h0
        for t in range(x.shape[1]):
            h_prev = step_forward(x[:, t], h_prev, Wx, Wh, b)[0]
            h[:, t] = h_prev
        return h, (x, h0, Wx, Wh, b)

    def sequence_backward(dh, cache):
        return _numeric(sequence_forward, cache, dh)
"""

SLOW_BUT_HONEST = """
    def step_backward(dh, cache):            # the chain rule, one sample at a time: slow, but a backward
        x, h_prev, Wx, Wh, h = cache
        da = dh * (1 - h ** 2)
        dx, dh_prev = np.zeros_like(x), np.zeros_like(h_prev)
        dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
        for n in range(x.shape[0]):
            dx[n], dh_prev[n] = Wx @ da[n], Wh @ da[n]
            dWx += np.outer(x[n], da[n])
            dWh += np.outer(h_prev[n], da[n])
            db += da[n]
        return dx, dh_prev, dWx, dWh, db
"""


def test_a_backward_made_of_finite_differences_earns_no_backward_credit(grader, tmp_path):
    results = grader.grade(write(tmp_path / "numeric", NUMERIC))
    assert score(results) == FORWARD_POINTS
    assert all(r["forward"] and r["backward"] is False for r in results), [r["message"] for r in results]
    assert "is it computing finite differences of the forward?" in results[0]["message"]   # the sequence points here
    slow = reference_text() + textwrap.dedent(SLOW_BUT_HONEST)   # the later step_backward wins
    assert score(grader.grade(write(tmp_path / "slow", slow))) == FULL


# ----------------------------------------------------------------------------- copies the flags must see

def _rnn_reference():
    from minigrad.coursework import load_assignment
    return student_version(load_assignment("rnn").reference, solutions=True)


class _Wrap(ast.NodeTransformer):
    """Every name x read becomes (x if 1 else 0): the same program, other text."""

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            return ast.IfExp(ast.Constant(1), node, ast.Constant(0))
        return node


SYS_MODULES = """
    import sys
    _steps = sys.modules["minigrad.functions.rnn_steps"]       # preloaded by the library: no import to see
    rnn_step_forward, rnn_step_backward = _steps.rnn_step_forward, _steps.rnn_step_backward
"""


def test_three_easy_copies_are_flagged_and_the_library_s_answer_is_out_of_reach(tmp_path):
    reference = _rnn_reference()
    wrapped = ast.unparse(_Wrap().visit(ast.parse(reference)))
    assert "(x if 1 else 0)" in wrapped and "(h0 if 1 else 0)" in wrapped
    assert any("the reference solution of the shipped assignment 'rnn'" in f for f in reference_flags(wrapped, "rnn"))
    write(tmp_path / "helper", "from mine import *\n", name="rnn.py")         # the copy sits in a helper module
    write(tmp_path / "helper", reference, name="mine.py")
    sources = submission_sources(tmp_path / "helper")
    assert sorted(sources) == ["mine.py", "rnn.py"]
    assert any("the reference solution of the shipped assignment 'rnn'" in f for f in reference_flags(sources, "rnn"))
    honest_rest = reference[reference.index("def rnn_forward"):]
    by_name = textwrap.dedent(SYS_MODULES) + "from minigrad import backend\n" + honest_rest
    assert any("sys.modules" in f for f in reference_flags(by_name, "rnn"))
    with Grader("rnn", seed=3) as rnn:              # and the worker has no such module to give
        results = rnn.grade(write(tmp_path / "by_name", by_name, name="rnn.py"))
    assert score(results) == 0 and "cannot be used while grading" in results[0]["message"]


# ----------------------------------------------------------------------------- what a worker can see

PROC_READER = """
    import os

    def step_forward(*args):
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        seen = b""
        for pid in pids:
            for what in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{pid}/{what}", "rb") as f:
                        seen += f.read()
                except OSError:
                    pass
        raise RuntimeError(f"pids={len(pids)} seed={b'987654321' in seen} out={b'SECRET-OUT' in seen}")
"""


def test_a_worker_reading_proc_finds_neither_the_seed_nor_the_grader(tmp_path):
    out = tmp_path / "SECRET-OUT"
    out.mkdir()
    folder = tmp_path / "s"
    write(folder, reference_text() + textwrap.dedent(PROC_READER))
    done = cli("check", folder, "--assignment", FIXTURE, "--seed", "987654321", "--json", out / "r.json")
    report = json.loads((out / "r.json").read_text())["tests"][0]["output"]
    assert "seed=False" in report, report
    if NAMESPACES:                                   # its own pid namespace: itself only
        assert "pids=1 " in report and "out=False" in report, report
    assert done.returncode == 1 and "grading seed: 987654321" in done.stderr   # the seed still reaches its user


# ----------------------------------------------------------------------------- malformed replies

def forged_reply(raw):
    """A prelude that replaces the worker's reply writer: every reply is ``raw`` bytes, framed as a header."""
    return textwrap.dedent(f"""
        import gc as _gc, struct as _struct
        _protocol = next(m for m in _gc.get_objects()                 # the worker's own protocol module
                         if type(m).__name__ == "module" and m.__name__ == "minigrad_worker_protocol")
        def _forged(stream, header, arrays=()):
            text = {raw}
            stream.write(_struct.pack(">I", len(text)) + text)
            stream.flush()
        _protocol.write_message = _forged
    """)


def test_a_reply_nested_200000_deep_is_the_students_failure_with_a_report(tmp_path):
    folder = tmp_path / "s"
    write(folder, forged_reply('b"[" * 200000 + b"]" * 200000') + reference_text())
    done = cli("check", folder, "--assignment", FIXTURE, "--json", tmp_path / "r.json", "--seed", "1")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["score"] == 0 and "nested 200000 deep" in data["tests"][0]["output"]


@pytest.mark.parametrize("raw", ['b"\\xff\\xfe{}"', 'b"{\\"status\\": \\"ok\\", \\"arr"'],
                         ids=["bad-utf8", "truncated-json"])
def test_bad_utf8_or_truncated_replies_are_the_students_failure(grader, tmp_path, raw):
    results = grader.grade(write(tmp_path / "s", forged_reply(raw) + reference_text()))
    assert score(results) == 0
    assert "does not accept (the header is not JSON" in results[0]["message"], results[0]["message"]


# ----------------------------------------------------------------------------- hints before an attempt

def test_no_hint_beyond_the_first_before_the_code_imports_and_runs_a_check(grader, tmp_path):
    broken = reference_text().replace("def step_forward(x, h_prev, Wx, Wh, b):", "def step_forward(x, h_prev,")
    for results in (grader.grade(write(tmp_path / "syntax", broken)),
                    grader.grade(write(tmp_path / "stub", open(_student(tmp_path)).read()))):
        assert score(results) == 0
        assert all(len(r["hints"]) <= 1 for r in results), [r["hints"] for r in results]
    assert "SyntaxError" in grader.grade(write(tmp_path / "syntax", broken))[0]["message"]
    folder = tmp_path / "misnamed"
    write(folder, reference_text(), name="tinyrnn_solution.py")
    results = grader.grade(str(folder))
    assert "there is no tinyrnn.py in your submission (found: tinyrnn_solution.py)" in results[0]["message"]
    assert all(len(r["hints"]) <= 1 for r in results)


def _student(tmp_path):
    make_assignment(FIXTURE, tmp_path / "_student")
    return tmp_path / "_student" / "tinyrnn.py"


# ----------------------------------------------------------------------------- LMS exports

def test_grade_reads_a_flat_lms_export_and_refuses_what_it_cannot_read(tmp_path):
    flat = tmp_path / "flat"
    write(flat, reference_text(), name="alice_123_456_tinyrnn.py")                        # Canvas
    write(flat, reference_text().replace("dh[:, t] + dh_prev", "dh[:, t]"), name="bob_LATE_7_8_tinyrnn-1.py")
    write(flat, "from helper import *\n", name="carol_9_tinyrnn.py")                       # a helper module
    write(flat, reference_text(), name="carol_9_helper.py")
    write(flat, reference_text(), name="Dan Lee_44_assignsubmission_file_tinyrnn.py")      # Moodle
    done = cli("grade", flat, "--assignment", FIXTURE, "--out", tmp_path / "grades", "--seed", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "4 graded" in done.stdout
    assert {n: r["total"] for n, r in gradebook(tmp_path / "grades").items()} == \
        {"alice": "5", "bob": "3", "carol": "5", "Dan Lee": "5"}
    write(flat, "", name="notes_final.py")                                                 # not an export's name
    refused = cli("grade", flat, "--assignment", FIXTURE, "--out", tmp_path / "grades2")
    assert refused.returncode == 2 and "notes_final.py" in refused.stderr and "Canvas" in refused.stderr


# ----------------------------------------------------------------------------- the grader's side fails

def test_a_worker_killed_from_outside_is_not_graded_never_zero(grader, tmp_path):
    marker = f"minigrad-victim-{os.getpid()}-{time.time_ns()}"
    text = reference_text().replace("    h = np.tanh(x @ Wx + h_prev @ Wh + b)\n", f"""    import subprocess
    subprocess.run(["{marker}", "30"], executable="sleep")
    h = np.tanh(x @ Wx + h_prev @ Wh + b)
""")

    def kill_the_worker():   # the machine's OOM killer, or another program: none of the student's limits
        for _ in range(600):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    if marker.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                        worker = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
                        os.kill(worker, signal.SIGKILL)
                        return
                except OSError:
                    pass
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    with pytest.raises(NotGraded, match="SIGKILL, which none of its limits sends"):
        grader.grade(write(tmp_path / "s", text))
    killer.join()


# ----------------------------------------------------------------------------- graded as a normal user

PTH_AND_DAEMON = """
    import os, time

    def _ancestors():
        pid, found = os.getpid(), []
        while pid > 1:
            try:
                pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
            found.append(pid)
        return found

    def _grader_home():
        for pid in _ancestors():
            try:
                for item in open(f"/proc/{pid}/environ", "rb").read().split(b"\\0"):
                    if item.startswith(b"HOME="):
                        return item[5:].decode()
            except OSError:
                pass

    _home = _grader_home()
    if _home:                         # every later Python of this user runs a .pth of its user site
        for _site in (f"{_home}/.local/lib/python3.{v}/site-packages" for v in range(8, 15)):
            try:
                os.makedirs(_site, exist_ok=True)
                with open(f"{_site}/zz-minigrad-attack.pth", "w") as _f:
                    _f.write("import sys; sys.stderr.write('PTH-RAN\\\\n')\\n")
            except OSError:
                pass
    if os.fork() == 0:                 # setsid + double fork: kill the supervisor, outlive the grader, rewrite
        os.setsid()
        if os.fork() == 0:
            _targets = []
            for _pid in _ancestors():
                try:
                    _argv = open(f"/proc/{_pid}/cmdline", "rb").read().decode().split("\\0")
                    _targets += [a for a in _argv if a.endswith(".json")]
                except OSError:
                    pass
            try:
                os.kill(_ancestors()[0], 9)
            except (OSError, IndexError):
                pass
            time.sleep(4)
            for _path in _targets:
                try:
                    open(_path, "w").write('{"score": 100}')
                except OSError:
                    pass
            os._exit(0)
        os._exit(0)
"""

USER_SCRIPT = """set -u
cd "$WORK"
"$PY" -m minigrad.cli grade class1 --assignment "$FIXTURE" --out grades1 --seed 4 > run1.out 2> run1.err
"$PY" -m minigrad.cli grade class2 --assignment "$FIXTURE" --out grades2 --seed 4 > run2.out 2> run2.err
"$PY" -m minigrad.cli check class1/aaa --assignment "$FIXTURE" --json check.json --seed 4 > check.out 2> check.err
cp check.json check-at-exit.json
sleep 5
"""


def _as_a_normal_user(work, env, script=USER_SCRIPT):
    """Run ``script`` in ``work`` as a normal user: this one, or (as root) a throwaway user that is removed after.

    As root, the Python and this checkout are bind-mounted in a private mount namespace at paths that user can
    read (CI's Python lives under /root, mode 0700)."""
    python = os.path.join(sys.base_prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")
    sites = [p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)]
    if not ROOT:
        env = dict(env, PY=python, PYTHONPATH=os.pathsep.join([REPO] + sites))
        return subprocess.run(["sh", "-c", script], env=env, timeout=600)
    if not (shutil.which("useradd") and shutil.which("setpriv") and shutil.which("unshare")):
        pytest.skip("as root this test needs useradd, setpriv and unshare to run as a throwaway user")
    user = f"mg{os.getpid() % 100000}"
    subprocess.run(["useradd", "-M", "-d", str(work / "home"), "-s", "/bin/sh", user], check=True)
    try:
        uid = pwd.getpwnam(user).pw_uid
        os.chown(work / "home", uid, uid)
        mounts = {sys.base_prefix: work / "python", REPO: work / "repo"}
        mounts.update({site: work / f"site{k}" for k, site in enumerate(sites) if not site.startswith(sys.base_prefix)})
        binds = "".join(f"mkdir -p '{target}' && mount --bind '{source}' '{target}' && " for source, target in mounts.items())
        seen = lambda path: next((str(t) + path[len(s):] for s, t in mounts.items() if path.startswith(s)), path)
        env = dict(env, PY=seen(python), FIXTURE=seen(FIXTURE), HOME=str(work / "home"),
                   PYTHONPATH=os.pathsep.join([str(work / "repo")] + [seen(s) for s in sites]),
                   LD_LIBRARY_PATH=seen(os.path.join(sys.base_prefix, "lib")))   # pyenv's libpython, moved too
        (work / "script.sh").write_text(script)
        return subprocess.run(["unshare", "--mount", "sh", "-c", binds + f"exec setpriv --reuid {uid} --regid {uid} "
                               f"--clear-groups sh '{work / 'script.sh'}'"], env=env, timeout=600)
    finally:
        subprocess.run(["userdel", user], check=False)


def test_as_a_normal_user_a_pth_writer_and_a_daemon_change_no_grade(tmp_path):
    work = type(tmp_path)(tempfile.mkdtemp(prefix="minigrad-as-user-", dir="/tmp"))   # the user may write here
    try:
        os.chmod(work, 0o777)
        for folder in ("home", "class1/aaa", "class1/bob", "class2/ann"):
            os.makedirs(work / folder, mode=0o777)
        write(work / "class1" / "aaa", textwrap.dedent(PTH_AND_DAEMON) + reference_text())
        write(work / "class1" / "bob", reference_text())
        write(work / "class2" / "ann", "")                           # an empty submission
        for root, dirs, files in os.walk(work):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o777)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "WORK": str(work), "FIXTURE": FIXTURE,
               "HOME": str(work / "home"), "LANG": "C.UTF-8"}
        _as_a_normal_user(work, env)
        said = (work / "run1.err").read_text()
        if "isolation: none" in said:             # a kernel without user namespaces: said plainly, nothing more
            assert "NO ISOLATION" in said
            return
        assert "isolation: user-namespaces" in said, said[-3000:]
        assert {n: r["total"] for n, r in gradebook(work / "grades1").items()} == {"aaa": "5", "bob": "5"}
        assert {n: r["total"] for n, r in gradebook(work / "grades2").items()} == {"ann": "0"}
        assert glob.glob(str(work / "home" / "**" / "*.pth"), recursive=True) == []
        assert "PTH-RAN" not in (work / "run2.err").read_text()
        assert (work / "check.json").read_text() == (work / "check-at-exit.json").read_text()   # 5 s after exit
        assert json.loads((work / "check.json").read_text())["score"] == 5
    finally:
        shutil.rmtree(work, ignore_errors=True)
