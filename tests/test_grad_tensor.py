"""``.grad`` is a Tensor, ``register_hook`` and ``autograd.Variable``, as in PyTorch (issue 39, items 1, 2 and 4).

Each test runs the same code in minigrad and in torch, in float64 and float32, and compares what a
learner sees: the type of ``.grad``, its values, which object it is after a second backward, the
errors of a bad assignment, the warning on a non-leaf, the hooks' calls and replacements.  Without
PyTorch the tests run minigrad's half (LIBRARIES) and the value comparisons (``needs_torch``) skip.
"""
import warnings

import numpy
import pytest

import minigrad
from minigrad import nn
from minigrad.autograd import Variable
from optional_torch import needs_torch, torch

LIBRARIES = [minigrad] if torch is None else [minigrad, torch]

DTYPES = ["float64", "float32"]
TOLERANCE = {"float64": 1e-12, "float32": 1e-5}
RNG = numpy.random.default_rng(39)
VALUES = RNG.standard_normal((3, 4))
OTHER = RNG.standard_normal((3, 4))


def leaves(dtype, device="cpu", values=VALUES):
    """The same leaf in minigrad and in torch: (ours, theirs)."""
    ours = minigrad.tensor(values.astype(dtype), requires_grad=True, device=device)
    return ours, torch.tensor(values.astype(dtype), requires_grad=True)


def same(ours, theirs, dtype):
    numpy.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def loss(x, scale):
    return ((x * scale).tanh() ** 2).sum()


# ----------------------------------------------------------------------------- what .grad is

@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_is_a_tensor_outside_the_graph(dtype, device):
    ours, theirs = leaves(dtype, device)
    for x, L in ((ours, minigrad), (theirs, torch)):
        assert x.grad is None
        loss(x, 0.5).backward()
        assert isinstance(x.grad, L.Tensor) and x.grad.shape == x.shape and x.grad.dtype == x.dtype
        assert not x.grad.requires_grad and x.grad.is_leaf and x.grad.grad_fn is None
    assert ours.grad.device == device
    same(ours.grad, theirs.grad, dtype)


def test_grad_shares_no_memory_with_the_incoming_gradient_or_another_gradient():
    for L in LIBRARIES:
        a, b = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
        (a + b).sum().backward()                         # Add's backward hands both the same dL/dy
        assert not numpy.shares_memory(a.grad.numpy(), b.grad.numpy())
        upstream = L.full((3,), 2.0)
        x = L.ones(3, requires_grad=True)
        (x * 1).backward(upstream)
        assert not numpy.shares_memory(x.grad.numpy(), upstream.numpy())
        x.backward(upstream)                             # a leaf's backward: its gradient is a copy
        a.grad.mul_(10)
        assert b.grad.tolist() == [1.0, 1.0, 1.0] and upstream.tolist() == [2.0, 2.0, 2.0]


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_second_backward_adds_into_the_same_tensor_as_pytorchs(dtype):
    ours, theirs = leaves(dtype)
    seen = []
    for x in (ours, theirs):
        loss(x, 0.5).backward()
        kept, data, array = x.grad, x.grad.data, x.grad.numpy()
        first = array.copy()
        loss(x, 2.0).backward()
        assert x.grad is kept                            # the same Tensor, its values added to in place
        numpy.testing.assert_array_equal(data.numpy(), x.grad.numpy())
        numpy.testing.assert_array_equal(array, x.grad.numpy())
        assert not numpy.array_equal(first, array)
        seen.append(x.grad)
    same(*seen, dtype)


