"""Coursework: assignments made from reference solutions, and a grader that explains.

    minigrad assignment list                      the shipped assignments
    minigrad assignment make rnn hw2/             the student version of one
    minigrad check hw2/rnn.py --assignment rnn    grade a submission

See README.md in this folder, "For instructors".
"""
from .grader import Assignment, grade, gradescope, list_assignments, load_assignment, table
from .make import make_assignment, strip_solutions
from .testing import check_backward

__all__ = ["Assignment", "check_backward", "grade", "gradescope", "list_assignments", "load_assignment",
           "make_assignment", "strip_solutions", "table"]
