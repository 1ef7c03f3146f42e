"""Tensor methods made of other Tensor methods: no Function of their own, so their gradients
come from the primitives they call (follow those with "go to definition").

    values_and_indices   x.max(dim) / x.min(dim): argmax/argmin, then gather (the gradient to that index)
    index_of_extreme     x.argmax(dim) / x.argmin(dim)
    variance             x.var(dim): mean, squared deviations, sum, divide by n - correction
    repeat               x.repeat(sizes): reshape to (1, a, 1, b), expand to (r0, a, r1, b), reshape
    repeat_interleave    x.repeat_interleave(r, dim): unsqueeze after dim, expand, reshape
    masked_select        x.masked_select(mask): broadcast both, index by the mask
    triangle             the boolean mask that x.tril / x.triu keep
    logsumexp            x.logsumexp(dim): log(sum(exp(x - m))) + m, m the (detached) max
"""
from . import autograd, backend


def values_and_indices(tensor, dim, keepdim, largest):
    """(values, indices) of the largest (smallest) entries along ``dim``; the gradient goes to the
    index returned, as in PyTorch."""
    indices = tensor.argmax(dim, keepdim=True) if largest else tensor.argmin(dim, keepdim=True)
    values = tensor.gather(dim, indices)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def index_of_extreme(tensor, dim, keepdim, largest):
    """The int64 index of the largest (smallest) entry, over all entries or along ``dim`` (no gradient)."""
    xp = backend.array_module(tensor._data)
    indices = (xp.argmax if largest else xp.argmin)(tensor._data, axis=dim)
    if keepdim and dim is not None:
        indices = xp.expand_dims(indices, dim)
    return tensor._from_array(indices)


def variance(tensor, dim, keepdim, correction):
    """sum((x - mean)^2) / (n - correction) over ``dim`` (n: the number of values reduced)."""
    mean = tensor.mean(dim, keepdim=True)
    count = tensor.numel() // max(mean.numel(), 1)
    return ((tensor - mean) ** 2).sum(dim, keepdim) / max(count - correction, 0)


def repeat(tensor, sizes):
    """Tile ``tensor`` sizes[i] times along dim i (torch.Tensor.repeat, numpy.tile)."""
    if len(sizes) < tensor.ndim:
        raise ValueError(f"repeat: {len(sizes)} repeat counts for a tensor with {tensor.ndim} dimensions")
    own = (1,) * (len(sizes) - tensor.ndim) + tensor.shape
    spread = tensor.reshape([n for side in own for n in (1, side)])             # (1, a, 1, b, ...)
    tiled = spread.expand([n for r, side in zip(sizes, own) for n in (r, side)])  # (r0, a, r1, b, ...)
    return tiled.reshape([r * side for r, side in zip(sizes, own)])


def repeat_interleave(tensor, repeats, dim):
    """Each element repeated ``repeats`` (an int) times along dim (the flattened tensor when None)."""
    if not isinstance(repeats, int):
        raise TypeError("repeat_interleave: only an int number of repeats is supported")
    source = tensor.reshape(-1) if dim is None else tensor
    dim = 0 if dim is None else dim % source.ndim
    shape = source.shape
    copies = source.unsqueeze(dim + 1).expand(shape[:dim + 1] + (repeats,) + shape[dim + 1:])
    return copies.reshape(shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1:])


def masked_select(tensor, mask):
    """1-D tensor of the entries where ``mask`` (a bool array, broadcastable) is True, in row-major order."""
    shape = backend.broadcast_shape(tensor.shape, tuple(mask.shape))
    full_mask = backend.array_module(mask).broadcast_to(mask, shape)
    return tensor.expand(shape)[tensor._from_array(full_mask)]


def triangle(tensor, diagonal, lower):
    """Boolean (n, m) mask of the kept triangle of the last two dimensions of ``tensor``."""
    if tensor.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: needs at least 2 dimensions, got {tensor.shape}")
    xp = backend.array_module(tensor._data)
    n, m = tensor.shape[-2:]
    if lower:
        return xp.tri(n, m, diagonal, dtype=bool)            # j - i <= diagonal
    return ~xp.tri(n, m, diagonal - 1, dtype=bool)           # j - i >= diagonal


def logsumexp(tensor, dim, keepdim):
    """log(sum(exp(x))) over dim as m + log(sum(exp(x - m))), m = max over dim: no overflow.  m is
    detached (the result does not depend on it), and 0 where a slice is all -inf (the result is -inf)."""
    xp = backend.array_module(tensor._data)
    m = tensor._data.max(axis=dim, keepdims=True) if tensor.numel() else xp.zeros((1,) * tensor.ndim, tensor.dtype)
    m = xp.where(xp.isinf(m), 0, m).astype(tensor.dtype)
    shift = tensor._from_array(m)
    total = (tensor - shift).exp().sum(dim, keepdim=True).log() + shift
    return total if keepdim else total.squeeze(dim)