def test_a_graph_that_saved_grad_notices_the_next_backward_as_pytorchs():
    for L in LIBRARIES:
        p, x = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
        (p * 2).sum().backward()
        uses_grad = (p.grad * x).sum()                   # Mul saved p.grad's values
        (p * 2).sum().backward()                         # which this backward changes in place
        with pytest.raises(RuntimeError, match="modified by an inplace operation|modified in place"):
            uses_grad.backward()


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_methods_of_grad_match_torch(dtype, device):
    ours, theirs = leaves(dtype, device)
    results = []
    for x, L in ((ours, minigrad), (theirs, torch)):
        loss(x, 0.5).backward()
        norm, mean_abs = x.grad.norm(), x.grad.abs().mean()
        x.grad.data.mul_(3)                              # .data shares the gradient's storage
        x.grad.add_(L.ones(3, 4, dtype=x.dtype), alpha=0.5)
        x.grad.mul_(2)
        scaled = x.grad.clone()
        x.grad.zero_()
        results.append((norm, mean_abs, scaled, x.grad))
    for mine, their in zip(*results):
        same(mine, their, dtype)
    assert ours.grad.device == device and not ours.grad.abs().sum().item()


def test_grad_none_del_and_zero_grad():
    for L in LIBRARIES:
        layer = (nn if L is minigrad else L.nn).Linear(3, 2)
        layer(L.ones(4, 3)).sum().backward()
        kept = layer.weight.grad
        layer.zero_grad(set_to_none=False)               # in place: the same Tensor, zeros
        assert layer.weight.grad is kept and not kept.abs().sum().item()
        layer.weight.grad = None
        assert layer.weight.grad is None
        layer(L.ones(4, 3)).sum().backward()
        del layer.bias.grad
        assert layer.bias.grad is None and layer.weight.grad is not None


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_assigning_a_tensor_of_the_right_shape(dtype, device):
    ours, theirs = leaves(dtype, device)
    for x, L in ((ours, minigrad), (theirs, torch)):
        given = L.full((3, 4), 0.25, dtype=x.dtype) if L is torch else minigrad.full((3, 4), 0.25, dtype=x.dtype,
                                                                                     device=device)
        x.grad = given
        assert x.grad is given
        loss(x, 0.5).backward()
        assert x.grad is given                           # the backward adds into it, as PyTorch's
    same(ours.grad, theirs.grad, dtype)


@pytest.mark.parametrize("bad, kind, their_words, our_words", [
    (lambda L: L.zeros(4), RuntimeError, "gradient of size", r"t\.grad = value: .*gradient of size '\[4\]'.*size '\[3\]'"),
    (lambda L: numpy.zeros(3, "float32"), TypeError, "expected to be a Tensor or None",
     r"t\.grad = value: .*Tensor or None but got grad of type numpy\.ndarray.*minigrad\.tensor\(array\)"),
    (lambda L: [0.0, 0.0, 0.0], TypeError, "expected to be a Tensor or None", r"got grad of type builtins\.list"),
    (lambda L: L.zeros(3, dtype=L.float64), RuntimeError, "dtype", r"t\.grad = value: .*dtype 'float64'.*'float32'"),
], ids=["shape", "array", "list", "dtype"])
def test_assigning_a_bad_gradient_raises_as_pytorch(bad, kind, their_words, our_words):
    if torch is not None:
        with pytest.raises(kind, match=their_words):
            torch.ones(3, requires_grad=True).grad = bad(torch)
    with pytest.raises(kind, match=our_words):
        minigrad.ones(3, requires_grad=True).grad = bad(minigrad)


