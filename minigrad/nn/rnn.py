"""Recurrent layers: RNN, LSTM, GRU, with PyTorch's signatures, parameter names and shapes.

Each layer's ``forward`` runs every layer and direction through its functional
form, ``F.rnn`` / ``F.lstm`` / ``F.gru`` (minigrad/functional.py), whose one
line ``function = ... if reference else ...`` picks the tier: the reference
(``reference=True``: minigrad/functions/rnn.py, a loop over the step
equations of functions/rnn_steps.py, the code to read) or the fast tier
(the default: functions/rnn_fast.py, the same numbers).  Stacking: layer k
reads the outputs of layer k-1 (both directions concatenated when
bidirectional), with dropout between layers in training.  The same forward serves
training and decoding: under no_grad the engine records no graph (autograd.py).

Parameters, as in ``torch.nn``, for layer k (suffix ``_reverse`` for the
backward direction), G = 1 (RNN), 4 (LSTM), 3 (GRU):

    weight_ih_l{k}  (G*H, input_size if k == 0 else num_directions * H)
    weight_hh_l{k}  (G*H, H)
    bias_ih_l{k}, bias_hh_l{k}  (G*H,)        when bias=True

all drawn from U(-1/sqrt(H), 1/sqrt(H)).  Gate order: LSTM (i, f, g, o),
GRU (r, z, n).  So ``model.load_state_dict(torch_model.state_dict())`` works
and gives the same outputs.
"""
import math

from .. import checks, functional as F
from ..creation import cat, empty, stack
from . import init
from .module import Module, Parameter
from .utils.rnn import PackedSequence, pad_packed_sequence, repack_like

