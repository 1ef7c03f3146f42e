"""Grade a class: one folder per student in, a gradebook and one report per student out.

    minigrad grade submissions/ --assignment rnn --out grades/ [-j 2] [--regrade] [--only CHECK ...]

    grades/gradebook.csv          student, status, each check's points, total, max, isolation, flags, id,
                                  graded_file, late (Canvas's LATE marker), ignored (files not graded, and why)
    grades/similarity.csv         every pair of students, most similar first (flags, not scores)
    grades/grading.json           the assignment, the seed and minigrad's version: how to reproduce the run
    grades/students/KEY/report.txt      what ``minigrad check`` prints (KEY: roster.Student.key)
    grades/students/KEY/results.json    Gradescope's format
    grades/students/KEY/grade.json      everything: results, flags, seed, the content hash of the files graded

Who handed in what is read by roster.py (folders, or a Canvas or Moodle
export).  Before any student's code runs, every submission is copied into
grades/.snapshot (the grader's alone; removed at the end, or at the next start
after a kill): a student's code never sees the class's folder, and whatever it
does cannot change what is graded for a classmate.  One run at a time grades
into an --out (grades/.lock); a second one is refused, naming the first.

One student never stops the class.  A submission that cannot be graded as
handed in (over the size cap, a FIFO, an unreadable file, an export entry that
names no usable student) is "refused" with the reason; when the grader's side
fails (no space left, a worker killed from outside, a lost supervisor, any
error of the grader's own), the student is "not graded", with the reason.
Neither is ever a 0; the closing line counts them and the command exits
non-zero.  A resumed run grades again every student not graded or refused,
and every student whose files changed since their grade (grade.json keeps
their hash; one without, from an older minigrad, is graded again); it skips
the others unless ``regrade``.  The seed is read back
from grading.json, so everyone is graded alike.  Every file is written whole
(temporary file, then rename), reports last.  The CSV files are inert in a
spreadsheet and names keep their bytes (escape.py).
"""
import csv
import fcntl
import io
import json
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from . import copies, similarity
from ..spec.assignment import load_assignment, minigrad_version
from ...atomic_file import atomic_write
from .escape import csv_cell, printable
from .grader import Grader
from ..authoring.make import student_version
from .report import gradescope, table, write_atomic
from .roster import Refused, roster, snapshot
from ..sandbox import Limits, NotGraded

NOT_GRADED = "not graded"
REFUSED = "refused"
SNAPSHOT = ".snapshot"      # under --out: the class as copied before any code runs (removed at the end, or next start)
LOCK = ".lock"              # under --out: held (flock) by the run grading into it


class Gradebook(list):
    """The gradebook's rows (dicts), and ``counts`` of this run: "graded" (of which "changed": graded again
    because the files changed since their grade), "skipped", "not graded", "refused"."""

    def __init__(self, rows, counts):
        super().__init__(rows)
        self.counts = counts


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


