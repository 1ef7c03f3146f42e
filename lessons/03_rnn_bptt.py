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
# # Lesson 3: The vanilla RNN and backpropagation through time
#
# **What you will learn**
#
# 1. The recurrent network as one cell applied at every step, and its
#    *unrolled* graph: a deep network with shared weights.
# 2. Backpropagation through time (BPTT), derived by hand, written as a loop
#    that runs backwards over the steps, and checked with `gradcheck`.
# 3. Why gradients vanish or explode: the gradient reaching step t is
#    multiplied by the Jacobian of every later step, roughly powers of W_hh.
# 4. Gradient clipping, the standard cure for explosions.
# 5. Truncated BPTT: carrying the state across chunks of a long stream while
#    cutting the gradient at the chunk boundary.
#
# **Notation** (PyTorch's, row vectors, a batch of N in the rows):
#
#     a_t = x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh        (N, H)
#     h_t = tanh(a_t)                                       (N, H),   h_0 given (zeros)
#
# with x_t of shape (N, D), W_ih (H, D), W_hh (H, H).  Goodfellow et al. write
# column vectors, h_t = tanh(b + W h_{t-1} + U x_t); Dive into Deep Learning
# writes H_t = φ(X_t W_xh + H_{t-1} W_hh + b_h) with W_xh of shape (D, H), the
# transpose of PyTorch's W_ih.  The equations are the same; only the
# orientation of the matrices differs.  We index steps t = 1..T in the maths
# and 0..T-1 in code.
#
# **Read the code.**  One step of the RNN, forward and backward:
# `minigrad/functions/rnn_steps.py`; the whole sequence with backpropagation
# through time written by hand: `minigrad/functions/rnn.py`; the layer:
# `minigrad/nn/rnn.py`; gradient norms per step and spectral radius:
# `minigrad/instruments.py`; clipping: `minigrad/optim/clip.py`.

# %%
import time

import numpy as np

import minigrad
from minigrad import functional as F
from minigrad import lesson, nn, optim
from minigrad.autograd import Function

run = lesson.setup("03_rnn_bptt")
plt = run.pyplot()
f64 = minigrad.float64

# %% [markdown]
# ## 1. The unrolled graph
#
# Written with autograd primitives, the RNN is a Python loop.  Every pass
# through the loop adds the same few nodes to the graph, reusing the same
# weight tensors: the unrolled graph is a T-layer network whose layers share
# their weights.

# %%
def rnn_unrolled(x, h0, W_ih, W_hh, b_ih, b_hh):
    """x (T, N, D), h0 (N, H) -> all states (T, N, H), built from autograd primitives."""
    h = h0
    states = []
    for t in range(x.shape[0]):
        h = (x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).tanh()
        states.append(h)
    return minigrad.stack(states)


