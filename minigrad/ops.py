"""The operations as module-level functions, as torch has them: ``minigrad.exp(x)`` is ``x.exp()``.

Each function here is one line that calls the Tensor method of the same name
(follow it with "go to definition" to reach the Function with its forward and
backward).  Python numbers and arrays are accepted where torch accepts
numbers, and become tensors first.  (Above the Tensor, so not in torch_compat/, which is
entirely below it.)
"""
from . import backend
from .creation import tensor
from .tensor import Tensor


def _tensor(value):
    return value if isinstance(value, Tensor) else tensor(value)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


# ------------------------------------------------------------------ elementwise
def abs(input):
    return _tensor(input).abs()


def exp(input):
    return _tensor(input).exp()


def log(input):
    return _tensor(input).log()


def sqrt(input):
    return _tensor(input).sqrt()


def rsqrt(input):
    return _tensor(input).rsqrt()


def square(input):
    return _tensor(input).square()


def sin(input):
    return _tensor(input).sin()


def cos(input):
    return _tensor(input).cos()


def tanh(input):
    return _tensor(input).tanh()


def sigmoid(input):
    return _tensor(input).sigmoid()


def relu(input):
    return _tensor(input).relu()


def pow(input, exponent):
    """input ** exponent; either may be a number (torch.pow(10000, t) works)."""
    if isinstance(input, Tensor):
        return input ** exponent
    return _tensor(exponent).__rpow__(input)


def clamp(input, min=None, max=None):
    return input.clamp(min, max)


clip = clamp


def neg(input):
    return input.neg()


def add(input, other, alpha=1):
    """input + alpha * other."""
    return _tensor(input).add(other, alpha)


def sub(input, other, alpha=1):
    """input - alpha * other."""
    return _tensor(input).sub(other, alpha)


def mul(input, other):
    return _tensor(input).mul(other)


def div(input, other, *, rounding_mode=None):
    return _tensor(input).div(other, rounding_mode=rounding_mode)


divide = div


def masked_fill(input, mask, value):
    return input.masked_fill(mask, value)


def softmax(input, dim):
    return input.softmax(dim)


def log_softmax(input, dim):
    return input.log_softmax(dim)


# ------------------------------------------------------------------ reductions
def sum(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.sum(dim, keepdim, axis=axis, keepdims=keepdims)


def mean(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.mean(dim, keepdim, axis=axis, keepdims=keepdims)


def var(input, dim=None, unbiased=True, keepdim=False, *, correction=None, axis=None, keepdims=None):
    return input.var(dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)


def std(input, dim=None, unbiased=True, keepdim=False, *, correction=None, axis=None, keepdims=None):
    return input.std(dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)


def cumsum(input, dim=None, *, axis=None):
    return input.cumsum(dim, axis=axis)


def cumprod(input, dim=None, *, axis=None):
    return input.cumprod(dim, axis=axis)


def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.logsumexp(dim, keepdim, axis=axis, keepdims=keepdims)


def norm(input, p="fro", dim=None, keepdim=False):
    return input.norm(p, dim, keepdim)


def max(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """max(x) -> the largest value;  max(x, dim) -> (values, indices);  max(x, other) -> maximum(x, other)."""
    return input.max(dim, keepdim, axis=axis, keepdims=keepdims)


def min(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """min(x) -> the smallest value;  min(x, dim) -> (values, indices);  min(x, other) -> minimum(x, other)."""
    return input.min(dim, keepdim, axis=axis, keepdims=keepdims)


def maximum(input, other):
    return input.maximum(other)


def minimum(input, other):
    return input.minimum(other)


def amax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.amax(dim, keepdim, axis=axis, keepdims=keepdims)


def amin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.amin(dim, keepdim, axis=axis, keepdims=keepdims)


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.argmax(dim, keepdim, axis=axis, keepdims=keepdims)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.argmin(dim, keepdim, axis=axis, keepdims=keepdims)


def topk(input, k, dim=-1, largest=True, sorted=True):
    return input.topk(k, dim, largest, sorted)


def sort(input, dim=-1, descending=False, *, stable=False):
    return input.sort(dim, descending, stable=stable)


def argsort(input, dim=-1, descending=False, *, stable=False):
    return input.argsort(dim, descending, stable=stable)


# ------------------------------------------------------------------ linear algebra
def matmul(input, other):
    return input @ other


def outer(input, vec2):
    return input.outer(vec2)


ger = outer


def dot(input, tensor):
    return input.dot(tensor)


def prod(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return input.prod(dim, keepdim, axis=axis, keepdims=keepdims)


def sign(input):
    return _tensor(input).sign()


def round(input, *, decimals=0):
    return _tensor(input).round(decimals=decimals)


def floor(input):
    return _tensor(input).floor()


def ceil(input):
    return _tensor(input).ceil()


def trunc(input):
    return _tensor(input).trunc()


fix = trunc


def isnan(input):
    return input.isnan()


def isinf(input):
    return input.isinf()


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if |input - other| <= atol + rtol |other| everywhere (a Python bool, as torch)."""
    xp = backend.array_module(input._data, other._data)
    return bool(xp.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other):
    """True if the two tensors have the same shape and elements (a Python bool, as torch)."""
    return input.shape == other.shape and bool((input._data == other._data).all())


def clone(input):
    return input.clone()


def detach(input):
    return input.detach()


def remainder(input, other):
    return _tensor(input) % other


def floor_divide(input, other):
    return _tensor(input) // other


def mv(input, vec):
    return input.mv(vec)


def mm(input, mat2):
    return input.mm(mat2)


def bmm(input, mat2):
    return input.bmm(mat2)


def tril(input, diagonal=0):
    return input.tril(diagonal)


def triu(input, diagonal=0):
    return input.triu(diagonal)


# ------------------------------------------------------------------ shape and indexing
def reshape(input, shape):
    return input.reshape(shape)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def permute(input, dims):
    return input.permute(dims)


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


def roll(input, shifts, dims=None):
    return input.roll(shifts, dims)


def flip(input, dims):
    return input.flip(dims)


def t(input):
    return input.t()


def squeeze(input, dim=None):
    return input.squeeze(dim)


def unsqueeze(input, dim):
    return input.unsqueeze(dim)


def chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


def index_select(input, dim, index):
    return input.index_select(dim, index)


def masked_select(input, mask):
    return input.masked_select(mask)


def select(input, dim, index):
    return input.select(dim, index)


def unbind(input, dim=0):
    return input.unbind(dim)


def narrow(input, dim, start, length):
    return input.narrow(dim, start, length)


def nonzero(input, *, as_tuple=False):
    """(n, ndim) int64 indices of the non-zero entries; as_tuple=True: one 1-D tensor per dimension."""
    if not isinstance(input, Tensor):          # NumPy's own nonzero would answer with a tuple of arrays
        raise TypeError(f"nonzero(): expected a Tensor, got {type(input).__name__} (torch.nonzero refuses it "
                        "too): minigrad.nonzero(minigrad.tensor(values))")
    indices = input.nonzero()
    return indices.unbind(1) if as_tuple else indices


def gather(input, dim, index):
    return input.gather(dim, index)


def scatter(input, dim, index, src=None, value=None):
    return input.scatter(dim, index, src, value=value)


def repeat_interleave(input, repeats, dim=None):
    return input.repeat_interleave(repeats, dim)


def multinomial(input, num_samples, replacement=False):
    """Category indices drawn from the weights in each row of ``input`` (seeded by manual_seed)."""
    return input.multinomial(num_samples, replacement)
