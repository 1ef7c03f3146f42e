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
# # Lesson 0: Autograd and gradient checking
#
# **What you will learn**
#
# 1. How minigrad records a *graph* of operations while it computes, and how
#    `backward()` walks that graph in reverse applying the chain rule.
# 2. Why gradients *accumulate* (`+=`) when a value is used twice.
# 3. How to check any gradient with *finite differences*, how to measure the
#    disagreement with the *relative error*, and how to choose the step `eps`.
# 4. Why gradient checks are done in **float64**: in float32 a correct and a
#    slightly wrong backward look the same.
# 5. How to write your own differentiable `Function`, and how `minigrad.gradcheck`
#    catches a wrong backward.
# 6. A first training loop: autograd plus plain gradient descent.
#
# **Read the code.**  The graph and `backward()`: `minigrad/autograd.py`;
# `Tensor` and its operations: `minigrad/tensor.py`; each operation's forward
# and backward side by side: `minigrad/functions/` (start with
# `elementwise.py` and `arithmetic.py`); finite differences:
# `minigrad/finite_differences.py`; `gradcheck` and `check_module`:
# `minigrad/gradient_check.py`.
#
# Run it as a script (`python lessons/00_autograd.py`, `--quick` for a
# 5-second version) or open it as a notebook.  Full mode takes about 10 s.
#
# **Notation** (used in every lesson).  `L` is a scalar loss.  For any value
# `x` in the computation, `dL/dx` is the gradient of `L` with respect to `x`: an
# array of `x`'s shape.  In code it is `x.grad` (a Tensor that does not require
# grad), and inside a backward the gradient arriving from above is `dout`
# (= `dL/dy` for the output `y`, an array).
# Textbooks also write it ∇ₓL, or δ for the gradient at a layer's
# pre-activation (Nielsen, Goodfellow et al.); CS231n writes `dx`.  PyTorch uses
# the same `.grad` and `backward()` as minigrad.

# %%
import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad import functional as F
from minigrad import finite_differences, lesson
from minigrad.autograd import Function

run = lesson.setup("00_autograd")
plt = run.pyplot()
f64 = minigrad.float64

# %% [markdown]
# ## 1. A graph, forward and backward
#
# One tanh neuron and a squared error:
#
#     z = w x + b,     y = tanh(z),     L = (y - t)²
#
# Each operation on a tensor that `requires_grad` creates a node remembering
# its inputs and what its backward will need.  Every tensor computed this way
# has a `grad_fn`: the node that produced it.  The leaves (`w`, `b`) have none.

# %%
x = minigrad.tensor(1.5, dtype=f64)                      # an input: no gradient wanted
t = minigrad.tensor(0.2, dtype=f64)                      # the target
w = minigrad.tensor(0.8, dtype=f64, requires_grad=True)  # parameters: leaves of the graph
b = minigrad.tensor(-0.3, dtype=f64, requires_grad=True)

z = w * x + b
y = z.tanh()
L = (y - t) ** 2
print(f"z = {z.item():.6f}   y = {y.item():.6f}   L = {L.item():.6f}")


def show_graph(tensor, names):
    """Print the graph that produced ``tensor``, from the output back to the leaves (iteratively)."""
    stack = [(tensor, 0)]
    while stack:
        node, depth = stack.pop()
        indent = "    " * depth
        if node is None:
            print(f"{indent}(a constant: no gradient flows here)")
            continue
        value = f"{node.item():.4f}" if node.numel() == 1 else f"shape {tuple(node.shape)}"
        if node.grad_fn is None:
            print(f"{indent}{names.get(id(node), '?')} = {value}   leaf")
        else:
            print(f"{indent}{node.grad_fn.name()} -> {value}")
            stack.extend((parent, depth + 1) for parent in reversed(node.grad_fn.inputs))


show_graph(L, {id(w): "w", id(b): "b"})


