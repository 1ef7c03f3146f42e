"""Embedding lookup: row ``ids[n]`` of a (V, D) table."""
from .. import backend
from ..autograd import Function


class Embedding(Function):
    """y[n] = W[ids[n]].   dL/dW[v] = sum of dL/dy[n] over the n with ids[n] = v.

    Rows used several times accumulate; the ``padding_idx`` row gets no gradient.
    """

    @staticmethod
    def forward(ctx, weight, ids, padding_idx):
        backend.array_module(weight, ids)            # raises if the ids live on another device
        if ids.dtype.kind not in "iu":
            raise TypeError(f"embedding: token ids must be integers, got dtype {ids.dtype}: use ids.long()")
        vocab_size = weight.shape[0]
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
            bad = int(ids.max()) if int(ids.max()) >= vocab_size else int(ids.min())
            raise IndexError(
                f"embedding: token id {bad} is outside the table of {vocab_size} rows "
                f"(valid ids 0..{vocab_size - 1}): is the vocabulary bigger than num_embeddings?"
            )
        ctx.save_for_backward(ids)
        ctx.weight_shape, ctx.padding_idx = weight.shape, padding_idx
        return weight[ids]

    @staticmethod
    def backward(ctx, dout):
        (ids,) = ctx.saved_tensors
        xp = backend.array_module(dout)
        dweight = xp.zeros(ctx.weight_shape, dtype=dout.dtype)
        xp.add.at(dweight, ids.reshape(-1), dout.reshape(ids.size, ctx.weight_shape[1]))  # accumulate per row
        if ctx.padding_idx is not None:
            dweight[ctx.padding_idx] = 0
        return dweight, None, None
