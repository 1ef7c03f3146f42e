"""Where each benchmark row's time goes: NumPy calls per step, and the step's CPU time split into
BLAS, NumPy's inner loops, NumPy's per-call overhead, allocation and the Python interpreter.

    python benchmarks/profile_rows.py                     the rows of core, rnn, attention, workloads
    python benchmarks/profile_rows.py --suite lessons     lesson 4's steps on both tiers
    python benchmarks/profile_rows.py --suite rnn         one suite (repeatable)
    python benchmarks/profile_rows.py --quick             the small rows only, shorter sampling

Only minigrad's side of each row is profiled (the fast tier, the layers' default; the lessons
suite's lesson 4 rows on both tiers, as that lesson runs the reference tier), on one
thread (threadpoolctl; PyTorch is only imported to copy weights).  Two runs per suite, each
in a child process that builds the rows and runs each row's step after two warm-up steps:

  counts  the child runs under gdb, with breakpoints that count, during ONE step, the
          calls of NumPy's C entry points (breakpoints that never stop the program):
              ufunc calls      ufunc_generic_fastcall: every elementwise op, operator
                               (a + b, a * b, a @ b) and np.matmul / np.exp / ...
              reductions       PyUFunc_GenericReduction: sum, max, ... over an axis
              BLAS calls       scipy_cblas_{s,d}{gemm,gemv,dot,syrk,axpy}64_
              new arrays       PyArray_NewFromDescr_int: every ndarray object, views included
              data buffers     default_malloc + default_calloc: NumPy's data allocations
  time    the child runs under `perf record` (CPU-clock samples, CLOCK_MONOTONIC time
          stamps); the samples of the main thread between a row's first and last timed
          step are sorted by where the program counter was:
              BLAS             OpenBLAS's library
              NumPy loops      NumPy's inner loops and the C library's memcpy/memset/libm
                               (symbols named after a dtype, SIMD or contiguous loop: a heuristic)
              NumPy per call   the rest of NumPy's C code: argument parsing, dtype and
                               broadcasting resolution, array objects, iterators
              allocation       malloc/free, NumPy's buffer cache and allocator, and the
                               kernel (page faults of freshly mapped buffers, munmap)
              Python           libpython: minigrad's own code, the autograd engine, object churn
          The step's CPU time (time.thread_time, mean over the timed steps) is split in
          those proportions.

Linux only; needs `perf` and `gdb` on the PATH.  The times move with the load of the
machine (the split much less); print `uptime` with the table.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

COUNTED = {
    "ufunc calls": ["ufunc_generic_fastcall"],
    "reductions": ["PyUFunc_GenericReduction"],
    "BLAS calls": [f"scipy_cblas_{t}{f}64_" for t in "sd" for f in ("gemm", "gemv", "dot", "syrk", "axpy")],
    "new arrays": ["PyArray_NewFromDescr_int"],
    "data buffers": ["default_malloc", "default_calloc"],
}
CATEGORIES = ["BLAS", "NumPy loops", "NumPy per call", "allocation", "Python"]
ALLOCATION_SYMBOLS = re.compile(
    r"^(__libc_)?(malloc|free|calloc|realloc|cfree)$|^_int_(malloc|free|realloc)|^malloc_consolidate|"
    r"^unlink_chunk|^sysmalloc|^tcache|^(__)?(mmap|munmap|madvise|brk|sbrk)|^default_(malloc|calloc|free|realloc)|"
    r"^npy_(alloc|free)_cache|^PyDataMem_User")
LOOP_SYMBOLS = re.compile(
    r"(^|_)(FLOAT|DOUBLE|HALF|LONGDOUBLE|BOOL|BYTE|UBYTE|SHORT|USHORT|INT|UINT|LONG|ULONG|LONGLONG|ULONGLONG)_|"
    r"avx|AVX|sse|SSE|simd|npyv|_contig|_aligned|_strided|_cast|^mem(cpy|move|set|cmp)|__mem|"
    r"^(exp|log|tanh|expf|logf|tanhf|pow|sqrt)", re.IGNORECASE)


# ----------------------------------------------------------------------------- the rows

def rows_of(suite, quick):
    """[(row name, step function)] for a suite: minigrad's side of its benchmark rows."""
    sys.path[:0] = [HERE, ROOT]
    if suite == "core":
        import bench_core
        import minigrad
        rows = [("chain of 1000 tiny ops, fwd+bwd (per 1000 ops)",
                 bench_core._chain(lambda: minigrad.ones(4, requires_grad=True), lambda y: y.tanh(), True)),
                ("chain of 1000 tiny ops, no_grad (per 1000 ops)",
                 minigrad.no_grad()(bench_core._chain(lambda: minigrad.ones(4), lambda y: y.tanh(), False)))]
        for optimizer in ("none", "sgd", "adam"):
            rows.append((f"Linear-LayerNorm-ReLU-Linear (64, 512), fwd+bwd{'' if optimizer == 'none' else ' + ' + optimizer}",
                         bench_core._minigrad_step(64, 512, 10, optimizer)))
        return rows
    if suite == "rnn":
        import bench_rnn
        cases = [("LSTM", 50, 64, 128, 256, 1, False), ("GRU", 50, 64, 128, 256, 1, False),
                 ("RNN", 50, 64, 128, 256, 1, False), ("LSTM", 50, 1, 8, 8, 1, False)]
        if not quick:
            cases += [("LSTM", 200, 64, 128, 256, 1, False), ("GRU", 200, 64, 128, 256, 1, False),
                      ("RNN", 200, 64, 128, 256, 1, False), ("LSTM", 50, 64, 128, 256, 2, False),
                      ("LSTM", 50, 64, 128, 256, 1, True)]
        rows = []
        for kind, T, B, D, H, layers, bidirectional in cases:
            shape = f", {layers} layers" if layers > 1 else (", bidirectional" if bidirectional else "")
            name = f"{'tiny ' if H == 8 else ''}{kind} in {D}, hidden {H}, batch {B}, T={T}{shape}"
            rows.append((name, bench_rnn._step_fns(kind, T, B, D, H, layers, bidirectional)[0]))
        return rows
    if suite == "attention":
        import bench_attention
        from common import torch_or_none
        torch = torch_or_none()
        rows = [("MultiheadAttention batch 32, T=128, d 256", bench_attention._attention_pair(32, 128, torch)[0]),
                ("TransformerEncoderLayer batch 32, T=128, d 256",
                 bench_attention._encoder_layer_pair(32, 128, torch)[0])]
        for T in ([64, 256] if quick else [64, 128, 256, 512, 1024]):
            rows.append((f"MultiheadAttention batch 8, T={T}", bench_attention._attention_pair(8, T, torch)[0]))
            rows.append((f"nn.LSTM(256, 256) batch 8, T={T}", bench_attention._lstm_pair(8, T, torch)[0]))
        return rows
    if suite == "workloads":
        import bench_workloads as w
        from common import torch_or_none
        torch = torch_or_none()
        rows = []
        sizes = [(128, 64)] if quick else [(128, 64), (128, 128), (256, 64), (256, 128)]
        for cell in ("lstm", "gru"):
            for H, T in sizes:
                rows.append((f"char LM step {cell.upper()}, batch 32, hidden {H}, T={T}",
                             w.char_lm_pair(torch, cell, 32, T, H)[0]))
        rows.append(("CausalLM step, batch 32, T=48 (lesson 12)", w.causal_lm_pair(torch, 32, 48)[0]))
        for model, search, tokens in (("GRU char LM", "greedy", 300), ("GRU char LM", "beam", 100),
                                      ("LSTM char LM", "greedy", 300), ("LSTM char LM", "beam", 100),
                                      ("CausalLM", "greedy", 120), ("CausalLM", "beam", 100)):
            rows.append((f"decoding {search}, {model}, batch 1, up to {tokens} tokens",
                         w.decoding_pair(torch, model, search, tokens)[0]))
        return rows
    if suite == "lessons":                  # lesson 4 runs the reference tier: both tiers profiled
        import bench_lessons
        from common import torch_or_none
        torch = torch_or_none()
        rows = []
        for cell in ("RNN", "LSTM", "GRU"):
            fast, reference, _ = bench_lessons.adding_steps(torch, cell, 50, 32, 32)
            rows += [(f"lesson 4 {cell} step, batch 32, hidden 32, T=50", fast),
                     (f"lesson 4 {cell} step, batch 32, hidden 32, T=50 [reference tier]", reference)]
        return rows
    raise ValueError(f"unknown suite {suite!r}")


