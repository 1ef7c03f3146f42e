"""What every benchmark suite shares: the contract, the timer, the machine description.

The suite contract (run.py imports ``benchmarks/bench_<name>.py`` for each
suite it lists):

    run(quick: bool) -> list[dict]

each dict one row of the table, with the keys

    case        what was timed, with its sizes ("chain of 1000 tiny ops, per op")
    minigrad_s  seconds for one run of the case in minigrad
    torch_s     seconds for the same case in PyTorch CPU, or None (torch missing)
    note        a short remark (units such as "per op", which optimizer), or ""
    unit        (optional) what minigrad_s and torch_s hold when it is not seconds: "MiB"
    minigrad_median_s, torch_median_s
                (optional) the median over the timed calls; minigrad_s and torch_s then hold
                the minimum (``timed_row`` fills all four)

``quick`` asks for fewer repeats (and may shrink sizes) so that a smoke run
takes seconds.  Time minigrad and PyTorch in the same process, on the same
inputs, with ``interleaved_times`` below; a training step is timed as a loop of
consecutive steps (``loop_times``), the way a learner's loop runs it, and the table
shows the minimum and the median per step (issue 41: the minimum over single calls
hid the page faults a loop pays when each step's graph is freed at its end).
"""
import datetime
import os
import platform
import time
import tracemalloc

import numpy

# The clock every timing uses.  run.py --clock cpu switches it to the calling
# thread's CPU time, which ignores the time other processes hold the CPU; it
# is only meaningful when all the work runs in that thread (--threads 1).
CLOCK = time.perf_counter


def best_time(fn, repeat=7, warmup=1):
    """The MINIMUM wall-clock time of ``repeat`` calls of ``fn()`` (after ``warmup`` untimed calls).

    The minimum, not the mean or median: on a shared machine other processes
    only ever add time, so the fastest run is the best estimate of the cost
    of the code itself.
    """
    return min(call_times(fn, repeat, warmup))


