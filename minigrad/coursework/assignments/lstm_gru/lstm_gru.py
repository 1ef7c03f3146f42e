"""Assignment: one step of an LSTM and of a GRU, forward and backward.

The functions are minigrad's own (minigrad/functions/rnn_steps.py) with their
bodies taken out: written right, they are the code that minigrad's reference
tier runs at every time step (nn.LSTM / nn.GRU with reference=True, F.lstm /
F.gru with reference=True, nn.LSTMCell and nn.GRUCell); the default fast tier
(functions/rnn_fast.py) computes the same numbers.  Weights are stored as in PyTorch,
(out, in), with the gate blocks stacked in PyTorch's order along the rows:

    LSTM (i, f, g, o):  w_ih (4H, D), w_hh (4H, H), b_ih, b_hh (4H,)
    GRU  (r, z, n):     w_ih (3H, D), w_hh (3H, H), b_ih, b_hh (3H,)

so the pre-activations are x @ w_ih.T + b_ih and h_prev @ w_hh.T + b_hh, and
your weights load into ``torch.nn.LSTMCell`` / ``GRUCell`` as they are.  Each
function's docstring gives its equations.
"""

# BEGIN LIBRARY
from minigrad.functions.rnn_steps import gru_step_backward, gru_step_forward, lstm_step_backward, lstm_step_forward
# END LIBRARY
