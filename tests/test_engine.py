"""The backward engine (minigrad/autograd.py): order, accumulation, and the checks it keeps."""
import numpy
import pytest

import minigrad
from minigrad.autograd import GraphError
from minigrad.backend import DeviceError

F64 = minigrad.float64


def leaf(values, device=None):
    return minigrad.tensor(numpy.asarray(values, dtype=numpy.float64), dtype=F64, device=device,
                           requires_grad=True)


def grad_of(tensor):
    return tensor.grad.numpy()


def test_a_tensor_used_twice_gets_both_contributions(device):
    x = leaf([1.0, 2.0], device)
    (x * x + x).sum().backward()                     # d/dx (x^2 + x) = 2x + 1
    assert numpy.allclose(grad_of(x), [3.0, 5.0])


def test_diamond_waits_for_both_branches():
    x = leaf([0.5])
    a = x.tanh()
    b = a * 3.0          # two paths from a to the output, created at different times
    c = a.exp()
    (b * c + a).sum().backward()
    t = numpy.tanh(0.5)
    expected = (3 * numpy.exp(t) + 3 * t * numpy.exp(t) + 1) * (1 - t * t)
    assert numpy.allclose(grad_of(x), [expected])


def test_gradients_accumulate_across_backward_calls():
    x = leaf([1.0, -1.0])
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert numpy.allclose(grad_of(x), [5.0, 5.0])


def test_unused_outputs_of_a_multi_output_op_get_zeros(device):
    x = leaf([1.0, 2.0, 3.0, 4.0], device)
    first, second = x.split(2)
    (first * 5).sum().backward()                      # `second` receives no gradient
    assert numpy.allclose(grad_of(x), [5, 5, 0, 0])


