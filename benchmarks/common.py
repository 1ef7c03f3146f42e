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

``quick`` asks for fewer repeats (and may shrink sizes) so that a smoke run
takes seconds.  Time minigrad and PyTorch in the same process, on the same
inputs, with ``best_time`` below.
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
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = CLOCK()
        fn()
        times.append(CLOCK() - start)
    return min(times)


def interleaved_times(fns, repeat=7, warmup=1):
    """Every timed call of several functions, their repeats interleaved (a, b, a, b, ...):
    a list per function, one time per round.

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
            fns[k]()                        # untimed: the timed call follows a call of itself
            start = CLOCK()
            fns[k]()
            times[k].append(CLOCK() - start)
    return times


def best_times(fns, repeat=7, warmup=1):
    """``best_time`` of several functions, their repeats interleaved (see ``interleaved_times``)."""
    return [min(bucket) for bucket in interleaved_times(fns, repeat, warmup)]


def reference_tier_row(case, times):
    """The "[reference tier]" row of a case from its interleaved times [fast, reference, torch (optional)]:
    the reference tier against PyTorch, and in the note against the fast tier."""
    fast, reference = times[0], times[1]
    return {"case": case + " [reference tier]", "minigrad_s": min(reference),
            "torch_s": min(times[2]) if len(times) > 2 else None,
            "note": f"reference tier {min(reference) / min(fast):.2f}x the fast tier "
                    f"(median of paired ratios {paired_ratio(reference, fast):.2f}x)"}


def paired_ratio(mine, theirs):
    """The median over rounds of mine[i] / theirs[i], from two lists of ``interleaved_times``.

    Each round's two times were taken moments apart, under the same load, so their
    ratio is steadier on a noisy machine than the ratio of the two minimums.
    """
    ratios = sorted(a / b for a, b in zip(mine, theirs))
    middle = len(ratios) // 2
    return ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2


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
