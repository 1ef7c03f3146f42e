"""Coursework: assignments made from reference solutions, and a grader that explains.

    minigrad assignment list                      the shipped assignments
    minigrad assignment make rnn hw2/             the student version of one
    minigrad check hw2/rnn.py --assignment rnn    grade a submission
    minigrad grade submissions/ --assignment rnn --out grades/     grade a class

Grouped by job (see README.md in this folder, "For instructors", and each subpackage's docstring):

    spec/           an assignment: checks.json loaded and validated, its hints (authoring and grading share it)
    authoring/      the student version of an assignment, the scaffold of a new one
    grading/        a submission graded: cases, outcomes, diagnoses, reports, the gradebook, copy flags, Gradescope
    sandbox/        where a submission's code runs: the worker, its supervisor, the wire protocol, isolation
    assignments/    the seven shipped practice sets (data: reference, checks.json, README, public tests)
"""
from .spec.assignment import Assignment, Check, SpecError, list_assignments, load_assignment
from .authoring.make import make_assignment, strip_solutions
from .grading.grader import Grader, grade
from .grading.report import gradescope, table
from .grading.testing import check_backward

__all__ = ["Assignment", "Check", "Grader", "SpecError", "check_backward", "grade", "gradescope", "list_assignments",
           "load_assignment", "make_assignment", "strip_solutions", "table"]
