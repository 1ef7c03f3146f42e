"""Run one check of a submission in its own Python process, with a time and a memory limit.

The grader never imports a submission itself.  Each check starts

    python -m minigrad.coursework.sandbox ASSIGNMENT SUBMISSION CHECK RESULT MEMORY_MB TIME_LIMIT

which lowers its own limits (``resource.setrlimit``: address space and CPU
time), imports the submission, runs the check and writes a JSON result to the
file RESULT.  Whatever the submission does (raise, loop forever, fill the
memory, call ``sys.exit`` or ``os._exit``), the parent gets a result: the
child's own, or one it writes from the way the child ended.  This isolates
mistakes, not attacks: a submission could still read or write files.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _limit(memory_mb, time_limit):
    import resource
    memory = int(memory_mb) * 2 ** 20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(time_limit) + 2  # a backstop; the parent's wall-clock limit is the real one
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _environment():
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"   # no __pycache__ in the student's folder
    env["MINIGRAD_DEVICE"] = "cpu"
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"                    # one thread per check: checks are tiny
    return env


def _tail(text, lines=8):
    return "\n".join(text.decode("utf-8", "replace").strip().splitlines()[-lines:])


def run_check(assignment_dir, submission, check, time_limit=10.0, memory_mb=1024):
    """Run the check named ``check`` ("__import__" only imports) and return its result dict.

    The dict has at least ``passed`` (bool) and ``message``; a check that the
    child could not finish has ``status`` "timeout" or "crashed".
    """
    with tempfile.TemporaryDirectory(prefix="minigrad-check-") as workdir:
        result_path = os.path.join(workdir, "result.json")
        command = [sys.executable, "-m", "minigrad.coursework.sandbox", os.path.abspath(assignment_dir),
                   os.path.abspath(submission), check, result_path, str(memory_mb), str(time_limit)]
        process = subprocess.Popen(command, cwd=workdir, env=_environment(), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, stderr = process.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the child and anything it started
            process.communicate()
            return {"passed": False, "status": "timeout",
                    "message": f"stopped after {time_limit:g} s: an infinite loop, a wait that never ends, "
                               "or code far too slow for these small inputs"}
        if os.path.exists(result_path):
            with open(result_path, encoding="utf-8") as f:
                return json.load(f)
        code = process.returncode
        if code < 0:
            name = signal.Signals(-code).name
            reason = {"SIGXCPU": "used more CPU time than allowed (an infinite loop?)",
                      "SIGKILL": f"was killed, most likely for using more than {memory_mb} MB of memory",
                      "SIGSEGV": "crashed (segmentation fault)"}.get(name, f"was killed by {name}")
            message = f"the check {reason}"
        else:
            message = (f"the process ended with exit code {code} before the check finished "
                       "(os._exit, or a crash in a library?)")
        tail = _tail(stderr)
        return {"passed": False, "status": "crashed", "message": message + (f"\n{tail}" if tail else "")}


def main(argv):
    assignment_dir, submission, check, result_path, memory_mb, time_limit = argv
    _limit(float(memory_mb), float(time_limit))
    from minigrad.coursework.grader import run_check_here
    try:
        result = run_check_here(assignment_dir, submission, check, memory_mb=int(memory_mb))
    except BaseException as error:  # anything the grader did not turn into a result itself
        result = {"passed": False, "status": "crashed",
                  "message": f"the grader could not run this check: {type(error).__name__}: {error}"}
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: the submission's atexit handlers do not run


if __name__ == "__main__":
    main(sys.argv[1:])
