"""A/B of one speed trick, in one process: the LSTM's column blocks (rnn_fast.py block 13).

    python benchmarks/ab_column_blocks.py

Issue 22 asks each trick to keep earning its place by an A/B measured back to back on one
machine.  Both variants run here in the same process, interleaved, on the same arrays:
``BLOCK_PRODUCT = 0`` turns the blocks off (whole products, the code before block 13),
the default turns them on.  In one process, because between processes the same code moves
+-10% on these machines (where NumPy's buffers land), more than the trick's effect.
Prints each size's column width and the time with blocks over the time without.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import minigrad  # noqa: E402
from minigrad import nn  # noqa: E402
from minigrad.functions import rnn_fast  # noqa: E402

import common  # noqa: E402

# (T, N, D, H): the rnn suite's, the char LM's (workloads), smaller batches, a wider layer
SIZES = [(50, 64, 128, 256), (64, 32, 32, 256), (128, 32, 32, 256), (64, 16, 64, 256),
         (64, 32, 64, 512), (64, 33, 32, 128), (64, 8, 256, 256)]


def main():
    common.limit_threads(1)
    print("\n".join(common.machine_description()))
    with open("/proc/cpuinfo") as f:
        processor = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    print(f"processor: {processor}; LSTM forward + backward, float32, one BLAS thread; CPU time of this "
          "thread, min of 6 interleaved rounds\n")
    print("| T, N, D, H | column width | whole products | column blocks | blocks / whole |")
    print("|---|---|---|---|---|")
    on = rnn_fast.BLOCK_PRODUCT
    for T, N, D, H in SIZES:
        minigrad.manual_seed(0)
        lstm = nn.LSTM(D, H)
        x = minigrad.randn(T, N, D, requires_grad=True)

        def step():
            out, _ = lstm(x)
            out.sum().backward()
        best = {0: float("inf"), on: float("inf")}
        for limit in best:
            rnn_fast.BLOCK_PRODUCT = limit
            step()
        start = time.thread_time()
        step()
        repeats = max(2, int(0.25 / (time.thread_time() - start)))
        for _ in range(6):
            for limit in best:
                rnn_fast.BLOCK_PRODUCT = limit
                start = time.thread_time()
                for _ in range(repeats):
                    step()
                best[limit] = min(best[limit], (time.thread_time() - start) / repeats)
        rnn_fast.BLOCK_PRODUCT = on
        print(f"| {T}, {N}, {D}, {H} | {rnn_fast._column_width(N, H, T)} | {best[0] * 1e3:.2f} ms | "
              f"{best[on] * 1e3:.2f} ms | {best[on] / best[0]:.3f} |", flush=True)


if __name__ == "__main__":
    from run import rerun_without_slow_blas_settings
    rerun_without_slow_blas_settings()
    main()
