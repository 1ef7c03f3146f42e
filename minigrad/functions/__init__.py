"""The primitive Functions, each with its forward and hand-written backward: the index of primitives.

Every Function works on arrays only (NumPy or CuPy, from ``backend``); the
Tensor side (argument checks, defaults, the functional form) lives in
``minigrad/functional.py`` and ``minigrad/tensor.py``.

Two tiers (as in Chainer).  The recurrent layers and attention have a
REFERENCE implementation, written to be read (rnn.py, attention.py), and a
FAST one beside it (rnn_fast.py, attention_fast.py) whose header says which
lines of the reference each block speeds up.  Tests prove the tiers equal.
The layers run the fast tier; ``use_reference_kernels()`` runs the reference:

    with minigrad.use_reference_kernels():     # or use_reference_kernels(True) / (False)
        out, h_n = model(x)

Adding an op:
  1. its Function (forward and backward on arrays, each backward line naming the
     derivative it applies) in the file of its family here;
  2. the export below;
  3. its functional form in ``minigrad/functional.py`` (argument checks, defaults);
  4. the Tensor method, if PyTorch has one, in ``minigrad/tensor.py`` (and the
     ``torch.<name>`` function form in ``minigrad/torch_compat/ops.py``);
  5. tests: a float64 gradcheck on cpu and strict devices (tests/test_ops_gradcheck.py)
     and, where PyTorch has the op, a parity case (tests/test_ops_parity.py).
"""
import contextlib

from .arithmetic import Add, Div, Mul, Neg, Pow, RoundedDiv, Sub
from .attention import ScaledDotProductAttention
from .attention_fast import FastScaledDotProductAttention
from .device import Cast, Clone, ToDevice
from .dropout import Dropout
from .elementwise import Abs, Clamp, Cos, Exp, Log, Maximum, Minimum, ReLU, Sigmoid, Sign, Sin, Tanh
from .embedding import Embedding
from .gather import Gather, Scatter
from .gelu import GELU
from .indexing import SetItem
from .linalg import Linear, MatMul
from .losses import BCEWithLogits, BinaryCrossEntropy, CrossEntropy, NLLLoss
from .norm import Norm
from .normalization import LayerNorm
from .reductions import Max, Mean, Sum
from .rnn import GRUFunction, LSTMFunction, RNNFunction
from .rnn_fast import FastGRUFunction, FastLSTMFunction, FastRNNFunction
from .scan import CumProd, CumSum, Flip, Roll
from .selection import MaskedFill, Where
from .shape import Cat, Expand, GetItem, Permute, Reshape, Split, Stack
from .softmax import LogSoftmax, Softmax

_reference_kernels = False


def reference_kernels_enabled():
    """True while the layers run the reference tier (see ``use_reference_kernels``)."""
    return _reference_kernels


@contextlib.contextmanager
def _restoring(previous):
    global _reference_kernels
    try:
        yield
    finally:
        _reference_kernels = previous


def use_reference_kernels(enabled=True):
    """Run RNN, LSTM, GRU and attention on the reference tier (True) or the fast tier (False).

    Takes effect at once; used in a ``with`` statement, the previous tier returns
    at the end of the block.
    """
    global _reference_kernels
    previous, _reference_kernels = _reference_kernels, bool(enabled)
    return _restoring(previous)


def pick(reference, fast):
    """The reference Function under ``use_reference_kernels()``, else the fast one."""
    return reference if _reference_kernels else fast
