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
# # Lesson 4: LSTM and GRU
#
# **What you will learn**
#
# 1. The gates of the LSTM and the GRU, and why an additive cell state lets
#    gradients survive many steps where the vanilla RNN's vanish (lesson 3).
# 2. The adding problem: a task that needs memory across the whole sequence,
#    on which the vanilla RNN stays at the baseline while LSTM and GRU solve it.
# 3. What the gates cost: parameter counts and speed.
#
# **Notation** (PyTorch's gate order, row vectors, σ the logistic sigmoid,
# ⊙ the elementwise product):
#
# LSTM, gates (i, f, g, o) stacked in `weight_ih` (4H, D) and `weight_hh` (4H, H):
#
#     i_t = σ(x_t W_iiᵀ + b_ii + h_{t-1} W_hiᵀ + b_hi)        input gate
#     f_t = σ(x_t W_ifᵀ + b_if + h_{t-1} W_hfᵀ + b_hf)        forget gate
#     g_t = tanh(x_t W_igᵀ + b_ig + h_{t-1} W_hgᵀ + b_hg)     candidate
#     o_t = σ(x_t W_ioᵀ + b_io + h_{t-1} W_hoᵀ + b_ho)        output gate
#     c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t,        h_t = o_t ⊙ tanh(c_t)
#
# GRU, gates (r, z, n) in `weight_ih` (3H, D) and `weight_hh` (3H, H):
#
#     r_t = σ(x_t W_irᵀ + b_ir + h_{t-1} W_hrᵀ + b_hr)        reset gate
#     z_t = σ(x_t W_izᵀ + b_iz + h_{t-1} W_hzᵀ + b_hz)        update gate
#     n_t = tanh(x_t W_inᵀ + b_in + r_t ⊙ (h_{t-1} W_hnᵀ + b_hn))
#     h_t = (1 - z_t) ⊙ n_t + z_t ⊙ h_{t-1}
#
# Textbooks differ: Dive into Deep Learning writes the candidate state with
# the reset gate applied *before* the recurrent matmul, tanh(X W_xh + (R ⊙ H) W_hh + b)
# (Cho et al. 2014 as published, arXiv 1406.1078v3; Keras' documentation notes
# that its first arXiv version had the reset after the matmul, as PyTorch;
# `nn.GRU(..., reset_after=False)` in minigrad), and
# some texts swap the roles of z and 1 - z.  Here and in PyTorch, z close to
# 1 means "keep the old state".
#
# **Why it helps.**  In the LSTM, ∂c_t/∂c_{t-1} = diag(f_t) (plus terms
# through the gates): when the forget gate is near 1 the gradient flows back
# along c unchanged, step after step, with no W_hh power and no tanh'
# squeezing it.  The GRU's z plays the same role: h_t = z_t ⊙ h_{t-1} + ...
#
# **Read the code.**  One LSTM or GRU step, forward and backward, gate by
# gate: `minigrad/functions/rnn_steps.py`; whole sequences with BPTT, a loop
# over those steps: `minigrad/functions/rnn.py`; the layers: `minigrad/nn/rnn.py`
# (built here with `reference=True`, so they run that code; the default fast
# tier, `rnn_fast.py`, gives the same numbers); the cells, one step each:
# `minigrad/nn/rnn_cell.py`.

# %%
import time

import numpy as np

import minigrad
import minigrad.data
from minigrad import functional as F
from minigrad import lesson, nn, optim

run = lesson.setup("04_lstm_gru")
plt = run.pyplot()

# %% [markdown]
# ## 1. Parameter counts and speed
#
# For input size D and hidden size H, one layer has
#
#     RNN   H (D + H) + 2H        (W_ih, W_hh, b_ih, b_hh)
#     GRU   3 [H (D + H) + 2H]
#     LSTM  4 [H (D + H) + 2H]
#
# We check the formulas against the layers and time a forward + backward pass.

# %%
D, H = 2, run.size(16, 32)
bench_x = minigrad.randn(64, 50, D, device=run.device)
rows = []
for name, cls, gates in (("RNN", nn.RNN, 1), ("GRU", nn.GRU, 3), ("LSTM", nn.LSTM, 4)):
    layer = cls(D, H, batch_first=True, reference=True).to(run.device)     # the tier whose code we read
    formula = gates * (H * (D + H) + 2 * H)
    started = time.perf_counter()
    repeats = run.size(3, 10)
    for _ in range(repeats):
        output, _ = layer(bench_x)
        output.sum().backward()
    ms = (time.perf_counter() - started) / repeats * 1000
    rows.append({"layer": name, "parameters": layer.num_parameters(), "formula": formula,
                 "fwd+bwd ms (N=64, T=50)": ms})
run.table(rows, f"One layer, D = {D}, H = {H}")
run.check(all(r["parameters"] == r["formula"] for r in rows), "parameter counts match H(D+H)+2H per gate")

# %% [markdown]
# ## 2. The adding problem
#
# Each input step carries two numbers: a random value in [0, 1) and a marker
# that is 1 at exactly two positions (one in each half of the sequence) and 0
# elsewhere.  The target is the sum of the two marked values.  Always
# predicting 1.0 gives a mean squared error of Var(U₁ + U₂) = 2/12 ≈ 0.167:
# the bar for a model that remembers neither value.  A model that keeps only
# the second, later value can predict 0.5 + U₂ and is left with
# Var(U₁) = 1/12 ≈ 0.083: a model that cannot remember the first marked value
# (the one T/2 or more steps back) stays there.
#
# A detail that matters: we set the LSTM's forget-gate bias to 1
# (Gers et al., 2000; Jozefowicz et al., 2015), so that f_t starts near
# σ(1) ≈ 0.73 and the cell remembers from the first update.  PyTorch's default
# (and minigrad's) initialises it like every other bias.

