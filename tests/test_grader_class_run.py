"""The class run (``minigrad grade``): one student never stops the class, LMS exports, resuming, inert output,
one run per --out.

Each test puts the troublesome submission beside honest classmates (tests/coursework_fixture/tinyrnn: honest
credit 5, a missing dh_prev 3) and asserts every classmate's grade, the troublesome student's row (refused or
not graded, with the reason, never a 0) and the files written.
"""
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from minigrad.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")
ROOT = os.geteuid() == 0


def reference_text():
    with open(os.path.join(FIXTURE, "tinyrnn.py")) as f:
        return f.read()


def buggy_text():
    """The sequence's backward forgets the gradient carried through time: 3 of 5."""
    return reference_text().replace("dh[:, t] + dh_prev", "dh[:, t]")


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w" if isinstance(text, str) else "wb") as f:
        f.write(text)


def rows(out):
    """gradebook.csv's rows, read as a spreadsheet would read the bytes (names that are not UTF-8 kept)."""
    with open(os.path.join(out, "gradebook.csv"), encoding="utf-8", errors="surrogateescape", newline="") as f:
        return list(csv.DictReader(f))


def by_student(out):
    return {(r["student"], r["id"]): r for r in rows(out)}


def grade(submissions, out, *more):
    return main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(out), "--seed", "7", *more])


# ----------------------------------------------------------------------------- one student never stops the class

def test_a_non_utf8_name_a_70mb_file_a_fifo_and_a_dotdot_entry_stop_nobody_else(tmp_path, capsys):
    folders = tmp_path / "folders"
    put(folders / "alice" / "tinyrnn.py", reference_text())
    jose = os.path.join(os.fsencode(folders), b"Jos\xe9")                     # a Windows zip, unpacked
    put(os.path.join(jose, b"tinyrnn.py"), reference_text().encode())
    put(folders / "bob" / "tinyrnn.py", reference_text())
    with open(folders / "bob" / "model.pt", "wb") as f:                       # a 70 MB checkpoint, sparse
        f.truncate(70 << 20)
    put(folders / "carol" / "tinyrnn.py", buggy_text())
    put(folders / "dan" / "tinyrnn.py", reference_text())
    os.mkfifo(folders / "dan" / "data.txt")                                   # would hang a copy that opens it
    assert grade(folders, tmp_path / "out1", "-j", "2") == 1                 # refused students: exit 1
    printed = capsys.readouterr()
    book = by_student(tmp_path / "out1")
    assert {name: r["total"] for (name, _), r in book.items()} == {
        "alice": "5", "Jos\udce9": "5", "bob": "", "carol": "3", "dan": ""}
    assert book[("bob", "")]["status"].startswith("refused: the submission holds 70 MB of files, more than the 64 MB")
    assert "model.pt: 70 MB" in book[("bob", "")]["status"]
    assert book[("dan", "")]["status"] == "refused: data.txt is a FIFO"
    assert os.path.isfile(os.path.join(os.fsencode(tmp_path / "out1" / "students"), b"Jos\xe9", b"report.txt"))
    with open(tmp_path / "out1" / "gradebook.csv", "rb") as f:
        assert b"\nJos\xe9,graded," in f.read()                               # the name's bytes, as they are
    assert "3 graded, 0 already graded (skipped), 0 not graded, 2 refused" in printed.out
    assert "Jos\\xe9" in printed.err and "bob: refused: " in printed.err
    assert json.loads((tmp_path / "out1" / "students" / "bob" / "grade.json").read_text())["status"] == "refused"

    flat = tmp_path / "flat"                                                   # the same, as a Canvas export
    put(flat / "alice_1_2_tinyrnn.py", reference_text())
    put(os.path.join(os.fsencode(flat), b"Jos\xe9_3_4_tinyrnn.py"), reference_text().encode())
    put(flat / ".._5_6_tinyrnn.py", reference_text())                          # an entry naming no student
    put(flat / "carol_7_8_tinyrnn.py", buggy_text())
    put(flat / "bob_9_10_tinyrnn.py", reference_text())
    with open(flat / "bob_9_10_helper.py", "wb") as f:
        f.truncate(70 << 20)
    assert grade(flat, tmp_path / "out2") == 1
    book = by_student(tmp_path / "out2")
    assert {key: r["total"] for key, r in book.items()} == {
        ("..", "5"): "", ("Jos\udce9", "3"): "5", ("alice", "1"): "5", ("bob", "9"): "", ("carol", "7"): "3"}
    assert book[("..", "5")]["status"].startswith("refused: .._5_6_tinyrnn.py: the export's entry names no usable")
    assert "helper.py: 70 MB" in book[("bob", "9")]["status"]
    assert not (tmp_path / "out2" / ".snapshot").exists() and not (tmp_path / "out1" / ".snapshot").exists()


