"""The sandbox: where a submission's code runs, and the grader's side of talking to it.

    control.py      start, talk to and end a worker (Worker, Limits)
    machine.py      what this machine allows a worker: its isolation (isolation()), its uid, its environment
    supervisor.py   the worker's parent process: enters the namespaces, reports the exit, kills what is left
    worker.py       the only process that runs a submission's code; it computes, the grader judges
    protocol.py     the wire format between them: a JSON header, then raw array bytes (no pickle)
    isolation.py    the worker's private view of the machine (namespaces, mounts)

supervisor.py and worker.py run as scripts of their own (``python -I -S -B``) and load
protocol.py and isolation.py by path from this folder: they import nothing of the package.
"""
from .control import (Failure, Limits, NotGraded, Worker, WorkerFailed, check_installation, copy_submission,
                      unreadable_problem)
from .machine import ISOLATION, isolation

__all__ = ["ISOLATION", "Failure", "Limits", "NotGraded", "Worker", "WorkerFailed", "check_installation",
           "copy_submission", "isolation", "unreadable_problem"]