def graph_of(tensor, names):
    """The graph behind ``tensor`` as (labels, edges, depth): one label per node, edges input -> user.

    Inputs that need no gradient (``None`` in ``grad_fn.inputs``: x, t, constants) are left out.
    """
    labels, edges = {}, []
    stack = [(tensor, None)]
    while stack:                                     # iterative: a recursive walk breaks on long graphs
        node, user = stack.pop()
        if node is None:
            continue
        key = id(node)
        if user is not None:
            edges.append((key, user))
        if key in labels:
            continue
        if node.grad_fn is None:
            labels[key] = f"{names.get(id(node), '?')}\nleaf"
        else:
            labels[key] = node.grad_fn.name()
            stack.extend((parent, key) for parent in node.grad_fn.inputs)
    depth = {key: 0 for key in labels}
    for _ in labels:                                 # longest path from the output: relax every edge
        for source, user in edges:
            depth[source] = max(depth[source], depth[user] + 1)
    return labels, edges, depth


def draw_graph(ax, tensor, names, title):
    """Draw the graph behind ``tensor``: the output at the top, leaves below, arrows in the forward direction."""
    labels, edges, depth = graph_of(tensor, names)
    levels = {}
    for key in labels:
        levels.setdefault(depth[key], []).append(key)
    where = {key: ((i + 1) / (len(row) + 1), -level) for level, row in levels.items() for i, key in enumerate(row)}
    for source, user in edges:
        ax.annotate("", xy=where[user], xytext=where[source],
                    arrowprops=dict(arrowstyle="->", color="grey", shrinkA=14, shrinkB=14))
    for key, label in labels.items():
        leaf = label.endswith("leaf")
        ax.text(*where[key], label.replace("\nleaf", ""), ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round", facecolor="lightyellow" if leaf else "lightblue", edgecolor="grey"))
    ax.set_xlim(0, 1)
    ax.set_ylim(-max(depth.values()) - 0.5, 0.5)
    ax.set_title(title, fontsize=9)
    ax.axis("off")


if plt:
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    draw_graph(ax, L, {id(w): "w", id(b): "b"}, "L = (tanh(w x + b) - t)²\nops (blue) and leaves that want a gradient (yellow)")
    run.savefig(fig, "graph_neuron.png")

# %% [markdown]
# `L.backward()` visits the nodes from `L` back to the leaves.  At each node it
# multiplies the gradient arriving from above by the node's local derivative
# (the chain rule) and passes the result down:
#
#     dL/dy = 2 (y - t)
#     dL/dz = dL/dy · (1 - y²)          (tanh' = 1 - tanh²)
#     dL/dw = dL/dz · x,     dL/db = dL/dz · 1
#
# Let us check that autograd agrees with these four lines done by hand.

# %%
L.backward()

yv, xv, tv = y.item(), x.item(), t.item()
dy = 2 * (yv - tv)
dz = dy * (1 - yv ** 2)
by_hand = {"w": dz * xv, "b": dz}
rows = [{"parameter": name, "autograd": float(p.grad), "by hand": by_hand[name],
         "difference": abs(float(p.grad) - by_hand[name])} for name, p in (("w", w), ("b", b))]
run.table(rows, "dL/dw and dL/db: autograd against the chain rule by hand")
run.check(all(r["difference"] < 1e-12 for r in rows), "autograd equals the hand-derived chain rule (to 1e-12)")

# %% [markdown]
# ## 2. A value used twice: gradients add up
#
# If `x` feeds two operations, `L` depends on `x` along two paths, and the
# multivariable chain rule *sums* over them:  for `f = x·x + x`,
# `df/dx = x + x + 1 = 2x + 1`.  This is why the engine adds every incoming
# gradient into `x.grad` instead of overwriting it.  It also means that
# gradients keep adding up across `backward()` calls until you reset them:
# a training loop sets `.grad = None` (or calls `zero_grad()`) every step.

# %%
a = minigrad.tensor(3.0, dtype=f64, requires_grad=True)
f = a * a + a
f.backward()
print(f"df/da = {float(a.grad)}   (2a + 1 = {2 * 3.0 + 1})")
run.check(float(a.grad) == 7.0, "a value used twice receives the sum of both gradients")

f = a * a + a
f.backward()  # without resetting a.grad, the second backward adds to the first
print(f"after a second backward without reset: a.grad = {float(a.grad)}")
a.grad = None

# %% [markdown]
# ## 3. Tensors: backward computes a vector-Jacobian product
#
# For `y = W x` with `W` of shape (H, D) and `x` of shape (D,), the Jacobian
# `dy/dW` has H·H·D entries, but backward never builds it.  Given the upstream
# gradient `dout = dL/dy` (shape (H,)), it returns directly
#
#     dL/dW = dout xᵀ        (an outer product, shape (H, D)),     dL/dx = Wᵀ dout.
#
# `y.backward(dout)` starts the backward from a non-scalar output with that
# upstream gradient: it is what happens inside a bigger graph.

# %%
W = minigrad.randn(3, 4, dtype=f64, requires_grad=True)
xs = minigrad.randn(4, dtype=f64, requires_grad=True)
dout = minigrad.randn(3, dtype=f64)
(W @ xs).backward(dout)
dW_hand = np.outer(dout.numpy(), xs.numpy())
dx_hand = W.numpy().T @ dout.numpy()
# .grad is a Tensor: .cpu().numpy() gives its values as NumPy, from a GPU too (as in PyTorch)
error = max(np.abs(W.grad.cpu().numpy() - dW_hand).max(), np.abs(xs.grad.cpu().numpy() - dx_hand).max())
print(f"max |autograd - by hand| over dL/dW and dL/dx: {error:.2e}")
run.check(error < 1e-12, "matmul backward gives dout x^T and W^T dout")

# %% [markdown]
# Three ways to reach a tensor's values, with PyTorch's meanings:
#
# - `t.detach()`: a Tensor sharing `t`'s storage, cut from the graph.  It stops a
#   gradient (`h = h.detach()` between chunks of truncated BPTT) and reads values
#   that must not grow the graph (`scores.detach().topk(1)` while decoding).
# - `t.numpy()` (in PyTorch `t.detach().numpy()`): the values as a NumPy array,
#   for printing, plotting and NumPy maths.  On the CPU, for a tensor that does
#   not require grad, it is the tensor's own memory, as in PyTorch: writing into
#   it changes the tensor (`.copy()` keeps them apart).  For a tensor that
#   requires grad, where PyTorch raises, minigrad returns a copy
#   (`minigrad/TORCH_DIFFERENCES.md`); `t.detach().numpy()` is the memory in both.
# - `t.data`: an older spelling of `detach()` whose in-place changes the graph does
#   not notice.  Old tutorials update weights with `p.data.add_(p.grad, alpha=-lr)`;
#   the safe form is an optimizer, or `p -= lr * p.grad` inside `with minigrad.no_grad():`.

# %%
step = W.detach()                      # the same storage as W, outside the graph
with minigrad.no_grad():
    W -= 0.5 * W.grad                  # one gradient-descent step, in place
run.check(step.requires_grad is False and np.array_equal(step.numpy(), W.detach().numpy()),
          "W.detach() shares W's storage: it sees the step")
if run.device == "cpu":                               # on "cuda" .numpy() is always a host copy
    shared, copied = step.numpy(), W.numpy()          # W requires grad: W.numpy() is a copy
    run.check(np.shares_memory(shared, W.detach().numpy()) and not np.shares_memory(copied, W.detach().numpy()),
              "W.detach().numpy() is W's memory; W.numpy() (W requires grad) is a copy")

# %% [markdown]
# ## 4. Finite differences and the relative error
#
# Any gradient can be checked without calculus: nudge the input and watch the
# output.
#
#     forward difference:   (f(x + ε) - f(x)) / ε            error ~ ε  (Taylor)
#     central difference:   (f(x + ε) - f(x - ε)) / (2ε)     error ~ ε²
#
# But a computer stores `f` with a relative rounding error of about `u`
# (u ≈ 1e-16 in float64, 6e-8 in float32), and dividing by ε blows that up to
# about `u / ε`.  The total error is therefore smallest at a middle ε: about
# `u^(1/2)` for forward and `u^(2/3)` for central differences.  For a
# well-scaled function the central difference then keeps about two thirds of
# the digits: ~10 in float64, ~4-5 in float32.  The worst of the 17 points
# below does a little worse (its higher derivatives are larger): the table
# shows a best relative error near 4e-10 in float64 (9 digits) and 4e-4 in
# float32 (3.5 digits).
#
# We compare an analytic gradient `a` with a numeric one `n` by the
# **relative error**
#
#     rel(a, n) = |a - n| / max(|a|, |n|)
#
# which is scale-free (a gradient of 1e6 and one of 1e-6 are judged alike).
# Rough guide in float64: below 1e-7 is right; 1e-4 and above is almost
# always a bug.  Mind that `minigrad.gradcheck`'s default tolerance (rtol
# 1e-3, PyTorch's) is looser than that guide: it is set to catch wrong
# formulas, and lets an error of 0.1% through (section 6 shows it).

# %%
def g(x):
    """The function we differentiate, elementwise: g(x) = tanh(x) exp(x), built from minigrad ops."""
    return x.tanh() * x.exp()


points = np.linspace(-2, 2, 17)  # check g'(x) at 17 points at once: g acts elementwise
probe = minigrad.tensor(points, dtype=f64, requires_grad=True)
g(probe).sum().backward()
exact = probe.grad.cpu().numpy()  # autograd in float64: exact to rounding (section 1)


def g_values(values, dtype):
    return g(minigrad.tensor(values, dtype=dtype)).numpy().astype(np.float64)


def relative_error(a, n):
    """max over elements of |a - n| / max(|a|, |n|) (finite_differences.relative_error is the elementwise one)."""
    return float(np.max(finite_differences.relative_error(a, n)))


epsilons = [10.0 ** -k for k in np.arange(1, 13, run.size(1.0, 0.5))]
curves = {"forward, float64": [], "central, float64": [], "central, float32": []}
for eps in epsilons:
    forward = (g_values(points + eps, f64) - g_values(points, f64)) / eps
    central = (g_values(points + eps, f64) - g_values(points - eps, f64)) / (2 * eps)
    central32 = (g_values(points + eps, minigrad.float32) - g_values(points - eps, minigrad.float32)) / (2 * eps)
    curves["forward, float64"].append(relative_error(exact, forward))
    curves["central, float64"].append(relative_error(exact, central))
    curves["central, float32"].append(relative_error(exact, central32))

rows = []
for name, errors in curves.items():
    best = int(np.argmin(errors))
    rows.append({"difference": name, "best eps": epsilons[best], "best relative error": errors[best],
                 "error at eps=1e-6": errors[int(np.argmin([abs(math.log10(e) + 6) for e in epsilons]))]})
run.table(rows, "Finite differences of g(x) = tanh(x) exp(x) against autograd (max over 17 points)")

if plt:
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, errors in curves.items():
        ax.loglog(epsilons, np.maximum(errors, 1e-17), marker="o", label=name)
    ax.set_xlabel("step eps")
    ax.set_ylabel("max relative error against autograd")
    ax.set_title("Truncation error falls with eps, rounding error grows")
    ax.invert_xaxis()
    ax.legend()
    run.savefig(fig, "finite_difference_error.png")

best64 = min(curves["central, float64"])
best32 = min(curves["central, float32"])
run.check(best64 < 1e-8, f"central differences in float64 reach a relative error of {best64:.1e} (< 1e-8)")
run.check(best32 > 1e-6, f"in float32 they cannot get below {best32:.1e} (> 1e-6)")

# %% [markdown]
# ## 5. Why float64: a subtle bug that float32 cannot see
#
# A *numeric gradient* of a tensor function checks one element at a time,
# which is all `gradcheck` does (plus a random upstream gradient so that every
# output matters).  Here is the loop, written out:

# %%
def numeric_gradient(fn, x, eps):
    """Central differences of the scalar fn(x) with respect to every element of x (a Tensor)."""
    grad = np.zeros(x.shape)
    values = x.detach()         # shares x's storage, outside the graph: writing into it changes x
    for index in np.ndindex(*x.shape):
        original = values[index].item()
        with minigrad.no_grad():
            values[index] = original + eps
            plus = fn(x).item()
            values[index] = original - eps
            minus = fn(x).item()
            values[index] = original
        grad[index] = (plus - minus) / (2 * eps)
    return grad


# %% [markdown]
# Now two backwards for `L = sum(v · tanh(x))`: the right one, `dL/dx = v (1 - tanh²x)`,
# and one that is wrong by 0.1% (think of a constant typed with too few digits).
# We measure the relative error of each against finite differences, in float32
# (with the usual ε = 1e-3) and in float64 (ε = 1e-6).

# %%
rows = []
for dtype, eps in ((minigrad.float32, 1e-3), (f64, 1e-6)):
    minigrad.manual_seed(1)
    xt = minigrad.randn(4, 5, dtype=dtype)
    v = minigrad.randn(4, 5, dtype=dtype)
    n = numeric_gradient(lambda x: (v * x.tanh()).sum(), xt, eps)
    right = (v * (1 - xt.tanh() ** 2)).numpy()
    wrong = right * 1.001
    rows.append({"dtype": str(dtype), "eps": eps, "right backward": relative_error(right, n),
                 "0.1% wrong backward": relative_error(wrong, n)})
run.table(rows, "Max relative error against finite differences")
f32_row, f64_row = rows
run.check(f32_row["right backward"] > 0.5 * f32_row["0.1% wrong backward"],
          "in float32 the right backward shows an error as large as the wrong one's: no tolerance separates them")
run.check(f64_row["right backward"] < 1e-6 and f64_row["0.1% wrong backward"] > 1e-4,
          "in float64 the right backward stays below 1e-6 while the bug stands out above 1e-4")

# %% [markdown]
# In float32 both columns are about 1e-2 (the worst element is one whose
# gradient is small, so its relative error is large), and no tolerance
# separates them.  In float64 the right backward sits orders of magnitude
# below the wrong one (1e-8 against 1e-3): the relative error shows the bug,
# as long as the tolerance you judge it by is below 1e-3 (section 6).  This is
# why `minigrad.gradcheck` refuses float32 inputs:

# %%
try:
    minigrad.gradcheck(lambda x: x.tanh(), minigrad.randn(3, requires_grad=True))
except TypeError as error:
    print("gradcheck says:", error)

# %% [markdown]
# ## 6. Your own Function, and gradcheck catching a wrong backward
#
# Every operation in minigrad is a `Function` with a `forward` on arrays and a
# hand-written `backward` (read `minigrad/functions/elementwise.py`).  Here is
# softplus, `y = log(1 + exp(x))`, whose derivative is the sigmoid
# `dy/dx = 1 / (1 + exp(-x))`.  `xp` is NumPy on the CPU and CuPy on a GPU, so
# the same code runs on both.  (We write it the naive way; a library version
# guards `exp` against overflow for large `x`.)

# %%
class Softplus(Function):
    """y = log(1 + exp(x)).   dy/dx = sigmoid(x).   Any shape."""

    @staticmethod
    def forward(ctx, x):
        xp = minigrad.backend.array_module(x)
        ctx.save_for_backward(x)
        return xp.log1p(xp.exp(x))

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        xp = minigrad.backend.array_module(x)
        return (dout / (1 + xp.exp(-x)),)      # dy/dx = sigmoid(x)


class SoftplusWrong(Softplus):
    """The same forward with a classic mistake: the derivative of sigmoid instead of sigmoid."""

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        xp = minigrad.backend.array_module(x)
        s = 1 / (1 + xp.exp(-x))
        return (dout * s * (1 - s),)           # wrong: this is sigmoid'(x), not sigmoid(x)


xin = minigrad.randn(3, 4, dtype=f64, requires_grad=True)
report = minigrad.gradcheck(Softplus.apply, (xin,))
print(report)
run.check(report.passed, "gradcheck passes the right softplus backward")

bad_report = minigrad.gradcheck(SoftplusWrong.apply, (xin,), raise_exception=False)
print(bad_report)
run.check(not bad_report.passed, "gradcheck rejects the wrong softplus backward")

# %% [markdown]
# That bug is wrong by 70%.  The 0.1% bug of section 5 is another matter:
# gradcheck's defaults, `rtol=1e-3, atol=1e-5` (PyTorch's), pass an element
# when |a - n| ≤ atol + rtol |n|, and an error of 0.1% is exactly rtol.  With
# the defaults the report says "ok" beside a max relative error of 1e-3, far
# above the 1e-9 of a right backward: read that column, or tighten the
# tolerance (`rtol=1e-6, atol=1e-9` still passes every right backward of this
# lesson, whose relative errors are below 1e-8) to make the bug fail.

# %%
class TanhOffByOnePerMille(Function):
    """y = tanh(x) with a backward 0.1% too large: dy/dx = 1.001 (1 - y²)."""

    @staticmethod
    def forward(ctx, x):
        y = minigrad.backend.array_module(x).tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return (dout * 1.001 * (1 - y * y),)       # wrong by 0.1%: a constant typed with too few digits


loose = minigrad.gradcheck(TanhOffByOnePerMille.apply, (xin,), raise_exception=False)
tight = minigrad.gradcheck(TanhOffByOnePerMille.apply, (xin,), rtol=1e-6, atol=1e-9, raise_exception=False)
right_tight = minigrad.gradcheck(lambda x: x.tanh(), (xin,), rtol=1e-6, atol=1e-9, raise_exception=False)
print(loose)
print(tight)
run.check(loose.passed and loose.rows[0]["max_rel_error"] > 9e-4,
          f"with the default rtol 1e-3 gradcheck passes the 0.1% bug (max relative error "
          f"{loose.rows[0]['max_rel_error']:.2e}, status ok)")
run.check(not tight.passed and right_tight.passed, "with rtol 1e-6 it fails the bug and still passes the right tanh")

# %% [markdown]
# A check must not pass by having nothing to compare.  `.item()` turns the
# output into a Python float that the graph never sees, and `detach()` cuts
# the path back to `x`: in both cases backward gives no gradient at all, so
# gradcheck refuses rather than report zeros matching zeros.

# %%
vacuous = []
for name, fn in [("(x * x).sum().item()", lambda x: (x * x).sum().item()),
                 ("x.detach() * 1e-7 + 0 * x", lambda x: x.detach() * 1e-7 + 0 * x)]:
    try:
        minigrad.gradcheck(fn, (xin,))
    except RuntimeError as error:          # gradcheck's GradcheckError
        vacuous.append(name)
        print(f"gradcheck refuses {name}:", str(error).splitlines()[-1][:150])
run.check(len(vacuous) == 2, "gradcheck refuses an output cut off from the inputs (.item(), detach())")

# %% [markdown]
# The report names the worst element and both values, so you can see *where*
# the backward is wrong.  `minigrad.check_module` does the same for every
# parameter of a layer: here a small network in float64 (`.double()`).

# %%
net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()
batch = minigrad.randn(4, 3, dtype=f64)
module_report = minigrad.check_module(net, batch)
print(module_report)
run.check(module_report.passed, "gradcheck passes every parameter of Linear-Tanh-Linear")

# %% [markdown]
# A report names its rows after the parameters, so a check reads like the
# equations.  Here is one step of the recurrent network of lesson 3,
#
#     h_1 = tanh(x W_ihᵀ + b_ih + h_0 W_hhᵀ + b_hh),     L = sum(v · h_1),
#
# written as a module whose tensors, the input `x` and the previous state `h0`
# included, are its named parameters: `check_module` checks them all, one row
# each, and the graph is drawn beside the text tree.

# %%
class RNNStep(nn.Module):
    """h_1 = tanh(x W_ihᵀ + b_ih + h0 W_hhᵀ + b_hh); every tensor a named parameter (N = 2, D = 3, H = 4)."""

    def __init__(self):
        super().__init__()
        self.x = nn.Parameter(minigrad.randn(2, 3, dtype=f64))
        self.h0 = nn.Parameter(minigrad.randn(2, 4, dtype=f64))
        self.W_ih = nn.Parameter(minigrad.randn(4, 3, dtype=f64))
        self.W_hh = nn.Parameter(minigrad.randn(4, 4, dtype=f64))
        self.b_ih = nn.Parameter(minigrad.randn(4, dtype=f64))
        self.b_hh = nn.Parameter(minigrad.randn(4, dtype=f64))

    def forward(self, v):
        h1 = (self.x @ self.W_ih.T + self.b_ih + self.h0 @ self.W_hh.T + self.b_hh).tanh()   # (N, H)
        return (v * h1).sum()


step = RNNStep()
v = minigrad.randn(2, 4, dtype=f64)
step_report = minigrad.check_module(step, v)
print(step_report)
names = {id(p): name for name, p in step.named_parameters()}
show_graph(step(v), names)
if plt:
    fig, ax = plt.subplots(figsize=(6, 5))
    draw_graph(ax, step(v), names, "one RNN step: L = sum(v · tanh(x W_ihᵀ + b_ih + h0 W_hhᵀ + b_hh))")
    run.savefig(fig, "graph_rnn_step.png")
run.check(step_report.passed and [row["name"] for row in step_report.rows] == list(names.values()),
          "gradcheck passes x, h0, W_ih, W_hh, b_ih and b_hh, one named row each")

# %% [markdown]
# ## 7. A first training loop
#
# With gradients in hand, training is a loop: forward, loss, backward, step.
# Plain gradient descent moves each parameter against its gradient,
# θ ← θ - η dL/dθ.  We add heavy-ball momentum, which keeps a running sum of
# past gradients and steps along it (the form of PyTorch's `SGD(momentum=m)`):
#
#     v ← m v + dL/dθ,     θ ← θ - η v,
#
# inside `no_grad()` (the update itself must not become part of the graph), and
# then clear the gradients.  `minigrad.optim` packages this (SGD, Adam) for
# the later lessons.  We fit a small tanh network to `sin(x)` on [-3, 3].

# %%
minigrad.manual_seed(0)
grid = np.linspace(-3, 3, 64).reshape(64, 1)
inputs = minigrad.tensor(grid, dtype=minigrad.float32, device=run.device)
targets = minigrad.tensor(np.sin(grid), dtype=minigrad.float32, device=run.device)
model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1)).to(run.device)
learning_rate = 0.1
momentum = 0.9
steps = run.size(300, 3000)
velocity = [minigrad.zeros_like(p) for p in model.parameters()]
progress = run.progress(steps)
losses = []
for step in range(steps):
    loss = F.mse_loss(model(inputs), targets)
    loss.backward()
    with minigrad.no_grad():
        for p, vel in zip(model.parameters(), velocity):
            vel.mul_(momentum).add_(p.grad)     # heavy-ball momentum: v <- m v + dL/dθ
            p.add_(vel, alpha=-learning_rate)   # θ <- θ - η v
    model.zero_grad()
    losses.append(loss.item())
    progress.log(step, loss=losses[-1])

