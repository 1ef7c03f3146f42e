"""Time minigrad against PyTorch CPU, side by side in one process, and print the ratio.

    python benchmarks/run.py                  every suite
    python benchmarks/run.py --quick          fewer repeats: a smoke run of seconds
    python benchmarks/run.py --suite core     one suite (repeat --suite for several)
    python benchmarks/run.py --threads 1 --clock cpu
                                              one BLAS/torch thread each, timed in CPU
                                              time: steady numbers on a busy shared machine

Suites are the modules ``benchmarks/bench_<name>.py`` named in SUITES below;
a suite whose module does not exist yet is skipped with a note.  Each suite
module defines

    run(quick: bool) -> list[dict]     rows with keys case, minigrad_s, torch_s (or None), note (unit),
                                       and the medians minigrad_median_s, torch_median_s

(see common.py: ``interleaved_times``, ``loop_times`` for training steps, ``timed_row``).
The table goes to stdout and to benchmarks/results/<date>-<time>.md, headed
by the date, the machine, the versions, and the BLAS library and thread
count that threadpoolctl found.  Each time shows the minimum and the median;
ratio = minigrad's median / torch's median (of the minimums where a row has no
median): below 1.0 minigrad is faster.

Beside the suites: ``profile_rows.py`` says where each row's time goes (NumPy calls
per step; BLAS, NumPy, allocation, Python), ``floors.py`` what the rows below
PyTorch would cost with nothing above their NumPy calls.

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, which some machines set, slow down
current NumPy builds; when either is set, this script runs itself again
with both removed from its own environment (nothing else is changed) and
says so.
"""
import argparse
import importlib
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]   # `common` and the suites; minigrad from this checkout

SUITES = ["core", "rnn", "attention", "workloads", "lessons", "text", "grading"]
SLOW_BLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
REEXEC_MARK = "MINIGRAD_BENCH_UNSET"


def rerun_without_slow_blas_settings():
    """Re-exec this script without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (they are read at NumPy import)."""
    found = [name for name in SLOW_BLAS_VARIABLES if name in os.environ]
    if not found:
        return
    env = {k: v for k, v in os.environ.items() if k not in SLOW_BLAS_VARIABLES}
    env[REEXEC_MARK] = ", ".join(f"{name}={os.environ[name]}" for name in found)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def format_seconds(seconds, unit=None):
    """A time in s, ms, µs or ns; a row with a ``unit`` (memory in "MiB") holds that instead."""
    if seconds is None:
        return "-"
    if unit is not None:
        return f"{seconds:.3g} {unit}"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(rows):
    """A markdown table: suite, case, minigrad and torch (minimum, median), the ratio of the medians, note.

    A row without medians (a memory row, one timed call) shows "-" there, and its ratio is of the values it has.
    """
    lines = ["| suite | case | minigrad min | minigrad median | torch min | torch median | ratio | note |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        mine, theirs = row.get("minigrad_median_s"), row.get("torch_median_s")
        if mine is None or theirs is None:
            mine, theirs = row.get("minigrad_s"), row.get("torch_s")
        ratio = f"{mine / theirs:.2f}x" if theirs and mine is not None else "-"
        cells = [format_seconds(row.get(key), row.get("unit"))
                 for key in ("minigrad_s", "minigrad_median_s", "torch_s", "torch_median_s")]
        lines.append(f"| {row['suite']} | {row['case']} | {' | '.join(cells)} | {ratio} | {row.get('note', '')} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run")
    parser.add_argument("--suite", action="append", choices=SUITES, help="run only this suite (repeatable)")
    parser.add_argument("--threads", type=int, help="limit BLAS (threadpoolctl) and torch to this many threads")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: the calling thread's CPU time, which ignores other processes "
                             "(meaningful with --threads 1 only)")
    parser.add_argument("--no-save", action="store_true", help="print only; write no results file")
    args = parser.parse_args()
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu measures one thread: use it with --threads 1")

    import common   # imports numpy: after the re-exec

    if args.threads:
        common.limit_threads(args.threads)
    if args.clock == "cpu":
        common.CLOCK = time.thread_time

    header = common.machine_description()
    if os.environ.get(REEXEC_MARK):
        header.append(f"note: re-run with {os.environ[REEXEC_MARK]} removed from this command's "
                      "environment (they slow NumPy down)")
    clock = "CPU time of the calling thread" if args.clock == "cpu" else "wall-clock time"
    header.append(f"times: {clock}, minimum and median over repeats; minigrad and torch interleaved in one "
                  "process, each timed call right after a call of itself; training steps timed as loops of "
                  "consecutive steps, each step's loss dropped at its end; ratio: minigrad's median / torch's")
    print("\n".join(header), flush=True)

    rows = []
    for name in args.suite or SUITES:
        try:
            suite = importlib.import_module(f"bench_{name}")
        except ModuleNotFoundError as error:
            if error.name != f"bench_{name}":
                raise   # the suite exists but something it imports is missing: a real error
            print(f"suite {name}: skipped (benchmarks/bench_{name}.py does not exist yet)")
            continue
        start = time.perf_counter()
        suite_rows = suite.run(args.quick)
        print(f"suite {name}: {len(suite_rows)} cases in {time.perf_counter() - start:.1f} s", flush=True)
        rows.extend(dict(row, suite=name) for row in suite_rows)

    text = "\n".join(header) + "\n\n" + table(rows) + "\n"
    print()
    print(table(rows))
    if not args.no_save:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S") + ("-quick" if args.quick else "")
        path = os.path.join(HERE, "results", f"{stamp}.md")
        with open(path, "w", encoding="utf-8") as file:
            file.write(f"# minigrad benchmarks {stamp}\n\n" + text)
        print(f"\nwritten to {os.path.relpath(path)}")


if __name__ == "__main__":
    rerun_without_slow_blas_settings()
    main()