def test_a_gradient_on_another_device_is_refused(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    with pytest.raises(RuntimeError, match="t.grad = value: .*device type 'cpu'.*same device"):
        minigrad.ones(3, requires_grad=True, device=device).grad = minigrad.zeros(3, device="cpu")


# ----------------------------------------------------------------------------- a non-leaf's .grad

def _warnings_of(read):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = read()
    return value, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_reading_a_non_leafs_grad_warns_as_pytorch_unless_it_retains_it():
    for L in LIBRARIES:
        x = L.ones(3, requires_grad=True)
        y = x * 2
        value, messages = _warnings_of(lambda: y.grad)
        assert value is None and len(messages) == 1
        assert messages[0].startswith("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.")
        assert "retain_grad()" in messages[0]
        _, messages = _warnings_of(lambda: x.grad)       # a leaf: no warning
        assert messages == []
        y.retain_grad()
        (y * y).sum().backward(retain_graph=True)
        kept, messages = _warnings_of(lambda: y.grad)
        assert messages == [] and kept.tolist() == [4.0, 4.0, 4.0] and not kept.requires_grad
        (y * y).sum().backward()
        assert y.grad is not kept and y.grad.tolist() == [8.0, 8.0, 8.0]     # a new Tensor each time
        assert kept.tolist() == [4.0, 4.0, 4.0]


def test_the_warning_points_at_the_readers_line():
    y = minigrad.ones(2, requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad                                            # noqa: B018 - the read is the test
    assert caught[0].filename == __file__


# ----------------------------------------------------------------------------- register_hook

@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_leaf_hook_sees_the_summed_gradient_once_and_may_replace_it(dtype, device):
    ours, theirs = leaves(dtype, device)
    results = []
    for x in (ours, theirs):
        calls = []
        x.register_hook(lambda g: calls.append(g.numpy().copy()))
        x.register_hook(lambda g: g * 3)                 # replaces the gradient...
        x.register_hook(lambda g: g + 1)                 # ...and the next hook sees the replacement
        (loss(x, 0.5) + loss(x, 2.0)).backward()         # two uses: one call, with the sum
        assert len(calls) == 1
        results.append((calls[0], x.grad.numpy()))
    for mine, their in zip(*results):
        numpy.testing.assert_allclose(mine, their, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_non_leaf_hook_replaces_the_gradient_that_flows_on(dtype):
    ours, theirs = leaves(dtype)
    results = []
    for x in (ours, theirs):
        y = (x * 0.5).tanh()
        seen = []
        y.register_hook(lambda g: seen.append(g.numpy().copy()))
        y.register_hook(lambda g: g * 10)
        y.retain_grad()                                  # retain_grad's copy comes after the hooks
        (y * y).sum().backward()
        results.append((seen[0], y.grad.numpy(), x.grad.numpy()))
    for mine, their in zip(*results):
        numpy.testing.assert_allclose(mine, their, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_hooks_on_the_root_and_on_a_leaf_root():
    for L in LIBRARIES:
        x = L.ones(3, requires_grad=True)
        y = (x * 2).sum()
        y.register_hook(lambda g: g * 3)
        y.backward()
        assert x.grad.tolist() == [6.0, 6.0, 6.0]
        scalar = L.tensor(1.0, requires_grad=True)
        scalar.register_hook(lambda g: g * 5)
        scalar.backward()
        assert scalar.grad.item() == 5.0


def test_a_handle_removes_its_hook():
    for L in LIBRARIES:
        x = L.ones(3, requires_grad=True)
        calls = []
        handle = x.register_hook(lambda g: calls.append(1))
        (x * 2).sum().backward()
        handle.remove()
        handle.remove()                                  # twice is harmless
        (x * 2).sum().backward()
        with x.register_hook(lambda g: g * 0):
            (x * 2).sum().backward()                     # the hook zeroes this backward's gradient
        (x * 2).sum().backward()                         # removed at the end of the with block
        assert calls == [1] and x.grad.tolist() == [6.0, 6.0, 6.0]


@pytest.mark.parametrize("hook, kind, their_words, our_words", [
    (lambda g: g[:2], RuntimeError, "has changed the size of value", r"hook '<lambda>' has changed the size of value"),
    (lambda g: 3, TypeError, "hook returned 'int'", r"hook returned 'int'.*a Tensor \(the new gradient\) or None"),
    (lambda g: g.double(), RuntimeError, "has changed the type of value", r"has changed the type of value"),
], ids=["size", "int", "dtype"])
def test_a_hook_that_returns_a_bad_gradient_raises_as_pytorch(hook, kind, their_words, our_words):
    for L, words in ((minigrad, our_words), (torch, their_words))[:len(LIBRARIES)]:
        x = L.ones(3, requires_grad=True)
        x.register_hook(hook)
        with pytest.raises(kind, match=words):
            (x * 2).sum().backward()


def test_register_hook_on_a_tensor_that_needs_no_grad_raises_as_pytorch():
    for L in LIBRARIES:
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
            L.ones(3).register_hook(lambda g: g)


def test_gradcheck_through_hooks_that_keep_the_gradient():
    seen = []

    def fn(x):
        y = x.tanh()
        if y.requires_grad:                                     # not in the finite differences (no_grad)
            y.register_hook(lambda g: seen.append(g) and None)  # observes
            y.register_hook(lambda g: g * 1)                    # returns an equal gradient
        return y * y.exp()

    x = minigrad.randn(3, 2, dtype=minigrad.float64, requires_grad=True)
    x.register_hook(lambda g: g + 0)
    assert minigrad.gradcheck(fn, (x,))
    assert seen


# ----------------------------------------------------------------------------- autograd.Variable

def test_variable_returns_a_tensor_as_pytorchs():
    for L in LIBRARIES:
        base = L.ones(3)
        v = L.autograd.Variable(base, requires_grad=True)
        assert type(v) is L.Tensor and v is not base and v.is_leaf and v.requires_grad and not base.requires_grad
        base.add_(1)                                     # the same storage
        assert v.tolist() == [2.0, 2.0, 2.0]
        assert not L.autograd.Variable(base).requires_grad
        assert L.autograd.Variable(base, True).requires_grad
        made = L.ones(3, requires_grad=True) * 2
        cut = L.autograd.Variable(made)                  # of a non-leaf: a leaf outside the graph
        assert cut.is_leaf and cut.grad_fn is None and not cut.requires_grad
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            L.autograd.Variable([1.0, 2.0])
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            L.autograd.Variable(base, volatile=True)
    assert Variable is minigrad.autograd.Variable


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_old_tutorial_training_with_variable_and_grad_data_matches_torch(dtype):
    """The pre-0.4 tutorials' loop: Variable inputs, a hand-written SGD step on ``p.data`` with
    ``p.grad.data``, and ``p.grad.data.zero_()``; the same parameters as torch after each step."""
    rng = numpy.random.default_rng(7)
    inputs, targets = rng.standard_normal((8, 5)).astype(dtype), rng.standard_normal((8, 2)).astype(dtype)
    weights = [rng.standard_normal((5, 4)).astype(dtype) * 0.5, rng.standard_normal((4, 2)).astype(dtype) * 0.5]
    trained = []
    for L in LIBRARIES:
        w1, w2 = (L.autograd.Variable(L.tensor(w), requires_grad=True) for w in weights)
        x, y = L.autograd.Variable(L.tensor(inputs)), L.autograd.Variable(L.tensor(targets))
        history = []
        for step in range(5):
            error = (x.mm(w1).tanh().mm(w2) - y).pow(2).sum()
            error.backward()
            for p in (w1, w2):
                p.data.add_(p.grad.data, alpha=-0.01)    # PyTorch's char-RNN tutorial, word for word
                p.grad.data.zero_()
            history.append([p.detach().numpy().copy() for p in (w1, w2)])
        trained.append(history)
    for mine, their in zip(*trained):
        for a, b in zip(mine, their):
            numpy.testing.assert_allclose(a, b, rtol=TOLERANCE[dtype] * 10, atol=TOLERANCE[dtype] * 10)


@needs_torch
def test_the_legacy_add_of_grad_data_matches_torch():
    results = []
    for L in LIBRARIES:
        w = L.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")              # torch: "This overload of add_ is deprecated"
            w.data.add_(-0.1, w.grad.data)
            w.data.sub_(0.1, w.grad.data)
        results.append(w.detach().numpy())
    numpy.testing.assert_allclose(*results, rtol=0, atol=1e-7)
