"""Writing into a tensor by index: ``x[index] = value``, as a differentiable operation.

    y = x  except  y[index] = value          (value broadcast to the shape of x[index])

The forward writes into x's array in place and returns it, so a tensor keeps its
storage (and every view of it sees the write), as in PyTorch.  The backward needs
none of the old values:

    dL/dx     = dL/dy, with zeros at the written positions (the old values there were overwritten)
    dL/dvalue = dL/dy[index], summed over the copies broadcasting made

A position written twice (a repeated integer index) holds one of the values
afterwards; like PyTorch, each copy of value still receives dL/dy at that position.

``Tensor.__setitem__``, ``index_copy_``, ``copy_``, ``fill_`` and ``zero_`` all call
SetItem; ``Tensor._write_in_place`` (minigrad/tensor.py) turns it into an in-place
operation on the tensor's graph node.
"""
from .. import backend
from ..autograd import Function, unbroadcast


class SetItem(Function):
    """y = x with y[index] = value.   dy/dx = 1 outside index, 0 inside;  dy/dvalue picks y[index]."""

    @staticmethod
    def forward(ctx, x, index, value):
        parts = index if isinstance(index, tuple) else (index,)
        backend.array_module(x, *(p for p in parts if hasattr(p, "shape")))   # index arrays on x's device
        value_shape = tuple(getattr(value, "shape", ()))
        try:
            target_shape = tuple(x[index].shape)
        except IndexError as error:
            raise IndexError(f"index assignment into a tensor of shape {tuple(x.shape)}: {error}") from None
        leading = 0                           # value (1, 1, D) may fill a target (D,): drop its leading 1s
        while len(value_shape) - leading > len(target_shape) and value_shape[leading] == 1:
            leading += 1
        try:
            fits = backend.broadcast_shape(value_shape[leading:], target_shape) == target_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"index assignment: a value of shape {value_shape} does not broadcast to the "
                f"{target_shape} positions it is written into (tensor of shape {tuple(x.shape)})"
            )
        if leading:
            value = value.reshape(value_shape[leading:])
        x[index] = value
        ctx.index, ctx.value_shape = index, value_shape
        ctx.value_dtype = getattr(value, "dtype", None)
        return x

    @staticmethod
    def backward(ctx, dout):
        dx = dvalue = None
        if ctx.needs_input_grad[0]:
            dx = dout.copy()
            dx[ctx.index] = 0                 # overwritten: the old values there do not reach y
        if ctx.needs_input_grad[2]:
            picked = dout[ctx.index]          # dL/dy at every written position (repeats included)
            stripped = ctx.value_shape[max(0, len(ctx.value_shape) - picked.ndim):]   # leading 1s dropped
            dvalue = unbroadcast(picked, stripped).reshape(ctx.value_shape)
            if dvalue.dtype != ctx.value_dtype:
                dvalue = dvalue.astype(ctx.value_dtype)   # the value was cast to x's dtype on the way in
        return dx, None, dvalue