def lock_out(out, what=""):
    """Hold ``out`` for this run (an flock on out/.lock, released by the OS however the run ends, kill -9 too);
    the lock file says who holds it.  Raises ValueError naming the run that holds it already."""
    handle = open(os.path.join(out, LOCK), "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "a run that has not said who it is yet"
        handle.close()
        raise ValueError(f"{out} is being graded by another run ({holder}): wait until it ends, or choose "
                         "another --out") from None
    handle.seek(0)
    handle.truncate()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    handle.write(f"pid {os.getpid()} on {os.uname().nodename}, started {started}{what}\n")
    handle.flush()
    return handle


def grade_folder(submissions, assignment, out, jobs=1, regrade=False, only=None, seed=None, limits=None,
                 progress=None):
    """Grade every student of ``submissions`` (one folder each, or a flat LMS export: roster.py) into ``out``;
    returns the Gradebook: its rows (dicts: student, status, each check, total, max, isolation, flags, id,
    graded_file, late, ignored) and ``counts`` of this run.  A second run on the same ``out`` at once is refused.

    ``progress``: a text stream for the progress bar and the most similar pairs (the command passes stderr)."""
    assignment = load_assignment(assignment)
    submissions, out = os.path.abspath(submissions), os.path.abspath(out)
    if _inside(out, submissions) or _inside(submissions, out):
        raise ValueError(f"--out {out} must be outside the submissions folder {submissions} (and not hold it)")
    students = roster(submissions, assignment.module)
    os.makedirs(out, exist_ok=True)
    with lock_out(out, f", grading {submissions}"):
        return _grade_class(students, submissions, assignment, out, jobs, regrade, only, seed, limits, progress)


def _grade_class(students, submissions, assignment, out, jobs, regrade, only, seed, limits, progress):
    seed = _seed(out, seed, assignment.name, regrade)
    grader = Grader(assignment, seed=seed, only=only, limits=limits or Limits(), hide=[submissions, out])
    version = minigrad_version()
    write_atomic(os.path.join(out, "grading.json"), json.dumps(
        {"assignment": assignment.name, "assignment_path": assignment.path, "seed": grader.seed,
         "minigrad": version, "checks": [c.name for c in grader.checks]}, indent=2) + "\n")
    folder = os.path.join(out, SNAPSHOT)      # a run killed with -9 left it: nobody else holds out (the lock)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, mode=0o700)
    counts = {"graded": 0, "changed": 0, "skipped": 0, NOT_GRADED: 0, REFUSED: 0}
    lock = threading.Lock()
    done = [0]

    def tick(student):
        done[0] += 1
        if progress is not None:
            label = printable(student.label)[:40]
            progress.write(f"\r[{done[0]:>{len(str(len(students)))}}/{len(students)}] {label:<40}")
            progress.flush()

    def one(student):
        try:
            results = grader.grade(os.path.join(folder, student.key))
            _write_student(out, student, results, flagged[student.key], grader.seed, grader.isolation,
                           hashes[student.key])
            outcome = "graded"
        except Exception as error:   # the grader's side (NotGraded, a full disk, ...): never a grade
            reason = str(error) if isinstance(error, NotGraded) else f"{type(error).__name__}: {error}"
            _write_not_graded(out, student, reason, grader.seed)
            outcome = NOT_GRADED
        with lock:
            counts[outcome] += 1
            if outcome == "graded" and student.key in changed:
                counts["changed"] += 1
            tick(student)

    hashes, sources, todo, changed = {}, {}, [], set()
    try:
        for check in grader.checks:   # the reference first: its failure is the instructor's, not a student's
            grader.reference.prepare(check)
        for student in students:      # copied before any student's code runs; one student's trouble is theirs
            try:
                if student.refused:
                    raise Refused(student.refused)
                hashes[student.key] = snapshot(student, os.path.join(folder, student.key))
            except Refused as why:
                student.refused = str(why)
                _write_not_graded(out, student, student.refused, grader.seed, REFUSED)
                counts[REFUSED] += 1
                tick(student)
                continue
            except OSError as error:   # writing the snapshot (a full disk): the grader's side
                _write_not_graded(out, student, f"{type(error).__name__}: {error}", grader.seed)
                counts[NOT_GRADED] += 1
                tick(student)
                continue
            record = _record(out, student.key)
            if not regrade and _graded(record) and record.get("hash") == hashes[student.key]:
                counts["skipped"] += 1
                tick(student)
            else:
                todo.append(student)
                if _graded(record) and record.get("hash") not in (None, hashes[student.key]):
                    changed.add(student.key)
        # read once, before any code runs: a submission's code cannot rewrite what the copy flags judge
        sources = {key: similarity.submission_sources(os.path.join(folder, key)) for key in hashes}
        # here, in one thread: CPython's ast is not safe to use from threads at once ("AST constructor recursion
        # depth mismatch" with -j 2), and the flags depend on the sources only
        flagged = {s.key: copies.reference_flags(sources[s.key], assignment) for s in todo}
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(one, todo))
        if progress is not None:
            progress.write("\n")
    finally:
        grader.close()
        shutil.rmtree(folder, ignore_errors=True)
    labels = {s.key: s.label for s in students}
    pairs = similarity.pairwise(sources, base=student_version(assignment.reference))
    _write_similarity(out, [(labels[a], labels[b], score) for a, b, score in pairs], progress)
    near = similarity.pair_flags(sources, base=similarity.handout(assignment))   # classmates: in gradebook.csv too
    rows = _rows(out, students, grader.checks, near)
    _write_gradebook(out, rows, grader.checks)
    return Gradebook(rows, counts)


