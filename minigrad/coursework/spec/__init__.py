"""The assignment, as authoring and grading both read it (below both: it imports neither).

    assignment.py   Assignment and Check: checks.json read, validated and every setting filled in, once
    hints.py        a check's hints, in levels, and the policy that says how many a student sees
"""
