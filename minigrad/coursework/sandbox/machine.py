"""What this machine allows a worker: its isolation, its uid, its environment.

- ``isolation()``: the best of ``ISOLATION`` the OS allows, probed once per grading process
  (supervisor.py ``--probe`` tries the namespaces; the answer is cached, since each probe starts
  a process of its own).
- ``claim_uid()``: as root, a uid of the worker's own, claimed with a lock in one root-owned
  folder of the machine (``UID_CLAIMS``), so no two workers of any two grading runs share one.
- ``environment(workdir)``: the few variables a worker (and the probe) starts with.

control.py uses these to start a worker; they hold no worker of their own.
"""
import functools
import os
import subprocess
import sys

from .supervisor import processes

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BASE_UID = 64000
UID_CLAIMS = "/run/minigrad-worker-uids" if os.path.isdir("/run") else "/var/run/minigrad-worker-uids"
ISOLATION = {
    "namespaces": "a uid of its own; its own pid, mount, network, IPC and UTS namespaces: sees no other process, "
                  "no network, everything read-only but a private size-capped /tmp (also /var/tmp, /dev/shm and "
                  "its folder), the grader's folders covered; nothing it starts outlives it",
    "user-namespaces": "its own user, pid, mount, network, IPC and UTS namespaces: sees no other process, no "
                       "network, everything read-only but a private size-capped /tmp (also /var/tmp, /dev/shm and "
                       "its folder), the grader's folders covered; nothing it starts outlives it",
    "uid": "a uid of its own (no namespaces allowed here): cannot signal the grader or write its files, but "
           "sees other processes; its disk use is watched and capped and what it leaves in /tmp, /var/tmp and "
           "/dev/shm is removed",
    "none": "NO ISOLATION: it runs as your own user and could read or change your files, signal your processes "
            "and reach the network (this OS allows no namespaces); grade untrusted code as root in a "
            "container, or on Linux with user namespaces enabled",
}


def environment(workdir):
    """The worker's few variables (the worker points TMPDIR and HOME into its private /tmp where it has one);
    the grader's LD_LIBRARY_PATH too, where its Python needs one to start (a libpython outside the loader's path)."""
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
                   "MINIGRAD_DEVICE": "cpu", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if os.environ.get("LD_LIBRARY_PATH"):
        environment["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    return environment


@functools.lru_cache(maxsize=None)
def isolation():
    """(mode, why) for this machine and user: the best of ISOLATION the OS allows, probed once per process.

    MINIGRAD_ISOLATION=uid (or none) asks for less, e.g. to try what a Docker container without namespaces
    gives; never more than the OS allows.  As root "none" is "uid": the worker always gets a uid of its own."""
    best, why = _best_isolation()
    asked = os.environ.get("MINIGRAD_ISOLATION")
    order = ["none", "uid", "user-namespaces", "namespaces"]
    if asked in order and order.index(asked) < order.index(best):
        return ("uid" if asked == "none" and os.geteuid() == 0 else asked), "MINIGRAD_ISOLATION"
    return best, why


def _best_isolation():
    if not sys.platform.startswith("linux"):
        return ("uid" if os.geteuid() == 0 else "none"), f"{sys.platform} has no namespaces"
    try:
        found = subprocess.run([sys.executable, "-I", "-S", "-B", os.path.join(HERE, "supervisor.py"), "--probe"],
                               capture_output=True, text=True, timeout=60, cwd="/", env=environment("/"))
        mode, _, why = found.stdout.strip().partition(" ")
    except (OSError, subprocess.SubprocessError) as error:
        mode, why = "none", str(error)
    if mode not in ISOLATION:
        mode, why = "none", found.stderr.strip()[-300:]
    if mode == "none" and os.geteuid() == 0:
        mode = "uid"
    return mode, why


def claim_uid():
    """(uid, lock) for a new worker, or (None, None) when not root (no switch possible).

    As root: the first uid from MINIGRAD_WORKER_UID (default 64000) that no process uses and no other
    worker holds: a lock file per uid in UID_CLAIMS, one root-owned folder for the whole machine (whatever
    TMPDIR says), locked (flock, atomic) before the worker starts and held while it lives: parallel jobs
    and other grading runs each get a uid of their own, so "every process of this uid" means this worker's."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, None
    import fcntl
    base = int(os.environ.get("MINIGRAD_WORKER_UID", DEFAULT_BASE_UID))
    if base <= 0:
        raise ValueError(f"MINIGRAD_WORKER_UID={base}: the worker's uid must not be root's")
    folder = UID_CLAIMS
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if info.st_uid != 0 or not os.path.isdir(folder) or os.path.islink(folder):
        raise RuntimeError(f"{folder} must be a folder of root's")
    for uid in range(base, base + 4096):
        lock = os.fdopen(os.open(os.path.join(folder, f"{uid}.lock"), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW,
                                 0o600), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        if not any(owner == uid for _, _, owner in processes().values()):
            return uid, lock
        lock.close()
    raise RuntimeError(f"no free uid for a worker from MINIGRAD_WORKER_UID={base} on")
