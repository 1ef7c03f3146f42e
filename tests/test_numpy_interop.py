"""NumPy meets minigrad as it meets a CPU torch tensor (issue 18): a NumPy scalar or array on
either side of an operator gives a Tensor, never an object array of 0-d Tensors; NumPy scalars, like
Python numbers, never change a tensor's dtype; a 0-d tensor promotes as in PyTorch; np.asarray(t)
and t.numpy() are the array and np.exp(t) a Tensor.  Each case runs in both libraries and compares."""
import numpy as np
import pytest

import minigrad
from minigrad import nn

from optional_torch import needs_torch, torch  # the comparisons skip without PyTorch


@pytest.fixture(autouse=True)
def _on_the_host(monkeypatch):
    """NumPy interop is the host's (PyTorch's is a CPU tensor's): minigrad's tensors here are on
    "cpu" whatever MINIGRAD_DEVICE says; a device tensor's refusal is checked on its own below."""
    monkeypatch.setenv("MINIGRAD_DEVICE", "cpu")


def _operands(L):
    return L.ones(3) * 0.5, L.tensor([1, 2, 3]), L.tensor([True, False, True])


CASES = {                                  # name: fn(L, float32 x, int64 i, bool b)
    "np.float64 * x": lambda L, x, i, b: np.float64(0.5) * x,
    "x * np.float64": lambda L, x, i, b: x * np.float64(2),
    "x / np.int64": lambda L, x, i, b: x / np.int64(3),
    "np.sqrt(d_k) * x": lambda L, x, i, b: np.sqrt(64) * x,
    "np.int64 - x": lambda L, x, i, b: np.int64(2) - x,
    "np.float64 ** x": lambda L, x, i, b: np.float64(2) ** x,
    "x ** np.float64": lambda L, x, i, b: x ** np.float64(2),
    "x * np.bool_": lambda L, x, i, b: x * np.bool_(True),
    "half * np.float64": lambda L, x, i, b: x.half() * np.float64(2),
    "double * np.float32": lambda L, x, i, b: x.double() * np.float32(2),
    "int * np.float64": lambda L, x, i, b: i * np.float64(2.5),
    "int * np.int32": lambda L, x, i, b: i * np.int32(2),
    "int32 + np.int64": lambda L, x, i, b: i.int() + np.int64(3),
    "x * 0-d array": lambda L, x, i, b: x * np.array(2.0),
    "x + array": lambda L, x, i, b: x + np.array([1.0, 2.0, 3.0]),
    "x > np.float64": lambda L, x, i, b: x > np.float64(0.2),
    "np.float64 < x": lambda L, x, i, b: np.float64(0.2) < x,
    "x * 0-d float64 tensor": lambda L, x, i, b: x * L.tensor(2.0, dtype=L.float64),
    "0-d float64 tensor - x": lambda L, x, i, b: L.tensor(2.0, dtype=L.float64) - x,
    "0-d float64 ** x": lambda L, x, i, b: L.tensor(2.0, dtype=L.float64) ** x,
    "half * 0-d float64": lambda L, x, i, b: x.half() * L.tensor(2.0, dtype=L.float64),
    "int * 0-d float64": lambda L, x, i, b: i * L.tensor(2.5, dtype=L.float64),
    "int32 * 0-d int64": lambda L, x, i, b: i.int() * L.tensor(2),
    "bool * 0-d int64": lambda L, x, i, b: b * L.tensor(2),
    "0-d float32 * 0-d float64": lambda L, x, i, b: L.tensor(1.0) * L.tensor(2.0, dtype=L.float64),
    "x.maximum(0-d float64)": lambda L, x, i, b: x.maximum(L.tensor(0.7, dtype=L.float64)),
    "int / 0-d int": lambda L, x, i, b: i / L.tensor(2),
    "bool + 1": lambda L, x, i, b: b + 1,
    "bool + 1.5": lambda L, x, i, b: b + 1.5,
    "clamp(np.float64)": lambda L, x, i, b: x.clamp(np.float64(0.0), np.float64(0.25)),
    "masked_fill(np.float64)": lambda L, x, i, b: x.masked_fill(b, np.float64(2)),
    "fill_(np.float64)": lambda L, x, i, b: x.clone().fill_(np.float64(3)),
    "np.exp(x)": lambda L, x, i, b: np.exp(x),
}


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_numpy_operands_match_torch(name):
    ours, theirs = (CASES[name](L, *_operands(L)) for L in (minigrad, torch))
    assert isinstance(ours, minigrad.Tensor) and isinstance(theirs, torch.Tensor)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), f"{name}: {ours.dtype} vs {theirs.dtype}"
    np.testing.assert_allclose(ours.numpy().astype(float), theirs.numpy().astype(float), rtol=1e-6)


