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
# # Lesson 9: Attention from scratch
#
# **What you will learn**
#
# 1. Attention as a *soft dictionary*: a query is compared with every key, and
#    the output is a weighted average of the values.  Hard attention picks one
#    value; soft attention blends them and can be trained by gradient descent.
# 2. The worked example: a query that matches the second key returns (almost
#    exactly) the second value.
# 3. Why the scores are divided by sqrt(d_k): without it the softmax saturates
#    as d_k grows and its gradient vanishes (measured, and plotted).
# 4. Multi-head attention: several small attentions side by side, each free
#    to look somewhere else (trained on a task that needs two places at once).
# 5. Masks: padding (keys that are not there) and causal (keys in the future).
#
# **Notation** (row vectors, as PyTorch): queries Q (Tq, d_k), keys K (Tk, d_k),
# values V (Tk, d_v), one row per position:
#
#     S = Q Kᵀ / sqrt(d_k)            scores,  S_ij = q_i · k_j / sqrt(d_k)    (Tq, Tk)
#     A = softmax(S) row by row       weights, each row sums to 1              (Tq, Tk)
#     O = A V                         outputs, o_i = Σ_j A_ij v_j              (Tq, d_v)
#
# Masks are boolean and True means "may NOT attend" (PyTorch's convention; some
# texts, e.g. Dive into Deep Learning's `valid_lens`, describe the keys that *may*
# be attended instead).
#
# **Read the code.**  Scaled dot-product attention, forward and backward:
# `minigrad/functions/attention.py`; the score functions:
# `minigrad/nn/attention.py`; multi-head attention:
# `minigrad/nn/multihead_attention.py`; padding and causal masks:
# `minigrad/masks.py`.

# %%
import math

import numpy as np

import minigrad
from minigrad import lesson, masks, nn, optim
from minigrad import functional as F

run = lesson.setup("09_attention")
plt = run.pyplot()

# %% [markdown]
# ## 1. A soft dictionary
#
# A Python dict answers a query only when it equals a key exactly, and returns
# that one value.  Attention compares the query with *every* key by a score
# (here the scaled dot product), turns the scores into weights with a softmax,
# and returns the weighted average of the values.  Four keys in d_k = 4
# dimensions, four values in d_v = 3, and a query close to the second key:

# %%
keys = minigrad.tensor([[1.0, 0.0, 1.0, 0.0],
                        [0.0, 3.0, 0.0, 3.0],
                        [2.0, 2.0, 0.0, 0.0],
                        [0.0, 0.0, 2.0, -2.0]], device=run.device)             # (Tk, d_k)
values = minigrad.tensor([[10.0, 0.0, 0.0],
                          [0.0, 10.0, 0.0],
                          [0.0, 0.0, 10.0],
                          [5.0, 5.0, 5.0]], device=run.device)                  # (Tk, d_v)
query = minigrad.tensor([[0.0, 2.5, 0.5, 3.0]], device=run.device, requires_grad=True)   # (1, d_k)

scores = query @ keys.T / math.sqrt(keys.shape[1])                              # (1, Tk)
weights = scores.softmax(-1)
output = weights @ values                                                       # (1, d_v)
np.set_printoptions(precision=4, suppress=True)
print("scores :", scores.numpy()[0])
print("weights:", weights.numpy()[0])
print("output :", output.numpy()[0], " (the second value is [0, 10, 0])")

same = F.scaled_dot_product_attention(query, keys, values, reference=True)   # minigrad/functions/attention.py
print("F.scaled_dot_product_attention gives the same:", same.numpy()[0])

# %% [markdown]
# **Hard attention** takes the argmax instead: exactly the second value, but
# the choice is a step function of the scores, so no gradient tells the query
# how to move.  Soft attention's output is a smooth function of the query.

