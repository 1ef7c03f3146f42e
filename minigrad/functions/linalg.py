"""Matrix product, batched and broadcasting like ``numpy.matmul``; and the fused Linear layer op."""
from .. import backend
from ..autograd import Function, unbroadcast

# The "# BEGIN SOLUTION" / "# END SOLUTION" / "# HINT:" comments below mark what the primitives
# assignment asks students to write (MatMul's backward): `minigrad assignment make` builds its file from this one.


def _check_matmul(a, b):
    """Raise a clear error (shapes named, a transpose suggested) when a @ b cannot be computed: RuntimeError, as PyTorch."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"matmul: both operands need at least 1 dimension, got {tuple(a.shape)} @ {tuple(b.shape)}")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        hint = ""
        if b.ndim >= 2 and a.shape[-1] == b.shape[-1]:
            hint = " — did you mean to transpose the second?"
        elif a.ndim >= 2 and a.shape[-2] == k_b:
            hint = " — did you mean to transpose the first?"
        raise RuntimeError(    # PyTorch's type for this error
            f"matmul: {tuple(a.shape)} @ {tuple(b.shape)}: inner dimensions {k_a} and {k_b} differ{hint}"
        )


def _matmul(a, b):
    """a @ b, arranged so that NumPy hands the work to BLAS.

    NumPy's batched matmul falls back to a slow loop (50x slower here) when
    the second operand is a batch of transposed matrices, and loops over the
    batch even when the second operand is one matrix.  So: a stack @ one matrix
    is folded into one 2-D product, and a transposed stack is copied first.
    """
    if b.ndim == 2 and a.ndim > 2:
        folded = a.reshape(-1, a.shape[-1]) @ b                 # (batch * N, K) @ (K, M)
        return folded.reshape(tuple(a.shape[:-1]) + (b.shape[-1],))
    if b.ndim > 2 and b.strides[-1] != b.itemsize:
        b = backend.array_module(b).ascontiguousarray(b)
    return a @ b


class MatMul(Function):
    """Y = A @ B.   dL/dA = dL/dY @ B^T,   dL/dB = A^T @ dL/dY.

    Leading (batch) dimensions broadcast; a 1-D operand is treated as a row
    (A) or column (B) vector, as in NumPy.
    """

    @staticmethod
    def forward(ctx, a, b):
        _check_matmul(a, b)
        ctx.save_for_backward(a, b)
        return _matmul(a, b)

    @staticmethod
    def backward(ctx, dout):
        a, b = ctx.saved_tensors
        xp = backend.array_module(a, b)
        a2 = a[None, :] if a.ndim == 1 else a          # (.., N, K)
        b2 = b[:, None] if b.ndim == 1 else b          # (.., K, M)
        dout2 = dout                                   # put back the vector dims that matmul dropped
        if b.ndim == 1:
            dout2 = xp.expand_dims(dout2, -1)          # (.., N) -> (.., N, 1);  vector @ vector: () -> (1,)
        if a.ndim == 1:
            dout2 = xp.expand_dims(dout2, -2)          # (.., M) -> (.., 1, M)   => (.., N, M)
        da = db = None                                 # None: that input needs no gradient
        if ctx.needs_input_grad[0]:
            # BEGIN SOLUTION
            # HINT: let the shapes guide you: dout2 is (.., N, M), b2 is (.., K, M) and da must be (.., N, K)
            # HINT: xp.swapaxes(m, -1, -2) transposes the last two axes; unbroadcast(grad, shape) sums over broadcast copies
            da = _matmul(dout2, xp.swapaxes(b2, -1, -2))   # dL/dA = dL/dY B^T
            da = unbroadcast(da, a2.shape).reshape(a.shape)
            # END SOLUTION
        if ctx.needs_input_grad[1]:
            # BEGIN SOLUTION
            # HINT: db must be (.., K, M): A^T times dout2
            if b2.ndim == 2 and a2.ndim > 2:           # shared B: fold the batch into one matmul
                db = a2.reshape(-1, a2.shape[-1]).T @ dout2.reshape(-1, dout2.shape[-1])
            else:
                db = xp.swapaxes(a2, -1, -2) @ dout2   # dL/dB = A^T dL/dY
            db = unbroadcast(db, b2.shape).reshape(b.shape)
            # END SOLUTION
        return da, db


class Linear(Function):
    """y = x W^T + b.   x (..., in), W (out, in), b (out,) or None  ->  y (..., out).

    With the leading dimensions of x folded into M rows (X (M, in), dY (M, out)):

        dL/dX = dY W          (M, in)
        dL/dW = dY^T X        (out, in): one matmul sums over all M rows, and comes
                               out in W's own layout (no transposed copy)
        dL/db = sum over the M rows of dY
    """

    @staticmethod
    def forward(ctx, x, weight, bias):
        x2 = x.reshape(-1, x.shape[-1])                 # (M, in)
        if x2.shape[0] < x2.shape[1]:                   # fewer rows than inputs: Y = (W X^T)^T, the order
            xp = backend.array_module(x2, weight)       # OpenBLAS runs fastest there (batch 64, 512 -> 512: 20%)
            y = xp.ascontiguousarray((weight @ x2.T).T)
        else:
            y = x2 @ weight.T                           # (M, out); BLAS reads W transposed, no copy
        if bias is not None and bias.dtype == y.dtype:
            y += bias                                   # y is a new array: add the bias in place
        elif bias is not None:
            y = y + bias                                # mixed dtypes: let the sum promote
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return y.reshape(tuple(x.shape[:-1]) + (weight.shape[0],))

    @staticmethod
    def backward(ctx, dout):
        x, weight = ctx.saved_tensors
        dy = dout.reshape(-1, dout.shape[-1])                               # (M, out)
        dx = dweight = dbias = None
        if ctx.needs_input_grad[0]:
            dx = (dy @ weight).reshape(x.shape)                             # dL/dX = dY W
        if ctx.needs_input_grad[1]:
            dweight = dy.T @ x.reshape(-1, x.shape[-1])                     # dL/dW = dY^T X
        if ctx.has_bias and ctx.needs_input_grad[2]:
            dbias = dy.sum(axis=0)                                          # dL/db = sum of dY rows
        return dx, dweight, dbias
