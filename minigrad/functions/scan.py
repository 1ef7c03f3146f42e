"""Running sums and products, reversals and rotations along dimensions (torch.cumsum, cumprod, flip, roll)."""
from .. import backend
from ..autograd import Function


class CumSum(Function):
    """y_i = x_1 + ... + x_i along dim.   dL/dx_j = sum over i >= j of dL/dy_i: the running sum of dL/dy
    taken from the end."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, x, dim):
        xp = backend.array_module(x)
        ctx.dim = dim
        return xp.cumsum(x, axis=dim)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        reversed_dout = xp.flip(dout, axis=ctx.dim)
        return xp.flip(xp.cumsum(reversed_dout, axis=ctx.dim), axis=ctx.dim), None   # sums from the end


class Flip(Function):
    """y = x reversed along ``dims``.   dL/dx = dL/dy reversed back."""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return backend.array_module(x).flip(x, axis=dims)

    @staticmethod
    def backward(ctx, dout):
        return backend.array_module(dout).flip(dout, axis=ctx.dims), None


class CumProd(Function):
    """y_i = x_1 * x_2 * ... * x_i along dim.

    dL/dx_i = sum over j >= i of dL/dy_j * prod_{k <= j, k != i} x_k = P_{i-1} * S_i, with
    P_{i-1} = x_1 ... x_{i-1} (the product before i) and S_i = dL/dy_i + x_{i+1} * S_{i+1}, a
    running sum taken from the end.  No division by x_i, so zeros in x are fine.
    """

    @staticmethod
    def forward(ctx, x, dim):
        xp = backend.array_module(x)
        ctx.dim = dim % max(x.ndim, 1)
        ctx.save_for_backward(x)
        return xp.cumprod(x, axis=dim)

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        xp = backend.array_module(dout)
        x, dout = xp.moveaxis(x, ctx.dim, 0), xp.moveaxis(dout, ctx.dim, 0)     # scan along axis 0
        before = xp.cumprod(xp.concatenate([xp.ones_like(x[:1]), x[:-1]]), axis=0)   # P_{i-1}
        S = xp.empty_like(dout)
        S[-1] = dout[-1]
        for i in reversed(range(len(x) - 1)):
            S[i] = dout[i] + x[i + 1] * S[i + 1]
        return xp.moveaxis(before * S, 0, ctx.dim), None


class Roll(Function):
    """y = x shifted by ``shifts`` along ``dims``, entries leaving one end entering at the other
    (flattened first when dims is None, as torch.roll).   dL/dx = dL/dy rolled back."""

    reads_input_values = False      # backward needs only the shifts

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return backend.array_module(x).roll(x, shifts, axis=dims)

    @staticmethod
    def backward(ctx, dout):
        back = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, tuple) else -ctx.shifts
        return backend.array_module(dout).roll(dout, back, axis=ctx.dims), None, None
