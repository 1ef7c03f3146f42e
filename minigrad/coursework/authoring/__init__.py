"""Authoring: an assignment, from its folder to what students and Gradescope receive.

    make.py         the student version of an assignment, made from its reference solution
    scaffold/       ``minigrad assignment new``: the folder of a private assignment, ready to edit

The assignment itself (checks.json loaded) is ../spec/, below both authoring and grading;
the Gradescope autograder, which runs the grader, is ../grading/autograder.py.

The shipped assignments themselves are data: minigrad/coursework/assignments/.
"""
