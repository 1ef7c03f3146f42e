"""``t.data``, ``t.detach()`` and ``t.numpy()`` mean what they mean in PyTorch (issue 18).

``.data`` is a Tensor sharing the storage, outside the graph, and its in-place changes update the
tensor without being recorded: the tutorials' hand-written SGD step ``p.data.add_(p.grad, alpha=-lr)``.
"""
import numpy
import pytest

import minigrad
from minigrad import nn
from minigrad.backend import to_numpy


def test_data_is_a_tensor_sharing_storage_outside_the_graph(device):
    x = minigrad.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = (x * 2).sum()
    data = x.data
    assert isinstance(data, minigrad.Tensor) and not data.requires_grad and data.is_leaf
    assert data.device == device and data.dtype == x.dtype and data.shape == x.shape
    data[0] = 10.0                                   # no error: a leaf that needs no grad
    assert to_numpy(x._data)[0] == 10.0             # the same storage
    assert x.grad_fn is None and x.requires_grad
    y.backward()                                     # not recorded: the graph never noticed
    assert numpy.array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    z = y.data                                       # of a non-leaf too: a leaf outside the graph
    assert z.is_leaf and z.grad_fn is None and float(z) == 12.0


def test_tutorial_sgd_step_through_data_matches_torch():
    torch = pytest.importorskip("torch")
    values = numpy.random.default_rng(0).standard_normal((3, 4))
    updated = []
    for L in (minigrad, torch):
        w = L.tensor(values, requires_grad=True)
        (w.tanh() ** 2).sum().backward()
        w.data.add_(w.grad, alpha=-0.1)              # PyTorch's char-RNN tutorial, word for word
        w.data.mul_(0.5)
        assert w.requires_grad and w.is_leaf and w.grad_fn is None
        updated.append(w.detach().numpy())
    numpy.testing.assert_allclose(updated[0], updated[1], rtol=0, atol=1e-15)


def test_data_in_decoding_idioms_matches_torch():
    torch = pytest.importorskip("torch")
    scores = numpy.random.default_rng(1).standard_normal((2, 5))
    target = numpy.array([[1, 0, 3], [0, 0, 2]])
    results = []
    for L in (minigrad, torch):
        out = L.tensor(scores, requires_grad=True) * 2
        _, top = out.data.topk(1)                     # the seq2seq tutorial's evaluate()
        pad = L.nonzero(L.tensor(target).data == 0)   # the annotated Transformer's padding rows
        copy = out.data.clone()
        results.append((top.numpy(), pad.numpy(), copy.numpy(), L.tensor(target).data.unsqueeze(1).shape))
    for ours, theirs in zip(*results):
        numpy.testing.assert_array_equal(numpy.asarray(ours), numpy.asarray(theirs))


def test_data_setter_takes_a_tensor():
    layer = nn.Linear(3, 2)
    new = minigrad.zeros(2, 3)
    layer.weight.data = new                          # as PyTorch: the parameter now holds new's storage
    assert layer.weight.requires_grad and isinstance(layer.weight, nn.Parameter)
    new[0, 0] = 5.0
    assert float(layer.weight[0, 0]) == 5.0
    with pytest.raises(TypeError, match=r"must be a Tensor.*minigrad\.tensor\(array\)"):
        layer.weight.data = numpy.zeros((2, 3))


def test_numpy_and_detach_numpy_give_the_array(device):
    x = minigrad.tensor([[1.0, 2.0]], device=device, requires_grad=True)
    for array in (x.numpy(), x.detach().numpy(), x.data.numpy()):
        assert type(array) is numpy.ndarray and numpy.array_equal(array, [[1.0, 2.0]])
    assert not x.detach().requires_grad

