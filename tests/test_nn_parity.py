"""nn layers against torch.nn: a PyTorch state dict loads by name and gives the same
outputs and gradients (1e-10 in float64, 1e-5 in float32)."""
import numpy as np
import pytest

import minigrad
from minigrad import nn

torch = pytest.importorskip("torch")

TOL = {"float64": 1e-10, "float32": 1e-5}
DTYPES = ["float64", "float32"]


def _host(value):
    return value.numpy() if isinstance(value, minigrad.Tensor) else minigrad.backend.to_numpy(value)


def _compare(ours, theirs, x_ours, x_theirs, dtype, device):
    """Load theirs' state dict into ours, run both, compare outputs and every gradient."""
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    ours.to(device)
    y, ty = ours(x_ours), theirs(x_theirs)
    tol = TOL[dtype]
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    dout = np.random.default_rng(7).standard_normal(ty.shape).astype(dtype)
    y.backward(minigrad.tensor(dout, device=device))
    ty.backward(torch.tensor(dout))
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(_host(p.grad), tp.grad.numpy(), rtol=tol, atol=tol, err_msg=name)
    if x_ours.requires_grad:
        np.testing.assert_allclose(_host(x_ours.grad), x_theirs.grad.numpy(), rtol=tol, atol=tol)


def _inputs(shape, dtype, device):
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    return (minigrad.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_linear(dtype, bias, device):
    theirs = torch.nn.Linear(5, 3, bias=bias).to(getattr(torch, dtype))
    ours = nn.Linear(5, 3, bias=bias, dtype=dtype)
    _compare(ours, theirs, *_inputs((2, 4, 5), dtype, device), dtype, device)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding(dtype, padding_idx, device):
    theirs = torch.nn.Embedding(7, 4, padding_idx=padding_idx).to(getattr(torch, dtype))
    ours = nn.Embedding(7, 4, padding_idx=padding_idx, dtype=dtype)
    ids = np.array([[0, 2, 6], [2, 2, 1]])
    _compare(ours, theirs, minigrad.tensor(ids, device=device), torch.tensor(ids), dtype, device)


def test_embedding_from_pretrained_matches_torch():
    table = np.random.default_rng(0).standard_normal((5, 3))
    for freeze in (True, False):
        ours = nn.Embedding.from_pretrained(table, freeze=freeze, padding_idx=1)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze, padding_idx=1)
        assert ours.weight.requires_grad == theirs.weight.requires_grad
        np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.detach().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, normalized", [((3, 6), 6), ((2, 3, 4), (3, 4))])
def test_layer_norm(dtype, shape, normalized, device):
    theirs = torch.nn.LayerNorm(normalized, eps=1e-4).to(getattr(torch, dtype))
    with torch.no_grad():                   # away from the ones/zeros start, so the affine part counts
        theirs.weight.normal_()
        theirs.bias.normal_()
    ours = nn.LayerNorm(normalized, eps=1e-4, dtype=dtype)
    _compare(ours, theirs, *_inputs(shape, dtype, device), dtype, device)


def test_layer_norm_without_affine(device):
    ours, theirs = nn.LayerNorm(5, elementwise_affine=False).double(), torch.nn.LayerNorm(5, elementwise_affine=False)
    assert list(ours.parameters()) == []
    x, tx = _inputs((4, 5), "float64", device)
    np.testing.assert_allclose(ours(x).numpy(), theirs(tx.double()).detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_whole_model_loads_a_torch_state_dict_by_name(dtype, device):
    def make(lib):
        return lib.Sequential(lib.Embedding(11, 8, padding_idx=0), lib.LayerNorm(8), lib.Linear(8, 16),
                              lib.Tanh(), lib.Dropout(0.3), lib.Linear(16, 8), lib.ReLU(),
                              lib.Linear(8, 4), lib.Sigmoid())

    torch.manual_seed(0)
    theirs = make(torch.nn).to(getattr(torch, dtype)).eval()
    ours = make(nn).to(dtype).eval()
    ids = np.array([[1, 5, 0], [10, 3, 3]])
    _compare(ours, theirs, minigrad.tensor(ids, device=device), torch.tensor(ids), dtype, device)


def test_state_dict_goes_back_to_torch():
    ours = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4)).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3))
    np.testing.assert_allclose(ours(minigrad.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               atol=1e-12)


def test_initialisation_statistics_match_torch():
    torch.manual_seed(0)
    theirs = torch.nn.Linear(100, 200).weight.detach().numpy()
    ours = nn.Linear(100, 200).weight.numpy()
    bound = 1 / np.sqrt(100)
    for w in (ours, theirs):
        assert np.abs(w).max() <= bound and abs(w.std() - bound / np.sqrt(3)) < 0.003
