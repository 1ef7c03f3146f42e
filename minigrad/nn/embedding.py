"""Embedding table: token ids -> vectors."""
from .. import functional as F
from ..tensor import Tensor
from ..creation import empty
from . import init
from .module import Module, Parameter


class Embedding(Module):
    """y[...] = weight[ids[...]].

    ids: integer tensor of any shape -> y: (*ids.shape, embedding_dim)
    weight: (num_embeddings, embedding_dim), N(0, 1) as in PyTorch; the
    ``padding_idx`` row starts at zero and gets no gradient.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        F._torch_only_arguments("Embedding", max_norm=max_norm, scale_grad_by_freq=scale_grad_by_freq,
                                sparse=sparse)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        if padding_idx is not None and not 0 <= padding_idx < num_embeddings:
            raise ValueError(f"Embedding: padding_idx {padding_idx} must be within num_embeddings={num_embeddings}")
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype=dtype, device=device))
            self.reset_parameters()
        else:  # from_pretrained: use the given table as it is (no random draws)
            self.weight = Parameter(_weight, requires_grad=not _freeze, dtype=dtype, device=device)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0   # fresh array from normal_: nothing else shares it

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        """An Embedding whose table is a copy of ``embeddings`` (V, D); frozen (no gradient) by default.

        As in PyTorch, the ``padding_idx`` row is kept as given (not zeroed) but gets no gradient.
        """
        embeddings = embeddings if isinstance(embeddings, Tensor) else Tensor(embeddings)
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: expected a (num_embeddings, dim) table, got {embeddings.shape}")
        layer = cls(embeddings.shape[0], embeddings.shape[1], padding_idx=padding_idx,
                    device=embeddings.device, _weight=embeddings._data.copy())
        layer.weight.requires_grad = not freeze
        return layer

    def forward(self, ids):
        return F.embedding(ids, self.weight, self.padding_idx)

    def extra_repr(self):
        extra = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{extra}"
