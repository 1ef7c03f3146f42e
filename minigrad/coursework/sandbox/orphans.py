"""Folders a killed grader left behind, removed by the next one.

A Worker makes its two folders (``minigrad-grader-PID-*``: the log; ``minigrad-worker-PID-*``: the copy of the
submission) and then starts its supervisor, which removes them when the worker ends, also once the grader is
gone.  A grader killed (kill -9) between the two leaves folders nobody owns: each new Worker removes those.
"""
import os
import shutil
import tempfile


def remove_orphans():
    """Remove the folders of graders that were killed (kill -9) after making a worker's folders and before
    its supervisor started, the one process that removes them once the grader is gone: the folders
    ``minigrad-grader-PID-*`` and ``minigrad-worker-PID-*`` in TMPDIR whose grader PID no longer runs."""
    folder = tempfile.gettempdir()
    for name in os.listdir(folder):
        parts = name.split("-")
        if len(parts) != 4 or parts[0] != "minigrad" or parts[1] not in ("grader", "worker") or not parts[2].isdigit():
            continue
        try:
            os.kill(int(parts[2]), 0)
        except ProcessLookupError:                  # its grader is gone
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
        except PermissionError:                     # another user's grader, running
            pass
