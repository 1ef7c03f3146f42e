"""The Tensor API: construction, factories, dtypes, devices, seeds, conversions."""
import numpy
import pytest

import minigrad
from minigrad import functional as F, nn


# ---------------------------------------------------------------------------- construction

def test_construction_and_dtypes(device):
    assert minigrad.tensor([1.0, 2.0], device=device).dtype == minigrad.float32   # the default dtype
    assert minigrad.tensor([1, 2], device=device).dtype == minigrad.int64
    assert minigrad.tensor(numpy.ones(2), device=device).dtype == minigrad.float64  # arrays keep theirs
    assert minigrad.tensor([1, 2], dtype=minigrad.float64, device=device).dtype == minigrad.float64
    assert minigrad.tensor([True, False], device=device).dtype == minigrad.bool_
    x = minigrad.tensor([[1.0, 2.0, 3.0]], device=device, requires_grad=True)
    assert x.shape == (1, 3) and x.ndim == 2 and x.device == device and x.is_leaf and x.requires_grad
    assert minigrad.Tensor(x).device == device and len(x) == 1 and x.numel() == 3 and x.size(1) == 3


@pytest.mark.parametrize("number", [5, 2.5, True, numpy.float64(2.5), numpy.int64(3)])
def test_tensor_class_refuses_a_single_number(number):
    # torch.Tensor(5) is an uninitialised size-5 tensor and torch.Tensor(2.5) raises: no silent 0-d tensor
    with pytest.raises(TypeError, match=r"minigrad\.tensor\(.*\) for a 0-d tensor.*minigrad\.zeros\(5\)"):
        minigrad.Tensor(number)
    with pytest.raises(TypeError, match="Parameter"):
        nn.Parameter(number)
    value = minigrad.tensor(number)        # the value: a 0-d tensor, as torch.tensor
    assert value.shape == () and value.item() == number
    assert minigrad.Tensor(numpy.asarray(number)).shape == ()   # a 0-d array is data, not a size
    assert minigrad.ones(2).new_tensor(number).shape == ()


@pytest.mark.parametrize("make, values", [
    (lambda d: minigrad.zeros(2, 3, device=d), numpy.zeros((2, 3))),
    (lambda d: minigrad.ones((2, 3), device=d), numpy.ones((2, 3))),
    (lambda d: minigrad.full((2,), 7.0, device=d), numpy.full(2, 7.0)),
    (lambda d: minigrad.arange(4, device=d), numpy.arange(4)),
    (lambda d: minigrad.arange(0.0, 1.0, 0.25, device=d), numpy.arange(0.0, 1.0, 0.25)),
    (lambda d: minigrad.zeros_like(minigrad.ones(2, dtype=minigrad.float64, device=d)), numpy.zeros(2)),
    (lambda d: minigrad.ones_like(minigrad.zeros(3, device=d)), numpy.ones(3)),
    (lambda d: minigrad.empty(2, device=d), numpy.zeros(2)),
])
def test_factories(device, make, values):
    t = make(device)
    assert t.device == device and t.shape == values.shape
    assert numpy.array_equal(t.numpy(), values)


def test_factories_take_dtype_and_requires_grad(device):
    for make in (minigrad.zeros, minigrad.ones, minigrad.rand, minigrad.randn):
        t = make(2, 3, dtype=minigrad.float64, device=device, requires_grad=True)
        assert t.dtype == minigrad.float64 and t.requires_grad and t.device == device
    ids = minigrad.randint(0, 5, (100,), device=device)
    assert ids.dtype == minigrad.int64 and 0 <= ids.numpy().min() and ids.numpy().max() < 5


def test_conversions(device):
    x = minigrad.tensor([[1.5, -2.0]], device=device)
    host = x.numpy()
    assert isinstance(host, numpy.ndarray) and host.tolist() == [[1.5, -2.0]]
    assert x[0, 0].item() == 1.5 and float(x[0, 1]) == -2.0
    assert x.double().dtype == minigrad.float64 and x.long().tolist() == [[1, -2]]
    assert "tensor(" in repr(x) and (device == "cpu" or f"device='{device}'" in repr(x))


def test_comparisons_argmax_and_max_with_dim(device):
    x = minigrad.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], device=device)
    assert (x > 2.5).tolist() == [[False, True, True], [True, False, True]]
    assert (x == x).all().item() and not (x != x).any().item()
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 6.0] and indices.tolist() == [1, 2]
    assert x.argmax(0, keepdim=True).tolist() == [[1, 0, 1]]
    assert x.max().item() == 6.0


