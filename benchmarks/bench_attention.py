"""Attention suite: multi-head attention and a Transformer encoder layer against PyTorch CPU,
and how attention and an LSTM grow with the sequence length T.

Cases (float32, loss = sum of the outputs, one forward and one backward):

    MultiheadAttention        batch 32, T = 128, d_model 256, 8 heads, self-attention
    TransformerEncoderLayer   the same, feed-forward 1024, post-LN, ReLU, dropout 0
    attention vs T            MultiheadAttention, batch 8, d_model 256, 8 heads, T = 64 ... 1024
    LSTM vs T                 nn.LSTM(256, 256), batch 8, the same T
    growth exponents          k in time ~ T^k, fitted by least squares on log time vs log T
                              over the three longest lengths

Per layer, self-attention costs O(T^2 d) (the (T, T) score matrix per head) and
a recurrent layer O(T d^2) (one (d, 4d) product per step) - the table in
Vaswani et al. (2017), section 4 - so attention's exponent tends to 2 and the
LSTM's to 1; at these sizes attention's matmuls over d still matter, so its
measured exponent lies between 1 and 2.

The T = 128 cases and attention at T = 128 and 1024 also run on the reference tier
(the layers built with ``reference=True``: minigrad/functions/attention.py, which stores the
weights, instead of the blocked attention_fast.py) in "[reference tier]" rows.

Goals (issue 4): both T = 128 cases within 1.5x of PyTorch; attention within 2x at T = 512;
(issue 14) the reference tier within 1.5x of the fast tier.
"""
import math
import os
import sys

import numpy

from common import interleaved_times, reference_tier_row, timed_row, torch_or_none

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import minigrad  # noqa: E402
from minigrad import nn  # noqa: E402

D_MODEL, HEADS, FEEDFORWARD = 256, 8, 1024


def _inputs(shape, torch):
    x = numpy.random.default_rng(0).standard_normal(shape).astype(numpy.float32)
    ours = minigrad.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True) if torch is not None else None
    return ours, theirs


def _attention_pair(batch, T, torch, reference=False):
    """forward+backward closures of MultiheadAttention for both libraries, the same weights."""
    ours = nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True, reference=reference)
    x, tx = _inputs((batch, T, D_MODEL), torch)
    fns = [lambda: ours(x, x, x, need_weights=False)[0].sum().backward()]
    if torch is not None:
        theirs = torch.nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True)
        ours.load_state_dict(nn.from_torch_state_dict(theirs.state_dict()))
        fns.append(lambda: theirs(tx, tx, tx, need_weights=False)[0].sum().backward())
    return fns


def _encoder_layer_pair(batch, T, torch, reference=False):
    options = dict(dim_feedforward=FEEDFORWARD, dropout=0.0, batch_first=True)
    ours = nn.TransformerEncoderLayer(D_MODEL, HEADS, **options, reference=reference)
    x, tx = _inputs((batch, T, D_MODEL), torch)
    fns = [lambda: ours(x).sum().backward()]
    if torch is not None:
        theirs = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, **options)
        ours.load_state_dict(nn.from_torch_state_dict(theirs.state_dict()))
        fns.append(lambda: theirs(tx).sum().backward())
    return fns


def _lstm_pair(batch, T, torch):
    ours = nn.LSTM(D_MODEL, D_MODEL)
    x, tx = _inputs((T, batch, D_MODEL), torch)
    fns = [lambda: ours(x)[0].sum().backward()]
    if torch is not None:
        theirs = torch.nn.LSTM(D_MODEL, D_MODEL)
        ours.load_state_dict(theirs.state_dict())
        fns.append(lambda: theirs(tx)[0].sum().backward())
    return fns


def _tier_row(case, fns, reference_fn, repeat):
    """Time [fast, reference tier, torch] interleaved: the "[reference tier]" row."""
    return reference_tier_row(case, interleaved_times([fns[0], reference_fn] + fns[1:], repeat=repeat))


def _row(case, times, note=""):
    """A row from ``interleaved_times`` of [minigrad, torch (optional)]: minimum and median of each."""
    return timed_row(case, times[0], times[1] if len(times) > 1 else None, note)


