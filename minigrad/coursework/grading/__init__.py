"""Grading: from a submission to its points, its diagnosis and its report.

    grader.py       Grader: each check's forward, then backward, then timing part; the result per check
    outcome.py      Outcome (Status, Part, message, Worst, flags): what happened to a check, as data
    timing.py       the timing case: values at a larger size, CPU seconds against an honest loop and finite diffs
    cases.py        the inputs a grading run draws, and the reference's answers to them
    diagnostics.py  how a result is wrong (dtype, shape, transpose, a constant factor, the loop over time)
    report.py       a result in words: the student's table, Gradescope's results.json
    gradebook.py    a class: one folder per student in, a gradebook and reports out
    roster.py       who handed in which files (folders, a Canvas or Moodle export); what is refused, and why
    escape.py       student text made inert: control characters for terminals, formulas for spreadsheets
    similarity.py   copy flags between students (MOSS's winnowing), for a person to look at
    copies.py       copy flags against the references and minigrad (token runs beyond what the handout says)
    code_tokens.py  the tokens both compare: a syntax tree as tokens, the same on every Python (statements)
    expression_tokens.py   ... its expressions
    text_tokens.py  ... and text that does not parse, in the same tokens
    testing.py      check_backward: the grader's gradient check, for an assignment's public tests
    autograder.py   a Gradescope autograder zip for an assignment, and what runs in it

The assignment and its hints, which authoring shares, are ../spec/ (below both).
The modules are imported by name (``from minigrad.coursework.grading.grader import Grader``);
``minigrad.coursework`` exports what a course needs.
"""
