"""Start, talk to and end a worker: the grader's side of the sandbox.

    with Worker(folder, "rnn.py", Limits()) as worker:     # a fresh interpreter on a copy of `folder`
        header, arrays = worker.request(header, arrays, timeout=10)

Process tree, and who can reach whom:

    grader (this module)  --pipes-->  supervisor.py  (root, or the grader's user)
                                          |  subreaper, reports the worker's pid and exit
                                          v
                                      worker.py  (new session; its own uid when the grader is root)

- The worker is a fresh interpreter (``python -I -S -B`` with an explicit
  sys.path: no PYTHON* variables, no site, so no ``.pth`` file or
  sitecustomize runs; not a fork: nothing of the grader's memory is in it),
  with an environment of a few variables.  Its config (paths, limits) comes on
  a pipe, never on a command line another process could read.
- Limits, set by the worker on itself before the submission is imported:
  memory, CPU time, output file size, number of processes (``Limits``); and
  here, a wall-clock limit on every request.
- Isolation: the best the machine allows, found once per grading process
  (``isolation()``; ``ISOLATION`` says what each mode means):
  "namespaces" (root) and "user-namespaces" (any user, where the kernel allows
  unprivileged user namespaces): the worker is pid 1 of its own pid namespace
  (it sees no other process, and nothing it starts outlives it), without
  network, every mount read-only, a private size-capped tmpfs as its folder,
  /tmp, /var/tmp and /dev/shm, the grader's folders covered (isolation.py);
  "uid" (root, no namespaces: a default Docker container): a uid of its own,
  its disk use watched and capped, what its uid left in /tmp & co removed;
  "none": the grader's own user, its folder's size watched; the output of
  ``check`` and ``grade`` says so.
- As root the worker always becomes an unprivileged uid of its own: the first
  free one from ``MINIGRAD_WORKER_UID`` (default 64000) on, claimed with a
  lock in one root-owned folder of the machine (``UID_CLAIMS``) before the
  worker starts, so no two workers of any two grading runs share a uid and
  "every process of this uid" is this worker's.

``Worker.close`` (also on leaving the ``with``) tells the supervisor to kill
the worker's session, every process below the supervisor and, as root, every
process of the worker's uid; then checks /proc itself and kills what is left.

One piece of state lives in this module, on purpose: ``isolation()``'s answer
(functools.lru_cache), probed once per grading process, since the probe starts
a process of its own.  The rest is constants; the uids in use are claimed on
disk (UID_CLAIMS).
"""
import enum
import json
import os
import select
import functools
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import protocol
from .orphans import remove_orphans
from .supervisor import processes

HERE = os.path.dirname(os.path.abspath(__file__))
COURSEWORK = os.path.dirname(HERE)                  # the grader's code and the shipped references
LIBRARY = os.path.dirname(os.path.dirname(COURSEWORK))   # the folder holding this minigrad package
MAX_COPY_BYTES = 64 << 20
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


class Limits:
    """What one worker may use: wall-clock seconds per check, memory MB, CPU seconds, output MB, processes."""

    def __init__(self, time_s=10.0, memory_mb=1024, cpu_s=None, output_mb=64, processes=32, scratch_mb=128):
        self.time_s, self.memory_mb, self.output_mb, self.processes = time_s, memory_mb, output_mb, processes
        self.scratch_mb = scratch_mb   # all the files it may write (a tmpfs: RAM on top of memory_mb)
        self.cpu_s = cpu_s if cpu_s is not None else 10 * time_s + 10   # a backstop; the clock is the real limit


class Failure(enum.Enum):
    """Why a worker gave no answer: ``WorkerFailed.kind`` (the grader's outcome.Status has the same values)."""
    IMPORT = "import"        # the submission did not import (or its worker did not start)
    CRASHED = "crashed"      # the worker ended during a request (a limit, a crash, its own exit)
    TIMEOUT = "timeout"      # no answer within the wall-clock limit


class WorkerFailed(Exception):
    """The worker did not answer: ``kind`` (a Failure) says how, ``reason`` why, in words a student reads."""

    cpu_s, cpu_limit = None, False   # a TIMEOUT's: the worker's CPU seconds then; whether cpu_limit stopped it
    def __init__(self, reason, kind=Failure.CRASHED):
        super().__init__(reason)
        self.reason, self.kind = reason, kind


class NotGraded(Exception):
    """The grader's side failed (no space, a worker killed from outside, a lost supervisor): not a grade."""


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
                               capture_output=True, text=True, timeout=60, cwd="/", env=_environment("/"))
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


