"""Choosing between values by a boolean condition."""
from .. import backend
from ..autograd import Function, unbroadcast


def _shape(value):
    return tuple(value.shape) if hasattr(value, "shape") else ()


def _check_bool(name, mask):
    if getattr(mask, "dtype", None) is None or mask.dtype.kind != "b":
        raise TypeError(
            f"{name}: the mask must be a boolean tensor, got {getattr(mask, 'dtype', type(mask).__name__)}: "
            "build it with a comparison (ids == pad_idx) or .bool()"
        )


class Where(Function):
    """y = a where cond else b.   dy/da = [cond],  dy/db = [not cond]."""

    @staticmethod
    def forward(ctx, cond, a, b):
        _check_bool("where", cond)
        ctx.cond, ctx.shapes = cond, (_shape(a), _shape(b))
        return backend.array_module(cond, a, b).where(cond, a, b)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        a_shape, b_shape = ctx.shapes
        da = db = None
        if ctx.needs_input_grad[1]:
            da = unbroadcast(xp.where(ctx.cond, dout, 0), a_shape)   # dL/dy where cond
        if ctx.needs_input_grad[2]:
            db = unbroadcast(xp.where(ctx.cond, 0, dout), b_shape)   # dL/dy where not cond
        return None, da, db


class MaskedFill(Function):
    """y = value where mask else x  (mask broadcasts to x).   dy/dx = [not mask]."""

    reads_input_values = False      # backward needs only the mask: a later in-place change of an input is fine

    @staticmethod
    def forward(ctx, x, mask, value):
        _check_bool("masked_fill", mask)
        xp = backend.array_module(x, mask)
        try:
            y = xp.where(mask, xp.asarray(value, dtype=x.dtype), x)
        except ValueError:
            y = None
        if y is None or y.shape != x.shape:         # the mask must broadcast to x, not x to the mask
            raise ValueError(
                f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast to the input's "
                f"shape {tuple(x.shape)}"
            )
        ctx.mask = mask
        return y

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        return xp.where(ctx.mask, 0, dout), None, None              # no gradient where filled