def _record(out, key):
    """A student's grade.json read back, or None."""
    try:
        with open(os.path.join(out, "students", key, "grade.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _graded(record):
    return record is not None and record.get("status") == "graded"


def _about(student):
    """What grade.json records of the submission as handed in."""
    return {"student": student.name, "id": student.id, "graded_file": student.graded_file, "late": student.late,
            "ignored": student.ignored}


def _write_not_graded(out, student, reason, seed, status=NOT_GRADED):
    """Mark a student not graded (or refused), with the reason for the instructor; a resumed run tries again."""
    try:
        folder = os.path.join(out, "students", student.key)
        os.makedirs(folder, exist_ok=True)
        for stale in ("results.json", "report.txt"):   # a report of an earlier run is not this run's
            if os.path.exists(os.path.join(folder, stale)):
                os.unlink(os.path.join(folder, stale))
        write_atomic(os.path.join(folder, "grade.json"), json.dumps(
            dict(_about(student), seed=seed, status=status, reason=reason), indent=2) + "\n")
    except OSError:   # the disk that failed the grading may fail this too: no grade.json is "not graded" too
        pass


def _write_student(out, student, results, flags, seed, isolation, digest):
    folder = os.path.join(out, "students", student.key)
    os.makedirs(folder, exist_ok=True)
    write_atomic(os.path.join(folder, "results.json"), json.dumps(gradescope(results), indent=2) + "\n")
    write_atomic(os.path.join(folder, "report.txt"), table(results, flags) + "\n")
    write_atomic(os.path.join(folder, "grade.json"), json.dumps(
        dict(_about(student), seed=seed, status="graded", isolation=isolation, hash=digest, results=results,
             flags=flags), indent=2) + "\n")   # last: "graded"


def _rows(out, students, checks, near=None):
    """The gradebook's rows; ``near``: {student key: [flag]} of near-identical classmates (similarity.pair_flags)."""
    rows = []
    for student in students:
        graded = _record(out, student.key) or {"status": NOT_GRADED, "reason": "no grade.json could be written"}
        if student.refused:
            graded = {"status": REFUSED, "reason": student.refused}
        row = {"student": student.name, "max": sum(c.points for c in checks)}
        if graded.get("status") != "graded":
            row.update({"status": f"{graded['status']}: {graded['reason']}", "total": "", "isolation": "",
                        "flags": ""})
            row.update({c.name: "" for c in checks})
        else:
            scores = {r["name"]: r["score"] for r in graded["results"]}
            row.update({c.name: scores.get(c.name, 0) for c in checks})
            row["status"] = "graded"
            row["total"] = sum(scores.get(c.name, 0) for c in checks)
            row["isolation"] = graded.get("isolation") or ""
            row["flags"] = "; ".join(graded.get("flags", []) + [f for r in graded["results"] for f in r.get("flags", [])]
                                     + (near or {}).get(student.key, []))
        row.update({"id": student.id, "graded_file": student.graded_file,
                    "late": "LATE" if student.late else "", "ignored": "; ".join(student.ignored)})
        rows.append(row)
    return rows


def _write_csv(path, header, rows):
    """A CSV a spreadsheet reads as text (escape.csv_cell); names keep their bytes (surrogateescape)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell(f"{v:g}" if isinstance(v, float) else v) for v in row])
    with atomic_write(path, "wb") as f:
        f.write(text.getvalue().encode("utf-8", "surrogateescape"))


def _write_gradebook(out, rows, checks):
    header = ["student", "status"] + [c.name for c in checks] + ["total", "max", "isolation", "flags", "id",
                                                                  "graded_file", "late", "ignored"]
    _write_csv(os.path.join(out, "gradebook.csv"), header, [[row[k] for k in header] for row in rows])


def _write_similarity(out, pairs, progress, top=5):
    _write_csv(os.path.join(out, "similarity.csv"), ["student_a", "student_b", "similarity"],
               [[a, b, f"{score:.3f}"] for a, b, score in pairs])
    if progress is not None and pairs:
        progress.write("most similar pairs (a flag to look at, not a verdict):\n")
        for a, b, score in pairs[:top]:
            progress.write(f"  {score:.2f}  {printable(a)}  {printable(b)}\n")
