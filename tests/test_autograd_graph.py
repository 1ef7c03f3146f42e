"""The autograd engine on graphs: shared uses, diamonds, deep chains, no_grad,
detach, retain_grad, accumulation, freed graphs and in-place changes."""
import numpy
import pytest

import minigrad
from minigrad.autograd import GraphError
from minigrad.backend import to_numpy


def leaf(values, device):
    return minigrad.tensor(values, dtype=minigrad.float64, device=device, requires_grad=True)


def grad_of(tensor):
    return tensor.grad.numpy()


def test_tensor_used_twice_gets_both_contributions(device):
    x = leaf([1.0, -2.0, 3.0], device)
    (x * x + x).sum().backward()                         # d/dx (x^2 + x) = 2x + 1
    assert grad_of(x).tolist() == [3.0, -3.0, 7.0]


def test_diamond_graph(device):
    a = leaf([2.0, 3.0], device)
    b = a * 3                                            # a feeds two branches
    c = a.exp()
    d = (b * c).sum()                                    # d = 3 a e^a
    d.backward()
    expected = 3 * numpy.exp([2.0, 3.0]) * (1 + numpy.array([2.0, 3.0]))
    assert numpy.allclose(grad_of(a), expected, rtol=1e-12)


def test_multi_output_function_with_an_unused_output(device):
    x = leaf([[1.0, 2.0, 3.0, 4.0]], device)
    first, second = x.split(2, dim=1)
    (first * 5).sum().backward()                         # `second` gets no gradient: zeros are filled in
    assert grad_of(x).tolist() == [[5.0, 5.0, 0.0, 0.0]]


def test_deep_chain_of_100000_ops_does_not_recurse():
    x = leaf([1.0], "cpu")
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward(numpy.ones(1))
    assert grad_of(x).tolist() == [1.0]
    del y                                                # freeing the chain must not recurse either


def test_no_grad_as_context_manager_and_decorator(device):
    x = leaf([1.0, 2.0], device)
    with minigrad.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None

    @minigrad.no_grad()
    def double(t):
        return t * 2

    z = double(x)
    assert not z.requires_grad and z.grad_fn is None
    assert minigrad.is_grad_enabled()                   # restored after both
    w = x * 2
    assert w.requires_grad and w.grad_fn is not None


def test_no_grad_restores_mode_after_an_exception():
    with pytest.raises(KeyError):
        with minigrad.no_grad():
            raise KeyError("boom")
    assert minigrad.is_grad_enabled()


def test_detach_cuts_the_graph(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    z = y.detach() * x                                   # only the second factor is differentiated
    z.sum().backward()
    assert grad_of(x).tolist() == [3.0, 6.0]
    assert not y.detach().requires_grad


def test_retain_grad_keeps_a_non_leaf_gradient(device):
    x = leaf([1.0, 2.0], device)
    h = x * 2
    h.retain_grad()
    y = x * 2
    (h * h).sum().backward()
    assert grad_of(h).tolist() == [4.0, 8.0]             # d(h^2)/dh = 2h
    with pytest.warns(UserWarning, match="not a leaf Tensor .* use .retain_grad()"):
        assert y.grad is None                             # not kept, and reading it warns (as PyTorch)


def test_gradients_accumulate_across_backward_calls(device):
    x = leaf([1.0, 2.0], device)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert grad_of(x).tolist() == [3.0 + 2.0, 3.0 + 4.0]


def test_accumulation_never_writes_into_a_callers_array(device):
    x = leaf([1.0, 2.0], device)
    upstream = minigrad.backend.asarray(numpy.array([1.0, 1.0]), device=device)
    x.backward(upstream)                                 # a leaf's gradient is the upstream itself
    x.backward(upstream)
    assert to_numpy(upstream).tolist() == [1.0, 1.0]
    assert grad_of(x).tolist() == [2.0, 2.0]


def test_graph_is_freed_after_backward(device):
    x = leaf([1.0, 2.0], device)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(GraphError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward(device):
    x = leaf([1.0, 2.0], device)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert grad_of(x).tolist() == [4.0, 8.0]


def test_backward_of_non_scalar_needs_a_gradient(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match=r"shape \(2,\).*loss.sum\(\)"):
        (x * 2).backward()
    (x * 2).backward(minigrad.tensor([1.0, 10.0], dtype=minigrad.float64, device=device))
    assert grad_of(x).tolist() == [2.0, 20.0]


def test_backward_of_a_tensor_without_grad_is_explained(device):
    with pytest.raises(RuntimeError, match="requires_grad=True"):
        minigrad.ones(2, device=device).sum().backward()


@pytest.mark.parametrize("change", [
    lambda t: t.add_(1.0), lambda t: t.mul_(2.0), lambda t: t.zero_(), lambda t: t.fill_(3.0),
    lambda t: t.__setitem__(0, 5.0), lambda t: t.copy_(t.numpy() + 1),
])
def test_in_place_change_of_a_saved_input_is_detected(device, change):
    x = leaf([1.0, 2.0], device)
    w = minigrad.tensor([3.0, 4.0], dtype=minigrad.float64, device=device)   # saved by Mul, no grad
    y = (x * w).sum()
    change(w)
    with pytest.raises(GraphError, match="modified in place"):
        y.backward()


def test_in_place_change_through_detach_is_detected(device):
    x = leaf([1.0, 2.0], device)
    h = x.exp()
    y = (h * h).sum()                                    # Mul saved h
    h.detach().mul_(0.0)                                 # same storage, same version counter
    with pytest.raises(GraphError, match="modified in place"):
        y.backward()


def test_in_place_change_of_a_leaf_that_requires_grad_is_refused(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="no_grad"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="no_grad"):
        x[0] = 3.0
    with minigrad.no_grad():                             # what optimizers do
        x.add_(1.0)
        x[0] = 0.5
    assert x.numpy().tolist() == [0.5, 3.0]


def test_in_place_change_after_backward_is_harmless(device):
    x = leaf([1.0, 2.0], device)
    w = minigrad.tensor([3.0, 4.0], dtype=minigrad.float64, device=device)
    (x * w).sum().backward()
    w.mul_(2.0)                                          # the graph is already done
    assert grad_of(x).tolist() == [3.0, 4.0]
