"""Grade a class: one folder per student in, a gradebook and one report per student out.

    minigrad grade submissions/ --assignment rnn --out grades/ [-j 2] [--regrade] [--only CHECK ...]

    grades/gradebook.csv          student, status, each check's points, total, max, isolation, flags
    grades/similarity.csv         every pair of students, most similar first (flags, not scores)
    grades/grading.json           the assignment, the seed and minigrad's version: how to reproduce the run
    grades/students/NAME/report.txt      what ``minigrad check`` prints
    grades/students/NAME/results.json    Gradescope's format
    grades/students/NAME/grade.json      everything: results, flags, seed

Before any student's code runs, every submission is copied into a private
folder: a student's code never sees the class's folder, and whatever it does
cannot change what is graded for a classmate.  Each student is graded by
``Grader.grade`` in workers of its own; a student whose code crashes, hangs or
attacks gets that as their own failure, and the run goes on.

A grade is only ever the student's: when the grader's side fails (no space
left, a worker killed from outside, a lost supervisor, any error of the
grader's own), the student is "not graded", with the reason, in
gradebook.csv and grade.json, never 0; the run's closing line counts them and
the command exits non-zero.  A resumed run grades again every student not
graded, and skips those graded (grade.json with a grade) unless ``regrade``;
the seed is then read back from grading.json, so everyone is graded alike.
Every file is written whole (temporary file, then rename), reports last.
"""
import csv
import io
import json
import os
import re
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

from . import similarity
from ..spec.assignment import load_assignment, minigrad_version
from .grader import Grader
from ..authoring.make import student_version
from .report import gradescope, table, write_atomic
from ..sandbox import Limits, NotGraded, copy_submission

NOT_GRADED = "not graded"


class Gradebook(list):
    """The gradebook's rows (dicts), and ``counts``: {"graded", "skipped", "not graded"} of this run."""

    def __init__(self, rows, counts):
        super().__init__(rows)
        self.counts = counts


def students_in(folder):
    """The student folders of ``folder``: every sub-folder not starting with "." or "_", sorted."""
    return sorted(name for name in os.listdir(folder)
                  if os.path.isdir(os.path.join(folder, name)) and not name.startswith((".", "_")))


# A learning-management system's "download all submissions", as one flat folder of renamed files:
LMS_NAMES = (
    ("Moodle", re.compile(r"^(?P<student>.+?)_\d+_assignsubmission_file_(?P<file>.+)$")),   # Ann Lee_123_assign..._rnn.py
    ("Canvas", re.compile(r"^(?P<student>[^_]+)(?:_LATE)?(?:_\d+)+_(?P<file>.+?)(?:-\d+)?(?P<ext>\.py)$")),  # ann_12_34_rnn-1.py
)
LMS_LAYOUT = ("one folder per student (submissions/alice/rnn.py; Gradescope's export is laid out so), or a flat "
              "folder of files as Canvas (alice_123_456_rnn.py, alice_LATE_123_456_rnn.py, resubmissions "
              "rnn-1.py) or Moodle (Alice Lee_123_assignsubmission_file_rnn.py) export them")


def lms_export(folder, module):
    """{student: {file name: path}} of a flat LMS export (see LMS_NAMES); raises ValueError, saying the layout
    expected, when ``folder`` holds files that are not one, or no student's ``module``."""
    files = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)) and n.endswith(".py"))
    students, strangers = {}, []
    for name in files:
        for _, pattern in LMS_NAMES:
            match = pattern.match(name)
            if match:
                original = match.group("file") + (match.groupdict().get("ext") or "")
                students.setdefault(match.group("student"), {})[original] = os.path.join(folder, name)
                break
        else:
            strangers.append(name)
    if strangers or not any(module in found for found in students.values()):
        what = (f"files not named <student>_<numbers>_<file>.py: {', '.join(strangers[:5])}" if strangers
                else f"no student's {module}" if files else "no student folder and no .py file")
        raise ValueError(f"{folder}: {what}.  minigrad grade reads {LMS_LAYOUT}")
    return students


