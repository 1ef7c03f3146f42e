"""Layers, named and initialised as in ``torch.nn``."""
from . import init
from .activation import Dropout, ReLU, Sigmoid, Softmax, Tanh
from .attention import (AdditiveScore, BilinearScore, DotScore, HardAttention, MultiheadAttention,  # noqa: F401
                        from_torch_state_dict, to_torch_state_dict)
from .container import ModuleList, Sequential
from .embedding import Embedding
from .linear import Linear
from .module import Module, Parameter
from .normalization import LayerNorm
from .rnn import GRU, LSTM, RNN, RNNBase  # noqa: F401
from .rnn_cell import GRUCell, LSTMCell, RNNCell, unroll  # noqa: F401
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding  # noqa: F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,  # noqa: F401
                          TransformerEncoderLayer)
