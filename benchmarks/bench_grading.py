"""Grading suite: how long the grader takes, start to finish, wall clock (workers are processes).

reference, per assignment   ``grade(reference, assignment)`` for each shipped assignment, the
                            reference as a student hands it in (library code inlined): the reference
                            worker, the student's worker (fresh interpreters), every check with its
                            timing case (the backward at a larger size); goal <= 2 s each on one core
class of 200, -j 2          ``grade_folder`` on 200 student folders of the rnn assignment (half the
                            reference, half with a bug), two students at a time; goal <= 5 min
                            (--quick: 20 students, and the time scaled to 200 in the note)
No PyTorch column; always wall-clock time (run.py's --clock cpu would see only the grader's thread).
"""
import os
import shutil
import tempfile
import time

from minigrad.coursework import grade, list_assignments, load_assignment
from minigrad.coursework.grading.gradebook import grade_folder
from minigrad.coursework.authoring.make import student_version


def _wall(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _class(folder, students):
    assignment = load_assignment("rnn")
    reference = student_version(assignment.reference, solutions=True)
    buggy = reference.replace("(1 - ", "(2 - ", 1)          # a wrong derivative somewhere in the backward
    for number in range(students):
        student = os.path.join(folder, f"student{number:03d}")
        os.makedirs(student)
        with open(os.path.join(student, assignment.module), "w", encoding="utf-8") as f:
            f.write(reference if number % 2 == 0 else buggy)


def run(quick):
    rows = []
    for assignment in list_assignments():
        folder = tempfile.mkdtemp(prefix="minigrad-bench-reference-")
        path = os.path.join(folder, assignment.module)
        with open(path, "w", encoding="utf-8") as f:
            f.write(student_version(assignment.reference, solutions=True))
        try:
            seconds = _wall(lambda: grade(path, assignment, seed=1), 1 if quick else 3)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rows.append({"case": f"grade the {assignment.name} reference ({len(assignment.checks)} checks)",
                     "minigrad_s": seconds, "torch_s": None, "note": "goal <= 2 s"})
    students = 20 if quick else 200
    folder = tempfile.mkdtemp(prefix="minigrad-bench-class-")
    try:
        _class(os.path.join(folder, "class"), students)
        start = time.perf_counter()
        grade_folder(os.path.join(folder, "class"), "rnn", os.path.join(folder, "grades"), jobs=2, seed=1,
                     progress=None)
        seconds = time.perf_counter() - start
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    note = "goal <= 300 s" + (f"; {seconds * 200 / students:.0f} s scaled to 200" if students != 200 else "")
    rows.append({"case": f"grade a class of {students} (rnn), -j 2", "minigrad_s": seconds, "torch_s": None,
                 "note": note})
    return rows