def _inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder + os.sep)


def _seed(out, seed, name, regrade):
    """The run's seed: the one recorded in ``out`` when resuming, else ``seed`` (or the environment's, or fresh)."""
    record = os.path.join(out, "grading.json")
    if os.path.exists(record) and not regrade:
        with open(record, encoding="utf-8") as f:
            recorded = json.load(f)
        if recorded.get("assignment") != name:
            raise ValueError(f"{out} holds grades of assignment {recorded.get('assignment')!r}, not "
                             f"{name!r}: choose another --out, or --regrade")
        if seed is not None and int(seed) != recorded["seed"]:
            raise ValueError(f"{out} was graded with seed {recorded['seed']}, not {seed}: resume without --seed, "
                             "or --regrade everyone")
        return recorded["seed"]
    return seed


def grade_folder(submissions, assignment, out, jobs=1, regrade=False, only=None, seed=None, limits=None,
                 progress=None):
    """Grade every student of ``submissions`` (one folder each, or a flat LMS export: ``lms_export``) into
    ``out``; returns the Gradebook: its rows (dicts: student, status, each check, total, max, isolation, flags)
    and ``counts`` of this run (graded, skipped, not graded).

    ``progress``: a text stream for the progress bar and the most similar pairs (the command passes stderr)."""
    assignment = load_assignment(assignment)
    submissions, out = os.path.abspath(submissions), os.path.abspath(out)
    if _inside(out, submissions) or _inside(submissions, out):
        raise ValueError(f"--out {out} must be outside the submissions folder {submissions} (and not hold it)")
    names = students_in(submissions)
    flat = None if names else lms_export(submissions, assignment.module)   # {student: {file: path}}
    names = names or sorted(flat)
    os.makedirs(out, exist_ok=True)
    seed = _seed(out, seed, assignment.name, regrade)
    grader = Grader(assignment, seed=seed, only=only, limits=limits or Limits(), hide=[submissions, out])
    version = minigrad_version()
    write_atomic(os.path.join(out, "grading.json"), json.dumps(
        {"assignment": assignment.name, "assignment_path": assignment.path, "seed": grader.seed,
         "minigrad": version, "checks": [c.name for c in grader.checks]}, indent=2) + "\n")
    todo = [n for n in names if regrade or not _graded(out, n)]
    snapshot = tempfile.mkdtemp(prefix="minigrad-class-")    # mode 0700: the grader's alone
    done = [len(names) - len(todo)]
    counts = {"graded": 0, "skipped": len(names) - len(todo), NOT_GRADED: 0}
    lock = threading.Lock()

    def one(name):
        folder = os.path.join(snapshot, name)
        try:
            results = grader.grade(folder)
            flags = flagged[name]
            _write_student(out, name, results, flags, grader.seed, grader.isolation)
            outcome = "graded"
        except Exception as error:   # the grader's side (NotGraded, a full disk, ...): never a grade
            reason = str(error) if isinstance(error, NotGraded) else f"{type(error).__name__}: {error}"
            _write_not_graded(out, name, reason, grader.seed)
            outcome = NOT_GRADED
        with lock:
            counts[outcome] += 1
            done[0] += 1
            if progress is not None:
                progress.write(f"\r[{done[0]:>{len(str(len(names)))}}/{len(names)}] {name[:40]:<40}")
                progress.flush()

    try:
        for check in grader.checks:   # the reference first: its failure is the instructor's, not a student's
            grader.reference.prepare(check)
        for name in names:   # copied before any student's code runs
            if flat is None:
                copy_submission(os.path.join(submissions, name), os.path.join(snapshot, name))
                continue
            os.makedirs(os.path.join(snapshot, name))
            for original, path in flat[name].items():
                shutil.copyfile(path, os.path.join(snapshot, name, original))
        # read once, before any code runs: a submission's code cannot rewrite what the copy flags judge
        sources = {name: similarity.submission_sources(os.path.join(snapshot, name)) for name in names}
        # here, in one thread: CPython's ast is not safe to use from threads at once ("AST constructor recursion
        # depth mismatch" with -j 2), and the flags depend on the sources only
        flagged = {name: similarity.reference_flags(sources[name], assignment) for name in todo}
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(one, todo))
        if progress is not None:
            progress.write("\n")
    finally:
        grader.close()
        shutil.rmtree(snapshot, ignore_errors=True)
    pairs = similarity.pairwise(sources, base=student_version(assignment.reference))
    _write_similarity(out, pairs, progress)
    rows = _rows(out, names, grader.checks)
    _write_gradebook(out, rows, grader.checks)
    return Gradebook(rows, counts)


