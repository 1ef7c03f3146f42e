"""Recurrent layers: forward + backward of minigrad's hand-written BPTT against PyTorch CPU.

Cases (float32, loss = sum of the outputs, one forward and one backward):

    LSTM, GRU, RNN    input 128, hidden 256, batch 64, T = 50 and T = 200, 1 layer
    LSTM              2 layers, and bidirectional, at T = 50
    tiny LSTM         input 8, hidden 8, batch 1, T = 50: a teaching-size model, where
                      the time goes to Python and per-call overhead, not to BLAS
    matmul floor      only the matmuls the LSTM's forward and backward must do, in NumPy:
                      the time no NumPy implementation can beat
    peak memory       extra resident memory of one T = 200 LSTM step, each library in a
                      fresh process (the row's unit is MiB)

Each timed case also runs on the reference tier (the layer built with ``reference=True``:
minigrad/functions/rnn.py, a loop over rnn_steps.py's step functions, instead of
rnn_fast.py), interleaved with the fast tier and PyTorch, in a "[reference tier]" row
whose note gives its ratio to the fast tier.

Goals (issue 3): LSTM <= 1.2x PyTorch, GRU <= 1.1x, RNN <= 1.0x, LSTM T = 200 memory
<= PyTorch's; (issue 14) tiny LSTM <= 1.5x, the fast tier within 5% of its ratios
before the tiers were split, the reference tier within 1.5x of the fast tier.
"""
import os
import subprocess
import sys

import numpy

from common import interleaved_times, median, paired_ratio, reference_tier_row, timed_row, torch_or_none

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import minigrad  # noqa: E402
from minigrad import nn  # noqa: E402


def _models(kind, D, H, layers=1, bidirectional=False, reference=False):
    torch = torch_or_none()
    ours = getattr(nn, kind)(D, H, num_layers=layers, bidirectional=bidirectional, reference=reference)
    theirs = None
    if torch is not None:
        theirs = getattr(torch.nn, kind)(D, H, num_layers=layers, bidirectional=bidirectional)
        ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _step_fns(kind, T, B, D, H, layers=1, bidirectional=False, reference=False):
    """(minigrad step, torch step or None), each one forward + backward on the same inputs."""
    torch = torch_or_none()
    ours, theirs = _models(kind, D, H, layers, bidirectional, reference)
    x = numpy.random.default_rng(0).standard_normal((T, B, D)).astype(numpy.float32)
    mx = minigrad.tensor(x, requires_grad=True)

    def mine():
        mx.grad = None
        ours.zero_grad()
        out, _ = ours(mx)
        out.sum().backward()

    if theirs is None:
        return mine, None
    tx = torch.tensor(x, requires_grad=True)

    def reference():
        tx.grad = None
        theirs.zero_grad()
        out, _ = theirs(tx)
        out.sum().backward()

    return mine, reference


def _matmul_floor(T, B, D, H, G=4):
    """Only the matmuls of an LSTM layer's forward + backward (NumPy, float32)."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((T * B, D)).astype(numpy.float32)
    w_ih = rng.standard_normal((G * H, D)).astype(numpy.float32)
    w_hh = rng.standard_normal((G * H, H)).astype(numpy.float32)
    h = rng.standard_normal((T, B, H)).astype(numpy.float32)
    dA = rng.standard_normal((T, B, G * H)).astype(numpy.float32)
    gates = numpy.empty((B, G * H), numpy.float32)
    dh = numpy.empty((B, H), numpy.float32)

    def floor():
        x @ w_ih.T                                     # input projection, all steps
        for t in range(T):
            numpy.matmul(h[t], w_hh.T, out=gates)      # forward recurrence
        for t in range(T):
            numpy.matmul(dA[t], w_hh, out=dh)          # backward recurrence
        flat = dA.reshape(T * B, G * H)
        flat @ w_ih                                    # dx
        flat.T @ x                                     # dW_ih
        flat.T @ h.reshape(T * B, H)                   # dW_hh
    return floor


_MEMORY_SCRIPT = r"""
import resource, sys
sys.path[:0] = [{root!r}, {here!r}]
import numpy
library = sys.argv[1]
T, B, D, H = 200, 64, 128, 256
x = numpy.random.default_rng(0).standard_normal((T, B, D)).astype(numpy.float32)
if library == "torch":
    import torch
    torch.set_num_threads(1)
    model = torch.nn.LSTM(D, H)
    x = torch.tensor(x)
