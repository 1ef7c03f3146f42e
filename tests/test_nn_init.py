"""nn.init.orthogonal_ behaves as torch.nn.init.orthogonal_ (the draw aside)."""
import numpy as np
import pytest

import minigrad
from minigrad import backend, nn


@pytest.mark.parametrize("shape", [(5, 5), (8, 3), (3, 8), (4, 2, 3), (1, 1)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, device):
    w = minigrad.empty(*shape, device=device)
    nn.init.orthogonal_(w, gain=2.0)
    flat = w.numpy().reshape(shape[0], -1).astype(np.float64) / 2.0
    rows, cols = flat.shape
    product = flat @ flat.T if rows <= cols else flat.T @ flat
    np.testing.assert_allclose(product, np.eye(min(rows, cols)), atol=1e-6)
    assert w.dtype == np.float32 and w.device == device


def test_orthogonal_is_seeded_and_rejects_vectors():
    def draw():
        minigrad.manual_seed(3)
        return nn.init.orthogonal_(minigrad.empty(6, 4)).numpy()

    np.testing.assert_array_equal(draw(), draw())
    with pytest.raises(ValueError, match="orthogonal_ needs a weight with 2 or more dimensions"):
        nn.init.orthogonal_(minigrad.empty(3))


def test_orthogonal_follows_torch_on_the_same_gaussian_draw():
    torch = pytest.importorskip("torch")
    for shape in [(6, 4), (4, 6)]:
        minigrad.manual_seed(7)
        ours = nn.init.orthogonal_(minigrad.empty(*shape, dtype=minigrad.float64)).numpy()
        minigrad.manual_seed(7)
        gaussian = torch.from_numpy(backend.random_normal(shape, "float64", "cpu"))
        # torch.nn.init.orthogonal_'s steps on that matrix (torch/nn/init.py)
        flat = gaussian.T if shape[0] < shape[1] else gaussian
        q, r = torch.linalg.qr(flat)
        q *= torch.diag(r, 0).sign()
        expected = (q.T if shape[0] < shape[1] else q).numpy()
        np.testing.assert_allclose(ours, expected, atol=1e-12)


def test_one_unit_recurrent_weight_is_plus_or_minus_one():
    signs = set()
    for seed in range(20):
        minigrad.manual_seed(seed)
        signs.add(float(nn.init.orthogonal_(minigrad.empty(1, 1)).numpy()[0, 0]))
    assert signs == {-1.0, 1.0}