run.table([{"steps": steps, "initial MSE": losses[0], "final MSE": losses[-1],
            "variance of sin(x)": float(targets.numpy().var())}], "Fitting sin(x)")

if plt:
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.semilogy(losses)
    left.set_xlabel("step")
    left.set_ylabel("MSE")
    left.set_title("training loss")
    with minigrad.no_grad():
        fitted = model(inputs).numpy()
    right.plot(inputs.numpy(), targets.numpy(), label="sin(x)")
    right.plot(inputs.numpy(), fitted, "--", label="network")
    right.legend()
    right.set_title("fit")
    run.savefig(fig, "training.png")

run.check(losses[-1] < losses[0] / 10, "gradient descent lowers the MSE at least tenfold")

# %% [markdown]
# ## Exercises
#
# The coursework turns these ideas into graded work: run `minigrad assignment list`
# and start with the assignment on the **backward of the autograd primitives**;
# check your answers with `minigrad check`.
#
# 1. Derive and implement a `Sin` Function (`xp.sin`, `dy/dx = cos x`) and
#    gradcheck it.  Then break it on purpose (return `-cos x`) and read the report.
# 2. In section 4, plot the forward difference in float32 as well.  Where is its
#    best ε, and does it match `u^(1/2)`?
# 3. `max` is not differentiable where two inputs tie.  Gradcheck
#    `lambda x: x.amax()` at `minigrad.tensor([1.0, 1.0], dtype=minigrad.float64,
#    requires_grad=True)` and read what the report says about kinks.
# 4. Remove `model.zero_grad()` from the training loop.  What happens, and why?
#    (Section 2 has the answer.)
# 5. Section 1's `show_graph` prints a node twice when it is used twice.  Why is
#    `backward()` nevertheless correct?  (Hint: it visits nodes in topological
#    order and sums the incoming gradients before passing them on.)

# %%
run.done()
