"""Where PyTorch documents how ties break, minigrad breaks them the same way (issue 18): argmax/argmin
and max/min with dim give the first index of the extreme value; sort(stable=True) and
argsort(stable=True) keep equal values in their original order, ascending and descending.  Checked
against PyTorch on inputs full of ties (three distinct values in 210), along every dimension.
topk's order at ties is left unspecified by PyTorch (TORCH_DIFFERENCES.md)."""
import numpy
import pytest

import minigrad

torch = pytest.importorskip("torch")

VALUES = numpy.random.default_rng(3).integers(0, 3, (6, 7, 5)).astype(numpy.float64)


def _indices(L, t, dim):
    return [t.argmax(dim), t.argmin(dim), L.argmax(t, dim, keepdim=True), t.max(dim).indices, t.min(dim)[1],
            L.max(t, dim, keepdim=True).indices, t.sort(dim=dim, stable=True).indices,
            t.sort(dim=dim, descending=True, stable=True)[1], L.sort(t, dim=dim, descending=True, stable=True).indices,
            t.argsort(dim=dim, stable=True), L.argsort(t, dim=dim, descending=True, stable=True)]


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_ties_break_as_pytorch_documents(dim, dtype):
    ours = _indices(minigrad, minigrad.tensor(VALUES.astype(dtype)), dim)
    theirs = _indices(torch, torch.tensor(VALUES.astype(dtype)), dim)
    for k, (mine, reference) in enumerate(zip(ours, theirs)):
        assert mine.dtype == minigrad.long and mine.tolist() == reference.tolist(), f"expression {k} along {dim}"


def test_argmax_over_all_elements_is_the_first():
    flat = minigrad.tensor(VALUES), torch.tensor(VALUES)
    assert int(flat[0].argmax()) == int(flat[1].argmax()) and int(flat[0].argmin()) == int(flat[1].argmin())
    ones = minigrad.ones(4, 4)
    assert int(ones.argmax()) == 0 and ones.max(1).indices.tolist() == [0, 0, 0, 0]


def test_sorted_values_and_gradient_at_ties_match_torch():
    grads = []
    for L in (minigrad, torch):
        t = L.tensor(VALUES[0], requires_grad=True)
        values, _ = t.sort(dim=1, descending=True, stable=True)
        top, _ = t.max(1)
        (values * L.tensor(numpy.arange(5.0)) + top.unsqueeze(1)).sum().backward()
        grads.append(t.grad.numpy() if isinstance(t, minigrad.Tensor) else t.grad.numpy())
    numpy.testing.assert_array_equal(grads[0], grads[1])      # the gradient goes to the index each one chose