def count_nodes(tensor):
    """How many graph nodes produced ``tensor`` (an iterative walk)."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(p.grad_fn for p in node.inputs if p is not None)
    return len(seen)


T, N, D, H = 6, 3, 4, 5
minigrad.manual_seed(0)
x = minigrad.randn(T, N, D, dtype=f64, requires_grad=True)
h0 = minigrad.zeros(N, H, dtype=f64, requires_grad=True)
weights = [minigrad.randn(H, D, dtype=f64) * 0.5, minigrad.randn(H, H, dtype=f64) * 0.5,
           minigrad.randn(H, dtype=f64) * 0.1, minigrad.randn(H, dtype=f64) * 0.1]
W_ih, W_hh, b_ih, b_hh = [w.detach().requires_grad_() for w in weights]
for steps in (1, 2, 4, 6):
    print(f"T = {steps}: {count_nodes(rnn_unrolled(x[:steps], h0, W_ih, W_hh, b_ih, b_hh))} graph nodes")

# %% [markdown]
# ## 2. BPTT, derived
#
# Let the loss be a sum over the outputs, L = Σ_t ℓ_t(h_t), and write
# `dh_t` for the *total* gradient dL/dh_t.  h_t influences L directly
# (through ℓ_t) and through h_{t+1}, so going backwards in time:
#
#     dh_t  = ∂ℓ_t/∂h_t + dh_{t+1} ∂h_{t+1}/∂h_t = dout_t + da_{t+1} W_hh     (carried from the future)
#     da_t  = dh_t ⊙ (1 - h_t²)                                             (tanh' = 1 - tanh²)
#     dW_ih = Σ_t da_tᵀ x_t,     dW_hh = Σ_t da_tᵀ h_{t-1},     db_ih = db_hh = Σ_t Σ_n da_t
#     dx_t  = da_t W_ih,         dh_0 = da_1 W_hh
#
# The weights are shared by all steps, so their gradients are sums over
# steps, exactly as `a * a` in lesson 0 summed over two uses.  The loop below
# is these lines, in NumPy (or CuPy: `xp`), as a minigrad `Function`.

# %%
class RNNTanh(Function):
    """States (T, N, H) of a tanh RNN over x (T, N, D) from h0 (N, H); BPTT written by hand."""

    @staticmethod
    def forward(ctx, x, h0, W_ih, W_hh, b_ih, b_hh):
        xp = minigrad.backend.array_module(x)
        T = x.shape[0]
        hs = xp.zeros((T + 1,) + h0.shape, dtype=x.dtype)   # hs[t + 1] = h_t, hs[0] = h0
        hs[0] = h0
        for t in range(T):
            hs[t + 1] = xp.tanh(x[t] @ W_ih.T + b_ih + hs[t] @ W_hh.T + b_hh)
        ctx.save_for_backward(x, hs, W_ih, W_hh)
        return hs[1:]

    @staticmethod
    def backward(ctx, dout):                                # dout (T, N, H): dL/dh_t from above
        x, hs, W_ih, W_hh = ctx.saved_tensors
        xp = minigrad.backend.array_module(x)
        dx = xp.zeros_like(x)
        dW_ih, dW_hh = xp.zeros_like(W_ih), xp.zeros_like(W_hh)
        db = xp.zeros(W_hh.shape[0], dtype=x.dtype)
        dh_next = xp.zeros_like(hs[0])                      # nothing comes from after the last step
        for t in reversed(range(x.shape[0])):
            dh = dout[t] + dh_next                          # dh_t = dout_t + carried gradient
            da = dh * (1 - hs[t + 1] ** 2)                  # through tanh
            dW_ih += da.T @ x[t]
            dW_hh += da.T @ hs[t]
            db += da.sum(0)
            dx[t] = da @ W_ih
            dh_next = da @ W_hh                             # to step t - 1
        return dx, dh_next, dW_ih, dW_hh, db, db


class RNNTanhForgetful(RNNTanh):
    """A classic BPTT bug: the gradient carried from step t+1 is dropped."""

    @staticmethod
    def backward(ctx, dout):
        x, hs, W_ih, W_hh = ctx.saved_tensors
        xp = minigrad.backend.array_module(x)
        dx = xp.zeros_like(x)
        dW_ih, dW_hh = xp.zeros_like(W_ih), xp.zeros_like(W_hh)
        db = xp.zeros(W_hh.shape[0], dtype=x.dtype)
        da = None
        for t in reversed(range(x.shape[0])):
            da = dout[t] * (1 - hs[t + 1] ** 2)             # bug: dh_t = dout_t only
            dW_ih += da.T @ x[t]
            dW_hh += da.T @ hs[t]
            db += da.sum(0)
            dx[t] = da @ W_ih
        return dx, da @ W_hh, dW_ih, dW_hh, db, db


# %% [markdown]
# Three checks: the hand-written BPTT gives the same gradients as autograd on
# the unrolled graph; it passes `gradcheck` (finite differences); and the
# forgetful version fails it.

# %%
params = (x, h0, W_ih, W_hh, b_ih, b_hh)
upstream = minigrad.randn(T, N, H, dtype=f64)
grads = {}
for name, fn in (("autograd", rnn_unrolled), ("BPTT by hand", RNNTanh.apply)):
    for p in params:
        p.grad = None
    fn(*params).backward(upstream)
    grads[name] = [p.grad.cpu().numpy() for p in params]
difference = max(np.abs(a - b).max() for a, b in zip(grads["autograd"], grads["BPTT by hand"]))
print(f"max |autograd - BPTT| over all gradients: {difference:.2e}")
run.check(difference < 1e-12, "hand-written BPTT equals autograd through the unrolled graph")

report = minigrad.gradcheck(RNNTanh.apply, params)
print(report)
run.check(report.passed, "hand-written BPTT passes gradcheck")
bad = minigrad.gradcheck(RNNTanhForgetful.apply, params, raise_exception=False)
print(bad)
run.check(not bad.passed, "gradcheck rejects BPTT that forgets the gradient carried from step t+1")

# %% [markdown]
# minigrad's own `nn.RNN(..., reference=True)` runs the same loop: its
# reference tier, `minigrad/functions/rnn.py`, calls `rnn_step_forward` and
# `rnn_step_backward` of `minigrad/functions/rnn_steps.py` at every step.
# (Without `reference=True` the layer runs the fast tier, `rnn_fast.py`: the
# same numbers, arranged for speed; the tests prove the two equal.)  Same
# weights, same numbers:

# %%
layer = nn.RNN(D, H, reference=True).double()
layer.load_state_dict({"weight_ih_l0": W_ih.detach(), "weight_hh_l0": W_hh.detach(),
                       "bias_ih_l0": b_ih.detach(), "bias_hh_l0": b_hh.detach()})
output, h_n = layer(x.detach(), h0.detach().unsqueeze(0))
ours = RNNTanh.apply(x.detach(), h0.detach(), W_ih.detach(), W_hh.detach(), b_ih.detach(), b_hh.detach())
run.check(np.abs(output.numpy() - ours.numpy()).max() < 1e-12, "nn.RNN computes the same states")

# %% [markdown]
# ## 3. Vanishing and exploding gradients
#
# Unroll the carried gradient: from the last step back to step t,
#
#     dh_t = dh_T · D_T W_hh · D_{T-1} W_hh ··· D_{t+1} W_hh,    D_k = diag(1 - h_k²)
#
# (row vectors: the factor of the latest step comes first; matrices do not
# commute, so the order matters).  Every entry of D_k lies in (0, 1], so
#
#     ‖dh_t‖ ≤ ‖dh_T‖ · σ_max(W_hh)^(T-t),
#
# with σ_max the largest *singular value*: if σ_max < 1 the gradient shrinks at
# least like σ_max^(T-t), the loss at T barely sees step t, and long-range
# dependencies are never learned (**vanishing**; Pascanu, Mikolov & Bengio 2013,
# "On the difficulty of training recurrent neural networks", section 2.1: a
# sufficient condition, and σ_max > 1 a necessary one for exploding).  The
# spectral radius ρ (the largest |eigenvalue|) decides only the long run of
# W_hh's powers (‖W^k‖^(1/k) → ρ): a non-normal W_hh with ρ < 1 can still
# grow a gradient for many steps (below).  Near h = 0 the D_k are about the
# identity and the product is dh_T W_hh^(T-t); above ρ = 1 it can grow like
# ρ^(T-t) (**exploding**), until tanh saturates.  We measure ‖dL/dh_t‖ for
# L = <v, h_T> with W_hh = ρ Q for an orthogonal Q: then every singular value
# is ρ as well, so here σ_max = ρ and the two conditions coincide.

# %%
T_long = 30
H = 32
rng = np.random.default_rng(0)
Q, _ = np.linalg.qr(rng.standard_normal((H, H)))          # orthogonal: all |eigenvalues| = 1
inputs = minigrad.tensor(rng.standard_normal((T_long, 1, 4)) * 0.01, dtype=f64)
W_in = minigrad.tensor(rng.standard_normal((H, 4)), dtype=f64)
zero_bias = minigrad.zeros(H, dtype=f64)
v = minigrad.tensor(rng.standard_normal((1, H)), dtype=f64)

norms = {}
for rho in (0.5, 0.9, 1.0, 1.1, 1.5):
    W = minigrad.tensor(rho * Q, dtype=f64)
    h = minigrad.zeros(1, H, dtype=f64, requires_grad=True)  # so that every state joins the graph
    states = []
    for t in range(T_long):
        h = (inputs[t] @ W_in.T + h @ W.T + zero_bias).tanh()
        h.retain_grad()
        states.append(h)
    (states[-1] * v).sum().backward()
    norms[rho] = np.array([float(s.grad.norm()) for s in states])

rows = [{"rho": rho, "norm dL/dh_T": n[-1], "norm dL/dh_1": n[0], "ratio h_1 / h_T": n[0] / n[-1],
         "rho^(T-1)": rho ** (T_long - 1)} for rho, n in norms.items()]
run.table(rows, f"Gradient reaching the first step of {T_long} (tanh RNN, small inputs)")
run.check(norms[0.5][0] / norms[0.5][-1] < 1e-6, "with rho = 0.5 the gradient at step 1 has vanished (< 1e-6 of step T)")
run.check(norms[1.5][0] / norms[1.5][-1] > 10, "with rho = 1.5 it grows instead (> 10x step T's), until tanh saturates")

# %% [markdown]
# The spectral radius alone is not enough.  W = [[0.5, 4], [0, 0.5]] has both
# eigenvalues 0.5 (ρ = 0.5) but σ_max ≈ 4.06: pushed back through it, a
# gradient first grows about fourfold and only after several steps starts to
# shrink like 0.5^k.

# %%
W_nonnormal = np.array([[0.5, 4.0], [0.0, 0.5]])
g_back = np.array([1.0, 0.0])                              # a gradient (row vector) pushed back k steps: g W^k
grown = [float(np.linalg.norm(g_back @ np.linalg.matrix_power(W_nonnormal, k))) for k in range(8)]
print(f"spectral radius {max(abs(np.linalg.eigvals(W_nonnormal))):.2f}, largest singular value "
      f"{np.linalg.norm(W_nonnormal, 2):.2f}; |g W^k| for k = 0..7:", np.round(grown, 3))
run.check(max(grown) > 3 * grown[0], "rho < 1 does not stop a gradient from growing: sigma_max > 1 lets it")

if plt:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for rho, n in norms.items():
        left.semilogy(np.arange(1, T_long + 1), n, label=f"rho = {rho}")
    left.set_xlabel("step t")
    left.set_ylabel("|dL/dh_t|  (L depends on h_T only)")
    left.set_title("Gradient reaching step t")
    left.legend()
    powers = np.arange(0, T_long)
    for rho in norms:
        right.semilogy(powers, [np.linalg.norm(np.linalg.matrix_power(rho * Q, k), 2) for k in powers],
                       label=f"rho = {rho}")
    right.set_xlabel("k")
    right.set_ylabel("||W_hh^k||")
    right.set_title("Powers of W_hh")
    right.legend()
    run.savefig(fig, "vanishing_exploding.png")

# %% [markdown]
# With ρ = 1.5 the states themselves grow until tanh saturates; saturated
# units have tanh' ≈ 0, which then cuts the gradient again.  An RNN trained
# with plain gradient descent therefore lives between two failure modes.
# Two cures follow: **clipping** (below) against explosions, and **gated
# cells** (LSTM and GRU, lesson 4) against vanishing.
#
# ## 4. Training with truncated BPTT and gradient clipping
#
# A long stream (here a noisy sum of two sine waves, 1 value per step) is cut
# into B parallel rows and read in chunks of k steps.  After each chunk the
# state is **detached**: its value carries on into the next chunk, but the
# graph behind it is dropped, so the backward runs over k steps only (cost
# O(k), memory O(k)), at the price of not learning dependencies longer than k.
#
# Before each update we **clip** the gradient to a norm of at most 1:
# g ← g · min(1, 1 / ‖g‖).  `clip_grad_norm_` returns the norm before clipping,
# which we record.

# %%
class NextValue(nn.Module):
    """A one-layer tanh RNN reading one value per step and predicting the next value."""

    def __init__(self, hidden_size):
        super().__init__()
        self.rnn = nn.RNN(1, hidden_size, batch_first=True, reference=True)     # the tier to read
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x, h=None):                          # x (B, k, 1)
        output, h = self.rnn(x, h)                          # (B, k, H), (1, B, H)
        return self.head(output), h


minigrad.manual_seed(0)
B, k = 16, 20
length = run.size(1200, 4000)
time_axis = np.arange(B * length) * 0.1
stream = np.sin(time_axis) + 0.5 * np.sin(3.1 * time_axis + 1) + 0.05 * rng.standard_normal(B * length)
rows_of_stream = minigrad.tensor(stream.reshape(B, length, 1), dtype=minigrad.float32, device=run.device)
model = NextValue(32).to(run.device)
optimizer = optim.Adam(model.parameters(), lr=3e-3)
epochs = run.size(2, 4)
chunks = (length - 1) // k
progress = run.progress(epochs * chunks, every=max(1, epochs * chunks // 8))
losses, grad_norms = [], []
started = time.perf_counter()
for epoch in range(epochs):
    h = None
    for c in range(chunks):
        x_chunk = rows_of_stream[:, c * k:(c + 1) * k]
        y_chunk = rows_of_stream[:, c * k + 1:(c + 1) * k + 1]
        prediction, h = model(x_chunk, h)
        h = h.detach()                                      # truncate: keep the value, drop the graph
        loss = F.mse_loss(prediction, y_chunk)
        optimizer.zero_grad()
        loss.backward()
        grad_norms.append(float(optim.clip_grad_norm_(model.parameters(), 1.0)))
        optimizer.step()
        losses.append(loss.item())
        progress.log(epoch * chunks + c, loss=losses[-1], grad_norm=grad_norms[-1])
seconds = time.perf_counter() - started

naive = float(np.mean((stream[1:] - stream[:-1]) ** 2))
final = float(np.mean(losses[-chunks // 4:]))
run.table([{"chunk length k": k, "updates": len(losses), "final MSE": final, "variance": float(stream.var()),
            "last-value baseline MSE": naive, "largest grad norm": max(grad_norms), "seconds": seconds}],
          "Next-value prediction with truncated BPTT and clipping")
run.check(final < naive, "the RNN predicts the next value better than repeating the last one")

if plt:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    left.semilogy(losses)
    left.set_xlabel("update")
    left.set_ylabel("MSE")
    left.set_title("training loss")
    right.semilogy(grad_norms)
    right.axhline(1.0, color="k", linestyle="--", label="clip at 1")
    right.set_xlabel("update")
    right.set_ylabel("gradient norm before clipping")
    right.legend()
    run.savefig(fig, "tbptt_training.png")

# %% [markdown]
# The cut is exact: after `detach()` no gradient reaches the previous chunk.

# %%
first = rows_of_stream[:1, :k].detach().requires_grad_()
second = rows_of_stream[:1, k:2 * k]
_, h = model(first)
out, _ = model(second, h.detach())
out.sum().backward()
run.check(first.grad is None, "no gradient crosses a detached state (truncated BPTT)")
_, h = model(first)
out, _ = model(second, h)
out.sum().backward()
run.check(first.grad is not None and float(first.grad.abs().sum()) > 0,
          "without detach() the gradient flows back into the previous chunk")

# %% [markdown]
# ## Exercises
#
# The coursework assignment on the **RNN step and full BPTT** (see
# `minigrad assignment list`) has you write `rnn_step_backward` and the BPTT loop;
# `minigrad check` grades it with gradcheck and tells you at which time step
# your gradient starts to go wrong.
#
# 1. Add a ReLU RNN to section 3 (`relu` instead of `tanh`, `(a > 0)` as its
#    derivative).  Does the identity initialisation W_hh = I (Le et al., 2015)
#    vanish or explode?
# 2. In section 4, train with k = 2, 5 and 50 and compare the final MSE and the
#    time per update.  Explain both with what the gradient can and cannot see.
# 3. Remove the clipping and raise the learning rate to 3e-2.  Plot the
#    gradient norms: where are the spikes, and what do they do to the loss?
# 4. Write the BPTT loop for an RNN whose output at step t is y_t = h_t W_hyᵀ
#    with a loss on every step, and check it with `gradcheck`.

# %%
run.done()
