"""Reductions over ``dim`` (an int, a tuple of ints, or None for all dimensions)."""
from .. import backend
from ..autograd import Function

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the primitives
# assignment asks students to write (Sum's backward and _restore): `minigrad assignment make` builds its file from this one.


def _axes(dim, ndim):
    """``dim`` as a sorted tuple of non-negative axes (all of them for None); an IndexError when out of range."""
    if dim is None:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    for d in dims:
        if not -ndim <= d < max(ndim, 1):
            raise IndexError(f"dim {d} is out of range for a tensor with {ndim} dimensions")
    return tuple(sorted(d % ndim for d in dims)) if ndim else ()


def _restore(dout, axes, keepdim):
    """Put back the reduced dimensions as size 1, so dout broadcasts against the input."""
    # BEGIN SOLUTION
    # HINT: with keepdim the reduced axes are still there (size 1); else backend.array_module(dout).expand_dims(dout, axes) puts them back
    if keepdim or not axes:
        return dout
    return backend.array_module(dout).expand_dims(dout, axes)
    # END SOLUTION


class Sum(Function):
    """y = sum_i x_i over dim.   dy/dx_i = 1: every x_i gets dL/dy."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        axes = _axes(dim, x.ndim)
        ctx.axes, ctx.keepdim, ctx.shape = axes, keepdim, x.shape
        return x.sum(axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        # BEGIN SOLUTION
        # HINT: every x_i along the summed axes receives the same dout: put the axes back (_restore), then broadcast
        dout = _restore(dout, ctx.axes, ctx.keepdim)
        return xp.broadcast_to(dout, ctx.shape), None, None   # dy/dx_i = 1
        # END SOLUTION


class Mean(Function):
    """y = (1/n) sum_i x_i over dim.   dy/dx_i = 1/n."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        axes = _axes(dim, x.ndim)
        count = 1
        for a in axes:
            count *= x.shape[a]
        ctx.axes, ctx.keepdim, ctx.shape, ctx.count = axes, keepdim, x.shape, count
        return x.mean(axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        dout = _restore(dout, ctx.axes, ctx.keepdim)
        return xp.broadcast_to(dout / ctx.count, ctx.shape), None, None   # dy/dx_i = 1/n


class Max(Function):
    """y = max_i x_i over dim.   dy/dx_i = 1/k for each of the k maximal x_i, else 0.

    Ties share the gradient equally, as ``torch.amax``; at a tie the function
    has a kink, and gradcheck says so.
    """

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        if x.size == 0:
            raise ValueError(f"max: cannot reduce an empty tensor of shape {tuple(x.shape)}")
        axes = _axes(dim, x.ndim)
        y = x.max(axis=axes, keepdims=True)
        ctx.save_for_backward(x == y)
        ctx.axes, ctx.keepdim = axes, keepdim
        return y if keepdim else y.reshape([n for i, n in enumerate(y.shape) if i not in axes])

    @staticmethod
    def backward(ctx, dout):
        (is_max,) = ctx.saved_tensors
        dout = _restore(dout, ctx.axes, ctx.keepdim)
        ties = is_max.sum(axis=ctx.axes, keepdims=True, dtype=dout.dtype)      # a float count: dout keeps its dtype
        return is_max * (dout / ties), None, None              # 1/k at each maximum
