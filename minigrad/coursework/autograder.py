"""A Gradescope autograder for an assignment: ``minigrad assignment autograder rnn autograder.zip``.

The zip holds everything; setup needs nothing but pip's registry, for NumPy:

    setup.sh          installs the NumPy version this zip was made with (pip), if another is there
    run_autograder    grades /autograder/submission, writes /autograder/results/results.json
    lib/minigrad/     this very minigrad's source: the grader, and the library the checks use
    assignment/       the assignment folder (reference, checks.json): kept from the students' code
    config.json       the assignment, the grading seed (drawn when the zip is made), minigrad's version

Gradescope unpacks the zip into /autograder/source and runs run_autograder as
root; the workers then run as uids of their own (sandbox.py), and
run_autograder first makes source/assignment readable by root only.  The root
folder is /autograder unless MINIGRAD_AUTOGRADER_ROOT says otherwise (the
tests unpack the zip into a temporary tree laid out the same way).
"""
import json
import os
import stat
import sys
import zipfile

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the image.
set -e
python3 -m pip install --quiet "numpy=={numpy}"
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for every submission, as root.
set -e
ROOT="${MINIGRAD_AUTOGRADER_ROOT:-/autograder}"
chmod 755 "$ROOT/source" "$ROOT/source/lib"
chmod -R go-rwx "$ROOT/source/assignment" "$ROOT/source/config.json"   # reference and seed: not the workers'

mkdir -p "$ROOT/results"
PYTHONPATH="$ROOT/source/lib" python3 -I -c "import sys; sys.path.insert(0, '$ROOT/source/lib'); \\
from minigrad.coursework.autograder import run; sys.exit(run('$ROOT'))"
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


def minigrad_version():
    """minigrad/__init__.py's __version__: the one source (the distribution, minigrad-seq, reads it too)."""
    from minigrad import __version__
    return __version__


def build(assignment, out, seed=None):
    """Write the autograder zip for ``assignment`` to ``out``; returns the seed it grades with."""
    import numpy
    import minigrad
    from .assignment import load_assignment
    from .cases import grading_seed
    assignment = load_assignment(assignment)
    seed = grading_seed(seed)
    package = os.path.dirname(os.path.abspath(minigrad.__file__))
    config = {"assignment": assignment.name, "seed": seed, "minigrad": minigrad_version(),
              "numpy": numpy.__version__}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        _add_text(archive, "setup.sh", SETUP.format(numpy=numpy.__version__), executable=True)
        _add_text(archive, "run_autograder", RUN, executable=True)
        _add_text(archive, "config.json", json.dumps(config, indent=2) + "\n")
        _add_tree(archive, package, "lib/minigrad")
        _add_tree(archive, assignment.path, "assignment")
    return seed


def run(root="/autograder"):
    """Grade root/submission with root/source's assignment and seed; write root/results/results.json."""
    from .assignment import find_submission
    from .grader import Grader
    from .report import gradescope, write_atomic
    from .similarity import reference_flags
    source = os.path.join(root, "source")
    results_path = os.path.join(root, "results", "results.json")
    try:
        with open(os.path.join(source, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        with Grader(os.path.join(source, "assignment"), seed=config["seed"],
                    hide=[source, os.path.join(root, "results")]) as grader:
            folder, module = find_submission(os.path.join(root, "submission"), grader.assignment)
            try:   # read before the submission runs: its code could rewrite its own file
                with open(os.path.join(folder, module), encoding="utf-8", errors="replace") as f:
                    flags = reference_flags(f.read(), grader.assignment)
            except OSError:   # no file: the checks say so
                flags = []
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
