"""A Gradescope autograder for an assignment: ``minigrad assignment autograder rnn autograder.zip``.

The zip holds everything; setup needs nothing but pip's registry, for NumPy:

    setup.sh          makes a virtual environment (ROOT/venv: an "externally managed" system Python is
                      fine) with the image's python3 (3.10 to 3.13) and installs NumPy into it, the newest
                      release of NUMPY_RANGE for that Python; minigrad itself is not installed from any
                      index (PyPI's "minigrad" is another project): run_autograder runs the copy in lib/
    run_autograder    grades /autograder/submission, writes /autograder/results/results.json
    lib/minigrad/     this very minigrad's source: the grader, and the library the checks use
    assignment/       the assignment folder (reference, checks.json): kept from the students' code
    config.json       the assignment, the grading seed (drawn when the zip is made), minigrad's version

Gradescope unpacks the zip into /autograder/source and runs run_autograder as
root; the workers then run as uids of their own (sandbox/control.py), and
run_autograder first makes source/assignment readable by root only.  The root
folder is /autograder unless MINIGRAD_AUTOGRADER_ROOT says otherwise (the
tests unpack the zip into a temporary tree laid out the same way).
"""
import json
import os
import stat
import sys
import zipfile

import numpy

from ..spec.assignment import load_assignment, minigrad_version
from .cases import grading_seed
from .grader import Grader, find_submission
from .report import gradescope, write_atomic
from .copies import reference_flags
from .similarity import submission_sources

NUMPY_RANGE = "numpy>=1.24,<3"   # pyproject.toml's lower bound; pip picks the newest one for the image's Python

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the image (any Python 3.10 to 3.13).
# NumPy goes into a virtual environment of its own, so an "externally managed" Python (Ubuntu 24.04) is fine.
# minigrad is NOT installed from an index (PyPI's "minigrad" is someone else's): run_autograder runs lib/minigrad.
set -e
ROOT="${{MINIGRAD_AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{MINIGRAD_PYTHON:-python3}}"
if ! "$PYTHON" -m venv --clear "$ROOT/venv" >/dev/null 2>&1; then   # Debian/Ubuntu: venv is a package of its own
    apt-get update -qq && apt-get install -y -qq python3-venv
    "$PYTHON" -m venv --clear "$ROOT/venv"
fi
"$ROOT/venv/bin/python" -m pip install --quiet "{numpy_range}"
"$ROOT/venv/bin/python" -c "import numpy; print('NumPy', numpy.__version__, 'for this autograder')"
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for every submission, as root.
set -e
ROOT="${MINIGRAD_AUTOGRADER_ROOT:-/autograder}"
chmod 755 "$ROOT/source" "$ROOT/source/lib"
chmod -R go-rwx "$ROOT/source/assignment" "$ROOT/source/config.json"   # reference and seed: not the workers'

mkdir -p "$ROOT/results"
PYTHON="$ROOT/venv/bin/python"
[ -x "$PYTHON" ] || PYTHON=python3      # setup.sh not run (a test): the image's own
"$PYTHON" -I -c "import sys; sys.path.insert(0, '$ROOT/source/lib'); \\
from minigrad.coursework.grading.autograder import run; sys.exit(run('$ROOT'))"
"""


def _add_tree(archive, folder, prefix):
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, name)
            archive.write(path, os.path.join(prefix, os.path.relpath(path, folder)))


def _add_text(archive, name, text, executable=False):
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    archive.writestr(info, text)


def build(assignment, out, seed=None):
    """Write the autograder zip for ``assignment`` to ``out``; returns the seed it grades with."""
    assignment = load_assignment(assignment)
    seed = grading_seed(seed)
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # minigrad/
    config = {"assignment": assignment.name, "seed": seed, "minigrad": minigrad_version(),
              "numpy": numpy.__version__}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        _add_text(archive, "setup.sh", SETUP.format(numpy_range=NUMPY_RANGE), executable=True)
        _add_text(archive, "run_autograder", RUN, executable=True)
        _add_text(archive, "config.json", json.dumps(config, indent=2) + "\n")
        _add_tree(archive, package, "lib/minigrad")
        _add_tree(archive, assignment.path, "assignment")
    return seed


def run(root="/autograder"):
    """Grade root/submission with root/source's assignment and seed; write root/results/results.json."""
    source = os.path.join(root, "source")
    results_path = os.path.join(root, "results", "results.json")
    try:
        with open(os.path.join(source, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        with Grader(os.path.join(source, "assignment"), seed=config["seed"],
                    hide=[source, os.path.join(root, "results")]) as grader:
            folder, module = find_submission(os.path.join(root, "submission"), grader.assignment.module)
            # read before the submission runs (its code could rewrite its files): every .py file of it
            sources = submission_sources(folder)
            flags = reference_flags(sources, grader.assignment) if sources else []
            results = grader.grade(os.path.join(root, "submission"))
        data = gradescope(results, flags)
    except Exception as error:   # the grader's own failure: say so, instead of an empty page
        data = {"score": 0, "output": f"the autograder failed ({type(error).__name__}: {error}); "
                                      "this is not your submission's fault: tell the course staff"}
        write_atomic(results_path, json.dumps(data, indent=2) + "\n")
        return 1
    write_atomic(results_path, json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1] if len(sys.argv) > 1 else "/autograder"))