@needs_torch
def test_float32_model_with_numpy_scalars_stays_float32():
    # the Transformer: np.sqrt(d_k) on the left made an object array, np.float64 made float64
    rng = np.random.default_rng(0)
    x_values, weights = rng.standard_normal((4, 8)), rng.standard_normal((8, 8))
    grads = []
    for L in (minigrad, torch):
        layer = L.nn.Linear(8, 8)
        layer.load_state_dict({"weight": L.tensor(weights, dtype=L.float32), "bias": L.zeros(8)})
        x = L.tensor(x_values, dtype=L.float32)
        scores = layer(x) @ x.T / np.sqrt(np.float64(8))
        loss = (np.float64(0.5) * scores).softmax(-1).mean() / np.int64(4)
        loss.backward()
        assert loss.dtype == L.float32 and layer.weight.grad.dtype == np.dtype("float32") \
            if L is minigrad else layer.weight.grad.dtype == torch.float32
        grads.append(np.asarray(layer.weight.grad if L is minigrad else layer.weight.grad.numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-8)


def test_numpy_scalar_on_the_left_of_a_layer_gives_a_tensor():
    layer = nn.Linear(3, 2)
    out = layer(np.float64(2.0) * minigrad.ones(1, 3))
    assert isinstance(out, minigrad.Tensor) and out.dtype == minigrad.float32
    out.sum().backward()
    assert layer.weight.grad.dtype == np.float32


@needs_torch
def test_asarray_shares_memory_and_refuses_what_torch_refuses(device):
    for L in (minigrad, torch):
        t = L.tensor([1.0, 2.0], device="cpu")
        array = np.asarray(t)
        array[0] = 5.0                                 # a view of the tensor's storage, as in torch
        assert float(t[0]) == 5.0 and array.dtype == np.float32
        w = L.tensor([1.0, 2.0], requires_grad=True, device="cpu")
        with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
            np.asarray(w)
        with pytest.raises(RuntimeError, match="requires grad"):
            np.exp(w)
    if device != "cpu":
        with pytest.raises(TypeError, match=r"t\.cpu\(\)"):
            np.asarray(minigrad.tensor([1.0], device=device))


@needs_torch
def test_numpy_method_shares_memory_on_the_cpu_as_torchs(device):
    """t.numpy() and t.detach().numpy() are the tensor's array in both libraries; minigrad's copy for a
    tensor that requires grad or lives on a device is listed in TORCH_DIFFERENCES.md (torch raises)."""
    for L in (minigrad, torch):
        t = L.tensor([1.0, 2.0], device="cpu")
        t.numpy()[0] = 5.0
        w = L.tensor([1.0, 2.0], requires_grad=True, device="cpu")
        w.detach().numpy()[1] = 7.0
        assert t.tolist() == [5.0, 2.0] and w.tolist() == [1.0, 7.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        w.numpy()
    w = minigrad.tensor([1.0, 2.0], requires_grad=True, device="cpu")
    w.numpy()[0] = 9.0                                 # minigrad: a copy, the parameter is unchanged
    assert w.tolist() == [1.0, 2.0] and w.numpy(force=True).tolist() == [1.0, 2.0]
    if device != "cpu":
        on_device = minigrad.tensor([1.0, 2.0], device=device)
        on_device.numpy()[0] = 9.0                     # a copy on the host (torch: TypeError)
        assert on_device.tolist() == [1.0, 2.0]


@needs_torch
def test_index_of_a_one_element_integer_tensor():
    letters = "abcdefg"
    for L in (minigrad, torch):
        top = L.tensor([[0.1, 0.9, 0.3]]).topk(1)[1][0][0]       # the char-RNN tutorial's topi
        assert letters[top] == "b" and list(range(L.tensor(3))) == [0, 1, 2]
        assert [10, 20, 30][L.tensor([2])] == 30
        for bad in (L.tensor([0, 1]), L.tensor(1.0)):
            with pytest.raises(TypeError, match="only integer tensors of a single element"):
                letters[bad]


@needs_torch
@pytest.mark.parametrize("array", [np.array(2.0), np.array([1.0, 2.0, 3.0]), np.arange(3)])
def test_array_on_the_left_gives_the_right_hand_result(array):
    # the one extension (TORCH_DIFFERENCES.md): torch refuses an array on the left; minigrad computes
    # what torch computes with it on the right, as a Tensor
    x, t = minigrad.ones(3) * 0.5, torch.ones(3) * 0.5
    with pytest.raises(TypeError):
        array * t
    for ours, theirs in ((array * x, t * array), (array - x, -(t - array)), (array / (x + 1), 1 / ((t + 1) / array))):
        assert isinstance(ours, minigrad.Tensor) and str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_a_python_number_keeps_a_0d_tensors_dtype_forward_and_backward():
    """PyTorch: 0 + t, t * 0.5, t ** 2 of a 0-d float32 t are float32, and so are the gradients.
    NumPy before 2.0 computes such 0-d expressions in float64 (CI's matrix runs NumPy 1.24)."""
    x = minigrad.tensor(3.0, requires_grad=True)
    loss = sum([(x * 0.5), (1 - x), (x / 3), (x ** 2), x.tanh()])        # sum() starts from 0 + tensor
    assert loss.dtype == minigrad.float32
    loss.backward()
    assert x.grad.dtype == minigrad.float32