def _record(out, name):
    """A student's grade.json read back, or None."""
    try:
        with open(os.path.join(out, "students", name, "grade.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _graded(out, name):
    record = _record(out, name)
    return record is not None and record.get("status") != NOT_GRADED


def _write_not_graded(out, name, reason, seed):
    """Mark a student not graded (the reason for the instructor); a resumed run grades them again."""
    try:
        folder = os.path.join(out, "students", name)
        os.makedirs(folder, exist_ok=True)
        for stale in ("results.json", "report.txt"):   # a report of an earlier run is not this run's
            if os.path.exists(os.path.join(folder, stale)):
                os.unlink(os.path.join(folder, stale))
        write_atomic(os.path.join(folder, "grade.json"), json.dumps(
            {"student": name, "seed": seed, "status": NOT_GRADED, "reason": reason}, indent=2) + "\n")
    except OSError:   # the disk that failed the grading may fail this too: no grade.json is "not graded" too
        pass


def _write_student(out, name, results, flags, seed, isolation):
    folder = os.path.join(out, "students", name)
    os.makedirs(folder, exist_ok=True)
    write_atomic(os.path.join(folder, "results.json"), json.dumps(gradescope(results), indent=2) + "\n")
    write_atomic(os.path.join(folder, "report.txt"), table(results, flags) + "\n")
    write_atomic(os.path.join(folder, "grade.json"), json.dumps(
        {"student": name, "seed": seed, "status": "graded", "isolation": isolation, "results": results,
         "flags": flags}, indent=2) + "\n")   # last: "graded"


def _rows(out, names, checks):
    rows = []
    for name in names:
        graded = _record(out, name) or {"status": NOT_GRADED, "reason": "no grade.json could be written"}
        row = {"student": name, "max": sum(c.points for c in checks)}
        if graded.get("status") == NOT_GRADED:
            row.update({"status": f"{NOT_GRADED}: {graded['reason']}", "total": "", "isolation": "", "flags": ""})
            row.update({c.name: "" for c in checks})
        else:
            scores = {r["name"]: r["score"] for r in graded["results"]}
            row.update({c.name: scores.get(c.name, 0) for c in checks})
            row["status"] = "graded"
            row["total"] = sum(scores.get(c.name, 0) for c in checks)
            row["isolation"] = graded.get("isolation") or ""
            row["flags"] = "; ".join(graded.get("flags", []))
        rows.append(row)
    return rows


def _write_gradebook(out, rows, checks):
    text = io.StringIO()
    writer = csv.DictWriter(text, ["student", "status"] + [c.name for c in checks] +
                            ["total", "max", "isolation", "flags"], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:g}" if isinstance(v, float) else v) for k, v in row.items()})
    write_atomic(os.path.join(out, "gradebook.csv"), text.getvalue())


def _write_similarity(out, pairs, progress, top=5):
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["student_a", "student_b", "similarity"])
    for a, b, score in pairs:
        writer.writerow([a, b, f"{score:.3f}"])
    write_atomic(os.path.join(out, "similarity.csv"), text.getvalue())
    if progress is not None and pairs:
        progress.write("most similar pairs (a flag to look at, not a verdict):\n")
        for a, b, score in pairs[:top]:
            progress.write(f"  {score:.2f}  {a}  {b}\n")
