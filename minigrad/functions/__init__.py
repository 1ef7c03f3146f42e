"""The primitive Functions, each with its forward and hand-written backward: the index of primitives.

Every Function works on arrays only (NumPy or CuPy, from ``backend``); the
Tensor side (argument checks, defaults, the functional form) lives in
``minigrad/functional.py`` and ``minigrad/tensor.py``.

Two tiers (as in Chainer).  The recurrent layers and attention have a
REFERENCE implementation, written to be read (rnn.py over rnn_steps.py,
attention.py), and a FAST one beside it (rnn_fast.py, attention_fast.py) whose
header says what it changes relative to the reference.  Tests prove the tiers
equal.  The functional forms choose the tier from an argument, in one visible
line: ``F.lstm(..., reference=True)``; the layers take ``reference=`` too, and
``minigrad.nn.reference_tier(model)`` sets it on every layer of a model.

Adding an op:
  1. its Function (forward and backward on arrays, each backward line naming the
     derivative it applies) in the file of its family here;
  2. the export below;
  3. its functional form in ``minigrad/functional.py`` (argument checks, defaults);
  4. the Tensor method, if PyTorch has one, in ``minigrad/tensor.py`` (and the
     ``torch.<name>`` function form in ``minigrad/ops.py``);
  5. tests: a float64 gradcheck on cpu and strict devices (tests/test_ops_gradcheck.py)
     and, where PyTorch has the op, a parity case (tests/test_ops_parity.py).
"""
from .arithmetic import Add, Div, Mul, Neg, Pow, RoundedDiv, Sub
from .attention import ScaledDotProductAttention
from .attention_fast import FastScaledDotProductAttention
from .device import Cast, Clone, ToDevice
from .dropout import Dropout
from .elementwise import Abs, Clamp, Cos, Exp, Log, Maximum, Minimum, ReLU, Round, Sigmoid, Sign, Sin, Tanh
from .embedding import Embedding
from .gather import Gather, Scatter
from .gelu import GELU
from .indexing import SetItem
from .linalg import Linear, MatMul
from .losses import BCEWithLogits, BinaryCrossEntropy, CrossEntropy, NLLLoss
from .norm import Norm
from .normalization import LayerNorm
from .normalization_fast import FastLayerNorm
from .reductions import Max, Mean, Sum
from .rnn import (GRUCellFunction, GRUFunction, LSTMCellFunction, LSTMFunction, RNNCellFunction,  # noqa: F401
                  RNNFunction)
from .rnn_fast import FastGRUFunction, FastLSTMFunction, FastRNNFunction
from .scan import CumProd, CumSum, Flip, Roll
from .selection import MaskedFill, Where
from .shape import Cat, Expand, GetItem, Permute, Reshape, Split, Stack
from .softmax import LogSoftmax, Softmax
