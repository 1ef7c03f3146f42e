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
# # Lesson 5: Time-series forecasting
#
# **What you will learn**
#
# 1. To measure a model against *baselines* before believing it: the naive
#    forecast (repeat the last value) and a linear model over the window.
# 2. What a recurrent model's output really is: with one unit, its prediction
#    is a tanh, stuck in (-1, 1).
# 3. Stacking recurrent layers (a *deep* RNN), and why a dense output head is
#    better than a last recurrent layer with one unit.
#
# **Task.**  Each series is a sum of two sine waves with random amplitudes,
# frequencies and phases plus noise (`minigrad.data.sine_waves`).  A model
# reads 50 steps x_1..x_50 and predicts x_51.  Shapes: inputs (N, 50, 1),
# targets (N, 1).  The loss and the score are the mean squared error (MSE).
#
# **Notation** as in lesson 3: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh).
# A deep RNN feeds layer ℓ's states h_t^(ℓ) as the inputs of layer ℓ+1.  The
# model names follow Géron's *Hands-On Machine Learning* (ch. 15), whose Keras
# `SimpleRNN` is this same tanh cell.

# %%
import time

import numpy as np

import minigrad
import minigrad.data
from minigrad import functional as F
from minigrad import lesson, nn, optim

run = lesson.setup("05_forecasting")
plt = run.pyplot()

n_train, n_val = run.size(2000, 7000), run.size(300, 1000)
train_x, train_y = minigrad.data.sine_waves(n_train, steps=50, seed=0, device=run.device)
val_x, val_y = minigrad.data.sine_waves(n_val, steps=50, seed=1, device=run.device)
print(f"train {train_x.shape} -> {train_y.shape}; validation {val_x.shape}")

# %% [markdown]
# ## 1. The models

# %%
class LastValue(nn.Module):
    """The naive forecast: x_51 = x_50.  No parameters."""

    def forward(self, x):
        return x[:, -1]


class LinearWindow(nn.Module):
    """x_51 = w · (x_1..x_50) + b: a linear autoregressive model."""

    def __init__(self, steps=50):
        super().__init__()
        self.linear = nn.Linear(steps, 1)

    def forward(self, x):
        return self.linear(x.reshape(x.shape[0], -1))


class SimpleRNN(nn.Module):
    """One recurrent layer with ONE unit: the prediction is its last state, a tanh in (-1, 1)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(1, 1, batch_first=True)

    def forward(self, x):
        _, h_n = self.rnn(x)                                # (1, N, 1)
        return h_n[-1]


class DeepRNN(nn.Module):
    """Two layers of 20 units, then a third recurrent layer of one unit (its state is the prediction)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(1, 20, num_layers=2, batch_first=True)
        self.out = nn.RNN(20, 1, batch_first=True)

    def forward(self, x):
        states, _ = self.rnn(x)                             # (N, 50, 20)
        _, h_n = self.out(states)
        return h_n[-1]


class DeepRNNDense(nn.Module):
    """Two layers of 20 units and a linear head on the last state: any output range, faster to train."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(1, 20, num_layers=2, batch_first=True)
        self.head = nn.Linear(20, 1)

    def forward(self, x):
        _, h_n = self.rnn(x)                                # (2, N, 20)
        return self.head(h_n[-1])


# %% [markdown]
# ## 2. Training
#
# Adam with mini-batches of 32, the same number of updates for every model.

# %%
def validation_mse(model):
    with minigrad.no_grad():
        return F.mse_loss(model(val_x), val_y).item()


def train(model, updates):
    optimizer = optim.Adam(model.parameters(), lr=5e-3)
    order = np.random.default_rng(0)
    progress = run.progress(updates)
    for step in range(updates):
        rows = minigrad.tensor(order.integers(0, n_train, 32), device=run.device)
        loss = F.mse_loss(model(train_x[rows]), train_y[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        progress.log(step, loss=loss.item())


updates = run.size(150, 3000)
models = {"naive (last value)": LastValue, "linear": LinearWindow, "simple RNN (1 unit)": SimpleRNN,
          "deep RNN": DeepRNN, "deep RNN + dense head": DeepRNNDense}
rows, trained = [], {}
for name, make in models.items():
    minigrad.manual_seed(0)
    model = make().to(run.device)
    started = time.perf_counter()
    if model.num_parameters():
        print(f"--- {name}")
        train(model, updates)
    trained[name] = model
    rows.append({"model": name, "parameters": model.num_parameters(), "validation MSE": validation_mse(model),
                 "seconds": time.perf_counter() - started})
run.table(rows, f"Forecasting the 51st value ({updates} updates of 32)")
mse = {r["model"]: r["validation MSE"] for r in rows}

if plt:
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    series = val_x.numpy()[0, :, 0]
    ax.plot(range(50), series, ".-", label="input x_1..x_50")
    ax.plot([50], val_y.numpy()[0], "ko", label="true x_51")
    with minigrad.no_grad():
        for name, model in trained.items():
            ax.plot([50], [float(model(val_x[:1]).numpy()[0, 0])], "x", label=name)
    ax.set_xlabel("t")
    ax.legend()
    ax.set_title("One validation series")
    run.savefig(fig, "series.png")

    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    ax.barh(list(mse), list(mse.values()))
    ax.set_xscale("log")
    ax.set_xlabel("validation MSE (log scale)")
    run.savefig(fig, "validation_mse.png")

run.check(mse["linear"] < mse["naive (last value)"], "the linear model beats the naive forecast")
run.check(mse["deep RNN + dense head"] < mse["naive (last value)"], "the deep RNN with a dense head beats the naive forecast")
if not run.quick:
    run.check(mse["deep RNN + dense head"] < mse["simple RNN (1 unit)"], "the dense head beats the one-unit RNN")

# %% [markdown]
# ## Exercises
#
# See `minigrad assignment list` for the coursework; the RNN assignment's BPTT
# is what trains every model here.
#
# 1. Predict the next 10 values at once (`sine_waves(..., horizon=10)`): a
#    head with 10 outputs against predicting one step and feeding it back ten times.
# 2. Replace `nn.RNN` by `nn.GRU` and `nn.LSTM` in the deep model.  Which is
#    best per second of training?
# 3. Scale the targets of the one-unit RNN by 1/2 during training (and the
#    predictions by 2).  Why does its error drop?

# %%
run.done()
