"""Picking values along one dimension by an index tensor (torch.gather)."""
from .. import backend
from ..autograd import Function


class Gather(Function):
    """y[i][j][k] = x[i][index[i][j][k]][k]   (for dim = 1; any dim, any rank).

    index has x's number of dimensions; y has index's shape.
    dL/dx is zero except at the picked positions, which receive dL/dy; a
    position picked several times receives the sum.
    """

    @staticmethod
    def forward(ctx, x, dim, index):
        xp = backend.array_module(x, index)
        if index.dtype.kind not in "iu":
            raise TypeError(f"gather: index must be an integer tensor, got dtype {index.dtype}: use index.long()")
        if index.ndim != x.ndim:
            raise ValueError(f"gather: index {tuple(index.shape)} must have as many dimensions as the input "
                             f"{tuple(x.shape)}")
        dim = dim % max(x.ndim, 1)
        for d in range(x.ndim):
            if d != dim and index.shape[d] > x.shape[d]:
                raise ValueError(f"gather: index {tuple(index.shape)} is larger than the input "
                                 f"{tuple(x.shape)} in dimension {d}")
        if index.size and (int(index.min()) < 0 or int(index.max()) >= x.shape[dim]):
            raise IndexError(f"gather: index values must be in 0..{x.shape[dim] - 1} (dimension {dim}), got "
                             f"{int(index.min())}..{int(index.max())}")
        picked = _positions(xp, index, dim)
        ctx.shape, ctx.picked = x.shape, picked
        return x[picked]

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        dx = xp.zeros(ctx.shape, dtype=dout.dtype)
        xp.add.at(dx, ctx.picked, dout)                 # dL/dx at each picked position, summed over repeats
        return dx, None, None


def _positions(xp, index, dim):
    """The full integer index (one array per dimension, broadcasting to index's shape) of every element
    that gather picks: index itself along dim, the element's own position along the others."""
    grids = []
    for d, n in enumerate(index.shape):
        shape = [1] * index.ndim
        shape[d] = n
        grids.append(index if d == dim else xp.arange(n).reshape(shape))
    return tuple(grids)


def sort_indices(x, dim, descending=False, k=None):
    """The (stable) order that sorts array ``x`` along ``dim``; only the first ``k`` when given."""
    xp = backend.array_module(x)
    dim = dim % max(x.ndim, 1)
    if k is not None and not 0 <= k <= x.shape[dim]:
        raise ValueError(f"topk: k={k} is out of range for dimension {dim} of size {x.shape[dim]}")
    if descending and x.dtype.kind in "ub":
        x = x.astype("int64")                                # negating unsigned or boolean values wraps
    order = xp.argsort(-x if descending else x, axis=dim, kind="stable")
    if k is not None:
        order = order[(slice(None),) * dim + (slice(0, k),)]
    return order.astype("int64")


class Scatter(Function):
    """y = x, except y[i][index[i][j]] = src[i][j] for dim = 1 (torch.scatter; any dim, any rank).

    src is a tensor of index's shape (or larger) or a number.  Positions written
    twice keep one of the values, as in torch (which does not say which).
        dL/dx = dL/dy with the written positions zeroed
        dL/dsrc[i][j] = dL/dy[i][index[i][j]]
    """

    @staticmethod
    def forward(ctx, x, dim, index, src):
        xp = backend.array_module(x, index)
        if index.dtype.kind not in "iu" or index.ndim != x.ndim:
            raise ValueError(f"scatter: index must be an integer tensor with the input's {x.ndim} dimensions, "
                             f"got dtype {index.dtype}, shape {tuple(index.shape)}")
        dim = dim % max(x.ndim, 1)
        if index.size and (int(index.min()) < 0 or int(index.max()) >= x.shape[dim]):
            raise IndexError(f"scatter: index values must be in 0..{x.shape[dim] - 1} (dimension {dim}), got "
                             f"{int(index.min())}..{int(index.max())}")
        written = _positions(xp, index, dim)
        from_src = tuple(slice(0, n) for n in index.shape)        # src's leading block, index's shape
        y = x.copy()
        y[written] = src[from_src] if hasattr(src, "shape") and src.ndim else src
        ctx.written, ctx.from_src = written, from_src
        ctx.src_shape = tuple(src.shape) if hasattr(src, "shape") else None
        return y

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        dx = dout.copy()
        dx[ctx.written] = 0                                     # overwritten: no gradient to x there
        dsrc = None
        if ctx.src_shape is not None and ctx.needs_input_grad[3]:
            dsrc = xp.zeros(ctx.src_shape, dtype=dout.dtype)
            dsrc[ctx.from_src] = dout[ctx.written]              # each src value reaches where it went
        return dx, None, None, dsrc
