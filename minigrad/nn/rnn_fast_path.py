"""The recurrent layers' inference fast path: nn.RNN, LSTM and GRU's forward without the graph.

The same idea as the Transformer layers' (transformer_fast_path.py): when no gradient can be
wanted, ``RNNBase._run_layers`` (read that one first, minigrad/nn/rnn.py) runs the same fast-tier
Functions' ``forward`` on the same arrays in the same order, so the numbers are the same to the
last bit (tests/test_rnn_fast_path.py).  What it leaves out is what only a graph needs: a
Function.apply, a Tensor and a view record for the layer's transposes, its state's row per layer,
each layer and direction's call, and the final states' stacking.

Why: decoding a token at a time calls the layer once per token with one time step, where those
bookkeeping ops cost as much as the step itself (a GRU step at batch 1, hidden 64: 50 us through
the ordinary forward, 30 us of it the Function).  Figures: benchmarks/results/20261127-issue22-session6.md.

When it runs (``applies``): the fast tier (``reference=False``: the reference is the code a student
steps through), no dropout between layers (eval mode, or dropout 0, or one layer), an input with
T > 0 steps and N > 0 sequences, every parameter and initial state of the input's array type
(device) and dtype, and no gradient wanted: grad mode off, or nothing (input, initial states,
parameters) requires grad.
Anything else takes the ordinary forward.
"""
from .. import autograd, backend
from .. import functional as F
from .. import functions as fn
from .graph_free import forward, no_gradient_wanted

FAST_FUNCTIONS = {F.rnn: fn.FastRNNFunction, F.lstm: fn.FastLSTMFunction, F.gru: fn.FastGRUFunction}


def _parameters(module):
    """Every weight and bias of every layer and direction (None where the layer has no bias), lazily:
    in training the input's requires_grad already says no, and the list is never built."""
    for layer in range(module.num_layers):
        for direction in range(module.num_directions):
            yield from module._weights(layer, direction)


def applies(module, function, input, states):
    """True when ``run_layers`` gives what the ordinary forward would (module docstring).

    function: F.rnn, F.lstm or F.gru (anything else, a wrapper say, takes the ordinary forward);
    input and states: as the layer's forward got them, already checked by it (a 3-D input with
    input_size features; each state a Tensor of the right shape, or None)."""
    if module.reference or (module.training and module.dropout > 0 and module.num_layers > 1):
        return False
    if function not in FAST_FUNCTIONS:
        return False
    if input.shape[0] == 0 or input.shape[1] == 0:
        return False                            # no steps or no sequences
    data = input._data
    for state in states:
        if state is not None and (not isinstance(state, autograd.Tensor) or type(state._data) is not type(data)
                                  or state._data.dtype != data.dtype):
            return False                        # an array, another device or dtype: the ordinary forward's case
    return no_gradient_wanted(data, _parameters(module), (input,) + tuple(states))


def run_layers(module, function, input, states, lengths, options):
    """RNNBase._run_layers on arrays, when ``applies``: (output, tuple of final states (L*dirs, N, H)),
    output (T, N, dirs*H) or, batch_first, (N, T, dirs*H); Tensors outside the graph."""
    fast = FAST_FUNCTIONS[function]                                   # F.gru -> fn.FastGRUFunction, ...
    x = input._data.swapaxes(0, 1) if module.batch_first else input._data   # (T, N, D)
    xp = backend.array_module(x)
    mask = F.lengths_mask(lengths, x.shape[0], x.shape[1], input.device)
    finals = [[] for _ in states]
    for layer in range(module.num_layers):
        outputs = []
        for direction in range(module.num_directions):
            k = layer * module.num_directions + direction
            start = tuple(None if state is None else state._data[k] for state in states)
            weights = tuple(None if w is None else w._data for w in module._weights(layer, direction))
            arguments = (x,) + start + weights + (mask, direction == 1) + tuple(options.values())
            out, *last = forward(fast, *arguments)
            outputs.append(out)
            for collected, final in zip(finals, last):
                collected.append(final)
        x = outputs[0] if len(outputs) == 1 else xp.concatenate(outputs, axis=2)
    finals = tuple(xp.stack(collected) if len(collected) > 1 else collected[0][None] for collected in finals)
    output = x.swapaxes(0, 1) if module.batch_first else x
    return autograd.Tensor._from_array(output), tuple(autograd.Tensor._from_array(f) for f in finals)
