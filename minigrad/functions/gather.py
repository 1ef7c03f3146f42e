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
        if index.size and (int(index.min()) < -x.shape[dim] or int(index.max()) >= x.shape[dim]):
            raise IndexError(f"gather: index out of range for dimension {dim} of size {x.shape[dim]}")
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
    """The full integer index (one array per dimension) of every element that gather picks."""
    grids = list(xp.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def sort_indices(x, dim, descending=False, k=None):
    """The (stable) order that sorts array ``x`` along ``dim``; only the first ``k`` when given."""
    xp = backend.array_module(x)
    dim = dim % max(x.ndim, 1)
    if k is not None and not 0 <= k <= x.shape[dim]:
        raise ValueError(f"topk: k={k} is out of range for dimension {dim} of size {x.shape[dim]}")
    order = xp.argsort(-x if descending else x, axis=dim, kind="stable")
    if k is not None:
        order = order[(slice(None),) * dim + (slice(0, k),)]
    return order.astype("int64")
