"""The sandbox: where a submission's code runs, and the grader's side of talking to it.

    control.py      start, talk to and end a worker (Worker, Limits, isolation()); the uid it runs as
    supervisor.py   the worker's parent process: enters the namespaces, reports the exit, kills what is left
    worker.py       the only process that runs a submission's code; it computes, the grader judges
    protocol.py     the wire format between them: a JSON header, then raw array bytes (no pickle)
    isolation.py    the worker's private view of the machine (namespaces, mounts)
    installation.py whether the worker can read the Python that runs it (else the run refuses to start)

supervisor.py and worker.py run as scripts of their own (``python -I -S -B``) and load
protocol.py and isolation.py by path from this folder: they import nothing of the package.
"""
from .control import ISOLATION, Failure, Limits, NotGraded, Worker, WorkerFailed, copy_submission, isolation
from .installation import check_installation, unreadable_problem

__all__ = ["ISOLATION", "Failure", "Limits", "NotGraded", "Worker", "WorkerFailed", "check_installation",
           "copy_submission", "isolation", "unreadable_problem"]