def copy_submission(folder, target, python_only=False):
    """Copy the regular files and folders of ``folder`` into ``target`` (no symlinks, no devices, 64 MB at most).

    ``python_only``: only the .py files at the top of ``folder`` (a file was graded, not a folder: its
    neighbours in, say, a home folder are not the submission)."""
    total = 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        if python_only:
            dirs[:] = []
            files = [name for name in files if name.endswith(".py")]
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d)) and d != "__pycache__"]
        relative = os.path.relpath(root, folder)
        os.makedirs(os.path.join(target, relative), exist_ok=True)
        for name in files:
            source = os.path.join(root, name)
            if os.path.islink(source) or not os.path.isfile(source):
                continue
            total += os.path.getsize(source)
            if total > MAX_COPY_BYTES:
                raise WorkerFailed(f"your submission holds more than {MAX_COPY_BYTES >> 20} MB of files")
            shutil.copyfile(source, os.path.join(target, relative, name))


def _give_to(path, uid):
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.lchown(name, uid, uid)


def _environment(workdir):
    """The worker's few variables (the worker points TMPDIR and HOME into its private /tmp where it has one);
    the grader's LD_LIBRARY_PATH too, where its Python needs one to start (a libpython outside the loader's path)."""
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
                   "MINIGRAD_DEVICE": "cpu", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if os.environ.get("LD_LIBRARY_PATH"):
        environment["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    return environment


STUDENT_SIGNALS = {"SIGXCPU": "used more CPU time than allowed (an infinite loop?)",
                   "SIGXFSZ": "wrote or printed more than {output_mb} MB to one file",
                   "SIGSEGV": "crashed (segmentation fault: out of memory in a library, or a bug in one)",
                   "SIGBUS": "crashed (bus error)", "SIGABRT": "crashed (abort: out of memory in a library?)",
                   "SIGFPE": "crashed (floating-point exception)", "SIGILL": "crashed (illegal instruction)"}


def exit_reason(code, cpu, limits):
    """Why the worker ended, as (reason, the student's doing?).  ``code``: the exit code, negative for a
    signal, "disk" for a worker stopped for its files; ``cpu``: its CPU seconds.

    Only what the student's code or its own limits explain is the student's: a SIGKILL that no limit sends
    (the machine's out-of-memory killer, another program) is the grader's side, and not a grade."""
    if code == "disk":
        return f"wrote more than {limits.scratch_mb} MB of files (its scratch space)", True
    if code is None or code >= 0:
        return (f"your code ended the process with exit code {code} before the check finished "
                "(os._exit, or a crash in a library?)"), True
    name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else f"signal {-code}"
    if name in STUDENT_SIGNALS:
        return STUDENT_SIGNALS[name].format(output_mb=limits.output_mb), True
    if name == "SIGKILL" and cpu >= limits.cpu_s:   # RLIMIT_CPU's hard limit
        return STUDENT_SIGNALS["SIGXCPU"], True
    return (f"was killed by {name}, which none of its limits sends (the machine's out-of-memory killer, or "
            "another program)"), False


class Worker:
    """A worker running the submission ``module`` (a file name) found in the folder ``folder``."""

    def __init__(self, folder, module, limits=None, trusted=False, hide=(), python_only=False, answers=()):
        """``answers``: library modules that implement the assignment's answer (checks.json "answer_modules"):
        not loaded in the worker, and covered where mounts are possible."""
        self.limits = limits or Limits()
        self.isolation = "trusted" if trusted else isolation()[0]   # the reference needs no sandbox
        self.uid, self.uid_lock = (None, None) if trusted else claim_uid()
        self.supervisor = None
        self.pid = None
        self.closed = False
        self.unreadable = []     # what of Python's installation the worker's uid could not read
        self.hide = [COURSEWORK] + list(hide)     # the grader's code and the shipped references, and the caller's paths
        self.answers = list(answers)
        remove_orphans()
        self.private = tempfile.mkdtemp(prefix=f"minigrad-grader-{os.getpid()}-")     # the log: only the grader's
        self.log = os.path.join(self.private, "output.txt")
        self.workdir = tempfile.mkdtemp(prefix=f"minigrad-worker-{os.getpid()}-")
        try:
            self._start(folder, module, python_only)
        except BaseException:
            self.close()
            raise

    def _start(self, folder, module, python_only):
        if folder is not None:
            copy_submission(folder, self.workdir, python_only)
        if self.uid is not None:
            _give_to(self.workdir, self.uid)
        own = sum(1 for _, _, uid in processes().values() if uid == os.getuid()) if self.uid is None else 0
        mode = self.isolation
        answer_files = [os.path.join(LIBRARY, *name.split(".")) + ".py" for name in self.answers]
        hide = self.hide + answer_files + ([self.private, tempfile.gettempdir(), os.path.expanduser("~")]
                                           if mode in ("namespaces", "user-namespaces") else [])
        config = {"module": module, "library": LIBRARY, "uid": self.uid, "gid": self.uid, "isolation": mode,
                  "path": [p for p in sys.path if p and os.path.isabs(p)], "memory_mb": self.limits.memory_mb,
                  "cpu_s": self.limits.cpu_s, "output_mb": self.limits.output_mb, "scratch_mb": self.limits.scratch_mb,
                  "nproc": own + self.limits.processes, "hide": hide, "answers": self.answers}
        request_read, self.request_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        control_read, self.control_write = os.pipe()
        self.status_read, status_write = os.pipe()
        config_read, config_write = os.pipe()
        supervised = {"command": [sys.executable, "-I", "-S", "-B", os.path.join(HERE, "worker.py")],
                      "workdir": self.workdir, "env": _environment(self.workdir), "log": self.log,
                      "control": control_read, "status": status_write, "uid": self.uid, "worker": config,
                      "scratch_mb": self.limits.scratch_mb}
        self.supervisor = subprocess.Popen(   # the config on a pipe: a command line is readable by every user
            [sys.executable, "-I", "-S", "-B", os.path.join(HERE, "supervisor.py"), str(config_read)],
            stdin=request_read, stdout=reply_write, stderr=subprocess.DEVNULL, env=_environment(self.private),
            pass_fds=(control_read, status_write, config_read), cwd=self.private, start_new_session=True)
        for fd in (request_read, reply_write, control_read, status_write, config_read):
            os.close(fd)
        with os.fdopen(config_write, "w") as pipe:
            pipe.write(json.dumps(supervised))
        self.requests = os.fdopen(self.request_write, "wb")
        self.status = b""
        first = self._status_line(timeout=60)
        self.pid = int(first) if first and first.isdigit() else None
        header, _ = self._receive(time.monotonic() + 120)   # a loaded machine can take a while to import NumPy
        if header.get("status") == "sandbox":   # the grader's side: the OS refused what the probe allowed
            raise NotGraded(f"the worker's sandbox could not be built: {str(header.get('message'))[:500]}")
        if header.get("status") == "started":
            self.unreadable = [str(path) for path in header.get("unreadable", [])]   # installation.py
            header, _ = self._receive(time.monotonic() + self.limits.time_s)   # importing the submission
        if header.get("status") != "ready":
            raise WorkerFailed(str(header.get("message", "the submission could not be imported"))[:2000],
                               kind=Failure.IMPORT)
        self.hidden = header.get("hidden", [])
        if not self.alive():
            raise WorkerFailed(self.death_reason(), kind=Failure.IMPORT)

    # ------------------------------------------------------------------ talking

    def _status_line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.status:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.status_read], [], [], left)[0]:
                return None
            chunk = os.read(self.status_read, 4096)
            if not chunk:
                return None
            self.status += chunk
        line, self.status = self.status.split(b"\n", 1)
        return line.decode("ascii", "replace")

    def _receive(self, deadline, max_payload=protocol.MAX_PAYLOAD, over=None):
        reader = _DeadlineReader(self.reply_read, deadline, over)
        try:
            return protocol.read_message(reader, max_payload)
        except TimeoutError as error:
            failed = WorkerFailed(f"stopped after {self.limits.time_s:g} s: an infinite loop, a wait that never "
                                  "ends, or code far too slow for these small inputs", kind=Failure.TIMEOUT)
            failed.cpu_s, failed.cpu_limit = self.cpu_seconds(), str(error) == "cpu"   # before close: then gone
            self.close()
            raise failed
        except protocol.PipeClosed:   # the worker is gone, or going
            raise WorkerFailed(self.death_reason())
        except protocol.ProtocolError as error:
            self.close()
            raise WorkerFailed(f"your code answered with something the grader does not accept ({error}): "
                               "an output of the wrong shape or type?")

    def request(self, header, arrays=(), timeout=None, max_payload=protocol.MAX_PAYLOAD, cpu_limit=None):
        """Send one request; the reply (header, arrays).  Raises WorkerFailed when the worker does not answer.

        ``max_payload``: the most bytes of arrays the reply may carry (the grader knows what to expect).
        ``cpu_limit``: stop the worker once this request has used that many CPU seconds (``cpu_seconds``):
        a WorkerFailed of kind TIMEOUT whose ``cpu_s`` says how many it used."""
        if self.closed:
            raise WorkerFailed("the worker was already stopped")
        timeout = self.limits.time_s if timeout is None else timeout
        start = self.cpu_seconds() if cpu_limit is not None else None
        over = None if start is None else lambda: (self.cpu_seconds() or start) - start > cpu_limit
        try:
            protocol.write_message(self.requests, header, arrays)
        except (BrokenPipeError, OSError):
            self.close()
            raise WorkerFailed(self.death_reason())
        reply = self._receive(time.monotonic() + timeout, max_payload, over)
        if not self.alive():   # its supervisor is gone: nothing the worker says can be trusted any more
            self.close()
            raise NotGraded("the process supervising the worker was lost (killed?) during a check: not graded")
        return reply

    def cpu_seconds(self):
        """The worker's CPU seconds so far (user + system, waited-for children included) as the kernel counts
        them (/proc/PID/stat): not the submission's word, and not changed by the machine's load.  None where
        there is no /proc (macOS) or the worker is gone."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError, TypeError):
            return None
        return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")   # utime stime cutime cstime

    def alive(self):
        """Whether the supervisor still runs: a worker that killed it is not to be trusted any more."""
        return self.supervisor is not None and self.supervisor.poll() is None

    def output_tail(self):
        """The last lines the worker printed (its log); once closed, those close() read before removing it."""
        return self.last_output if self.closed else self._log_tail()

    def _log_tail(self, lines=8):
        try:
            with open(self.log, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log) - 4000))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def death_reason(self):
        """Why the worker went away, from the supervisor's report of its exit status.

        Raises NotGraded when the cause is not the student's: a lost supervisor, a kill no limit explains."""
        if not self.closed and self.supervisor is not None:
            try:   # a worker that ended on its own is noticed by the supervisor within 50 ms
                self.supervisor.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.close()
        if self.exit_line is None:
            raise NotGraded("the process supervising the worker was lost (killed?) before it reported: "
                            "not graded")
        _, code, cpu = (self.exit_line.split() + ["0"])[:3]
        code = None if code == "None" else (code if code == "disk" else int(code))
        reason, students = exit_reason(code, float(cpu), self.limits)
        if not students:
            raise NotGraded("the worker " + reason)
        tail = self.output_tail()   # read by close(), before it removed the log's folder
        return "the check " + reason + (f"\nlast lines of your output:\n{tail}" if tail else "")

    # ------------------------------------------------------------------ ending

    exit_line = None
    leftovers = ()
    last_output = ""

    def close(self):
        """Stop the worker and everything it started; check /proc that nothing of it is left."""
        if self.closed:
            return
        self.closed = True
        if self.supervisor is not None:
            os.close(self.control_write)   # "done": the supervisor kills everything of the worker and exits
            try:
                self.requests.close()
            except OSError:
                pass
            try:
                self.supervisor.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.supervisor.kill()
                self.supervisor.wait()
            lines = [self._status_line(timeout=1) for _ in range(2)]
            self.exit_line = next((line for line in lines if line and line.startswith("exit ")), None)
            self.leftovers = self._kill_leftovers()
            for fd in (self.reply_read, self.status_read):
                os.close(fd)
        self.last_output = self._log_tail()   # what it printed: death_reason quotes it once the folder is gone
        shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.rmtree(self.private, ignore_errors=True)
        if self.uid_lock is not None:
            self.uid_lock.close()   # the uid is free for the next worker once nothing of it is left

    def _kill_leftovers(self):
        """Our own check after the supervisor's: kill any process in the worker's session or of its uid."""
        killed = []
        for _ in range(100):
            table = processes()
            mine = [pid for pid, (_, sid, uid) in table.items()
                    if (self.pid is not None and sid == self.pid) or (self.uid is not None and uid == self.uid)]
            if not mine:
                return killed
            for pid in mine:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            killed.extend(mine)
            time.sleep(0.01)
        raise RuntimeError(f"could not stop the worker's processes {mine}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _DeadlineReader:
    """A pipe read with a deadline: read(n) returns what arrived (b"" at the end); TimeoutError when late."""

    def __init__(self, fd, deadline, over=None):
        self.fd, self.deadline, self.over = fd, deadline, over   # over(): True stops the wait ("cpu")

    def read(self, size):
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("wall")
            if select.select([self.fd], [], [], left if self.over is None else min(left, 0.05))[0]:
                return os.read(self.fd, min(size, 1 << 20))
            if self.over is not None and self.over():
                raise TimeoutError("cpu")