# ----------------------------------------------------------------------------- the child

def child(suite, mode, quick, out_path, seconds):
    """Build the suite's rows and run them; for each row, write one JSON line to ``out_path``."""
    import common
    common.limit_threads(1)                                     # NumPy and torch loaded, then limited
    with open(out_path, "w") as out:
        for name, step in rows_of(suite, quick):
            step()
            step()                                              # warm up: caches, first-call paths
            if mode == "count":
                os.getpgid(0)                                   # gdb's marker: start counting
                step()
                os.getpgid(0)                                   # stop counting
                out.write(json.dumps({"row": name}) + "\n")
                continue
            steps, cpu = 0, 0.0
            start = time.monotonic()
            while steps < 3 or (cpu < seconds and steps < 2000):
                before = time.thread_time()
                step()
                cpu += time.thread_time() - before
                steps += 1
            out.write(json.dumps({"row": name, "start": start, "end": time.monotonic(), "steps": steps,
                                  "cpu_per_step": cpu / steps}) + "\n")
            out.flush()


# ----------------------------------------------------------------------------- the parent

_GDB_SCRIPT = r"""
import gdb, json
GROUPS = json.loads({groups!r})
counts, counting, results = {{}}, [False], []
counters = []
class Count(gdb.Breakpoint):
    def __init__(self, location, group):
        super().__init__(location, internal=True)
        self.group = group
        self.enabled = False                  # only between the markers: the warm-up runs at full speed
        counters.append(self)
    def stop(self):
        counts[self.group] = counts.get(self.group, 0) + 1
        return False
class Marker(gdb.Breakpoint):
    def stop(self):
        counting[0] = not counting[0]
        for counter in counters:
            counter.enabled = counting[0]
        if not counting[0]:
            results.append(dict(counts))
            counts.clear()
            with open({out!r}, "w") as f:
                json.dump(results, f)
        return False
gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
gdb.execute("set print thread-events off")
Marker("getpgid", internal=True)
for group, symbols in GROUPS.items():
    for symbol in symbols:
        Count(symbol, group)
"""


