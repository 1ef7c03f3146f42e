# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 13: On the GPU
#
# **What you will learn**
#
# 1. How minigrad runs the same code on a GPU: every array operation goes
#    through `xp`, which is NumPy for arrays on "cpu" and CuPy for arrays on
#    "cuda".  The device belongs to the data: `model.to("cuda")` moves the
#    parameters, and every op then runs where its inputs live.
# 2. How to time a GPU fairly: warm up first (CuPy compiles kernels on first
#    use), and wait for the GPU to finish (`.item()` on the loss copies one
#    number back, which synchronises).
# 3. When the GPU wins and when it does not: a GPU pays a fixed cost per
#    kernel launch (about 5-20 µs), so tiny models are launch-bound and
#    run no faster than on a CPU; large batches and wide layers are where it shines.
#
# Run it with `python lessons/13_gpu.py --device cuda` on a machine with an
# NVIDIA GPU and CuPy (`pip install -e ".[gpu]"` in the clone, or `pip install cupy-cuda12x`).  Without one, the lesson
# says so and times the CPU only.
#
# **The training.**  The same step loop as lessons 7 and 12: a small
# language model (an LSTM, then a Transformer) predicting the next character
# of the default corpus, `loss = cross_entropy(logits (N·T, V), targets (N·T,))`.
#
# **Read the code.**  How each array finds its device (NumPy or CuPy):
# `minigrad/backend.py`; moving tensors between devices:
# `minigrad/functions/device.py`.

# %%
import sys
import time

import minigrad
import minigrad.data
import minigrad.models
from minigrad import backend, lesson, nn, optim
from minigrad import functional as F
from minigrad.text import LMBatches, Vocab, char_tokenize

run = lesson.setup("13_gpu", fallback_device="cpu")   # --device cuda without a GPU: say so, use the CPU
plt = run.pyplot()

# %% [markdown]
# ## 1. Is there a GPU?
#
# `minigrad.backend.normalize_device("cuda")` loads CuPy and asks the driver
# for a device; it raises `DeviceError` with a message saying what is missing.

# %%
try:
    backend.normalize_device("cuda")
    gpu = "cuda"
    print("GPU found: CuPy", sys.modules["cupy"].__version__)
except backend.DeviceError as error:
    gpu = None
    print(f"No GPU here: {error}")
    print("This run times the CPU only.")

# %% [markdown]
# ## 2. The data and the models

# %%
text = minigrad.data.stdlib_corpus().lower()[:run.size(20000, 200000)]
vocab = Vocab.build([char_tokenize(text)])
stream = vocab.encode(char_tokenize(text))
V = len(vocab)
print(f"{len(stream)} characters, vocabulary {V}")


class CharLSTM(nn.Module):
    """Embedding -> LSTM -> Linear: next-character logits (N, T, V)."""

    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, ids):
        output, _ = self.lstm(self.embedding(ids))
        return self.head(output)


def make(kind, width):
    if kind == "LSTM":
        return CharLSTM(V, width)
    return minigrad.models.CausalLM(V, d_model=width, nhead=4, num_layers=2, dim_feedforward=4 * width,
                                    dropout=0.0, activation="relu")


# %% [markdown]
# ## 3. The timed step loop
#
# One function, any device: the batches are created on `device`, the model
# is moved there, and nothing else changes.  We time `steps` updates after
# `warmup` untimed ones.

# %%
def time_training(kind, width, batch_size, device, steps, warmup=3):
    minigrad.manual_seed(0)
    model = make(kind, width).to(device)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    batches = iter(LMBatches(stream, batch_size=batch_size, seq_len=32, device=device))
    losses = []
    for step in range(warmup + steps):
        if step == warmup:
            started = time.perf_counter()
        x, y = next(batches)
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())        # .item() copies to the host: on a GPU it waits for the step
    seconds = time.perf_counter() - started
    return {"model": kind, "width": width, "batch": batch_size, "device": device,
            "parameters": model.num_parameters(), "ms per step": 1000 * seconds / steps,
            "first loss": losses[0], "last loss": losses[-1]}


configs = [("LSTM", 64, 32), ("Transformer", 64, 32)]
if not run.quick:
    configs += [("LSTM", 256, 64), ("Transformer", 128, 64)]
steps = run.size(6, 30)
rows = []
for kind, width, batch_size in configs:
    for device in ["cpu"] + ([gpu] if gpu else []):
        rows.append(time_training(kind, width, batch_size, device, steps))
        print(f"{kind:12s} width {width:4d} batch {batch_size:3d} on {device}: {rows[-1]['ms per step']:.1f} ms/step")
run.table(rows, f"Training step time, {steps} timed steps of (batch, 32 characters)")

# %% [markdown]
# ## 4. CPU against GPU

# %%
if gpu:
    speedups = []
    for cpu_row, gpu_row in zip(rows[0::2], rows[1::2]):
        speedups.append({"model": cpu_row["model"], "width": cpu_row["width"], "batch": cpu_row["batch"],
                         "cpu ms": cpu_row["ms per step"], "gpu ms": gpu_row["ms per step"],
                         "speed-up": cpu_row["ms per step"] / gpu_row["ms per step"]})
    run.table(speedups, "GPU speed-up")
    same = all(abs(c["first loss"] - g["first loss"]) < 1e-3 for c, g in zip(rows[0::2], rows[1::2]))
    run.check(same, "the first loss is the same on CPU and GPU (same model, same data)")
else:
    print("No GPU: nothing to compare.  On a machine with an NVIDIA GPU run\n"
          "    pip install cupy-cuda12x     (CuPy for CUDA 12; in the clone: pip install -e '.[gpu]')\n"
          "    python lessons/13_gpu.py --device cuda")

if plt:
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    labels = [f"{r['model']} {r['width']}\n{r['device']}" for r in rows]
    ax.bar(range(len(rows)), [r["ms per step"] for r in rows],
           color=["tab:blue" if r["device"] == "cpu" else "tab:green" for r in rows])
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("ms per training step")
    ax.set_title("Step time" + ("" if gpu else " (CPU only: no GPU found)"))
    run.savefig(fig, "step_time.png")

cpu_rows = [r for r in rows if r["device"] == "cpu"]
run.check(all(r["ms per step"] > 0 for r in cpu_rows) and len(cpu_rows) == len(configs),
          "the CPU training ran and its step time is reported")
run.check(all(r["last loss"] < r["first loss"] for r in cpu_rows), "the loss went down on the CPU")

# %% [markdown]
# ## Exercises
#
# The coursework (see `minigrad assignment list`) grades your backward
# passes with gradcheck on the CPU.  Because they are written with `xp`,
# the same code runs on CuPy arrays: once they pass, train with them here.
#
# 1. On a GPU, double the batch size until the step time starts to grow.
#    Where does the GPU stop being launch-bound?
# 2. The LSTM runs its T steps one after another; the Transformer handles all
#    positions at once.  Which gains more from the GPU, and why?
# 3. Time the same loop in float64 (`model.double()`).  Consumer GPUs are
#    much slower in float64; how much slower is yours?

# %%
run.done()
