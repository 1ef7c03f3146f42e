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
        dweight = sum_rows_by_id(ids.reshape(-1), dout.reshape(ids.size, ctx.weight_shape[1]), ctx.weight_shape[0])
        if ctx.padding_idx is not None:
            dweight[ctx.padding_idx] = 0
        return dweight, None, None


def sum_rows_by_id(ids, rows, n_ids):
    """out[v] = sum of rows[n] over the n with ids[n] = v:  ids (M,), rows (M, D) -> out (n_ids, D).

    The plain way is one call, ``xp.add.at(out, ids, rows)`` (out zeros), but NumPy's add.at
    takes ~0.6 us a row (lesson 12's batch: 1536 rows, 0.97 ms).  Here the ids are sorted so
    each id's rows sit together, and add.reduceat sums each run in one pass (0.16 ms, the
    same sums: tests/test_nn.py checks it against add.at).
    """
    xp = backend.array_module(rows, ids)
    out = xp.zeros((n_ids, rows.shape[1]), dtype=rows.dtype)
    if ids.size == 0:
        return out
    order = xp.argsort(ids, kind="stable")        # rows of one id stay in their order
    sorted_ids = ids[order]
    first = xp.empty(ids.shape, dtype=bool)       # where each run of one id starts
    first[0] = True
    first[1:] = sorted_ids[1:] != sorted_ids[:-1]
    starts = xp.flatnonzero(first)
    out[sorted_ids[starts]] = xp.add.reduceat(rows[order], starts, axis=0)   # one sum per distinct id
    return out