def test_setitem_on_a_tensor_without_grad(device):
    x = minigrad.zeros(4, device=device)
    x[1] = 2.0
    x[minigrad.tensor([2, 3], device=device)] = minigrad.tensor([5.0, 6.0], device=device)
    x[[0]] = 1.0
    assert x.tolist() == [1.0, 2.0, 5.0, 6.0]


# ---------------------------------------------------------------------------- default dtype

def test_default_dtype():
    assert minigrad.get_default_dtype() == minigrad.float32
    minigrad.set_default_dtype(minigrad.float64)
    assert minigrad.get_default_dtype() == minigrad.float64
    assert minigrad.tensor([1.0]).dtype == minigrad.float64
    assert minigrad.randn(2).dtype == minigrad.float64 and minigrad.zeros(2).dtype == minigrad.float64
    assert nn.Linear(2, 3).weight.dtype == minigrad.float64
    assert minigrad.tensor([1]).dtype == minigrad.int64  # integers stay integers
    with pytest.raises(TypeError, match="floating"):
        minigrad.set_default_dtype(minigrad.int64)


@pytest.mark.parametrize("expression", [
    lambda L, i, f: i.sqrt(), lambda L, i, f: i.rsqrt(), lambda L, i, f: i.pow(0.5), lambda L, i, f: L.sqrt(i),
    lambda L, i, f: i.clamp(1.5, 4.5), lambda L, i, f: L.clamp(i, max=2.5), lambda L, i, f: i.clamp(1, 3),
    lambda L, i, f: L.maximum(i, f), lambda L, i, f: L.minimum(f, i), lambda L, i, f: i.square()])
def test_integer_tensors_promote_as_in_torch(expression):
    torch = pytest.importorskip("torch")
    ours = expression(minigrad, minigrad.tensor([1, 2, 5]), minigrad.tensor([2.0, 2.0, 2.0]))
    theirs = expression(torch, torch.tensor([1, 2, 5]), torch.tensor([2.0, 2.0, 2.0]))
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert numpy.allclose(ours.tolist(), theirs.tolist())


# ---------------------------------------------------------------------------- manual_seed

def _draws(device):
    x = minigrad.ones(8, device=device)
    layer = nn.Linear(4, 3).to(device)
    return [minigrad.rand(5, device=device), minigrad.randn(2, 3, device=device),
            minigrad.randint(0, 10, (6,), device=device), F.dropout(x, 0.5), layer.weight, layer.bias,
            nn.Embedding(5, 2).to(device).weight]


def test_manual_seed_repeats_every_random_draw(device):
    minigrad.manual_seed(1234)
    first = [t.numpy() for t in _draws(device)]
    minigrad.manual_seed(1234)
    second = [t.numpy() for t in _draws(device)]
    for a, b in zip(first, second):
        assert numpy.array_equal(a, b)
    minigrad.manual_seed(4321)
    assert not numpy.array_equal(first[1], _draws(device)[1].numpy())


def test_manual_seed_gives_the_same_numbers_on_every_device(device):
    minigrad.manual_seed(7)
    on_cpu = [t.numpy() for t in _draws("cpu")]
    minigrad.manual_seed(7)
    on_device = [t.numpy() for t in _draws(device)]
    for a, b in zip(on_cpu, on_device):
        assert numpy.array_equal(a, b)


# ---------------------------------------------------------------------------- moving between devices

def test_tensor_to_moves_and_gradients_flow_back(device):
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True, device="cpu")
    y = x.to(device)
    assert y.device == device and x.to("cpu") is x
    (y * y).sum().backward()
    assert x.grad is not None and x.grad.device == "cpu"
    assert x.grad.numpy().tolist() == [2.0, 4.0]
    z = y.to(dtype=minigrad.float32)
    assert z.dtype == minigrad.float32 and z.device == device
    assert y.to("cpu").device == "cpu" and y.cpu().tolist() == [1.0, 2.0]


def test_module_to_moves_parameters_and_trains_there(device):
    minigrad.manual_seed(0)
    layer = nn.Linear(3, 2)
    reference = layer.weight.numpy()
    layer.to(device)
    assert all(p.device == device for p in layer.parameters())
    x = minigrad.randn(4, 3, device=device)
    layer(x).sum().backward()
    assert layer.weight.grad.device == device
    layer.to("cpu")
    assert all(p.device == "cpu" for p in layer.parameters())
    assert numpy.array_equal(layer.weight.numpy(), reference)
    assert layer(minigrad.randn(1, 3, device="cpu")).device == "cpu"
