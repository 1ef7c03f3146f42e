"""minigrad.instruments: the measurements the lessons plot."""
import numpy
import pytest

import minigrad
from minigrad import instruments, nn


def test_gradient_norms_reach_each_step(device):
    model = nn.LSTM(3, 4).double().to(device)
    x = minigrad.randn(6, 2, 3, dtype=minigrad.float64, device=device)
    norms = instruments.gradient_norms_through_time(model, x, lambda out: (out[-1] ** 2).sum())
    assert len(norms["h"]) == 6 and len(norms["x"]) == 6
    assert all(v > 0 for v in norms["h"] + norms["x"])
    # dL/dx_t agrees with the fast path's input gradient
    leaf = x.detach().requires_grad_()
    out, _ = model(leaf)
    (out[-1] ** 2).sum().backward()
    grad = minigrad.Tensor(leaf.grad).numpy().reshape(6, -1)
    assert numpy.allclose(numpy.sqrt((grad ** 2).sum(axis=1)), norms["x"], atol=1e-12)


def test_vanishing_gradient_with_small_recurrent_weights():
    """rho(W_hh) well below 1: the gradient reaching early steps shrinks geometrically."""
    model = nn.RNN(2, 8).double()
    with minigrad.no_grad():
        model.weight_hh_l0.data *= 0.3 / instruments.spectral_radius(model.weight_hh_l0)
    assert abs(instruments.spectral_radius(model.weight_hh_l0) - 0.3) < 1e-12
    x = minigrad.randn(12, 1, 2, dtype=minigrad.float64)
    h = instruments.gradient_norms_through_time(model, x, lambda out: out[-1].sum())["h"]
    assert h[0] < 1e-4 * h[-1]
    assert all(a < b for a, b in zip(h, h[1:]))


def test_spectral_radius():
    rotation = minigrad.tensor([[0.0, -2.0], [2.0, 0.0]])          # eigenvalues +-2i
    assert abs(instruments.spectral_radius(rotation) - 2) < 1e-6
    with pytest.raises(ValueError, match=r"square matrix \(H, H\)"):
        instruments.spectral_radius(minigrad.zeros(8, 2))
    radii = instruments.recurrent_spectral_radii(nn.LSTM(3, 2))
    assert list(radii) == ["i", "f", "g", "o"]
    assert list(instruments.recurrent_spectral_radii(nn.GRUCell(3, 2))) == ["r", "z", "n"]


def test_gate_saturation(device):
    model = nn.LSTM(3, 4).to(device)
    x = minigrad.randn(5, 2, 3, device=device)
    stats = instruments.gate_saturation(model, x)
    assert set(stats) == {"i", "f", "o"}
    assert all(0 <= s["saturated"] <= 1 for s in stats.values())
    with minigrad.no_grad():                       # a forget-gate bias of +20 saturates f high
        model.bias_ih_l0.data[4:8] = 20.0
    stats = instruments.gate_saturation(model, x)
    assert stats["f"]["above"] == 1.0 and stats["f"]["below"] == 0.0
    gru = instruments.gate_saturation(nn.GRU(3, 4, reset_after=False).to(device), x)
    assert set(gru) == {"r", "z"}
    with pytest.raises(ValueError, match="no gates"):
        instruments.gate_saturation(nn.RNN(3, 4), x)