# %%
T = run.size(20, 50)
steps = run.size(450, 2000)
batch_size = 32
train_x, train_y = minigrad.data.adding_problem(run.size(4000, 20000), length=T, seed=0, device=run.device)
val_x, val_y = minigrad.data.adding_problem(500, length=T, seed=1, device=run.device)
print(f"sequence length T = {T}; inputs {train_x.shape}; baseline MSE {float(val_y.numpy().var()):.4f}")


class Regressor(nn.Module):
    """A recurrent layer reading the whole sequence; a linear head on its last state."""

    def __init__(self, cell, hidden_size):
        super().__init__()
        self.rnn = cell(2, hidden_size, batch_first=True, reference=True)   # the reference tier
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x):                                   # x (N, T, 2)
        output, _ = self.rnn(x)                             # (N, T, H)
        return self.head(output[:, -1])                     # (N, 1)


def train(cell):
    minigrad.manual_seed(0)
    model = Regressor(cell, H).to(run.device)
    if cell is nn.LSTM:
        with minigrad.no_grad():                            # forget gate: the second H rows (i, f, g, o)
            model.rnn.bias_ih_l0[H:2 * H] = 1.0
            model.rnn.bias_hh_l0[H:2 * H] = 0.0
    optimizer = optim.Adam(model.parameters(), lr=run.size(0.03, 0.01))
    order = np.random.default_rng(0)
    curve = []
    progress = run.progress(steps, unit="step")
    started = time.perf_counter()
    for step in range(steps):
        rows = minigrad.tensor(order.integers(0, train_x.shape[0], batch_size), device=run.device)
        loss = F.mse_loss(model(train_x[rows]), train_y[rows])
        optimizer.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 25 == 24 or step == steps - 1:
            with minigrad.no_grad():
                curve.append((step + 1, F.mse_loss(model(val_x), val_y).item()))
            progress.log(step, loss=loss.item(), val_mse=curve[-1][1])
    return curve, time.perf_counter() - started


curves, rows = {}, []
for name, cell in (("RNN", nn.RNN), ("LSTM", nn.LSTM), ("GRU", nn.GRU)):
    print(f"--- {name}")
    curves[name], seconds = train(cell)
    rows.append({"model": name, "validation MSE": curves[name][-1][1],
                 "best validation MSE": min(m for _, m in curves[name]), "seconds": seconds})
baseline = float(val_y.numpy().var())
marked = val_x.numpy()[:, :, 0][val_x.numpy()[:, :, 1] == 1].reshape(-1, 2)    # (N, 2): U1, U2 in order
second_only = float(np.mean((val_y.numpy()[:, 0] - 0.5 - marked[:, 1]) ** 2))   # predict 0.5 + U2
rows.append({"model": "predict the mean (baseline)", "validation MSE": baseline,
             "best validation MSE": baseline, "seconds": 0.0})
rows.append({"model": "predict 0.5 + U2 (remember only the second value)", "validation MSE": second_only,
             "best validation MSE": second_only, "seconds": 0.0})
run.table(rows, f"Adding problem, T = {T}, {steps} updates of {batch_size}")

if plt:
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, curve in curves.items():
        ax.plot([s for s, _ in curve], [m for _, m in curve], label=name)
    ax.axhline(baseline, color="k", linestyle="--", label="baseline (predict the mean)")
    ax.set_yscale("log")
    ax.set_xlabel("update")
    ax.set_ylabel("validation MSE")
    ax.set_title(f"The adding problem at T = {T}")
    ax.legend()
    run.savefig(fig, "adding_problem.png")

final = {r["model"]: r["best validation MSE"] for r in rows}
run.check(final["RNN"] > second_only, f"the vanilla RNN ({final['RNN']:.3f}) does not get below 0.5 + U2's "
          f"{second_only:.3f}: it has not learned to keep the first marked value")
run.check(final["LSTM"] < 0.5 * final["RNN"], "the LSTM beats the vanilla RNN")
run.check(min(final["LSTM"], final["GRU"]) < 0.2 * baseline, "a gated RNN learns the task (5x below the baseline)")
if not run.quick:
    run.check(max(final["LSTM"], final["GRU"]) < 0.1 * baseline, "both LSTM and GRU solve it (10x below the baseline)")

# %% [markdown]
# ## Exercises
#
# The coursework assignment on the **LSTM and GRU backward** (see
# `minigrad assignment list`) has you write `lstm_step_backward` and `gru_step_backward`;
# `minigrad check` grades them with gradcheck.
#
# 1. Train the LSTM without the forget-bias trick.  How many more updates does
#    it need?
# 2. Raise T to 100.  Which model breaks first?  Plot the fraction of forget
#    gates above 0.95 during training (`minigrad.instruments`).
# 3. Train `nn.GRU(..., reset_after=False)`, the textbook variant.  Any difference?
# 4. From the table of section 1, which layer gives the most accuracy per
#    parameter on this task?  Per second?

# %%
run.done()