# %%
hard = nn.HardAttention(nn.DotScore(scaled=True))
hard_output, hard_weights = hard(query, keys.unsqueeze(0), values.unsqueeze(0))   # batch of one
print("hard weights:", hard_weights.numpy()[0], " output:", hard_output.numpy()[0])

output.sum().backward()
soft_grad = float(query.grad.abs().sum())
query.grad = None
if hard_output.requires_grad:                     # the argmax cut the graph: nothing leads back to the query
    hard_output.sum().backward()
hard_grad = 0.0 if query.grad is None else float(query.grad.abs().sum())
run.table([{"attention": "soft (softmax)", "weight on key 2": float(weights.numpy()[0, 1]),
            "output": str(np.round(output.numpy()[0], 3)), "sum of abs d output/d query": soft_grad},
           {"attention": "hard (argmax)", "weight on key 2": float(hard_weights.numpy()[0, 1]),
            "output": str(np.round(hard_output.numpy()[0], 3)), "sum of abs d output/d query": hard_grad}],
          "The query matches the second key")

run.check(float(weights.numpy()[0, 1]) > 0.99, "soft attention puts more than 0.99 of its weight on the second key")
run.check(np.abs(output.numpy()[0] - values.numpy()[1]).max() < 0.1, "the output is almost exactly the second value")
run.check(soft_grad > 0 and hard_grad == 0, "only soft attention passes a gradient to the query")

# %% [markdown]
# ## 2. Why divide by sqrt(d_k)
#
# If the entries of q and k are independent with mean 0 and variance 1, then
# q · k = Σ_i q_i k_i is a sum of d_k terms of variance 1: its variance is d_k.
# With d_k = 512 the scores spread over ±50, the largest one wins by a wide
# margin, and the softmax becomes (nearly) one-hot.  The softmax's Jacobian,
# diag(a) - a aᵀ, is then (nearly) zero: no gradient flows back to Q and K.
# Dividing by sqrt(d_k) brings the variance back to 1 for every d_k.
#
# We measure it: 16 random keys and one random query per trial, a random
# upstream gradient, 400 trials (40 in quick mode); the average largest
# weight, and the size of the gradient reaching the scores.

# %%
rng = np.random.default_rng(run.seed)
d_ks = [1, 4, 16, 64, 256, 1024]
trials = run.size(40, 400)
Tk = 16
rows, saturation = [], {"unscaled": [], "scaled": []}
for d_k in d_ks:
    row = {"d_k": d_k}
    for name, scale in (("unscaled", 1.0), ("scaled", 1.0 / math.sqrt(d_k))):
        q = rng.standard_normal((trials, 1, d_k))
        k = rng.standard_normal((trials, Tk, d_k))
        raw = minigrad.tensor(q @ k.transpose(0, 2, 1) * scale, device=run.device, requires_grad=True)
        a = raw.softmax(-1)                                                      # (trials, 1, Tk)
        upstream = minigrad.tensor(rng.standard_normal(a.shape), device=run.device)
        (a * upstream).sum().backward()
        max_weight = float(a.numpy().max(-1).mean())
        grad = float(np.linalg.norm(raw.grad.cpu().numpy().reshape(trials, -1), axis=1).mean())
        saturation[name].append((max_weight, grad))
        row[f"max weight, {name}"] = max_weight
        row[f"norm dL/dS, {name}"] = grad
    rows.append(row)
run.table(rows, f"Softmax saturation: {Tk} random keys, averages over {trials} random queries")

if plt:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, style in (("unscaled", "o-"), ("scaled", "s-")):
        left.plot(d_ks, [m for m, _ in saturation[name]], style, label=f"{name}: q·k" + ("/sqrt(d_k)" if name == "scaled" else ""))
        right.plot(d_ks, [g for _, g in saturation[name]], style, label=name)
    left.axhline(1 / Tk, color="k", linestyle=":", label=f"uniform 1/{Tk}")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d_k")
        ax.legend()
    left.set_ylabel("largest attention weight (mean)")
    right.set_ylabel("gradient norm reaching the scores")
    right.set_yscale("log")
    left.set_title("The softmax saturates without scaling")
    right.set_title("...and its gradient vanishes")
    run.savefig(fig, "scaling.png")

