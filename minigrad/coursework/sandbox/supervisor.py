"""The worker's parent: starts it, outlives it, and leaves no process of it behind.

    python -I -S supervisor.py FD        (started by control.py; standard library only; the config, JSON,
                                          is read from the pipe FD, never from the command line)

Why a process between the grader and the worker:
    - ``os.getppid()`` in the worker names this process, not the grader: a
      submission that kills its parent kills the supervisor, and the grader
      reads that as this student's failure and carries on;
    - it is a "child subreaper" (Linux prctl PR_SET_CHILD_SUBREAPER): whatever
      the worker starts and orphans, even after setsid and a double fork, is
      re-parented here instead of to init, so it can still be found and killed.

Isolation (config "isolation", chosen by sandbox.isolation()): with
"namespaces" or "user-namespaces" it first enters new pid, network, IPC and
UTS namespaces (isolation.py), so the worker is pid 1 of a namespace of its
own; with "uid" or "none" (no namespaces allowed) it watches the disk the
worker uses instead (its folder and, with a uid of its own, what that uid owns
in /tmp, /var/tmp and /dev/shm), kills a worker over ``scratch_mb``, and
removes what that uid left there.

It starts the worker in a new session, hands it its config on a pipe, reports
the worker's pid, and waits until the worker exits or the grader closes the
control pipe ("done").
Then it kills the worker's session and every process below itself (and, when
the worker runs as a uid of its own, every process of that uid), reaps them,
checks that none is left, reports the worker's exit status and CPU seconds
("exit CODE CPU", or "exit disk") and "clean" (or the pids left), removes the worker's folder (and, when
the grader is gone, its log's folder too: nothing of a submission outlives a killed grader) and exits.
"""
import ctypes
import importlib.util
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")
DISK_CHECK_S = 0.2


def _load(name):
    """A module of this folder by its path (python -I puts no folder of ours on sys.path)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("minigrad_sandbox_" + name, os.path.join(here, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def _owned(folder, uid, found):
    """Paths under ``folder`` owned by ``uid`` (not following links): files and folders.  Only world-writable
    folders are searched further: nowhere else can that uid have created anything (outside its own folders)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            found.append((entry.path, info))
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH:
            _owned(entry.path, uid, found)
    return found


def disk_used(workdir, uid):
    """Bytes the worker has written: its folder, and (with a uid of its own) all its uid owns in /tmp & co."""
    total = 0
    for root, _, files in os.walk(workdir):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    if uid is not None:
        for top in WORLD_WRITABLE:
            for path, info in _owned(top, uid, []):
                total += info.st_blocks * 512
                if stat.S_ISDIR(info.st_mode):
                    total += disk_used(path, None)
    return total


def remove_owned(uid):
    """Remove everything ``uid`` owns in the world-writable folders (after its processes are gone)."""
    for top in WORLD_WRITABLE:
        for path, info in _owned(top, uid, []):
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def probe():
    """Which isolation this machine allows: enter the namespaces, build a worker's view in a child; print it."""
    isolation = _load("isolation")
    try:
        mode = isolation.enter_namespaces()
    except OSError as error:
        print(f"none {error}")
        return
    child = os.fork()
    if child == 0:
        import tempfile
        try:
            isolation.private_view(tempfile.mkdtemp(), 1)
            if mode == "user-namespaces":
                isolation.lock()
            code = 0 if [n for n in os.listdir("/proc") if n.isdigit()] == ["1"] else 1
        except BaseException as error:
            os.write(2, f"{error}\n".encode())
            code = 1
        os._exit(code)
    _, status = os.waitpid(child, 0)
    print(mode if status == 0 else "none the namespaces were created but a worker's view could not be built")


def main(config):
    """fd 0 and 1: the protocol pipes, handed to the worker; fd "control": the grader closes it when done;
    fd "status": where the worker's pid, then its exit and "clean" (or the pids left), go back to the grader."""
    become_subreaper()
    mode = config["worker"]["isolation"]
    if mode in ("namespaces", "user-namespaces"):
        _load("isolation").enter_namespaces()   # the grader probed: a refusal now is the grader's failure
    uid = config.get("uid")
    config_read, config_write = os.pipe()
    with open(config["log"], "ab") as log:
        worker = subprocess.Popen(config["command"] + [str(config_read)], cwd=config["workdir"], env=config["env"],
                                  stdin=0, stdout=1, stderr=log, start_new_session=True, pass_fds=(config_read,))
    os.close(config_read)
    with os.fdopen(config_write, "w") as pipe:   # the worker's config: on a pipe, not on a command line
        pipe.write(json.dumps(config["worker"]))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)   # only the worker holds the protocol pipes: its end is the grader's end-of-file
    os.dup2(null, 1)
    os.write(config["status"], f"{worker.pid}\n".encode())
    watch = mode in ("uid", "none")
    limit, checked, code, cpu = config["scratch_mb"] << 20, time.monotonic(), None, 0.0
    while True:
        done, status, usage = os.wait4(worker.pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
            break
        ready, _, _ = select.select([config["control"]], [], [], 0.05)
        if ready and not os.read(config["control"], 64):
            break      # the grader is done with the worker (or is gone)
        if watch and time.monotonic() - checked > DISK_CHECK_S:
            checked = time.monotonic()
            if disk_used(config["workdir"], uid) > limit:
                code = "disk"
                break
    left = kill_all(os.getpid(), worker.pid, uid)
    if watch and uid is not None:
        remove_owned(uid)
    shutil.rmtree(config["workdir"], ignore_errors=True)   # the worker's copy of the submission: never left behind
    try:
        os.write(config["status"], f"exit {code} {cpu:.3f}\n".encode())
        os.write(config["status"], (("clean" if not left else "left " + " ".join(map(str, left))) + "\n").encode())
    except BrokenPipeError:   # the grader is gone (kill -9): nobody will read the log or remove its folder
        shutil.rmtree(os.path.dirname(config["log"]), ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "--probe":
        probe()
    else:
        with os.fdopen(int(sys.argv[1])) as f:
            main(json.load(f))
