"""Functions that move values around without changing them: the backward moves
the gradient back to where each value came from."""
from .. import backend
from ..autograd import Function, unbroadcast


class Reshape(Function):
    """y = x viewed with a new shape.   dL/dx = dL/dy reshaped back."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        try:
            return x.reshape(shape)
        except ValueError:
            raise ValueError(
                f"reshape: cannot view shape {tuple(x.shape)} ({x.size} elements) as {tuple(shape)}"
            ) from None

    @staticmethod
    def backward(ctx, dout):
        return dout.reshape(ctx.shape), None


class Permute(Function):
    """y = x with its dimensions reordered by ``dims``.   dL/dx = dL/dy permuted back."""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        try:
            return backend.array_module(x).transpose(x, dims)
        except (ValueError, IndexError):            # a repeated, missing or out-of-range dimension
            raise ValueError(f"permute: dims {dims} are not a permutation of the {x.ndim} dimensions of "
                             f"{tuple(x.shape)}") from None

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        inverse = [0] * len(ctx.dims)
        for position, d in enumerate(ctx.dims):
            inverse[d % len(ctx.dims)] = position
        return xp.transpose(dout, inverse), None


class Expand(Function):
    """y = x broadcast to ``shape``.   dL/dx = dL/dy summed over the copies."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        return backend.array_module(x).broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, dout):
        return unbroadcast(dout, ctx.shape), None


def is_basic_index(index):
    """True when ``index`` has only ints, slices, None and Ellipsis: each element is picked once."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)


def _is_boolean_mask(index):
    return getattr(index, "dtype", None) is not None and index.dtype.kind == "b"


class GetItem(Function):
    """y = x[index]  (slices, integers, integer arrays, boolean masks).

    dL/dx is zero except at the picked positions, which receive dL/dy; a
    position picked several times (repeated integer indices) receives the sum.
    """

    @staticmethod
    def forward(ctx, x, index):
        parts = index if isinstance(index, tuple) else (index,)
        backend.array_module(x, *(p for p in parts if hasattr(p, "shape")))   # index arrays on x's device
        ctx.shape, ctx.dtype, ctx.index = x.shape, x.dtype, index
        try:
            return x[index]
        except IndexError as error:
            raise IndexError(f"indexing a tensor of shape {tuple(x.shape)}: {error}") from None

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        dx = xp.zeros(ctx.shape, dtype=dout.dtype)
        if is_basic_index(ctx.index) or _is_boolean_mask(ctx.index):
            dx[ctx.index] = dout                 # each position picked at most once
        else:
            xp.add.at(dx, ctx.index, dout)       # repeated indices: accumulate
        return dx, None


class Cat(Function):
    """y = [x_1, x_2, ...] joined along ``dim``.   dL/dx_k = the slice of dL/dy that x_k filled."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, dim, *arrays):
        if not arrays:
            raise ValueError("cat: expected at least one tensor")
        xp = backend.array_module(*arrays)
        ctx.dim = dim
        ctx.sizes = [a.shape[dim] for a in arrays]
        try:
            return xp.concatenate(arrays, axis=dim)
        except ValueError:
            shapes = ", ".join(str(tuple(a.shape)) for a in arrays)
            raise ValueError(f"cat along dim {dim}: shapes {shapes} must match in every other dimension") from None

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        ends = []
        total = 0
        for size in ctx.sizes[:-1]:
            total += size
            ends.append(total)
        return (None,) + tuple(xp.split(dout, ends, axis=ctx.dim))


class Stack(Function):
    """y = x_1, x_2, ... stacked along a new ``dim``.   dL/dx_k = dL/dy taken at position k of dim."""

    reads_input_values = False      # backward needs only shapes, not the values

    @staticmethod
    def forward(ctx, dim, *arrays):
        if not arrays:
            raise ValueError("stack: expected at least one tensor")
        shapes = {tuple(a.shape) for a in arrays}
        if len(shapes) > 1:
            raise ValueError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
        ctx.dim = dim
        return backend.array_module(*arrays).stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, dout):
        xp = backend.array_module(dout)
        moved = xp.moveaxis(dout, ctx.dim, 0)
        return (None,) + tuple(moved[k] for k in range(moved.shape[0]))


class Split(Function):
    """y_1, y_2, ... = pieces of x along ``dim``.   dL/dx = the dL/dy_k joined back."""

    @staticmethod
    def forward(ctx, x, split_size_or_sections, dim):
        length = x.shape[dim]
        if isinstance(split_size_or_sections, int):
            sizes = [split_size_or_sections] * (length // split_size_or_sections)
            if length % split_size_or_sections or not sizes:     # a shorter last piece (empty x: one empty piece)
                sizes.append(length % split_size_or_sections)
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != length:
                raise ValueError(f"split: sections {sizes} sum to {sum(sizes)}, but dim {dim} has size {length}")
        ctx.dim = dim
        index = [slice(None)] * x.ndim                  # x[:, ..., start:start + size, ...] with the slice at dim
        pieces = []
        start = 0
        for size in sizes:
            index[dim] = slice(start, start + size)
            pieces.append(x[tuple(index)])
            start += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *douts):
        xp = backend.array_module(*douts)
        return xp.concatenate(douts, axis=ctx.dim), None, None