def growth_exponent(lengths, seconds):
    """k in seconds ~ c T^k: the least-squares slope of log(seconds) against log(T)."""
    logs_t = [math.log(t) for t in lengths]
    logs_s = [math.log(s) for s in seconds]
    mean_t, mean_s = sum(logs_t) / len(logs_t), sum(logs_s) / len(logs_s)
    covariance = sum((a - mean_t) * (b - mean_s) for a, b in zip(logs_t, logs_s))
    return covariance / sum((a - mean_t) ** 2 for a in logs_t)


def _one_blas_thread(fn):
    """fn with NumPy's BLAS limited to one thread (PyTorch keeps its own threads).

    On a shared, loaded machine OpenBLAS's worker threads wake up late for each
    of the many small products of batched attention; one thread avoids that.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None

    def limited():
        with threadpool_limits(1, user_api="blas"):
            fn()
    return limited


def run(quick):
    torch = torch_or_none()
    repeat = 3 if quick else 7
    rows = []
    batch, T = 32, 128
    for name, make, goal in (("MultiheadAttention", _attention_pair, "goal <= 1.5x"),
                             ("TransformerEncoderLayer", _encoder_layer_pair, "goal <= 1.5x; dropout 0")):
        fns = make(batch, T, torch)
        case = f"{name} fwd+bwd, batch {batch}, T={T}, d={D_MODEL}, {HEADS} heads, ff={FEEDFORWARD}"
        rows.append(_row(case, interleaved_times(fns, repeat=repeat), goal))
        rows.append(_tier_row(case, fns, make(batch, T, None, reference=True)[0], repeat))
        single = _one_blas_thread(fns[0])
        if single is not None:
            times = interleaved_times([single] + fns[1:], repeat=repeat)
            rows.append(_row(case + ", minigrad's BLAS on 1 thread", times,
                             "threadpoolctl limit; PyTorch unchanged"))

    batch = 8
    lengths = [64, 128, 256, 512] if quick else [64, 128, 256, 512, 1024]
    series = {"attention": ([], []), "LSTM": ([], [])}
    has_lstm = hasattr(nn, "LSTM")
    for T in lengths:
        fns = _attention_pair(batch, T, torch)
        times = interleaved_times(fns, repeat=max(2, repeat - 2 * (T >= 512)))
        goal = "goal <= 2x" if T == 512 else ""
        rows.append(_row(f"attention vs T: MultiheadAttention fwd+bwd, batch {batch}, T={T}", times, goal))
        if T in (128, 1024):
            reference_fn = _attention_pair(batch, T, None, reference=True)[0]
            rows.append(_tier_row(f"attention vs T: MultiheadAttention fwd+bwd, batch {batch}, T={T}",
                                  fns, reference_fn, max(2, repeat - 2 * (T >= 512))))
        single = _one_blas_thread(fns[0])
        if single is not None and T in (512, 1024):
            rows.append(_row(f"attention vs T: batch {batch}, T={T}, minigrad's BLAS on 1 thread",
                             interleaved_times([single] + fns[1:], repeat=2), goal))
        for store, bucket in zip(series["attention"], times):
            store.append(min(bucket))
        if has_lstm:
            times = interleaved_times(_lstm_pair(batch, T, torch), repeat=max(2, repeat - 2 * (T >= 512)))
            rows.append(_row(f"LSTM vs T: nn.LSTM({D_MODEL}, {D_MODEL}) fwd+bwd, batch {batch}, T={T}", times))
            for store, bucket in zip(series["LSTM"], times):
                store.append(min(bucket))
    for name, (ours, theirs) in series.items():
        if not ours:
            rows.append({"case": f"growth exponent: {name}", "minigrad_s": None, "torch_s": None,
                         "note": "nn.LSTM not available in this checkout"})
            continue
        fit = lengths[-3:]                 # the three longest: the asymptotic regime, least noise
        note = f"time ~ T^k over T={fit[0]}..{fit[-1]}: minigrad k={growth_exponent(fit, ours[-3:]):.2f}"
        if theirs:
            note += f", torch k={growth_exponent(fit, theirs[-3:]):.2f}"
        rows.append({"case": f"growth exponent: {name}", "minigrad_s": None, "torch_s": None, "note": note})
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        ratio = f"{row['minigrad_s'] / row['torch_s']:.2f}x" if row["minigrad_s"] and row["torch_s"] else "-"
        print(f"{row['case']:80s} {row['minigrad_s'] or 0:9.4f} {row['torch_s'] or 0:9.4f} {ratio:>7s}  {row['note']}")
