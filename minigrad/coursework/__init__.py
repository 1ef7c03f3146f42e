"""Coursework: assignments made from reference solutions, and a grader that explains.

    minigrad assignment list                      the shipped assignments
    minigrad assignment make rnn hw2/             the student version of one
    minigrad check hw2/rnn.py --assignment rnn    grade a submission
    minigrad grade submissions/ --assignment rnn --out grades/     grade a class

See README.md in this folder, "For instructors".
"""
from .assignment import Assignment, SpecError, list_assignments, load_assignment
from .grader import Grader, grade
from .make import make_assignment, strip_solutions
from .report import gradescope, table
from .testing import check_backward

__all__ = ["Assignment", "Grader", "SpecError", "check_backward", "grade", "gradescope", "list_assignments",
           "load_assignment", "make_assignment", "strip_solutions", "table"]