def call_times(fn, repeat=7, warmup=1):
    """The times of ``repeat`` calls of ``fn()`` (after ``warmup`` untimed calls), for one function alone."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = CLOCK()
        fn()
        times.append(CLOCK() - start)
    return times


def interleaved_times(fns, repeat=7, warmup=1, steps=2):
    """Every timed call of several functions, their repeats interleaved (a, b, a, b, ...):
    a list per function, ``steps - 1`` times per round.

    Each round calls each function ``steps`` times in a row and times all but the first:
    a short loop, as a training loop calls its step function (the step drops its loss at
    its end: the value a function returns is discarded at once).

    Interleaving exposes each to the same bursts of load from other
    processes, which keeps their ratio steadier than timing one after the other.
    A call also gains or loses by what the call before it left in the caches and the
    allocator, so each timed call comes right after an untimed call of the same function
    (as in a training loop, where the step before was the same step), and round r starts
    with function r (mod the count): each function takes each place in the order.  In a fixed
    order without the untimed calls, the reference tier timed right after the fast tier on the
    same shapes looked 0.75-0.79x the fast tier (lesson 9's step), 1.20-1.22x in the other order;
    two copies of one model differed by 5-9% with the untimed calls alone
    (benchmarks/results/20261127-issue22-session7.md).
    """
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for r in range(repeat):
        for i in range(len(fns)):
            k = (r + i) % len(fns)          # round r starts with function r
            fns[k]()                        # untimed: each timed call follows a call of itself
            for _ in range(steps - 1):
                start = CLOCK()
                fns[k]()
                times[k].append(CLOCK() - start)
    return times


def loop_times(fns, repeat):
    """``interleaved_times`` of training steps as loops of 3 or 4 consecutive steps, in about as many
    calls as ``repeat`` rounds of single timed calls take (9 -> 4 loops of 4 steps, 3 -> 2 loops of 3)."""
    steps = 4 if repeat >= 6 else 3
    return interleaved_times(fns, repeat=max(2, 2 * repeat // steps), steps=steps)


def median(times):
    """The median of a list of times."""
    ordered = sorted(times)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def timed_row(case, mine, theirs=None, note=""):
    """A row from the timed calls of minigrad (``mine``) and PyTorch (``theirs``, or None): the minimum
    and the median of each."""
    return {"case": case, "minigrad_s": min(mine), "minigrad_median_s": median(mine),
            "torch_s": min(theirs) if theirs else None, "torch_median_s": median(theirs) if theirs else None,
            "note": note}


def best_times(fns, repeat=7, warmup=1):
    """``best_time`` of several functions, their repeats interleaved (see ``interleaved_times``)."""
    return [min(bucket) for bucket in interleaved_times(fns, repeat, warmup)]


def reference_tier_row(case, times):
    """The "[reference tier]" row of a case from its interleaved times [fast, reference, torch (optional)]:
    the reference tier against PyTorch, and in the note against the fast tier."""
    fast, reference = times[0], times[1]
    return timed_row(case + " [reference tier]", reference, times[2] if len(times) > 2 else None,
                     f"reference tier {median(reference) / median(fast):.2f}x the fast tier in medians "
                     f"(median of paired ratios {paired_ratio(reference, fast):.2f}x)")


def paired_ratio(mine, theirs):
    """The median over rounds of mine[i] / theirs[i], from two lists of ``interleaved_times``.

    Each round's two times were taken moments apart, under the same load, so their
    ratio is steadier on a noisy machine than the ratio of the two minimums.
    """
    return median([a / b for a, b in zip(mine, theirs)])


def peak_memory(fn):
    """Peak bytes allocated through Python's allocator while ``fn()`` runs (tracemalloc).

    NumPy reports its array buffers to tracemalloc, so this measures minigrad's
    arrays and graph.  PyTorch's CPU allocator does not report to tracemalloc:
    its memory is not measured here (the process's RSS would mix in everything else).
    """
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def torch_or_none():
    """The torch module, or None when it is not installed (the torch column then reads "-")."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def limit_threads(count):
    """Run NumPy's BLAS (threadpoolctl) and torch on at most ``count`` threads, and check that it took.

    threadpoolctl limits only the libraries already loaded: called before NumPy is imported it
    limits nothing, and OpenBLAS keeps all its threads (a harness that did so measured 2 BLAS
    threads as one: benchmarks/results/20261127-issue22-session13.md).  This module imports NumPy,
    so here it is loaded.  Returns threadpoolctl's limiter (``restore_original_limits()``).
    """
    from threadpoolctl import threadpool_info, threadpool_limits
    torch = torch_or_none()
    if torch is not None:
        torch.set_num_threads(count)
    limiter = threadpool_limits(count)
    missed = [f"{pool.get('internal_api')} ({pool.get('num_threads')} threads)"
              for pool in threadpool_info() if pool.get("num_threads") > count]
    if missed:
        raise RuntimeError(f"limit_threads({count}): still more than {count}: {', '.join(missed)}; import "
                           "the libraries before limiting them")
    return limiter


def blas_description():
    """The BLAS libraries threadpoolctl finds loaded, with their thread counts, as one line."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS: unknown (threadpoolctl is not installed)"
    parts = []
    for pool in threadpool_info():
        parts.append(f"{pool.get('internal_api')} {pool.get('version')} ({pool.get('user_api')}, "
                     f"{pool.get('num_threads')} threads, {pool.get('architecture', '?')}, "
                     f"{os.path.basename(pool.get('filepath', ''))})")
    return "BLAS: " + ("; ".join(parts) if parts else "none found")


def machine_description():
    """Date, machine, Python, NumPy, torch and BLAS, as lines for the top of a results file."""
    torch = torch_or_none()
    torch_text = "not installed" if torch is None else f"{torch.__version__} ({torch.get_num_threads()} threads)"
    return [
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"machine: {platform.node()} {platform.machine()}, {platform.processor() or platform.system()}, "
        f"{os.cpu_count()} CPUs",
        f"python {platform.python_version()}, numpy {numpy.__version__}, torch {torch_text}",
        blas_description(),
    ]
