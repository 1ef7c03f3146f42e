"""Can the worker read the Python that runs it?  Checked once per grading process, before any student.

As root the worker runs as a uid of its own, which must read Python's installation (its prefix, NumPy,
minigrad) to import anything it had not loaded before switching.  With a mount namespace isolation.py mounts
the installation at its own path in the worker's view, so it can (a Python under /root, mode 0700, too).
Without one (``uid``: root in a container without namespaces) an installation closed to other users would
fail every import a student adds (``import xml.dom.minidom``: "No module named 'xml'") as if the student's
code were wrong: ``check_installation`` refuses the run instead, saying how to fix it.  A normal user's
worker reads what that user reads: nothing to check.
"""
import functools
import os
import shutil
import tempfile

from .control import Worker, isolation


def unreadable_problem(uid, paths):
    """Why a run cannot start: the worker's uid cannot read the Python that runs it, and no mount namespace
    can show it (as root without namespaces, with Python under /root, 0700); and the fix."""
    return (f"the grader runs as root and each submission as uid {uid}, which cannot read "
            f"{', '.join(paths)}, and this machine allows no mount namespace to show it to the worker: a "
            "submission could import only the modules the worker loaded before switching, and a student would "
            "lose points to the grader's limit.  Not grading.  Let other users read the Python installation "
            "(e.g. chmod o+x on the folders above it), install it outside /root, grade as a normal user, or "
            "grade where namespaces are allowed (a container run with --privileged, or a Linux host)")


@functools.lru_cache(maxsize=None)
def _installation_problem(mode):
    """unreadable_problem(...) for a worker of ``mode``, or "": found once per mode by starting one worker."""
    folder = tempfile.mkdtemp(prefix="minigrad-probe-")
    try:
        open(os.path.join(folder, "probe.py"), "w").close()
        with Worker(folder, "probe.py") as worker:
            return unreadable_problem(worker.uid, worker.unreadable) if worker.unreadable else ""
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check_installation():
    """Raise PermissionError, saying the fix, where a worker cannot read Python's installation (only as root:
    a normal user's worker reads what the grader reads; with a mount namespace it is mounted in its view)."""
    problem = _installation_problem(isolation()[0]) if hasattr(os, "geteuid") and os.geteuid() == 0 else ""
    if problem:
        raise PermissionError(problem)
