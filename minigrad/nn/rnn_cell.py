"""One step of an RNN, an LSTM and a GRU: the cells.

Each cell runs the step equations of ``minigrad/functions/rnn_steps.py``
(``rnn_step_forward`` and ``rnn_step_backward``, ...) through a one-step
Function of ``minigrad/functions/rnn.py`` (``RNNCellFunction``, ...), the same
code the reference tier of nn.RNN / LSTM / GRU loops over.  ``unroll`` runs a
cell over a sequence one step at a time, each step a node of the graph (so a
lesson can keep every h_t's gradient).

Parameters as ``torch.nn.RNNCell`` / ``LSTMCell`` / ``GRUCell``: weight_ih
(G*H, input_size), weight_hh (G*H, H), bias_ih, bias_hh (G*H,), all from
U(-1/sqrt(H), 1/sqrt(H)); gates LSTM (i, f, g, o), GRU (r, z, n).
"""
import math

from .. import checks, functions as fn
from ..creation import empty, stack, tensor, where, zeros
from ..torch_compat.promotion import same_dtype
from . import init
from .module import Module, Parameter


class _CellBase(Module):
    gates = 1

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self.gates * hidden_size
        self.weight_ih = Parameter(empty((rows, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(empty((rows, hidden_size), dtype=dtype, device=device))
        self.bias_ih = Parameter(empty((rows,), dtype=dtype, device=device)) if bias else None
        self.bias_hh = Parameter(empty((rows,), dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for parameter in self.parameters():
            init.uniform_(parameter, -bound, bound)

    def _zeros(self, x):
        return zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)

    def _check(self, x, hx, cx=None):
        name = type(self).__name__
        checks.tensors(name, input=x, hx=hx, cx=cx)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"{name}: expected input of shape (N, input_size) = "
                             f"(N, {self.input_size}), got {x.shape}")
        for state in (hx, cx):
            if state is not None and tuple(state.shape) != (x.shape[0], self.hidden_size):
                raise ValueError(f"{name}: expected a state of shape (N, hidden_size) = "
                                 f"({x.shape[0]}, {self.hidden_size}), got {tuple(state.shape)}")
        same_dtype(name, input=x, weight_ih=self.weight_ih, weight_hh=self.weight_hh, bias_ih=self.bias_ih,
                   bias_hh=self.bias_hh, hx=hx, cx=cx)                         # PyTorch raises for each

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)  (or relu).   forward(x (N, D), h=None) -> h' (N, H)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, x, h=None):
        self._check(x, h)
        h = self._zeros(x) if h is None else h
        return fn.RNNCellFunction.apply(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                                        self.nonlinearity)


class LSTMCell(_CellBase):
    """forward(x (N, D), (h, c)=None) -> (h', c'):

        i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh)      (gate order of PyTorch)
        c' = sigma(f) * c + sigma(i) * tanh(g),     h' = sigma(o) * tanh(c')
    """

    gates = 4

    def forward(self, x, state=None):
        h, c = (None, None) if state is None else state
        self._check(x, h, c)
        if state is None:
            h, c = self._zeros(x), self._zeros(x)
        return fn.LSTMCellFunction.apply(x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class GRUCell(_CellBase):
    """forward(x (N, D), h=None) -> h':

        r = sigma(x W_ir^T + b_ir + h W_hr^T + b_hr),   z = sigma(x W_iz^T + b_iz + h W_hz^T + b_hz)
        n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))      reset_after=True (PyTorch)
        n = tanh(x W_in^T + b_in + (r * h) W_hn^T + b_hn)      reset_after=False (textbook; see nn.GRU)
        h' = (1 - z) * n + z * h
    """

    gates = 3

    def __init__(self, input_size, hidden_size, bias=True, reset_after=True, device=None, dtype=None):
        self.reset_after = reset_after
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, x, h=None):
        self._check(x, h)
        h = self._zeros(x) if h is None else h
        return fn.GRUCellFunction.apply(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                                        self.reset_after)


def unroll(cell, x, state=None, lengths=None, reverse=False):
    """Run ``cell`` over a time-major sequence x (T, N, D) with autograd, one step at a time.

    state: the cell's state (h, or (h, c) for LSTMCell), zeros when None.
    lengths: N ints; steps t >= lengths[n] keep sequence n's state and output zeros,
    as nn.RNN / LSTM / GRU do (the reverse direction, reverse=True, then starts
    at each sequence's own end).  Returns (output (T, N, H), final state).
    """
    T, N = x.shape[0], x.shape[1]
    if lengths is not None:
        lengths = [int(n) for n in (lengths.tolist() if hasattr(lengths, "tolist") else lengths)]
        if state is None:
            h0 = zeros((N, cell.hidden_size), dtype=x.dtype, device=x.device)
            state = (h0, h0) if isinstance(cell, LSTMCell) else h0
    outputs = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        new = cell(x[t], state)
        if lengths is not None:                     # padded steps keep the state, output zero
            valid = tensor([[t < n] for n in lengths], device=x.device)     # (N, 1) bool
            if isinstance(new, tuple):
                new = tuple(where(valid, a, b) for a, b in zip(new, state))
            else:
                new = where(valid, new, state)
        h = new[0] if isinstance(new, tuple) else new
        outputs[t] = h if lengths is None else where(valid, h, 0.0)
        state = new
    return stack(outputs, dim=0), state