def test_an_unreadable_file_refuses_its_student_only(tmp_path):
    """As root every file is readable: the roster is asked as a normal user would see it (os.access)."""
    from minigrad.coursework.grading.roster import roster
    put(tmp_path / "class" / "alice" / "tinyrnn.py", reference_text())
    put(tmp_path / "class" / "bob" / "tinyrnn.py", reference_text())
    put(tmp_path / "class" / "bob" / "secret.py", "")
    original = os.access
    try:
        os.access = lambda path, mode, **kw: not str(path).endswith("secret.py") and original(path, mode, **kw)
        students = {s.key: s for s in roster(tmp_path / "class", "tinyrnn.py")}
    finally:
        os.access = original
    assert students["bob"].refused == "secret.py cannot be read (permission denied)"
    assert students["alice"].refused == "" and list(students["alice"].files) == ["tinyrnn.py"]


# ----------------------------------------------------------------------------- LMS exports

def test_same_name_canvas_and_moodle_students_stay_apart_and_the_latest_file_counts(tmp_path, capsys):
    flat = tmp_path / "flat"
    put(flat / "smithjohn_1001_99999_tinyrnn.py", buggy_text())                # the earlier attachment
    put(flat / "smithjohn_1001_100000_tinyrnn.py", reference_text())           # the later: 100000 > 99999
    put(flat / "smithjohn_1002_500_tinyrnn.py", buggy_text())                  # another smithjohn
    put(flat / "Ann Lee_2001_assignsubmission_file_tinyrnn.py", reference_text())
    put(flat / "Ann Lee_2002_assignsubmission_file_tinyrnn.py", buggy_text())
    put(flat / "Ann Lee_2002_assignsubmission_onlinetext_onlinetext.html", "<p>done</p>")
    put(flat / "zed_LATE_7_8_tinyrnn-9.py", buggy_text())
    put(flat / "zed_LATE_7_8_tinyrnn-10.py", reference_text())                 # -10 after -9
    put(flat / "zed_7_8_readme.txt", "my notes")
    assert grade(flat, tmp_path / "out", "-j", "2") == 0
    assert "5 graded, 0 already graded (skipped), 0 not graded, 0 refused" in capsys.readouterr().out
    book = by_student(tmp_path / "out")
    assert {key: (r["total"], r["graded_file"], r["late"]) for key, r in book.items()} == {
        ("smithjohn", "1001"): ("5", "smithjohn_1001_100000_tinyrnn.py", ""),
        ("smithjohn", "1002"): ("3", "smithjohn_1002_500_tinyrnn.py", ""),
        ("Ann Lee", "2001"): ("5", "Ann Lee_2001_assignsubmission_file_tinyrnn.py", ""),
        ("Ann Lee", "2002"): ("3", "Ann Lee_2002_assignsubmission_file_tinyrnn.py", ""),
        ("zed", "7"): ("5", "zed_LATE_7_8_tinyrnn-10.py", "LATE")}
    assert book[("smithjohn", "1001")]["ignored"] == "smithjohn_1001_99999_tinyrnn.py (an earlier submission of tinyrnn.py)"
    assert book[("Ann Lee", "2002")]["ignored"] == "Ann Lee_2002_assignsubmission_onlinetext_onlinetext.html (not a .py file)"
    assert "zed_7_8_readme.txt (not a .py file)" in book[("zed", "7")]["ignored"]
    assert sorted(os.listdir(tmp_path / "out" / "students")) == [
        "Ann Lee_2001", "Ann Lee_2002", "smithjohn_1001", "smithjohn_1002", "zed_7"]
    pairs = (tmp_path / "out" / "similarity.csv").read_text()
    assert "smithjohn (1001)" in pairs and "smithjohn (1002)" in pairs

    put(flat / "readme.txt", "the instructor's notes")                        # no export names a file so
    assert grade(flat, tmp_path / "out2") == 2
    said = capsys.readouterr().err
    assert "readme.txt" in said and "Canvas" in said and not (tmp_path / "out2" / "gradebook.csv").exists()