unscaled_big, scaled_big = saturation["unscaled"][-1], saturation["scaled"][-1]
run.check(unscaled_big[0] > 0.85 and scaled_big[0] < 0.6,
          f"at d_k = {d_ks[-1]} the unscaled softmax is nearly one-hot ({unscaled_big[0]:.2f}), the scaled one is not")
run.check(unscaled_big[1] < 0.2 * scaled_big[1], "the unscaled gradient is more than 5x smaller")
scaled_max = [m for m, _ in saturation["scaled"]]
run.check(max(scaled_max) - min(scaled_max[1:]) < 0.25, "with scaling the weights look alike for every d_k >= 4")

# %% [markdown]
# ## 3. Multi-head attention
#
#     head_h = Attention(Q W_hᵠ, K W_hᴷ, V W_hⱽ),       MultiHead = Concat(head_1 ... head_H) Wᴼ
#
# `nn.MultiheadAttention(E, H)` projects the inputs with `q_proj`, `k_proj`,
# `v_proj` (each E -> E), splits the E features into H heads of E / H
# features, attends in every head separately, concatenates and applies
# `out_proj`.  The cost is that of one attention of width E; the gain is H
# different weight patterns.  First we redo its forward by hand with the
# helpers of `minigrad.functional`:

# %%
E, heads, T = 16, 2, 8
mha = nn.MultiheadAttention(E, heads, batch_first=True, reference=True).to(run.device)
x = minigrad.randn(3, T, E, device=run.device)
out, head_weights = mha(x, x, x, average_attn_weights=False)                # self-attention, weights per head
q = F.split_heads(mha.q_proj(x), heads)                                      # (N, H, T, E/H)
k = F.split_heads(mha.k_proj(x), heads)
v = F.split_heads(mha.v_proj(x), heads)
by_hand = mha.out_proj(F.merge_heads(F.scaled_dot_product_attention(q, k, v, reference=True)))
print(f"weights per head {head_weights.shape}; parameters {mha.num_parameters()} = 4 E^2 + 4 E = {4 * E * E + 4 * E}")
run.check(np.abs(by_hand.numpy() - out.numpy()).max() < 1e-5, "MultiheadAttention = split heads, attend, merge, project")

# %% [markdown]
# **A task for two heads.**  A sequence of T random symbols; at every position
# the model must output the symbol one step to the *left* and the symbol one
# step to the *right* (wrapping around).  Each input vector is the symbol's
# one-hot next to the position's one-hot (no positional encoding tricks yet:
# lesson 10).  One attention layer with two heads can solve it by giving each
# head one neighbour; one head alone would have to blend both into one average.

# %%
V_sym = 8
T = 8
E = V_sym + T                                                                   # 16 = symbol one-hot + position one-hot


def neighbours_batch(n):
    symbols = rng.integers(0, V_sym, (n, T))
    x = np.zeros((n, T, E), dtype="float32")
    x[np.arange(n)[:, None], np.arange(T)[None, :], symbols] = 1.0
    x[:, np.arange(T), V_sym + np.arange(T)] = 1.0
    left_target, right_target = np.roll(symbols, 1, axis=1), np.roll(symbols, -1, axis=1)
    return (minigrad.tensor(x, device=run.device), minigrad.tensor(left_target, device=run.device),
            minigrad.tensor(right_target, device=run.device))


