"""Run one check of a submission in its own process, with a time and a memory limit.

The grader never runs a submission in its own process.  For each check it
starts a child, which

    1. lowers its own limits (``resource.setrlimit``): address space (the
       memory it has now plus ``memory_mb``), CPU time (a backstop) and the
       size of the files it writes (its printed output);
    2. imports the submission, runs the check (``grader.run_check_here``) and
       writes a JSON result to a file;

while the parent waits at most ``time_limit`` seconds, then kills the child
and everything the child started.  Whatever the submission does (raise, loop
forever, fill the memory, call ``sys.exit`` or ``os._exit``), the parent gets
a result: the child's own, or one it writes from the way the child ended.

Two ways to start the child:
    "fork"   (Linux) a copy of the grader, which has NumPy and minigrad loaded
             already: a check starts in milliseconds
    "spawn"  ``python -m minigrad.coursework.sandbox ...``: a fresh interpreter
             (about half a second to import NumPy and minigrad), for systems
             without a safe fork
This isolates mistakes, not attacks: a submission can still read or write files.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_method():
    return "fork" if sys.platform.startswith("linux") else "spawn"


def _memory_in_use():
    """Virtual memory of this process in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _limit(memory_mb, time_limit):
    try:
        import resource
    except ImportError:  # Windows: no limits but the parent's clock
        return
    memory = _memory_in_use() + int(float(memory_mb) * 2 ** 20)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(float(time_limit)) + 2  # the parent's wall-clock limit is the real one
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    output = 64 * 2 ** 20  # a print in an endless loop must not fill the disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))


def _child(assignment_dir, submission, check, result_path, memory_mb, time_limit):
    """The child's whole life: limits, the check, the result file, exit without cleanup."""
    _limit(memory_mb, time_limit)
    from minigrad.autograd import enable_grad
    from minigrad.coursework.grader import run_check_here
    try:
        with enable_grad():
            result = run_check_here(assignment_dir, submission, check, memory_mb=float(memory_mb))
    except BaseException as error:  # anything the grader did not turn into a result itself
        result = {"passed": False, "status": "crashed",
                  "message": f"the grader could not run this check: {type(error).__name__}: {error}"}
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os._exit(0)  # no interpreter teardown: the submission's atexit handlers do not run


def _environment():
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"   # no __pycache__ in the student's folder
    env["MINIGRAD_DEVICE"] = "cpu"
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"                    # one thread per check: checks are tiny
    return env


def _spawn(arguments, log, time_limit):
    """Start a fresh interpreter; returns its exit status (negative: killed by that signal) or None on timeout."""
    process = subprocess.Popen([sys.executable, "-m", "minigrad.coursework.sandbox", *arguments],
                               cwd=os.path.dirname(arguments[3]), env=_environment(), stdin=subprocess.DEVNULL,
                               stdout=log, stderr=log, start_new_session=True)
    try:
        return process.wait(timeout=time_limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the child and anything it started
        process.wait()
        return None


def _fork(arguments, log, time_limit):
    """Fork this process; the same return values as _spawn."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never return into the grader's code
        try:
            os.setsid()
            os.chdir(os.path.dirname(arguments[3]))
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            sys.stdout = sys.stderr = open(log.fileno(), "w", closefd=False)
            _child(*arguments)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(70)
    deadline = time.monotonic() + time_limit
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(2 * pause, 0.02)


def run_check(assignment_dir, submission, check, time_limit=10.0, memory_mb=1024, method=None):
    """Run the check named ``check`` ("__import__" only imports) and return its result dict.

    The dict has at least ``passed`` (bool) and ``message``; a check that the
    child could not finish has ``status`` "timeout" or "crashed".
    """
    with tempfile.TemporaryDirectory(prefix="minigrad-check-") as workdir:
        result_path = os.path.join(workdir, "result.json")
        arguments = [os.path.abspath(assignment_dir), os.path.abspath(submission), check, result_path,
                     str(memory_mb), str(time_limit)]
        with open(os.path.join(workdir, "output.txt"), "w+b") as log:
            start = _fork if (method or default_method()) == "fork" else _spawn
            code = start(arguments, log, time_limit)
            log.seek(0)
            output = log.read().decode("utf-8", "replace").strip()
        if code is None:
            return {"passed": False, "status": "timeout",
                    "message": f"stopped after {time_limit:g} s: an infinite loop, a wait that never ends, "
                               "or code far too slow for these small inputs"}
        if os.path.exists(result_path):
            with open(result_path, encoding="utf-8") as f:
                return json.load(f)
        if code < 0:
            name = signal.Signals(-code).name
            reason = {"SIGXCPU": "used more CPU time than allowed (an infinite loop?)",
                      "SIGKILL": f"was killed, most likely for using more than {memory_mb} MB of memory",
                      "SIGXFSZ": "printed more than 64 MB of output",
                      "SIGSEGV": "crashed (segmentation fault)"}.get(name, f"was killed by {name}")
            message = f"the check {reason}"
        else:
            message = (f"the process ended with exit code {code} before the check finished "
                       "(os._exit, or a crash in a library?)")
        tail = "\n".join(output.splitlines()[-8:])
        return {"passed": False, "status": "crashed", "message": message + (f"\n{tail}" if tail else "")}


if __name__ == "__main__":
    _child(*sys.argv[1:])