# ----------------------------------------------------------------------------- resuming

def test_a_resubmission_after_a_resume_is_graded_again_and_counted(tmp_path, capsys):
    submissions, out = tmp_path / "class", tmp_path / "out"
    put(submissions / "alice" / "tinyrnn.py", reference_text())
    put(submissions / "bob" / "tinyrnn.py", buggy_text())
    assert grade(submissions, out, "-j", "2") == 0
    assert grade(submissions, out) == 0
    assert "0 graded, 2 already graded (skipped), 0 not graded" in capsys.readouterr().out
    alice = os.stat(out / "students" / "alice" / "grade.json").st_mtime_ns
    put(submissions / "bob" / "tinyrnn.py", reference_text())                  # bob hands in again
    assert grade(submissions, out) == 0
    assert "1 graded (1 of them changed since their grade), 1 already graded (skipped)" in capsys.readouterr().out
    assert {name: r["total"] for (name, _), r in by_student(out).items()} == {"alice": "5", "bob": "5"}
    assert os.stat(out / "students" / "alice" / "grade.json").st_mtime_ns == alice
    record = json.loads((out / "students" / "bob" / "grade.json").read_text())
    assert len(record["hash"]) == 64 and record["graded_file"] == "tinyrnn.py"


# ----------------------------------------------------------------------------- inert output

ANSI_RAISE = '''
def step_forward(x, h_prev, Wx, Wh, b):
    raise ValueError("\\x1b[2J\\x1b[H\\x9b31mscore: 5 / 5\\x07")
'''