class Neighbours(nn.Module):
    """One multi-head self-attention layer and a linear read-out of both neighbours."""

    def __init__(self, num_heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(E, num_heads, batch_first=True, reference=True)
        self.left = nn.Linear(E, V_sym)
        self.right = nn.Linear(E, V_sym)

    def forward(self, x):                                                       # x (N, T, E)
        h, weights = self.attention(x, x, x, average_attn_weights=False)
        return self.left(h), self.right(h), weights                             # (N, T, V) twice, (N, H, T, T)


def train_neighbours(num_heads, steps):
    minigrad.manual_seed(run.seed)
    model = Neighbours(num_heads).to(run.device)
    optimizer = optim.Adam(model.parameters(), lr=0.02)
    progress = run.progress(steps)
    for step in range(steps):
        x, left_y, right_y = neighbours_batch(64)
        left_logits, right_logits, _ = model(x)
        loss = (F.cross_entropy(left_logits.reshape(-1, V_sym), left_y.reshape(-1)) +
                F.cross_entropy(right_logits.reshape(-1, V_sym), right_y.reshape(-1)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        progress.log(step, loss=loss.item())
    with minigrad.no_grad():
        x, left_y, right_y = neighbours_batch(500)
        left_logits, right_logits, weights = model(x)
        correct = ((left_logits.argmax(-1).numpy() == left_y.numpy()).mean() +
                   (right_logits.argmax(-1).numpy() == right_y.numpy()).mean()) / 2
    return float(correct), weights.numpy()


steps = run.size(150, 800)
results = {}
for num_heads in (1, 2):
    print(f"--- {num_heads} head(s)")
    results[num_heads] = train_neighbours(num_heads, steps)
run.table([{"heads": h, "accuracy (both neighbours)": results[h][0], "chance": 1 / V_sym} for h in (1, 2)],
          f"Left and right neighbour, T = {T}, {steps} updates")

two_head_weights = results[2][1].mean(axis=0)                                   # (H, T, T) averaged over the batch
if plt:
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.8), layout="constrained")
    for h, ax in enumerate(axes):
        image = ax.imshow(two_head_weights[h], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"head {h + 1}")
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
    fig.colorbar(image, ax=list(axes), label="attention weight")
    fig.suptitle("Two heads, two neighbours: each head attends to one")
    run.savefig(fig, "heads.png")

# the probability mass each head puts one step left and one step right
left_mass = [float(np.mean([two_head_weights[h, t, (t - 1) % T] for t in range(T)])) for h in range(2)]
right_mass = [float(np.mean([two_head_weights[h, t, (t + 1) % T] for t in range(T)])) for h in range(2)]
print("mean weight on the left neighbour per head:", np.round(left_mass, 3))
print("mean weight on the right neighbour per head:", np.round(right_mass, 3))
run.check(results[2][0] > 0.9, f"two heads find both neighbours ({results[2][0]:.1%} correct)")
run.check(results[2][0] > results[1][0] + 0.1, "two heads beat one head")
run.check(max(left_mass) > 0.5 and max(right_mass) > 0.5 and
          int(np.argmax(left_mass)) != int(np.argmax(right_mass)), "the two heads specialise: one left, one right")

# %% [markdown]
# ## 4. Masks
#
# **Padding.**  A batch pads short sequences with `<pad>` (id 0); those keys
# must get zero weight.  `masks.padding_mask(ids, pad_idx)` is True at the
# padding keys, shape (N, Tk); `masks.key_padding_to_4d` makes it (N, 1, 1, Tk)
# so it broadcasts over heads and queries.
#
# **Causal.**  A decoder that predicts token t + 1 must not see tokens after t.
# `masks.causal_mask(T)` is True above the diagonal: query i may attend to
# keys j <= i.  `masks.combine_masks` ORs them.  (These are the masks
# `nn.MultiheadAttention` and the Transformer layers take, where True means
# "may NOT attend", as in PyTorch.)
#
# The attention itself adds a *bias* B to its scores: 0 where a query may
# attend, -inf where it may not, so those weights are exactly 0 after the
# softmax (any other value would shift a score: a bias given or learned).
# `masks.attention_bias` turns a boolean mask into B; `F.scaled_dot_product_attention`
# takes B as its float `attn_mask`.  (Its *boolean* attn_mask means the
# opposite of the layers': True = MAY attend, PyTorch's rule for that function.)
# If *every* key of a query is masked, the softmax would be 0/0; minigrad
# defines the weights (and the output and its gradient) as 0 there.

# %%
ids = minigrad.tensor([[5, 6, 7, 8, 9],
                       [5, 6, 7, 0, 0],
                       [0, 0, 0, 0, 0]], device=run.device)                      # the last row is all padding
pad = masks.padding_mask(ids, 0)                                                 # (N, Tk)
causal = masks.causal_mask(5, device=run.device)                                 # (Tq, Tk)
mask = masks.combine_masks(masks.key_padding_to_4d(pad), causal)                 # (N, 1, Tq, Tk)
print("padding mask (True = ignore):\n", pad.numpy().astype(int))
print("causal mask (True = ignore):\n", causal.numpy().astype(int))

qkv = minigrad.randn(3, 1, 5, 4, device=run.device, requires_grad=True)        # (N, heads, T, d)
bias = masks.attention_bias(mask, qkv.dtype, "may not attend")                  # 0 / -inf, (N, 1, Tq, Tk)
masked_out, masked_weights = F.scaled_dot_product_attention(qkv, qkv, qkv, bias, return_weights=True,
                                                            reference=True)
masked_out.sum().backward()
w = masked_weights.numpy()[:, 0]                                                 # (N, Tq, Tk)
print("weights of the second sequence (padding after 3 tokens, causal):\n", np.round(w[1], 3))

if plt:
    colours = plt.get_cmap("viridis").copy()
    colours.set_bad("white")                                                     # masked cells
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), layout="constrained")
    for n, (ax, title) in enumerate(zip(axes, ("5 tokens", "3 tokens + 2 pads", "all padding"))):
        shown = np.ma.masked_where(mask.numpy()[n, 0], w[n])                     # hide the masked keys
        image = ax.imshow(shown, cmap=colours, vmin=0, vmax=1)
        ax.set_title(title)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
    fig.colorbar(image, ax=list(axes), label="attention weight")
    fig.suptitle("Causal + padding masks: masked keys in white (their weight is exactly 0)")
    run.savefig(fig, "masks.png")

