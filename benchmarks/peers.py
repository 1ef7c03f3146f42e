"""The char-LM training step in minigrad, PyTorch, DeZero and Chainer, each in its own process.

    python benchmarks/peers.py                                  minigrad's two tiers and PyTorch
    python benchmarks/peers.py --peers-python /tmp/peers-venv/bin/python
                                                                also DeZero and Chainer, run by that Python
    python benchmarks/peers.py --minigrad ../base --clock cpu   minigrad from another checkout (before/after),
                                                                timed in CPU time

An optional script (not a suite of run.py, not run by CI or the tests): it writes nothing,
it prints a markdown table to paste into benchmarks/results/.

The step, as a course writes it (issue 41): Embedding(65, 32) -> LSTM(32, H) -> Linear(H, 65)
-> cross_entropy -> backward -> SGD(lr 0.1), batch 32, T = 64, float32, one BLAS thread.
Every library runs it as a loop of consecutive calls of ``step()`` in two ways:

    dropped   ``step()``, its result discarded: the step's graph is freed at its end (the usual loop)
    kept      ``loss = step()``: the caller holds the loss, so the graph lives until the next step

Per way: the minimum and the median of the per-step times over STEPS steps (after WARMUP; wall
clock, or with --clock cpu the thread's CPU time, which counts the kernel's time in page faults
but not the time other processes hold the CPU), and the page faults per step (``ru_minflt`` of
getrusage over the timed steps).  Each way runs twice, dropped, kept, dropped, kept, and the
second run of each is reported: the allocator then has a history, as in a real loop.

DeZero (0.0.13) and Chainer (7.8.1) need NumPy < 1.24 (they use ``numpy.bool``, ``numpy.int``)
and an old setuptools (``pkg_resources``), so they live in a venv of their own, made as in the
results file benchmarks/results/20261128-issue41-peers.md.  DeZero's LSTM is a cell: the model
loops it over the T steps; Chainer's is ``L.NStepLSTM`` (one call for the sequence).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
V, E, N, T, LR = 65, 32, 32, 64, 0.1
WARMUP, STEPS = 5, 40
LIBRARIES = ["torch", "minigrad", "minigrad-reference"]
PEERS = ["dezero", "chainer"]


def one_thread():
    """One BLAS thread, before NumPy (or a library that loads it) is imported."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"


