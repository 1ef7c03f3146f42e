"""Instruments for the lessons: measure what the lessons talk about.

    gradient_norms_through_time(model, x, loss_fn)   ||dL/dh_t|| and ||dL/dx_t|| against t
                                                     (vanishing and exploding gradients)
    spectral_radius(matrix)                          max |eigenvalue| of a square matrix
    recurrent_spectral_radii(model)                  the same for each gate block of W_hh
    gate_saturation(model, x)                        fraction of sigmoid gates below 0.05 or
                                                     above 0.95 (LSTM i, f, o; GRU r, z)

``model`` is an ``nn.RNN`` / ``LSTM`` / ``GRU`` (its first layer, forward
direction) or an ``nn.RNNCell`` / ``LSTMCell`` / ``GRUCell``.  The results are
plain Python floats and lists, ready to print or plot.
"""
import numpy  # host-side analysis only: eigenvalues of a copy of W_hh (CuPy has no general eigvals)

from . import backend
from .autograd import no_grad
from .functions.rnn_steps import gru_step_forward, lstm_step_forward
from .nn.rnn import GRU, LSTM, RNN, RNNBase
from .nn.rnn_cell import GRUCell, LSTMCell, RNNCell
from .tensor import Tensor
from .creation import stack

GATE_NAMES = {"RNN": ("h",), "LSTM": ("i", "f", "g", "o"), "GRU": ("r", "z", "n")}


def _kind(model):
    for kind, classes in (("RNN", (RNN, RNNCell)), ("LSTM", (LSTM, LSTMCell)), ("GRU", (GRU, GRUCell))):
        if isinstance(model, classes):
            return kind
    raise TypeError(f"expected an nn.RNN/LSTM/GRU or a cell, got {type(model).__name__}")


def _first_layer(model):
    """(weight_ih, weight_hh, bias_ih, bias_hh) of the first layer, forward direction."""
    if isinstance(model, RNNBase):
        return model._weights(0, 0)
    return model.weight_ih, model.weight_hh, model.bias_ih, model.bias_hh


def as_cell(model):
    """A cell sharing the first layer's (forward direction's) parameters of an RNN/LSTM/GRU."""
    if not isinstance(model, RNNBase):
        return model
    kind = _kind(model)
    w_ih, w_hh, b_ih, b_hh = _first_layer(model)
    if kind == "RNN":
        cell = RNNCell(model.input_size, model.hidden_size, model.bias, model.nonlinearity,
                       device=w_ih.device, dtype=w_ih.dtype)
    elif kind == "LSTM":
        cell = LSTMCell(model.input_size, model.hidden_size, model.bias, device=w_ih.device, dtype=w_ih.dtype)
    else:
        cell = GRUCell(model.input_size, model.hidden_size, model.bias, model.reset_after,
                       device=w_ih.device, dtype=w_ih.dtype)
    cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh = w_ih, w_hh, b_ih, b_hh
    return cell


def _norms(array):
    """||array[t]|| for each t (over all other dimensions), as a list of floats."""
    xp = backend.array_module(array)
    flat = array.reshape(array.shape[0], -1)
    return [float(v) for v in backend.to_numpy(xp.sqrt((flat * flat).sum(axis=1)))]


def gradient_norms_through_time(model, x, loss_fn, state=None):
    """How much gradient reaches each time step.

    model:   nn.RNN / LSTM / GRU (first layer, forward direction) or a cell
    x:       input (T, N, D), time-major
    loss_fn: called with the outputs (T, N, H); returns a scalar Tensor, e.g.
             ``lambda out: (out[-1] ** 2).sum()`` for a loss on the last step only
    Returns {"h": [||dL/dh_t|| for t in 0..T-1], "x": [||dL/dx_t|| ...]}.

    dL/dh_t is the TOTAL gradient reaching the state h_t: through its own
    output and through every later step (what BPTT carries as ``dh``).  The
    sequence is unrolled with the cell (one step Function each) so that each h_t is a tensor
    of its own whose ``.grad`` can be kept.
    """
    cell = as_cell(model)
    x = Tensor(x._data, requires_grad=True)          # a fresh leaf, so x.grad is ours
    states = []
    for t in range(x.shape[0]):
        state = cell(x[t], state)
        h = state[0] if isinstance(state, tuple) else state
        h.retain_grad()
        states.append(h)
    loss = loss_fn(stack(states, dim=0))
    loss.backward()
    xp = backend.array_module(x._data)
    dh = xp.stack([h.grad._data if h.grad is not None else xp.zeros(h.shape, dtype=h.dtype) for h in states])
    return {"h": _norms(dh), "x": _norms(x.grad._data)}