_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """The machinery shared by RNN, LSTM and GRU: parameters, shape checks, layers, directions."""

    mode = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, *, reference=False):
        super().__init__()
        self.reference = bool(reference)    # True: the reference tier (see the module docstring)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"{self.mode}: dropout must be in [0, 1), got {dropout}")
        if hidden_size < 1 or num_layers < 1:
            raise ValueError(f"{self.mode}: hidden_size and num_layers must be >= 1, "
                             f"got {hidden_size} and {num_layers}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        self.num_directions = 2 if bidirectional else 1
        rows = _GATES[self.mode] * hidden_size
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size * self.num_directions
            for suffix in self._suffixes():
                name = f"l{layer}{suffix}"
                setattr(self, "weight_ih_" + name, Parameter(empty((rows, width), dtype=dtype, device=device)))
                setattr(self, "weight_hh_" + name, Parameter(empty((rows, hidden_size), dtype=dtype, device=device)))
                if bias:
                    setattr(self, "bias_ih_" + name, Parameter(empty((rows,), dtype=dtype, device=device)))
                    setattr(self, "bias_hh_" + name, Parameter(empty((rows,), dtype=dtype, device=device)))
        self.reset_parameters()

    def _suffixes(self):
        return ("", "_reverse") if self.bidirectional else ("",)

    def reset_parameters(self):
        """Every weight and bias from U(-1/sqrt(H), 1/sqrt(H)), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for parameter in self.parameters():
            init.uniform_(parameter, -bound, bound)

    def _weights(self, layer, direction):
        name = f"l{layer}{self._suffixes()[direction]}"
        return (getattr(self, "weight_ih_" + name), getattr(self, "weight_hh_" + name),
                getattr(self, "bias_ih_" + name, None), getattr(self, "bias_hh_" + name, None))

    # ---------------------------------------------------------------- checks
    def _check_input(self, input):
        layout = "(N, T, input_size)" if self.batch_first else "(T, N, input_size)"
        checks.tensors(self.mode, input=input)
        if input.ndim != 3:
            raise ValueError(
                f"{self.mode}: expected a 3-D input of shape {layout} with input_size={self.input_size}, "
                f"got shape {input.shape}"
                + (". For one sequence, add a batch dimension with input.unsqueeze(1)" if input.ndim == 2 else "")
            )
        if input.shape[2] != self.input_size:
            raise ValueError(f"{self.mode}: expected input of shape {layout} with input_size="
                             f"{self.input_size}, got {input.shape} (last dimension {input.shape[2]})")
        checks.floating_input(self.mode, ValueError, input, self.weight_ih_l0)    # as PyTorch's ValueError

    def _check_state(self, state, name, batch):
        expected = (self.num_layers * self.num_directions, batch, self.hidden_size)
        if state is not None and tuple(state.shape) != expected:
            raise ValueError(f"{self.mode}: expected {name} of shape (num_layers * num_directions, N, "
                             f"hidden_size) = {expected}, got {tuple(state.shape)}")

    # ---------------------------------------------------------------- forward
    def _run_layers(self, function, input, states, lengths, **options):
        """Every layer and direction through ``function``: F.rnn, F.lstm or F.gru (one layer, one direction).

        input (T, N, D) (batch_first: (N, T, D)); states: tuple of (L*dirs, N, H) tensors or Nones.
        Returns (output (T, N, dirs*H) (batch_first: (N, T, ...)), tuple of final states, each (L*dirs, N, H)).
        """
        if isinstance(input, PackedSequence):
            # packed: the padded batch with lengths= (the same recurrence), then packed again as it came
            if lengths is not None:
                raise ValueError(f"{self.mode}: a PackedSequence carries its lengths; do not pass lengths= too")
            padded, lengths = pad_packed_sequence(input, batch_first=self.batch_first)
            output, finals = self._run_layers(function, padded, states, lengths.tolist(), **options)
            return repack_like(output.transpose(0, 1) if self.batch_first else output, input), finals
        self._check_input(input)
        for state, name in zip(states, ("h0", "c0")):
            self._check_state(state, name, input.shape[0 if self.batch_first else 1])
        x = input.transpose(0, 1) if self.batch_first else input
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                k = layer * self.num_directions + direction
                start = tuple(None if s is None else s[k] for s in states)
                out, *last = function(x, *start, *self._weights(layer, direction), lengths=lengths,
                                      reverse=direction == 1, reference=self.reference, **options)
                outputs.append(out)
                for collected, final in zip(finals, last):
                    collected.append(final)
            x = outputs[0] if len(outputs) == 1 else cat(outputs, dim=2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout)
        # one layer and direction: unsqueeze, a quarter of stack's cost (tiny LSTM 1.5%)
        finals = tuple(stack(collected, dim=0) if len(collected) > 1 else collected[0].unsqueeze(0)
                       for collected in finals)
        return (x.transpose(0, 1) if self.batch_first else x), finals

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False),
                              ("reference", False)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


class RNN(RNNBase):
    """Elman RNN:  h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)  (or relu).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
        batch_first=False, dropout=0.0, bidirectional=False, *, reference=False)
        reference: run the reference tier (minigrad's addition; see the module docstring)

    forward(input, hx=None, lengths=None) -> (output, h_n)
        input   (T, N, input_size), or (N, T, input_size) when batch_first
        hx      (num_layers * num_directions, N, H), zeros when None
        lengths N ints in [1, T] (any order) for a padded batch: padded steps keep
                the state and output zeros, as PyTorch's pack_padded_sequence
        output  (T, N, num_directions * H) (batch_first: (N, T, ...)), the last layer's states
        h_n     (num_layers * num_directions, N, H), each sequence's state at its last step
    """

    mode = "RNN"

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None, *, reference=False):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype, reference=reference)

    def forward(self, input, hx=None, lengths=None):
        output, (h_n,) = self._run_layers(F.rnn, input, (hx,), lengths, nonlinearity=self.nonlinearity)
        return output, h_n


class LSTM(RNNBase):
    """Long short-term memory, gates (i, f, g, o) as PyTorch:

        i, f, o = sigma(...),  g = tanh(...),  c_t = f c_{t-1} + i g,  h_t = o tanh(c_t)

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
         dropout=0.0, bidirectional=False, *, reference=False)

    forward(input, hx=None, lengths=None) -> (output, (h_n, c_n))
        hx = (h0, c0), each (num_layers * num_directions, N, H); zeros when None.
        Shapes and lengths as in ``RNN``.
    """

    mode = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, *, reference=False):
        if proj_size:
            raise NotImplementedError(
                f"LSTM: proj_size={proj_size} (an LSTM with projections, h_t = W_hr (o * tanh(c_t))) is not in "
                f"minigrad; leave proj_size=0, or add nn.Linear(hidden_size, {proj_size}) on the output "
                f"(which projects the output but not the recurrent state; see minigrad/TORCH_DIFFERENCES.md)")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype, reference=reference)

    def forward(self, input, hx=None, lengths=None):
        if hx is None:
            hx = (None, None)
        elif not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise ValueError("LSTM: hx must be a tuple (h0, c0), each of shape "
                             "(num_layers * num_directions, N, hidden_size)")
        output, (h_n, c_n) = self._run_layers(F.lstm, input, tuple(hx), lengths)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit, gates (r, z, n) as PyTorch:

        r = sigma(x W_ir^T + b_ir + h W_hr^T + b_hr),   z = sigma(x W_iz^T + b_iz + h W_hz^T + b_hz)
        n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))          reset_after=True (default)
        n = tanh(x W_in^T + b_in + (r * h) W_hn^T + b_hn)          reset_after=False
        h_t = (1 - z) * n + z * h_{t-1}

    Which books use which: PyTorch, cuDNN and Keras (``reset_after=True``, its
    default since TF 2) apply the reset gate after the recurrent matmul; Cho et
    al. (2014), d2l.ai ("Dive into Deep Learning", H~ = tanh(X W_xh + (R * H) W_hh
    + b_h)) and most textbooks apply it before (``reset_after=False``).  The
    parameters have the same names and shapes either way, but the two variants
    compute different functions, so weights trained with one do not transfer.

    The update gate's convention also differs between texts: PyTorch and d2l.ai
    write h' = z * h + (1 - z) * h~ (z near 1 keeps the old state), as here and as
    Cho et al. (2014, eq. 7); Chung et al. (2014) and some others write
    h' = (1 - z) * h + z * h~, swapping the roles of z and 1 - z.  Check which one a text uses before comparing gate values.

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
        dropout=0.0, bidirectional=False, reset_after=True, *, reference=False)

    forward(input, hx=None, lengths=None) -> (output, h_n), shapes as in ``RNN``.
    """

    mode = "GRU"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, reset_after=True, device=None, dtype=None, *, reference=False):
        self.reset_after = reset_after
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype, reference=reference)

    def forward(self, input, hx=None, lengths=None):
        output, (h_n,) = self._run_layers(F.gru, input, (hx,), lengths, reset_after=self.reset_after)
        return output, h_n