def torch_step(H):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    embedding, lstm, head = torch.nn.Embedding(V, E), torch.nn.LSTM(E, H, batch_first=True), torch.nn.Linear(H, V)
    parameters = [*embedding.parameters(), *lstm.parameters(), *head.parameters()]
    optimizer = torch.optim.SGD(parameters, lr=LR)
    ids = torch.randint(0, V, (N, T + 1))
    x, y = ids[:, :-1], ids[:, 1:]

    def step():
        out, _ = lstm(embedding(x))
        loss = torch.nn.functional.cross_entropy(head(out).reshape(-1, V), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step, torch.__version__


def minigrad_step(H, reference):
    sys.path.insert(0, os.environ.get("PEERS_MINIGRAD_CHECKOUT", ROOT))
    import minigrad
    from minigrad import functional as F, nn, optim
    minigrad.manual_seed(0)
    embedding, head = nn.Embedding(V, E), nn.Linear(H, V)
    lstm = nn.LSTM(E, H, batch_first=True, reference=reference)
    optimizer = optim.SGD([*embedding.parameters(), *lstm.parameters(), *head.parameters()], lr=LR)
    ids = minigrad.randint(0, V, (N, T + 1))
    x, y = ids[:, :-1], ids[:, 1:]

    def step():
        out, _ = lstm(embedding(x))
        loss = F.cross_entropy(head(out).reshape(-1, V), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step, minigrad.__version__


def dezero_step(H):
    """DeZero's way (its book, step 59): the LSTM cell, the head and the loss applied step by step."""
    import numpy
    import dezero
    from dezero import functions as DF, layers as DL, optimizers
    numpy.random.seed(0)

    class Model(dezero.Model):
        def __init__(self):
            super().__init__()
            self.embed = DL.EmbedID(V, E)
            self.embed.W.data = self.embed.W.data.astype(numpy.float32)   # randn gives float64; the rest is float32
            self.lstm = DL.LSTM(H, in_size=E)
            self.head = DL.Linear(V, in_size=H)

    model = Model()
    optimizer = optimizers.SGD(lr=LR).setup(model)
    ids = numpy.random.randint(0, V, (N, T + 1))

    def step():
        model.lstm.reset_state()
        loss = 0
        for t in range(T):
            h = model.lstm(model.embed(ids[:, t]))                # (N, H)
            loss = loss + DF.softmax_cross_entropy(model.head(h), ids[:, t + 1])
        loss = loss / T
        model.cleargrads()
        loss.backward()
        optimizer.update()
        return loss
    return step, dezero.__version__


def chainer_step(H):
    import numpy
    import chainer
    from chainer import functions as CF, links as CL, optimizers
    numpy.random.seed(0)
    embed, lstm, head = CL.EmbedID(V, E), CL.NStepLSTM(1, E, H, 0.0), CL.Linear(H, V)
    model = chainer.ChainList(embed, lstm, head)
    optimizer = optimizers.SGD(lr=LR)
    optimizer.setup(model)
    ids = numpy.random.randint(0, V, (N, T + 1)).astype(numpy.int32)
    x, y = ids[:, :-1], ids[:, 1:].reshape(-1)

    def step():
        xs = CF.separate(embed(x), axis=0)                         # N sequences of (T, E)
        _, _, hs = lstm(None, None, xs)
        loss = CF.softmax_cross_entropy(head(CF.concat(hs, axis=0)), y)
        model.cleargrads()
        loss.backward()
        optimizer.update()
        return loss
    return step, chainer.__version__


def measure(library, H, clock):
    """Run in a fresh process: {way: (min s, median s, page faults per step)}, the version."""
    import resource
    import time
    now = time.thread_time if clock == "cpu" else time.perf_counter
    if library in ("minigrad", "minigrad-reference"):
        step, version = minigrad_step(H, library == "minigrad-reference")
    else:
        step, version = {"torch": torch_step, "dezero": dezero_step, "chainer": chainer_step}[library](H)
    results = {}
    for way in ("dropped", "kept", "dropped", "kept"):               # twice each, interleaved; keep the second
        loss = None
        for _ in range(WARMUP):
            if way == "kept":
                loss = step()
            else:
                step()
        times = []
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(STEPS):
            start = now()
            if way == "kept":
                loss = step()
            else:
                step()
            times.append(now() - start)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / STEPS
        del loss
        results[way] = (min(times), statistics.median(times), faults)
    return results, version


def run_in_process(python, library, H, clock, checkout=ROOT):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PEERS_MINIGRAD_CHECKOUT=checkout)
    result = subprocess.run([python, os.path.abspath(__file__), "--child", library, str(H), clock],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{library} at hidden {H} failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])     # [{way: [min, median, faults]}, version]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hidden", type=int, action="append", help="hidden sizes (default 128 and 256)")
    parser.add_argument("--peers-python", help="a Python with dezero and chainer installed (its own venv)")
    parser.add_argument("--library", action="append", help="only these libraries")
    parser.add_argument("--rounds", type=int, default=3, help="processes per library and size")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: the thread's CPU time (page faults included), steadier on a busy machine")
    parser.add_argument("--minigrad", default=ROOT, help="the checkout to import minigrad from (default: this one)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        one_thread()
        print(json.dumps(measure(args.child[0], int(args.child[1]), args.child[2])))
        return
    libraries = args.library or LIBRARIES + (PEERS if args.peers_python else [])
    print("| library | version | hidden | dropped: min / median ms | page faults per step | "
          "kept: min / median ms | page faults per step |")
    print("|---|---|---|---|---|---|---|")
    for H in args.hidden or [128, 256]:
        for library in libraries:
            python = args.peers_python if library in PEERS else sys.executable
            runs = [run_in_process(python, library, H, args.clock, args.minigrad) for _ in range(args.rounds)]
            print(f"| {library} | {runs[0][1]} | {H} | {cells(runs, 'dropped')} | {cells(runs, 'kept')} |", flush=True)


def cells(runs, way):
    """Over the processes: the least minimum, the median of the medians, and the range of page faults per
    step (a process's hash seed orders the frees of its graph, so glibc's history differs between them)."""
    least = min(results[way][0] for results, _ in runs)
    middle = statistics.median(results[way][1] for results, _ in runs)
    faults = sorted(results[way][2] for results, _ in runs)
    spread = f"{faults[0]:.0f}" if round(faults[0]) == round(faults[-1]) else f"{faults[0]:.0f}-{faults[-1]:.0f}"
    return f"{least * 1e3:.1f} / {middle * 1e3:.1f} | {spread}"


if __name__ == "__main__":
    main()