else:
    import minigrad
    from minigrad import nn
    model = nn.LSTM(D, H)
    x = minigrad.tensor(x)
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
def step():
    out, _ = model(x)
    out.sum().backward()
before = rss()                           # model and input already allocated
step()
# VmHWM: this process's own peak.  (ru_maxrss is not: Linux carries it over from the
# parent through fork + exec, so it reads the benchmark runner's size once that has grown.)
with open("/proc/self/status") as f:
    peak = int(next(line for line in f if line.startswith("VmHWM:")).split()[1]) * 1024
print(max(peak - before, 0) / 2 ** 20)
"""


def _extra_memory_mib(library):
    """Extra resident MiB of one T=200 LSTM step beyond what the process already held."""
    script = _MEMORY_SCRIPT.format(root=ROOT, here=HERE)
    result = subprocess.run([sys.executable, "-c", script, library], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    return float(result.stdout.strip().splitlines()[-1])


def run(quick):
    repeat = 3 if quick else 9
    B, D, H = 64, 128, 256
    rows = []
    cases = [("LSTM", 50, 1, False), ("GRU", 50, 1, False), ("RNN", 50, 1, False)]
    if not quick:
        cases += [("LSTM", 200, 1, False), ("GRU", 200, 1, False), ("RNN", 200, 1, False),
                  ("LSTM", 50, 2, False), ("LSTM", 50, 1, True)]
    for kind, T, layers, bidirectional in cases:
        mine, reference = _step_fns(kind, T, B, D, H, layers, bidirectional)
        mine_reference_tier, _ = _step_fns(kind, T, B, D, H, layers, bidirectional, reference=True)
        fns = [mine, mine_reference_tier] + ([] if reference is None else [reference])
        times = interleaved_times(fns, repeat=repeat)
        shape = f"{layers} layers" if layers > 1 else ("bidirectional" if bidirectional else "1 layer")
        case = f"{kind} fwd+bwd, in {D}, hidden {H}, batch {B}, T={T}, {shape}"
        rows.append(timed_row(case, times[0], times[2] if reference else None,
                              "float32" + (f"; median of paired ratios {paired_ratio(times[0], times[2]):.2f}x"
                                           if reference else "")))
        rows.append(reference_tier_row(case, times))
    floor = _matmul_floor(50, B, D, H)
    mine, reference = _step_fns("LSTM", 50, B, D, H)
    times = interleaved_times([floor] + ([mine] if reference is None else [mine, reference]), repeat=repeat)
    step, floor_median = median(times[1]), median(times[0])
    rows.append(timed_row(f"LSTM matmuls only (the floor), in {D}, hidden {H}, batch {B}, T=50", times[0],
                          times[2] if len(times) > 2 else None,
                          f"full minigrad step {step:.4f} s = {step / floor_median:.2f}x the floor (medians)"))
    mine, reference = _step_fns("LSTM", 50, 1, 8, 8)
    mine_reference_tier, _ = _step_fns("LSTM", 50, 1, 8, 8, reference=True)
    fns = [mine, mine_reference_tier] + ([] if reference is None else [reference])
    times = interleaved_times(fns, repeat=repeat * 5)
    case = "tiny LSTM fwd+bwd, in 8, hidden 8, batch 1, T=50"
    rows.append(timed_row(case, times[0], times[2] if reference else None,
                          f"{min(times[0]) / 50 * 1e6:.1f} us per step (minimum)"
                          + (f"; median of paired ratios {paired_ratio(times[0], times[2]):.2f}x"
                             if reference else "")))
    rows.append(reference_tier_row(case, times))
    if not quick:
        ours, theirs = _extra_memory_mib("minigrad"), _extra_memory_mib("torch")
        rows.append({"case": "LSTM T=200 step, extra resident memory (MiB)",
                     "minigrad_s": ours, "torch_s": theirs, "unit": "MiB",
                     "note": "fresh process each"})
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(row)
