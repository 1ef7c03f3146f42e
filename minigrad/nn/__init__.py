"""Layers, named and initialised as in ``torch.nn``."""
import sys

from .. import functional
from ..torch_compat import absent
from . import init
from . import utils
from .activation import GELU, Dropout, Flatten, Identity, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .attention import (AdditiveScore, BilinearScore, DotScore, HardAttention, MultiheadAttention,  # noqa: F401
                        from_torch_state_dict, to_torch_state_dict)
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
                   SmoothL1Loss)
from .embedding import Embedding
from .linear import Linear
from .module import Module, Parameter
from .normalization import LayerNorm
from .rnn import GRU, LSTM, RNN, RNNBase  # noqa: F401
from .rnn_cell import GRUCell, LSTMCell, RNNCell, unroll  # noqa: F401
from .tiers import reference_tier  # noqa: F401
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding  # noqa: F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,  # noqa: F401
                          TransformerEncoderLayer)

# nn.functional IS minigrad.functional (one module, two names, as torch.nn.functional is F):
# ``from minigrad.nn import functional as F`` finds the attribute imported above, and
# ``import minigrad.nn.functional as F`` finds this entry in Python's table of loaded modules.
sys.modules[__name__ + ".functional"] = functional


def __getattr__(name):
    """Names of torch.nn that minigrad leaves out on purpose: say so, and what to use."""
    return absent.explain("minigrad.nn", name)