def test_a_formula_like_name_and_an_ansi_message_are_inert(tmp_path, capsys):
    submissions, out = tmp_path / "class", tmp_path / "out"
    names = ["=HYPERLINK(\"http:x\",\"a\")", "+1", "-2", "@SUM(A1)", "\tcell", "plain"]
    for name in names:
        put(submissions / name / "tinyrnn.py", reference_text())
    put(submissions / "mallory" / "tinyrnn.py", reference_text() + ANSI_RAISE)
    assert grade(submissions, out, "-j", "2") == 0
    printed = capsys.readouterr()
    for stream in (printed.out, printed.err):
        assert "\x1b" not in stream and "\x9b" not in stream and "\x07" not in stream
    with open(out / "gradebook.csv", newline="") as f:
        cells = [row[0] for row in csv.reader(f)][1:]
    assert sorted(cells) == sorted(["'=HYPERLINK(\"http:x\",\"a\")", "'+1", "'-2", "'@SUM(A1)", "'\\x09cell",
                                    "plain", "mallory"])
    with open(out / "similarity.csv", newline="") as f:
        assert all(not cell.startswith(("=", "+", "-", "@", "\t")) for row in csv.reader(f) for cell in row)
    report = (out / "students" / "mallory" / "report.txt").read_text()
    assert "\x1b" not in report and "\\x1b[2J\\x1b[H\\x9b31mscore: 5 / 5\\x07" in report
    assert "score: 0 / 5" in report
    tests = json.loads((out / "students" / "mallory" / "results.json").read_text())["tests"]
    assert all("\x1b" not in test["output"] for test in tests) and "\\x1b[2J" in tests[0]["output"]

    put(tmp_path / "alone" / "tinyrnn.py", reference_text() + ANSI_RAISE)       # minigrad check, on a terminal
    assert main(["check", str(tmp_path / "alone"), "--assignment", FIXTURE, "--seed", "7"]) == 1
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\\x1b[2J" in shown and "score: 0 / 5" in shown


def test_escaping_keeps_text_and_numbers_as_they_are():
    from minigrad.coursework.grading.escape import csv_cell, printable
    assert printable("tab\there\nnew line é ü 中") == "tab\\x09here\nnew line é ü 中"
    assert printable("a\x00b\x7fc\x85d") == "a\\x00b\\x7fc\\x85d"
    assert csv_cell(5) == 5 and csv_cell("5") == "5" and csv_cell("-5") == "'-5" and csv_cell("\rx") == "'\\x0dx"


# ----------------------------------------------------------------------------- one run per --out, snapshots

SLOW = "import time\ntime.sleep(4)\n"


def _run(submissions, out, env=None):
    return subprocess.Popen([sys.executable, "-m", "minigrad.cli", "grade", str(submissions), "--assignment",
                             FIXTURE, "--out", str(out)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for(path, seconds=120):
    deadline = time.time() + seconds
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)
    assert os.path.exists(path), path


def test_a_second_run_on_the_same_out_is_refused_and_a_killed_run_leaves_no_snapshot(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "out"
    put(submissions / "alice" / "tinyrnn.py", reference_text())
    put(submissions / "bob" / "tinyrnn.py", SLOW + reference_text())
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"))
    first = _run(submissions, out, env)
    _wait_for(out / ".snapshot" / "bob" / "tinyrnn.py")                       # it is grading
    second = _run(submissions, out, env)
    said = second.communicate(timeout=300)[1]
    assert second.returncode == 2 and f"is being graded by another run (pid {first.pid} on " in said, said
    assert "grading " + str(submissions) in said
    first.send_signal(signal.SIGKILL)                                          # kill -9, mid-class
    first.wait()
    assert (out / ".snapshot").exists()                                        # where the next start finds it
    third = _run(submissions, out, env)
    done, said = third.communicate(timeout=300)
    assert third.returncode == 0, said[-3000:]
    assert {name: r["total"] for (name, _), r in by_student(out).items()} == {"alice": "5", "bob": "5"}
    assert not (out / ".snapshot").exists()
    time.sleep(0.5)                                                            # the killed run's supervisors end
    assert [n for n in os.listdir(tmp_path / "tmp") if n.startswith("minigrad-")] == []


def test_the_folders_of_a_grader_killed_before_its_supervisor_started_are_removed_at_the_next_worker(
        tmp_path, monkeypatch):
    """kill -9 between a Worker's two mkdtemp and its supervisor's start leaves folders nobody owns: the next
    worker removes those whose grader PID is gone, and leaves a running grader's (here, this process's)."""
    from minigrad.coursework.sandbox.orphans import remove_orphans
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = [tmp_path / f"minigrad-grader-{gone.pid}-abc", tmp_path / f"minigrad-worker-{gone.pid}-def"]
    alive = [tmp_path / f"minigrad-worker-{os.getpid()}-ghi", tmp_path / "minigrad-worker-uids", tmp_path / "other"]
    for path in dead + alive:
        (path / "sub").mkdir(parents=True)
    (dead[1] / "sub" / "tinyrnn.py").write_text("a student's code")
    remove_orphans()
    assert sorted(os.listdir(tmp_path)) == sorted(p.name for p in alive)