def test_second_backward_through_a_freed_graph_is_explained():
    x = leaf([1.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GraphError, match="retain_graph=True"):
        y.backward()
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert numpy.allclose(grad_of(x), [2.0 + 2.0 + 2.0])


def test_in_place_change_of_a_saved_constant_is_detected():
    x = leaf([1.0, 2.0])
    w = minigrad.tensor([3.0, 4.0], dtype=F64)        # no grad: Mul saves it for x's gradient
    y = (x * w).sum()
    w.mul_(10)
    with pytest.raises(GraphError, match="modified in place"):
        y.backward()


def test_in_place_change_of_a_leaf_under_no_grad_is_detected():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    with minigrad.no_grad():
        x.add_(1.0)
    with pytest.raises(GraphError, match="modified in place"):
        y.backward()


def test_inputs_on_different_devices_name_both():
    a = leaf([1.0, 2.0], "cpu")
    b = leaf([1.0, 2.0], "strict")
    with pytest.raises(DeviceError, match='"cpu" and "strict"'):
        a + b
    with pytest.raises(DeviceError, match='"strict" and "cpu"'):
        minigrad.stack([b, a])


def test_no_grad_records_nothing_and_detach_cuts():
    x = leaf([1.0])
    with minigrad.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    z = (x.detach() * 2 + x).sum()
    z.backward()
    assert numpy.allclose(grad_of(x), [1.0])


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    assert numpy.allclose(grad_of(h), [6.0, 12.0])
    assert numpy.allclose(grad_of(x), [18.0, 36.0])


def test_retains_grad_says_whether_retain_grad_was_called():
    x = leaf([1.0, 2.0])
    h, other = x * 3, x * 4
    assert not x.retains_grad and not h.retains_grad          # a leaf keeps .grad anyway (as torch)
    h.retain_grad()
    assert h.retains_grad and not other.retains_grad
    first, second = x.split(1)
    second.retain_grad()                                      # one output of a two-output node
    assert second.retains_grad and not first.retains_grad


class _SeesNeeds(minigrad.autograd.Function):
    """Records what its forward sees in ctx.needs_input_grad."""
    seen = []

    @staticmethod
    def forward(ctx, x, w, scale):
        _SeesNeeds.seen.append(ctx.needs_input_grad)
        return x * w * scale

    @staticmethod
    def backward(ctx, dout):
        return dout, dout, None


def test_needs_input_grad_has_one_entry_per_argument_in_forward_with_grad_and_under_no_grad():
    """No Function of minigrad reads it in forward, but a student's may (and torch's ctx has it there):
    each argument's requires_grad, under no_grad too, as torch's (checked against torch when present)."""
    x, w = leaf([1.0]), minigrad.tensor([2.0], dtype=F64)
    _SeesNeeds.seen.clear()
    recorded = _SeesNeeds.apply(x, w, 3.0)
    with minigrad.no_grad():
        out = _SeesNeeds.apply(x, w, 3.0)
    with_grad, without = _SeesNeeds.seen
    assert with_grad == (True, False, False)
    assert recorded.grad_fn.inputs[0] is x and recorded.grad_fn.inputs[1:] == (None, None)   # the node's parents
    assert without == (True, False, False)          # ... but no node is made
    assert out.grad_fn is None and not out.requires_grad
    torch = pytest.importorskip("torch")

    class SeesNeeds(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, scale):
            _SeesNeeds.seen.append(ctx.needs_input_grad)
            return x * w * scale

        @staticmethod
        def backward(ctx, dout):
            return dout, dout, None

    tx, tw = torch.ones(1, dtype=torch.float64, requires_grad=True), torch.ones(1, dtype=torch.float64)
    with torch.no_grad():
        SeesNeeds.apply(tx, tw, 3.0)
    assert _SeesNeeds.seen[-1] == without


def test_a_backward_returning_the_wrong_shape_is_named():
    class Broken(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, dout):
            return (dout.sum(),)

    x = leaf([1.0, 2.0])
    with pytest.raises(GraphError, match=r"Broken returned a gradient of shape \(\)"):
        Broken.apply(x).sum().backward()


@pytest.mark.parametrize("returned", [1, 3])
def test_a_backward_returning_too_few_or_too_many_gradients_is_named(returned):
    class ScaleBy(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, dout):
            x, w = ctx.saved_tensors
            grads = (dout * w, dout * x, None)
            return grads[:returned]          # the weight's gradient forgotten (1) or one extra (3)

    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with pytest.raises(GraphError, match=rf"backward of ScaleBy returned {returned} gradient\(s\), "
                                         r"but its forward takes 2 argument\(s\)"):
        ScaleBy.apply(x, w).sum().backward()


# ------------------------------------------------------------------ .grad accumulates into its own storage

def test_a_kept_gradient_is_the_gradient_and_shows_the_next_backward():
    w = leaf(numpy.ones((3, 2)), "cpu")
    x = minigrad.tensor(numpy.arange(8.0).reshape(4, 2), dtype=F64, device="cpu")
    one_pass = numpy.tile(numpy.arange(8.0).reshape(4, 2).sum(axis=0), (3, 1))     # dL/dW of one backward
    minigrad.nn.functional.linear(x, w).sum().backward()
    kept, kept_values = w.grad, w.grad.numpy()
    minigrad.nn.functional.linear(x, w).sum().backward()
    assert kept is w.grad and numpy.allclose(kept_values, 2 * one_pass)   # added in place, as PyTorch
    assert numpy.allclose(w.grad.numpy(), 2 * one_pass)


# ------------------------------------------------------------------ no gradient wanted: no node, nothing saved

class _Saves(minigrad.autograd.Function):
    """Saves its input and records the context its forward got."""
    contexts = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        _Saves.contexts.append(ctx)
        return x * 2

    @staticmethod
    def backward(ctx, dout):
        return (dout * 2,)


@pytest.mark.parametrize("case", ["no_grad", "no input requires grad", "recording"])
def test_apply_builds_no_node_and_saves_nothing_when_no_gradient_is_wanted(case):
    """Function.apply's one switch (as DeZero's enable_backprop): the same forward serves inference,
    and what it would have saved is dropped at once, not kept alive by the output."""
    _Saves.contexts.clear()
    x = leaf([1.0, 2.0]) if case != "no input requires grad" else minigrad.tensor([1.0, 2.0], dtype=F64)
    if case == "no_grad":
        with minigrad.no_grad():
            y = _Saves.apply(x)
    else:
        y = _Saves.apply(x)
    (ctx,) = _Saves.contexts
    if case == "recording":
        assert y.grad_fn is ctx and ctx.recording and len(ctx.saved_tensors) == 1
        return
    assert y.grad_fn is None and not y.requires_grad
    assert not ctx.recording and ctx.saved_tensors == () and ctx.inputs is None


def test_apply_wraps_its_outputs_in_tensors_even_for_a_parameter_input():
    """The outputs are plain Tensors (the engine calls _from_array of its first Tensor argument)."""
    p = minigrad.nn.Parameter(minigrad.tensor([1.0, 2.0], dtype=F64))
    y = _Saves.apply(p)
    assert type(y) is minigrad.Tensor and y.grad_fn is not None


def test_apply_refuses_a_call_without_any_tensor():
    with pytest.raises(TypeError, match="_Saves.apply: needs at least one Tensor argument"):
        _Saves.apply(numpy.ones(2))
