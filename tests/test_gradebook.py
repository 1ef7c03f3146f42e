"""minigrad grade: a class folder in, a gradebook and reports out; resumable; instructor mistakes say so."""
import csv
import json
import os
import shutil

from minigrad.cli import main
from minigrad.coursework import make_assignment

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")


def make_class(tmp_path):
    reference = open(os.path.join(FIXTURE, "tinyrnn.py")).read()
    submissions = tmp_path / "class"
    for name, text in (("alice", reference), ("bob", reference.replace("dh[:, t] + dh_prev", "dh[:, t]"))):
        (submissions / name).mkdir(parents=True)
        (submissions / name / "tinyrnn.py").write_text(text)
    make_assignment(FIXTURE, submissions / "carol")               # handed in the stubs
    (submissions / "eve").mkdir()                                 # kills its parent, then crashes
    (submissions / "eve" / "tinyrnn.py").write_text(
        "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError:\n    pass\n"
        "os.abort()\n" + reference)
    (submissions / "notes.txt").write_text("not a student")
    return submissions


def read_gradebook(out):
    with open(out / "gradebook.csv") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def test_grade_writes_a_gradebook_reports_and_resumes(tmp_path, capsys):
    submissions, out = make_class(tmp_path), tmp_path / "grades"
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(out), "-j", "2", "--seed", "3"]) == 0
    book = read_gradebook(out)
    assert {n: (r["step"], r["sequence"], r["total"], r["max"]) for n, r in book.items()} == {
        "alice": ("2", "3", "5", "5"), "bob": ("2", "1", "3", "5"), "carol": ("0", "0", "0", "5"),
        "eve": ("0", "0", "0", "5")}
    err = capsys.readouterr().err
    assert "[4/4]" in err
    for name in book:
        folder = out / "students" / name
        assert json.loads((folder / "results.json").read_text())["score"] == float(book[name]["total"])
        assert "score:" in (folder / "report.txt").read_text()
    assert json.loads((out / "grading.json").read_text())["seed"] == 3
    assert (out / "similarity.csv").read_text().startswith("student_a,student_b,similarity")
    assert not any(p.name.endswith((".json", ".csv")) for p in submissions.rglob("*"))   # nothing inside submissions

    graded = {n: os.stat(out / "students" / n / "grade.json").st_mtime_ns for n in book}
    shutil.copytree(submissions / "alice", submissions / "dave")
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(out)]) == 0   # resumes: seed 3
    assert {n: os.stat(out / "students" / n / "grade.json").st_mtime_ns for n in book} == graded
    assert read_gradebook(out)["dave"]["total"] == "5"
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(out), "--regrade",
                 "--only", "step"]) == 0
    book = read_gradebook(out)
    assert list(book["bob"]) == ["student", "status", "step", "total", "max", "isolation", "flags", "id",
                                "graded_file", "late", "ignored"] and book["bob"]["total"] == "2"
    assert all(os.stat(out / "students" / n / "grade.json").st_mtime_ns != graded[n] for n in graded)


def test_an_unknown_check_lists_the_valid_names(tmp_path, capsys):
    submissions = make_class(tmp_path)
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(tmp_path / "o"),
                 "--only", "stpe"]) == 2
    assert "no check named 'stpe': the checks are step, sequence" in capsys.readouterr().err
    assert main(["check", str(submissions / "alice"), "--assignment", FIXTURE, "--only", "stpe"]) == 2
    assert not (tmp_path / "o" / "gradebook.csv").exists()


def test_a_typo_in_checks_json_is_the_instructors_error(tmp_path, capsys):
    assignment = tmp_path / "hw"
    shutil.copytree(FIXTURE, assignment)
    spec = json.loads((assignment / "checks.json").read_text())
    spec["checks"][1]["ponits"] = spec["checks"][1].pop("points")
    spec["checks"][0]["inputs"][0]["shape"] = ["N", "DD"]
    spec["checks"][0]["seed"] = 201                        # an older file: seeds are no longer shipped
    (assignment / "checks.json").write_text(json.dumps(spec))
    submissions = make_class(tmp_path)
    assert main(["grade", str(submissions), "--assignment", str(assignment), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert str(assignment / "checks.json") in err
    assert "checks[1] (sequence): unknown field 'ponits'" in err
    assert "checks[0] (step).inputs[0] (x).shape: 'DD' is not given in every case" in err
    assert "checks[0] (step).seed: no longer read" in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").rglob("report.txt"))


def test_the_out_folder_must_be_outside_the_submissions(tmp_path, capsys):
    submissions = make_class(tmp_path)
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(submissions / "grades")]) == 2
    assert "must be outside the submissions folder" in capsys.readouterr().err


def test_a_failing_reference_is_the_instructors_error(tmp_path, capsys):
    assignment = tmp_path / "hw"
    shutil.copytree(FIXTURE, assignment)
    reference = (assignment / "tinyrnn.py").read_text()
    (assignment / "tinyrnn.py").write_text(reference.replace("    h = np.tanh(", "    h = np.tahn("))
    submissions = make_class(tmp_path)
    assert main(["grade", str(submissions), "--assignment", str(assignment), "--out", str(tmp_path / "o")]) == 2
    assert "the reference solution of tinyrnn" in capsys.readouterr().err
    assert not any((tmp_path / "o").rglob("report.txt"))


def test_a_grader_side_failure_is_not_graded_and_a_resumed_run_grades_it(tmp_path, monkeypatch, capsys):
    """A full disk (or any error of the grader's own) is never a grade: "not graded", exit 1, graded next run."""
    from minigrad.coursework.grading.grader import Grader
    submissions, out = make_class(tmp_path), tmp_path / "grades"
    grade = Grader.grade

    def grade_or_fail(self, folder, *args, **kwargs):   # the grader's disk is full while bob is graded
        if os.path.basename(folder) == "bob":
            raise OSError(28, "No space left on device")
        return grade(self, folder, *args, **kwargs)

    monkeypatch.setattr(Grader, "grade", grade_or_fail)
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(out), "--seed", "3"]) == 1
    book = read_gradebook(out)
    assert book["bob"]["status"].startswith("not graded: ") and "No space left on device" in book["bob"]["status"]
    assert book["bob"]["total"] == "" and book["alice"]["total"] == "5" and book["alice"]["status"] == "graded"
    printed = capsys.readouterr()
    assert "3 graded, 0 already graded (skipped), 1 not graded" in printed.out
    assert "bob: not graded: " in printed.err
    monkeypatch.undo()                                   # room again: the resumed run grades bob, and only bob
    assert main(["grade", str(submissions), "--assignment", FIXTURE, "--out", str(out)]) == 0
    assert read_gradebook(out)["bob"]["total"] == "3"
    assert "1 graded, 3 already graded (skipped), 0 not graded" in capsys.readouterr().out