allowed = ~mask.numpy()[:, 0]
run.check(np.all(w[~allowed] == 0.0), "masked keys get exactly zero weight")
run.check(np.allclose(w[:2].sum(-1), 1.0), "rows with at least one visible key sum to 1")
run.check(np.all(w[2] == 0) and np.all(masked_out.numpy()[2] == 0) and np.isfinite(qkv.grad.cpu().numpy()).all(),
          "a fully masked row gives zero weights, zero output and finite gradients (no NaN)")
run.table([{"sequence": n, "real tokens": int((~pad.numpy()[n]).sum()),
            "visible keys per query": str(allowed[n].sum(-1).tolist()),
            "weight row sums": str(np.round(w[n].sum(-1), 3).tolist())} for n in range(3)],
          "Causal and padding masks together")

# %% [markdown]
# ## Exercises
#
# The coursework assignment on **attention** (see `minigrad assignment list`)
# has you write the backward of scaled dot-product attention (dS = A ⊙ (dA -
# rowsum(dA ⊙ A))); `minigrad check` grades it with gradcheck.
#
# 1. In section 1, make the query 0.1 times as long.  How much weight does the
#    second key keep?  What does the length of the query act like?
# 2. Show that scaling by 1/sqrt(d_k) is the same as a softmax temperature of
#    sqrt(d_k).  Which temperature makes the unscaled d_k = 1024 case behave
#    like d_k = 1?
# 3. Train the neighbours task with 4 heads.  What do the extra heads do?
#    Remove the position one-hots from the input: why can the model no longer
#    solve it?
# 4. Replace -inf by -1e4 in the masked scores in float16 arithmetic (by hand,
#    with NumPy).  What goes wrong?

# %%
run.done()