def spectral_radius(matrix):
    """max |lambda| over the eigenvalues of a square matrix (Tensor or array).

    Without the nonlinearity, h_t = W h_{t-1} grows like rho(W)^t in the long run
    (||W^t||^(1/t) -> rho): a radius above 1 explodes, below 1 vanishes eventually.
    A non-normal W can still grow a vector for many steps with rho < 1; the bound
    that holds at every step is the largest singular value (lesson 3).
    """
    data = matrix._data if isinstance(matrix, Tensor) else matrix
    if data.ndim != 2 or data.shape[0] != data.shape[1]:
        raise ValueError(f"spectral_radius: expected a square matrix (H, H), got shape {tuple(data.shape)}; "
                         "for an LSTM's or GRU's stacked W_hh use recurrent_spectral_radii(model)")
    host = backend.to_numpy(data).astype(numpy.float64)
    return float(numpy.abs(numpy.linalg.eigvals(host)).max())


def recurrent_spectral_radii(model):
    """{gate: spectral radius of that gate's (H, H) block of W_hh} for the first layer.

    RNN: {"h": ...};  LSTM: {"i", "f", "g", "o"};  GRU: {"r", "z", "n"}.
    """
    kind = _kind(model)
    _, w_hh, _, _ = _first_layer(model)
    H = w_hh.shape[1]
    return {name: spectral_radius(w_hh._data[k * H:(k + 1) * H]) for k, name in enumerate(GATE_NAMES[kind])}


def gate_saturation(model, x, state=None, low=0.05, high=0.95):
    """How often each sigmoid gate is saturated, over all steps, sequences and units.

    model: nn.LSTM / GRU (first layer, forward direction) or LSTMCell / GRUCell
    x:     input (T, N, D), time-major
    Returns {gate: {"below": fraction < low, "above": fraction > high,
    "saturated": their sum}} for the LSTM's i, f, o and the GRU's r, z.
    A saturated gate passes almost no gradient: sigma' = s(1 - s) < 0.05.
    """
    kind = _kind(model)
    if kind == "RNN":
        raise ValueError("gate_saturation: a plain RNN has no gates; use an LSTM or a GRU")
    w_ih, w_hh, b_ih, b_hh = (None if p is None else p._data for p in _first_layer(model))
    data = x._data if isinstance(x, Tensor) else x
    xp = backend.array_module(data)
    T, N, _ = data.shape
    H = w_hh.shape[1]
    h = xp.zeros((N, H), dtype=data.dtype) if state is None else (state[0] if kind == "LSTM" else state)._data
    c = xp.zeros((N, H), dtype=data.dtype) if state is None or kind == "GRU" else state[1]._data
    names = ("i", "f", "o") if kind == "LSTM" else ("r", "z")
    values = {name: [] for name in names}
    reset_after = getattr(model, "reset_after", True)
    with no_grad():
        for t in range(T):
            if kind == "LSTM":
                h, c, cache = lstm_step_forward(data[t], h, c, w_ih, w_hh, b_ih, b_hh)
                gates = dict(zip(("i", "f", "g", "o"), cache[7:11]))
            else:
                h, cache = gru_step_forward(data[t], h, w_ih, w_hh, b_ih, b_hh, reset_after)
                gates = dict(zip(("r", "z"), cache[6:8]))
            for name in names:
                values[name].append(gates[name])
    result = {}
    for name in names:
        s = xp.stack(values[name])
        below, above = float((s < low).mean()), float((s > high).mean())
        result[name] = {"below": below, "above": above, "saturated": below + above}
    return result
