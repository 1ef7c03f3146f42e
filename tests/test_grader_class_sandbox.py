"""The class run where the grader runs: as root, as a normal user, two runs at once, and wherever Python lives.

A worker imports what the grader's Python can: with a mount namespace the installation is mounted read-only at
its own path in the worker's view (under the private /tmp, under a covered home, below /root's 0700); without
one, an installation the worker's uid cannot read refuses the run with the fix: never a 0 for a student.  This
machine's own Python lives under /root (pyenv): the root cases here are real, not simulated.
"""
import csv
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
import time

import pytest

from minigrad.coursework.grading.gradebook import grade_folder
from minigrad.coursework.sandbox import isolation
from test_grader_course_attacks import _as_a_normal_user, _worker_reads_python

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")
ROOT = os.geteuid() == 0


def reference_text():
    with open(os.path.join(FIXTURE, "tinyrnn.py")) as f:
        return f.read()


def importing(modules):
    """The reference, with imports at the first call (after the worker's switch): modules the worker did not
    load before (worker.PRELOAD has none of these)."""
    return reference_text().replace("def step_forward(x, h_prev, Wx, Wh, b):\n",
                                    f"def step_forward(x, h_prev, Wx, Wh, b):\n    import {modules}\n", 1)


STANDARD = "xml.dom.minidom, csv, decimal, email.utils, sqlite3"
ANSI = '\ndef step_forward(*args):\n    raise ValueError("\\x1b[2J\\x1b[Hscore: 5 / 5")\n'


def hostile_class(folder):
    """Honest students beside a non-UTF-8 name, a 70 MB checkpoint, a formula-like name and an ANSI message."""
    students = {b"alice": importing(STANDARD), b"Jos\xe9": reference_text(), b"bob": reference_text(),
                b"=HYPERLINK(1)": reference_text(), b"mallory": reference_text() + ANSI}
    for name, text in students.items():
        os.makedirs(os.path.join(os.fsencode(folder), name))
        with open(os.path.join(os.fsencode(folder), name, b"tinyrnn.py"), "w") as f:
            f.write(text)
    with open(os.path.join(folder, "bob", "model.pt"), "wb") as f:
        f.truncate(70 << 20)


EXPECTED = {"alice": "5", "Jos\udce9": "5", "bob": "", "'=HYPERLINK(1)": "5", "mallory": "0"}


def totals(out):
    with open(os.path.join(out, "gradebook.csv"), encoding="utf-8", errors="surrogateescape", newline="") as f:
        return {row["student"]: row["total"] for row in csv.DictReader(f)}


def test_a_standard_module_imports_wherever_python_lives(tmp_path):
    """As root here the worker is uid 64000 and Python is under /root (0700): it is mounted at its own path."""
    if isolation()[0] not in ("namespaces", "user-namespaces"):
        pytest.skip("no mount namespace here: test_without_a_mount_namespace_... covers this machine")
    os.makedirs(tmp_path / "class" / "alice")
    (tmp_path / "class" / "alice" / "tinyrnn.py").write_text(importing(STANDARD))
    rows = grade_folder(tmp_path / "class", FIXTURE, tmp_path / "out", seed=3)
    assert [(r["student"], r["total"]) for r in rows] == [("alice", 5)], rows[0]["status"]
    report = (tmp_path / "out" / "students" / "alice" / "report.txt").read_text()
    assert "No module named" not in report


