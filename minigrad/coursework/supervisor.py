"""The worker's parent: starts it, outlives it, and leaves no process of it behind.

    python -I -S supervisor.py CONFIG_JSON        (started by sandbox.py; standard library only)

Why a process between the grader and the worker:
    - ``os.getppid()`` in the worker names this process, not the grader: a
      submission that kills its parent kills the supervisor, and the grader
      reads that as this student's failure and carries on;
    - it is a "child subreaper" (Linux prctl PR_SET_CHILD_SUBREAPER): whatever
      the worker starts and orphans, even after setsid and a double fork, is
      re-parented here instead of to init, so it can still be found and killed.

It starts the worker in a new session, reports the worker's pid, and
waits until the worker exits or the grader closes the control pipe ("done").
Then it kills the worker's session and every process below itself (and, when
the worker runs as a uid of its own, every process of that uid), reaps them,
checks that none is left, reports the worker's exit status and "clean" (or
the pids left) and exits.
"""
import ctypes
import json
import os
import select
import signal
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):   # not Linux: the session kill is all there is
        pass


def processes():
    """{pid: (parent pid, session id, real uid)} of every live (not zombie) process /proc shows."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{name}/status", "rb") as f:
                uid = next(int(line.split()[1]) for line in f if line.startswith(b"Uid:"))
        except (OSError, StopIteration, IndexError, ValueError):
            continue   # it ended while we looked
        if fields[0] not in (b"Z", b"X"):   # a zombie runs nothing: it waits for its parent to reap it
            found[int(name)] = (int(fields[1]), int(fields[3]), uid)
    return found


def belongs(pid, table, me, session, uid):
    """Whether ``pid`` is the worker's: in its session, of its uid, or below this process."""
    parent, sid, owner = table[pid]
    if pid == me:
        return False
    if sid == session or (uid is not None and owner == uid):
        return True
    seen = set()
    while parent and parent not in seen:
        if parent == me:
            return True
        seen.add(parent)
        parent = table.get(parent, (0,))[0]
    return False


def leftovers(me, session, uid):
    table = processes()
    return [pid for pid in table if belongs(pid, table, me, session, uid)]


def kill_all(me, session, uid, rounds=200):
    """SIGKILL the worker's processes until a scan finds none (new ones are capped by RLIMIT_NPROC)."""
    for _ in range(rounds):
        try:
            os.killpg(session, signal.SIGKILL)
        except OSError:
            pass
        left = leftovers(me, session, uid)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:   # reap our children (the worker, and the orphans re-parented to us)
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not left and not leftovers(me, session, uid):
            return []
    return leftovers(me, session, uid)


def main(config):
    """fd 0 and 1: the protocol pipes, handed to the worker; fd "control": the grader closes it when done;
    fd "status": where the worker's pid, then "clean" (or the pids left), go back to the grader."""
    become_subreaper()
    with open(config["log"], "ab") as log:
        worker = subprocess.Popen(config["command"], cwd=config["workdir"], env=config["env"], stdin=0, stdout=1,
                                  stderr=log, start_new_session=True)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)   # only the worker holds the protocol pipes: its end is the grader's end-of-file
    os.dup2(null, 1)
    os.write(config["status"], f"{worker.pid}\n".encode())
    while worker.poll() is None:
        ready, _, _ = select.select([config["control"]], [], [], 0.05)
        if ready and not os.read(config["control"], 64):
            break      # the grader is done with the worker (or is gone)
    code = worker.poll()   # None: still running when the grader said done
    left = kill_all(os.getpid(), worker.pid, config.get("uid"))
    os.write(config["status"], f"exit {code}\n".encode())
    os.write(config["status"], (("clean" if not left else "left " + " ".join(map(str, left))) + "\n").encode())


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
