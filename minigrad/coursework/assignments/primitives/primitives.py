"""Assignment: the backward of autograd primitives.

Each class is a minigrad ``Function``.  Its forward is written for you; write
its backward.  The engine calls

    y = forward(ctx, *args)          on arrays, saving what backward needs on ctx
    grads = backward(ctx, dout)      dout = dL/dy, of y's shape

and backward returns one gradient per argument of forward, each of that
argument's shape, or None for an argument that is not differentiable (an
axis, a flag).  Try each one in minigrad:

    minigrad.gradcheck(lambda a, b: Mul.apply(a, b), (a, b))
"""
from minigrad import backend
from minigrad.autograd import Function, unbroadcast


class Mul(Function):
    """y = a * b, with broadcasting.   dy/da = b, dy/db = a."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: if b was broadcast from (D,) to (N, D), each b_j was used N times: sum over the copies
        # HINT: minigrad.autograd.unbroadcast(grad, shape) does that sum
        da = unbroadcast(dout * b, a.shape)   # dy/da = b
        db = unbroadcast(dout * a, b.shape)   # dy/db = a
        # END SOLUTION
        return da, db


class MatMul(Function):
    """y = a @ b for matrices a (N, K) and b (K, M).   dL/da = dL/dy b^T,  dL/db = a^T dL/dy."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: check the shapes: da must be (N, K) and db must be (K, M)
        da = dout @ b.T                       # (N, M) @ (M, K)
        db = a.T @ dout                       # (K, N) @ (N, M)
        # END SOLUTION
        return da, db


class Tanh(Function):
    """y = tanh(x).   dy/dx = 1 - y^2."""

    @staticmethod
    def forward(ctx, x):
        y = backend.array_module(x).tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: write the derivative in terms of the saved output y
        dx = dout * (1 - y ** 2)              # dy/dx = 1 - tanh(x)^2
        # END SOLUTION
        return (dx,)


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x)).   dy/dx = y (1 - y)."""

    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + backend.array_module(x).exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: the saved tensor is the output y, not the input x
        dx = dout * y * (1 - y)               # dy/dx = y (1 - y)
        # END SOLUTION
        return (dx,)


class Sum(Function):
    """y = x summed over ``axis`` (an int), keeping that axis as size 1 when ``keepdims``.   dy/dx_i = 1."""

    @staticmethod
    def forward(ctx, x, axis, keepdims):
        ctx.x_shape, ctx.axis, ctx.keepdims = x.shape, axis, keepdims
        return x.sum(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        # BEGIN SOLUTION
        # HINT: every x_i along the axis receives the same dout: put the axis back, then broadcast
        if not ctx.keepdims:
            dout = xp.expand_dims(dout, ctx.axis)
        dx = xp.broadcast_to(dout, ctx.x_shape)
        # END SOLUTION
        return dx, None, None


class Softmax(Function):
    """y_i = exp(x_i) / sum_j exp(x_j) over the last axis.   dy_i/dx_j = y_i (delta_ij - y_j)."""

    @staticmethod
    def forward(ctx, x):
        xp = backend.array_module(x)
        e = xp.exp(x - x.max(axis=-1, keepdims=True))   # subtracting the max changes nothing but overflow
        y = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        # BEGIN SOLUTION
        # HINT: the Jacobian is diag(y) - y y^T: apply it to dout without building it
        inner = (dout * y).sum(axis=-1, keepdims=True)   # sum_j dL/dy_j y_j
        dx = y * (dout - inner)
        # END SOLUTION
        return (dx,)
