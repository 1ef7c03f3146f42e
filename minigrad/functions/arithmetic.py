"""Arithmetic: y = a + b, a - b, a * b, a / b, -a, a ** p.  All broadcast like NumPy.

When broadcasting copied an input, its gradient is the sum over the copies
(``unbroadcast``).  Either operand may be a plain Python number, which gets no
gradient.
"""
from .. import backend
from ..autograd import Function, unbroadcast

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the primitives
# assignment asks students to write (Mul's backward): `minigrad assignment make` builds its file from this one.


def _shape(value):
    """The shape of an operand: an array's shape, () for a plain Python number."""
    return getattr(value, "shape", ())


class Add(Function):
    """y = a + b.   dy/da = 1,  dy/db = 1."""

    reads_input_values = False      # backward needs only shapes: a later in-place change of an input is fine

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (_shape(a), _shape(b))
        return a + b

    @staticmethod
    def backward(ctx, dout):
        a_shape, b_shape = ctx.shapes
        da = unbroadcast(dout, a_shape) if ctx.needs_input_grad[0] else None  # dL/da = dL/dy
        db = unbroadcast(dout, b_shape) if ctx.needs_input_grad[1] else None  # dL/db = dL/dy
        return da, db


class Sub(Function):
    """y = a - b.   dy/da = 1,  dy/db = -1."""

    reads_input_values = False      # backward needs only shapes: a later in-place change of an input is fine

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = (_shape(a), _shape(b))
        return a - b

    @staticmethod
    def backward(ctx, dout):
        a_shape, b_shape = ctx.shapes
        da = unbroadcast(dout, a_shape) if ctx.needs_input_grad[0] else None   # dL/da = dL/dy
        db = unbroadcast(-dout, b_shape) if ctx.needs_input_grad[1] else None  # dL/db = -dL/dy
        return da, db


class Mul(Function):
    """y = a * b.   dy/da = b,  dy/db = a."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: if b was broadcast from (D,) to (N, D), each b_j was used N times: sum over the copies
        # HINT: minigrad.autograd.unbroadcast(grad, shape) does that sum; ctx.needs_input_grad[i] says whether input i wants one (else None)
        da = unbroadcast(dout * b, _shape(a)) if ctx.needs_input_grad[0] else None  # dL/da = dL/dy * b
        db = unbroadcast(dout * a, _shape(b)) if ctx.needs_input_grad[1] else None  # dL/db = dL/dy * a
        # END SOLUTION
        return da, db


class Div(Function):
    """y = a / b.   dy/da = 1 / b,  dy/db = -a / b^2 = -y / b."""

    @staticmethod
    def forward(ctx, a, b):
        y = a / b
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, dout):
        a, b, y = ctx.saved_tensors
        da = unbroadcast(dout / b, _shape(a)) if ctx.needs_input_grad[0] else None       # dL/dy / b
        db = unbroadcast(-dout * y / b, _shape(b)) if ctx.needs_input_grad[1] else None  # -dL/dy * y / b
        return da, db


class Neg(Function):
    """y = -a.   dy/da = -1."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, dout):
        return (-dout,)


class Pow(Function):
    """y = a ** p.   dy/da = p * a ** (p - 1),  dy/dp = y * log(a)  (when p is a tensor)."""

    @staticmethod
    def forward(ctx, a, p):
        y = a ** p
        ctx.save_for_backward(a, p, y)
        return y

    @staticmethod
    def backward(ctx, dout):
        a, p, y = ctx.saved_tensors
        xp = backend.array_module(a, p)
        da = dp = None
        if ctx.needs_input_grad[0]:
            if isinstance(p, (int, float)):                               # a number exponent: p == 0 is a bool
                slope = p * a ** (p - 1) if p != 0 else xp.zeros_like(a)  # p a^(p-1); d(a^0)/da = 0
            else:
                slope = xp.where(p == 0, 0, p * a ** (p - 1))           # p a^(p-1), and 0 (not 0 * inf) for p = 0
            da = unbroadcast(dout * slope, _shape(a))                     # dL/dy * p a^(p-1)
        if ctx.needs_input_grad[1]:
            dp = unbroadcast(dout * y * xp.log(a), _shape(p))            # dL/dy * y log(a)
        return da, dp


class RoundedDiv(Function):
    """y = a / b rounded toward zero ("trunc") or down ("floor"): torch.div(a, b, rounding_mode=).
    A step function of a and b, so dy/da = dy/db = 0 (as PyTorch).  Integers stay integers."""

    reads_input_values = False      # backward needs only the shapes

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        xp = backend.array_module(a, b)
        ctx.shapes = (_shape(a), _shape(b))
        quotient = xp.floor_divide(a, b)                                   # rounded down
        if getattr(quotient, "dtype", None) is not None and quotient.dtype.kind not in "iu":
            return xp.floor(a / b) if rounding_mode == "floor" else xp.trunc(a / b)
        if rounding_mode == "trunc":             # integers: toward zero where the exact quotient is negative
            quotient = quotient + ((quotient < 0) & (quotient * b != a))
        return quotient

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        return tuple(xp.zeros(shape, dtype=dout.dtype) if need else None
                     for shape, need in zip(ctx.shapes, ctx.needs_input_grad)) + (None,)