def _child_environment():
    """This environment without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, as run.py runs the benchmarks."""
    return {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}


def _child_command(suite, mode, quick, out_path, seconds):
    return [sys.executable, os.path.abspath(__file__), "--child", suite, "--mode", mode, "--out", out_path,
            "--seconds", str(seconds)] + (["--quick"] if quick else [])


def count_calls(suite, quick, work):
    """[{row, ufunc calls, ...}] for one step of each row, counted by gdb breakpoints."""
    rows_path, counts_path = os.path.join(work, f"{suite}-count.jsonl"), os.path.join(work, f"{suite}-counts.json")
    script = os.path.join(work, "count.py")
    with open(script, "w") as f:
        f.write(_GDB_SCRIPT.format(groups=json.dumps(COUNTED), out=counts_path))
    command = ["gdb", "-q", "-batch", "-ex", f"source {script}", "-ex", "run", "--args"] + \
        _child_command(suite, "count", quick, rows_path, 0)
    done = subprocess.run(command, capture_output=True, text=True, env=_child_environment())
    if not os.path.exists(counts_path):
        raise RuntimeError(f"gdb counted nothing for suite {suite}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    with open(rows_path) as f:
        names = [json.loads(line)["row"] for line in f]
    with open(counts_path) as f:
        counts = json.load(f)
    return [dict(c, row=name) for name, c in zip(names, counts)]


def _category(symbol, dso):
    if "openblas" in dso:
        return "BLAS"
    if dso.startswith("[kernel") or ALLOCATION_SYMBOLS.search(symbol):
        return "allocation"
    if "numpy" in dso or "libm." in dso or "libc." in dso or "libgcc" in dso:
        return "NumPy loops" if LOOP_SYMBOLS.search(symbol) else "NumPy per call"
    return "Python"


def time_split(suite, quick, work, seconds):
    """[{row, steps, cpu_per_step, BLAS: fraction, ...}] from perf samples of the main thread."""
    rows_path, data = os.path.join(work, f"{suite}-time.jsonl"), os.path.join(work, f"{suite}.perf")
    subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-F", "1999", "-o", data, "--"] +
                   _child_command(suite, "time", quick, rows_path, seconds), check=True,
                   stdout=subprocess.DEVNULL, env=_child_environment())
    with open(rows_path) as f:
        rows = [json.loads(line) for line in f]
    script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,tid,time,ip,sym,dso"],
                            capture_output=True, text=True).stdout
    samples = []
    line_format = re.compile(r"^\s*(\d+)/(\d+)\s+([\d.]+):\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
    for line in script.splitlines():
        match = line_format.match(line)
        if match and match.group(1) == match.group(2):                  # the main thread only
            symbol = re.sub(r"\+0x[0-9a-f]+$", "", match.group(4))
            samples.append((float(match.group(3)), _category(symbol, match.group(5))))
    for row in rows:
        inside = [category for stamp, category in samples if row["start"] <= stamp <= row["end"]]
        row["samples"] = len(inside)
        for category in CATEGORIES:
            row[category] = inside.count(category) / max(1, len(inside))
    return rows


def format_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(results):
    head = ("| suite | row | CPU/step | " + " | ".join(COUNTED) + " | " +
            " | ".join(f"{c} %" for c in CATEGORIES) + " | µs per NumPy call |")
    lines = [head, "|" + "---|" * (3 + len(COUNTED) + len(CATEGORIES) + 1)]
    for r in results:
        calls = r.get("ufunc calls", 0) + r.get("reductions", 0)
        per_call = r["cpu_per_step"] * (1 - r["BLAS"]) / calls * 1e6 if calls else float("nan")
        lines.append(f"| {r['suite']} | {r['row']} | {format_time(r['cpu_per_step'])} | " +
                     " | ".join(str(r.get(k, 0)) for k in COUNTED) + " | " +
                     " | ".join(f"{100 * r[c]:.0f}" for c in CATEGORIES) + f" | {per_call:.1f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", action="append", choices=["core", "rnn", "attention", "workloads", "lessons"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=float, default=None, help="CPU seconds of sampling per row")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seconds = args.seconds or (0.3 if args.quick else 1.5)
    if args.child:
        return child(args.child, args.mode, args.quick, args.out, seconds)

    with open("/proc/cpuinfo") as f:
        processor = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    print(f"processor: {processor}; {os.cpu_count()} CPUs; load: {os.getloadavg()}")
    results = []
    with tempfile.TemporaryDirectory() as work:
        for suite in args.suite or ["core", "rnn", "attention", "workloads"]:
            counts = {c["row"]: c for c in count_calls(suite, args.quick, work)}
            for row in time_split(suite, args.quick, work, seconds):
                results.append(dict(counts.get(row["row"], {}), **row, suite=suite))
            print(f"suite {suite}: {sum(r['suite'] == suite for r in results)} rows", flush=True)
    print(f"load after: {os.getloadavg()}")
    print()
    print(table(results))
    print("\nµs per NumPy call: the step's CPU time outside BLAS / (ufunc calls + reductions)")


if __name__ == "__main__":
    main()
