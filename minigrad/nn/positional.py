"""Positional encodings: attention alone ignores word order, so each position gets a vector.

    SinusoidalPositionalEncoding   fixed, P[pos, 2i] = sin(pos / 10000^(2i/d)),
                                          P[pos, 2i+1] = cos(pos / 10000^(2i/d))
    LearnedPositionalEmbedding     a trained table, one row per position

Both add their vectors to the input: x (N, T, d) if batch_first else (T, N, d).
``offset`` shifts the positions, for a decoder that feeds one new token at a time.
"""
from .. import backend, checks
from ..tensor import Tensor
from ..creation import empty
from . import init
from .activation import Dropout
from .module import Module, Parameter


def sinusoidal_encoding(max_len, d_model, dtype="float32", device=None):
    """(max_len, d_model) Tensor P with P[pos, 2i] = sin(pos / 10000^(2i/d)), P[pos, 2i+1] = cos(same).

    Column j uses i = j // 2, so an odd d_model ends with a sine column.
    """
    xp = backend.get_module(backend.normalize_device(device))
    position = xp.arange(max_len, dtype="float64")[:, None]           # (max_len, 1)
    two_i = 2 * (xp.arange(d_model) // 2)                              # 0, 0, 2, 2, 4, 4, ...
    angle = position / 10000.0 ** (two_i / d_model)                   # (max_len, d_model)
    even = (xp.arange(d_model) % 2) == 0
    table = xp.where(even, xp.sin(angle), xp.cos(angle))
    return Tensor._from_array(table.astype(dtype))


class SinusoidalPositionalEncoding(Module):
    """x + P[offset : offset + T] (then dropout), with the fixed table of Vaswani et al. (2017).

    The table is a buffer (no gradient): it moves with .to() but is not learned.
    """

    def __init__(self, d_model, max_len=5000, dropout=0.0, batch_first=False, device=None, dtype=None):
        super().__init__()
        self.d_model, self.max_len, self.batch_first = d_model, max_len, batch_first
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model, dtype or "float32", device),
                             persistent=False)
        self.dropout = Dropout(dropout)

    def forward(self, x, offset=0):
        checks.tensors("SinusoidalPositionalEncoding", input=x)
        t = x.shape[1] if self.batch_first else x.shape[0]
        if offset + t > self.max_len:
            raise ValueError(f"SinusoidalPositionalEncoding: positions up to {offset + t} exceed max_len={self.max_len}")
        pe = Tensor._from_array(self.pe._data[offset:offset + t].astype(x.dtype))   # (T, d)
        x = x + (pe if self.batch_first else pe.unsqueeze(1))                   # broadcast over the batch
        return self.dropout(x)

    def extra_repr(self):
        return f"d_model={self.d_model}, max_len={self.max_len}, batch_first={self.batch_first}"


class LearnedPositionalEmbedding(Module):
    """x + weight[offset : offset + T] (then dropout); ``weight`` (max_len, d_model) ~ N(0, 1) is learned."""

    def __init__(self, max_len, d_model, dropout=0.0, batch_first=False, device=None, dtype=None):
        super().__init__()
        self.d_model, self.max_len, self.batch_first = d_model, max_len, batch_first
        self.weight = Parameter(empty((max_len, d_model), dtype=dtype, device=device))
        init.normal_(self.weight)
        self.dropout = Dropout(dropout)

    def forward(self, x, offset=0):
        checks.tensors("LearnedPositionalEmbedding", input=x)
        t = x.shape[1] if self.batch_first else x.shape[0]
        if offset + t > self.max_len:
            raise ValueError(f"LearnedPositionalEmbedding: positions up to {offset + t} exceed max_len={self.max_len}")
        pe = self.weight[offset:offset + t]                                     # (T, d)
        x = x + (pe if self.batch_first else pe.unsqueeze(1))
        return self.dropout(x)

    def extra_repr(self):
        return f"{self.max_len}, {self.d_model}, batch_first={self.batch_first}"