def venv_under(folder):
    """A venv under ``folder`` that sees this Python's packages.  Made from the suite's own venv (CI's matrix),
    --system-site-packages would show the base Python's packages, not this venv's NumPy: a .pth file lists this
    Python's site-packages folders, as a user's layered venv reaches its packages."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)],
                   check=True, timeout=120)
    python = str(folder / "bin" / "python")
    if sys.prefix != sys.base_prefix:
        own = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                             capture_output=True, text=True, timeout=60).stdout.strip()
        with open(os.path.join(own, "suite.pth"), "w") as f:
            f.write("\n".join(site.getsitepackages()) + "\n")
    return python


def test_a_venv_under_tmp_imports_numpy_and_the_standard_library_in_the_worker(tmp_path):
    """The grader run from a venv under /tmp (the worker's /tmp is private): as root here, and as whatever user
    runs the suite.  (As a normal user with Python and the checkout under /tmp too: the test below.)  When the
    suite runs in a venv under /tmp itself (CI's matrix), the new venv's packages reach it through a .pth file:
    those folders are mounted in the worker too."""
    python = venv_under(tmp_path / "venv")
    os.makedirs(tmp_path / "class" / "alice")
    (tmp_path / "class" / "alice" / "tinyrnn.py").write_text(importing(STANDARD + ", numpy.polynomial"))
    done = subprocess.run([python, "-m", "minigrad.cli", "grade",
                           str(tmp_path / "class"), "--assignment", FIXTURE, "--out", str(tmp_path / "out"), "--seed",
                           "3"], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env=dict(os.environ, PYTHONPATH=REPO))
    if "isolation: uid" in done.stderr and not _worker_reads_python():
        assert done.returncode == 2 and "chmod o+x" in done.stderr     # no namespaces here: refused, see below
        return
    assert done.returncode == 0 and totals(tmp_path / "out") == {"alice": "5"}, done.stderr[-3000:]
    assert json.loads((tmp_path / "out" / "students" / "alice" / "grade.json").read_text())["results"][0]["passed"]


def test_without_a_mount_namespace_an_unreadable_python_refuses_the_run(tmp_path, monkeypatch):
    if not ROOT:
        pytest.skip("a worker of another uid is root's: a normal user's worker reads what the grader reads")
    monkeypatch.setenv("MINIGRAD_ISOLATION", "uid")        # a container without namespaces (Docker's default)
    isolation.cache_clear()
    try:
        os.makedirs(tmp_path / "class" / "alice")
        (tmp_path / "class" / "alice" / "tinyrnn.py").write_text(importing(STANDARD))
        done = subprocess.run([sys.executable, "-m", "minigrad.cli", "grade", str(tmp_path / "class"), "--assignment",
                               FIXTURE, "--out", str(tmp_path / "out"), "--seed", "3"], capture_output=True,
                              text=True, cwd=REPO, timeout=300)
        if _worker_reads_python():
            assert done.returncode == 0 and totals(tmp_path / "out") == {"alice": "5"}, done.stderr[-2000:]
            return
        assert done.returncode == 2, done.stderr[-2000:]                       # refused before any student
        assert "cannot read " + sys.base_prefix in done.stderr and "chmod o+x" in done.stderr
        assert not (tmp_path / "out" / "students").exists()
    finally:
        monkeypatch.delenv("MINIGRAD_ISOLATION")
        isolation.cache_clear()


def test_two_runs_at_once_on_a_hostile_class_grade_everyone_right_as_root_or_not(tmp_path):
    hostile_class(tmp_path / "class")
    runs = [subprocess.Popen([sys.executable, "-m", "minigrad.cli", "grade", str(tmp_path / "class"), "--assignment",
                              FIXTURE, "--out", str(tmp_path / out), "-j", "2", "--seed", "5"], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for out in ("out1", "out2")]
    for run, out in zip(runs, ("out1", "out2")):
        printed, said = run.communicate(timeout=300)
        assert run.returncode == 1, said[-2000:]                                  # bob refused: exit 1
        assert b"4 graded, 0 already graded (skipped), 0 not graded, 1 refused" in printed
        assert b"\x1b" not in printed + said
        assert totals(tmp_path / out) == EXPECTED


def _readable_python_mounts(python, hold):
    """Shell commands that, in a private mount namespace, make ``python``'s installation passable by every uid
    as a container's /usr/local Python is: the first folder above it closed to others (this machine's /root)
    covered by a tmpfs holding only the way down to it.  "" when nothing is closed."""
    folder = os.sep
    for part in python.strip(os.sep).split(os.sep)[:-1]:
        folder = os.path.join(folder, part)
        if not os.stat(folder).st_mode & 0o001:
            os.makedirs(hold)
            return (f"mount --bind '{python}' '{hold}' && mount -t tmpfs -o mode=755 tmpfs '{folder}' && "
                    f"mkdir -p '{python}' && mount --bind '{hold}' '{python}' && ")
    return ""


def test_in_a_container_without_namespaces_the_hostile_class_is_graded_right(tmp_path):
    """The uid mode (root, no namespaces: Docker's default) with a Python every uid can read, as a container's."""
    if not (ROOT and shutil.which("unshare")):
        pytest.skip("the uid mode is root's (and this test needs unshare(1) to show Python as a container does)")
    hostile_class(tmp_path / "class")
    mounts = "".join(_readable_python_mounts(p, tmp_path / f"hold{k}")
                     for k, p in enumerate(dict.fromkeys([sys.base_prefix, sys.prefix])))
    command = (f"exec '{sys.executable}' -m minigrad.cli grade '{tmp_path / 'class'}' --assignment '{FIXTURE}' "
               f"--out '{tmp_path / 'out'}' -j 2 --seed 5")
    done = subprocess.run(["unshare", "--mount", "sh", "-c", mounts + command], capture_output=True, cwd=REPO,
                          env=dict(os.environ, MINIGRAD_ISOLATION="uid"), timeout=300)
    said = done.stderr.decode(errors="replace")
    assert done.returncode == 1 and "isolation: uid" in said, said[-3000:]
    assert totals(tmp_path / "out") == EXPECTED
    assert b"\x1b" not in done.stdout + done.stderr


FILLERS = """
import json, sys
from minigrad.coursework.grading.gradebook import grade_folder
from minigrad.coursework.sandbox import Limits
rows = grade_folder(sys.argv[1], sys.argv[2], sys.argv[3], jobs=2, seed=5, limits=Limits(scratch_mb=32))
print(json.dumps({r["student"]: [r["status"], r["total"], r["isolation"]] for r in rows}))
"""


def test_in_a_container_without_namespaces_disk_fillers_are_capped_and_cleaned(tmp_path):
    """test_grader_course_attacks' disk fillers in the uid mode, where this machine's Python (under /root) is
    shown as a container's: the uid mode's disk watch still tested here, now that the mode refuses an
    unreadable Python."""
    from test_grader_course_attacks import filler, leftovers
    if not (ROOT and shutil.which("unshare")):
        pytest.skip("the uid mode is root's (and this test needs unshare(1) to show Python as a container does)")
    marker = f"minigrad-filler-{os.getpid()}-{time.time_ns()}"
    for name, places in (("aaa", ["CWD", "TMPDIR"]), ("aab", ["/tmp", "/var/tmp", "/dev/shm"]), ("bob", [])):
        os.makedirs(tmp_path / "class" / name)
        (tmp_path / "class" / name / "tinyrnn.py").write_text(filler(marker, places) + reference_text())
    mounts = "".join(_readable_python_mounts(p, tmp_path / f"hold{k}")
                     for k, p in enumerate(dict.fromkeys([sys.base_prefix, sys.prefix])))
    script = tmp_path / "fillers.py"
    script.write_text(FILLERS)
    try:
        done = subprocess.run(["unshare", "--mount", "sh", "-c", mounts + f"exec '{sys.executable}' '{script}' "
                               f"'{tmp_path / 'class'}' '{FIXTURE}' '{tmp_path / 'out'}'"], capture_output=True,
                              text=True, cwd=REPO, env=dict(os.environ, MINIGRAD_ISOLATION="uid", PYTHONPATH=REPO),
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        rows = json.loads(done.stdout.splitlines()[-1])
        assert rows["bob"] == ["graded", 5, "uid"]
        assert {rows["aaa"][0], rows["aab"][0]} == {"graded"} and {rows["aaa"][2], rows["aab"][2]} == {"uid"}
        assert leftovers(marker) == []                                   # what their uid left is removed
    finally:
        for path in leftovers(marker):
            os.unlink(path)


USER_SCRIPT = """set -u
cd "$WORK"
"$PY" -m venv --system-site-packages --without-pip venv > venv.out 2>&1
venv/bin/python -m minigrad.cli grade class --assignment "$FIXTURE" --out grades1 -j 2 --seed 4 > run1.out 2> run1.err &
venv/bin/python -m minigrad.cli grade class --assignment "$FIXTURE" --out grades2 -j 2 --seed 4 > run2.out 2> run2.err
wait
venv/bin/python -c "import sys; print(sys.prefix)" > prefix.out
venv/bin/python -m minigrad.cli grade flat --assignment "$FIXTURE" --out grades3 --seed 4 > run3.out 2> run3.err
echo "# handed in again" >> flat/smithjohn_1002_5_tinyrnn.py
venv/bin/python -m minigrad.cli grade flat --assignment "$FIXTURE" --out grades3 > run4.out 2> run4.err
"""


def flat_class(folder):
    """A Canvas export: two students named smithjohn, a name that is not UTF-8, an entry that names no student."""
    os.makedirs(folder)
    buggy = reference_text().replace("dh[:, t] + dh_prev", "dh[:, t]")
    for name, text in ((b"smithjohn_1001_99999_tinyrnn.py", buggy), (b"smithjohn_1001_100000_tinyrnn.py",
                       reference_text()), (b"smithjohn_1002_5_tinyrnn.py", buggy),
                       (b"Jos\xe9_7_8_tinyrnn.py", reference_text()), (b".._3_4_tinyrnn.py", reference_text())):
        with open(os.path.join(os.fsencode(folder), name), "w") as f:
            f.write(text)


def test_as_a_normal_user_with_everything_under_tmp_the_hostile_class_is_graded_right(tmp_path):
    """A venv under /tmp (and, as root here, Python and this checkout seen under /tmp too): the private /tmp
    must not hide them, and the troublemakers stop nobody, in two runs at once; then a Canvas export with
    two students of one name, resumed after a resubmission."""
    work = type(tmp_path)(tempfile.mkdtemp(prefix="minigrad-tmp-venv-", dir="/tmp"))
    try:
        os.chmod(work, 0o777)
        os.makedirs(work / "home", mode=0o777)
        hostile_class(work / "class")
        flat_class(work / "flat")
        for root, dirs, files in os.walk(work):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o777)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "WORK": str(work), "FIXTURE": FIXTURE,
               "HOME": str(work / "home"), "LANG": "C.UTF-8"}
        _as_a_normal_user(work, env, USER_SCRIPT)
        assert (work / "prefix.out").read_text().strip() == str(work / "venv"), (work / "venv.out").read_text()
        said = (work / "run1.err").read_text(errors="replace")
        if "isolation: none" in said:                       # a kernel without user namespaces: said plainly
            assert "NO ISOLATION" in said
            return
        assert "isolation: user-namespaces" in said, said[-3000:]
        for run in ("1", "2"):
            assert totals(work / f"grades{run}") == EXPECTED, (work / f"run{run}.err").read_text()[-3000:]
            assert "1 refused" in (work / f"run{run}.out").read_text()
        with open(work / "grades3" / "gradebook.csv", encoding="utf-8", errors="surrogateescape") as f:
            flat = {(r["student"], r["id"]): r["total"] for r in csv.DictReader(f)}
        assert flat == {("smithjohn", "1001"): "5", ("smithjohn", "1002"): "3", ("Jos\udce9", "7"): "5",
                        ("..", "3"): ""}, (work / "run3.err").read_text()[-3000:]
        assert ("1 graded (1 of them changed since their grade), 2 already graded (skipped), 0 not graded, "
                "1 refused") in (work / "run4.out").read_text()
        record = json.loads((work / "grades1" / "students" / "alice" / "grade.json").read_text())
        assert record["isolation"] == "user-namespaces" and not any("No module" in r["message"]
                                                                    for r in record["results"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
