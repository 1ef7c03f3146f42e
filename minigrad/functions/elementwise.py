"""Elementwise functions and activations.  Any shape; dL/dx = dL/dy * dy/dx."""
from .. import backend
from ..autograd import Function, unbroadcast

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the primitives
# assignment asks students to write (Tanh's and Sigmoid's backward): `minigrad assignment make` builds its file from this one.


def _require_float(name, x):
    """Refuse integer and boolean input: these functions are defined on real numbers."""
    if x.dtype.kind not in "fc":
        raise TypeError(
            f"{name}: expected a floating-point tensor, got dtype {x.dtype}: "
            "convert it with .float() (or .double()) first"
        )


class Exp(Function):
    """y = exp(x).   dy/dx = exp(x) = y."""

    @staticmethod
    def forward(ctx, x):
        _require_float("exp", x)
        y = backend.array_module(x).exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return (dout * y,)                 # dy/dx = y


class Log(Function):
    """y = log(x)  (natural log).   dy/dx = 1 / x."""

    @staticmethod
    def forward(ctx, x):
        _require_float("log", x)
        ctx.save_for_backward(x)
        return backend.array_module(x).log(x)

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return (dout / x,)                 # dy/dx = 1 / x


class Tanh(Function):
    """y = tanh(x).   dy/dx = 1 - y^2."""

    @staticmethod
    def forward(ctx, x):
        _require_float("tanh", x)
        y = backend.array_module(x).tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: write the derivative in terms of the saved output y
        return (dout * (1 - y * y),)       # dy/dx = 1 - y^2
        # END SOLUTION


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x)) = (1 + tanh(x / 2)) / 2.   dy/dx = y (1 - y).

    The tanh form never overflows, for any x.
    """

    @staticmethod
    def forward(ctx, x):
        _require_float("sigmoid", x)
        y = 0.5 * (1 + backend.array_module(x).tanh(0.5 * x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: the saved tensor is the output y, not the input x
        return (dout * y * (1 - y),)       # dy/dx = y (1 - y)
        # END SOLUTION


class ReLU(Function):
    """y = max(x, 0).   dy/dx = 1 where y > 0, else 0 (0 at the kink x = 0, and 1 at NaN: PyTorch's)."""

    @staticmethod
    def forward(ctx, x):
        xp = backend.array_module(x)
        y = xp.zeros_like(x)
        xp.maximum(y, x, out=y)            # y = max(0, x): -inf -> 0, NaN stays, -0 stays -0 (0 on a GPU), as PyTorch
        ctx.save_for_backward(y)           # (max against zeros, not the number 0: NumPy's loop is 1.5-2x faster)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return (dout * ~(y <= 0),)         # dy/dx = [not y <= 0]: 0 where x <= 0, 1 where x > 0 or NaN


class Abs(Function):
    """y = |x|.   dy/dx = sign(x)  (0 at x = 0)."""

    @staticmethod
    def forward(ctx, x):
        xp = backend.array_module(x)
        ctx.save_for_backward(xp.sign(x))
        return xp.abs(x)

    @staticmethod
    def backward(ctx, dout):
        (sign,) = ctx.saved_tensors
        return (dout * sign,)              # dy/dx = sign(x)


class Sin(Function):
    """y = sin(x).   dy/dx = cos(x)."""

    @staticmethod
    def forward(ctx, x):
        _require_float("sin", x)
        ctx.save_for_backward(x)
        return backend.array_module(x).sin(x)

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return (dout * backend.array_module(x).cos(x),)    # dy/dx = cos(x)


class Cos(Function):
    """y = cos(x).   dy/dx = -sin(x)."""

    @staticmethod
    def forward(ctx, x):
        _require_float("cos", x)
        ctx.save_for_backward(x)
        return backend.array_module(x).cos(x)

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return (-dout * backend.array_module(x).sin(x),)   # dy/dx = -sin(x)


class Clamp(Function):
    """y = min(max(x, low), high)  (low or high may be None).

    dy/dx = 1 where low <= x <= high, else 0 (1 at the bounds themselves, as PyTorch).
    """

    @staticmethod
    def forward(ctx, x, low, high):
        if low is None and high is None:
            raise ValueError("clamp: give at least one of min and max")
        xp = backend.array_module(x)
        inside = xp.ones(x.shape, dtype=bool)
        y = x
        if low is not None:
            inside &= x >= low
            y = xp.maximum(y, xp.asarray(low, dtype=x.dtype))
        if high is not None:
            inside &= x <= high
            y = xp.minimum(y, xp.asarray(high, dtype=x.dtype))
        ctx.save_for_backward(inside)
        return y

    @staticmethod
    def backward(ctx, dout):
        (inside,) = ctx.saved_tensors
        return dout * inside, None, None                   # dy/dx = [low <= x <= high]


class Maximum(Function):
    """y = max(a, b) elementwise (broadcasting).   dy/da = [a > b] + [a = b] / 2,   dy/db = [b > a] + [a = b] / 2

    (a tie splits the gradient evenly, as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b):
        xp = backend.array_module(a, b)
        ctx.save_for_backward(a, b)
        return xp.maximum(a, b)

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        share_a = (a > b) + 0.5 * (a == b)                 # dy/da; dy/db = 1 - dy/da
        da = unbroadcast(dout * share_a, a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dout * (1 - share_a), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


class Minimum(Function):
    """y = min(a, b) elementwise (broadcasting).   dy/da = [a < b] + [a = b] / 2,   dy/db = [b < a] + [a = b] / 2."""

    @staticmethod
    def forward(ctx, a, b):
        xp = backend.array_module(a, b)
        ctx.save_for_backward(a, b)
        return xp.minimum(a, b)

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        share_a = (a < b) + 0.5 * (a == b)                 # dy/da; dy/db = 1 - dy/da
        da = unbroadcast(dout * share_a, a.shape) if ctx.needs_input_grad[0] else None
        db = unbroadcast(dout * (1 - share_a), b.shape) if ctx.needs_input_grad[1] else None
        return da, db


class Sign(Function):
    """y = sign(x): -1, 0 or 1.   A step function: dy/dx = 0 (as PyTorch)."""

    reads_input_values = False      # the gradient is zero whatever x was

    @staticmethod
    def forward(ctx, x):
        return backend.array_module(x).sign(x)

    @staticmethod
    def backward(ctx, dout):
        return (backend.array_module(dout).zeros_like(dout),)


class Round(Function):
    """y = round(x) (halves to even, as PyTorch), floor(x), ceil(x) or trunc(x), by ``mode``;
    round with ``decimals`` d is round(x * 10^d) / 10^d (d < 0: round(x / 10^-d) * 10^-d, as PyTorch).
    A step function: dy/dx = 0 (as PyTorch).  Integers are whole already: a copy."""

    reads_input_values = False      # the gradient is zero whatever x was

    @staticmethod
    def forward(ctx, x, mode, decimals):
        xp = backend.array_module(x)
        if x.dtype.kind == "b":
            raise TypeError(f"{mode}: not defined for a bool tensor (as in PyTorch): convert it first, x.float()")
        if x.dtype.kind in "iu" and decimals != 0:
            raise TypeError(f"round: decimals={decimals} is not defined for an integer tensor (as in PyTorch): "
                            "convert it first, x.float()")
        if x.dtype.kind in "iu":
            return x.copy()
        if mode == "round" and decimals != 0:
            work = x.astype("float32") if x.dtype == "float16" else x     # float16 in float32, as PyTorch
            scale = work.dtype.type(10.0 ** abs(decimals))
            y = xp.rint(work * scale) / scale if decimals > 0 else xp.rint(work / scale) * scale
            return y.astype(x.dtype, copy=False)
        rounding = {"round": xp.rint, "floor": xp.floor, "ceil": xp.ceil, "trunc": xp.trunc}[mode]
        return rounding(x)

    @staticmethod
    def backward(ctx, dout):
        return (backend.array_module(dout).zeros_like(dout), None, None)
