"""Authoring: an assignment, from its folder to what students and Gradescope receive.

    assignment.py   Assignment and Check: checks.json read, validated and every setting filled in, once
    make.py         the student version of an assignment, made from its reference solution
    scaffold/       ``minigrad assignment new``: the folder of a private assignment, ready to edit
    autograder.py   a Gradescope autograder zip for an assignment

The shipped assignments themselves are data: minigrad/coursework/assignments/.
"""
