"""Arguments that torch accepts in several forms, turned into the one form the Functions take.

    new_array(data, dtype, device)    a nested list, array or Tensor -> a new array (the data of a new leaf)
    sizes(args)                       (2, 3), [2, 3] or 2, 3 given as separate arguments -> (2, 3)
    array_of(value)                   a Tensor -> its array; anything else as it is
    array_index(index, device)        Tensors (and lists of ints) inside an index -> arrays
    index_along(tensor, dim, index)   1-D integer positions along ``dim`` -> the index (:, ..., :, index)
    broadcast_mask(mask, tensor)      a boolean mask, checked and broadcast to tensor's shape
    numpy_aliases(op, dim, keepdim, axis, keepdims)   sum(axis=0, keepdims=True) -> dim=0, keepdim=True
    scaled_operand(op, other, alpha)  add_(other, alpha=a), and the legacy add_(a, other) -> a * other

Functions work on arrays only (minigrad/functions/); the Tensor methods and
creation functions call these first.  A Tensor is known by the engine's base class
(``autograd.TensorBase``), as in Function.apply.
"""
import numpy

from .. import autograd, backend
from ..dtypes import get_default_dtype


def new_array(data, dtype=None, device=None):
    """A copy of ``data`` (a number, nested list, NumPy/CuPy array or Tensor) as an array: Python
    floats as the default dtype, arrays keeping theirs unless ``dtype`` is given; on ``device``,
    else where a device array or Tensor already is, else on the default device."""
    if isinstance(data, autograd.TensorBase):
        device = data.device if device is None else device
        data = data._data
    dtype = None if dtype is None else numpy.dtype(dtype)
    if dtype is None and not hasattr(data, "dtype"):
        inferred = numpy.asarray(data).dtype
        dtype = get_default_dtype() if inferred.kind == "f" else inferred
    if device is None and type(data) in backend._array_types and not isinstance(data, numpy.ndarray):
        device = backend.device_of(data)  # device arrays stay put; host data goes to the default
    array = backend.asarray(data, dtype=dtype, device=device)
    return array.copy() if array is data else array   # like torch.tensor: never the caller's array


def sizes(args):
    """The sizes (or dims) of f(2, 3), f((2, 3)) and f([2, 3]), as a tuple."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def array_of(value):
    """A Tensor's array; any other value (array, number, None) as it is."""
    return value._data if isinstance(value, autograd.TensorBase) else value


def array_index(index, device):
    """Replace Tensors inside an index by their arrays (x[idx_tensor], x[:, idx_tensor]).

    A list of ints becomes an array on ``device``, the device of the tensor indexed.
    """
    if isinstance(index, tuple):
        return tuple(array_of(i) for i in index)
    if isinstance(index, list):
        return backend.asarray(index, device=device) if index and not isinstance(index[0], slice) else index
    return array_of(index)


def index_along(tensor, dim, index, op):
    """The index that picks positions ``index`` (1-D integers, or one as a 0-d tensor, as torch) along
    ``dim``: (:, ..., :, index)."""
    index = index._data if isinstance(index, autograd.TensorBase) else backend.asarray(index, device=tensor.device)
    index = index.reshape(1) if index.ndim == 0 else index
    if index.ndim != 1 or index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be a 1-D integer tensor, got {index.dtype} of shape {tuple(index.shape)}")
    return (slice(None),) * (dim % tensor.ndim) + (index,)


def broadcast_mask(mask, tensor):
    """A boolean mask broadcast to ``tensor``'s shape (an index for every element it selects)."""
    if getattr(mask, "dtype", None) is None or mask.dtype.kind != "b":
        raise TypeError(f"masked_fill: the mask must be a boolean tensor, got {getattr(mask, 'dtype', type(mask))}")
    try:
        return backend.array_module(mask).broadcast_to(mask, tensor.shape)
    except ValueError:
        raise ValueError(f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast to the "
                         f"input's shape {tensor.shape}") from None


def scaled_operand(op, other, alpha):
    """alpha * other for add/sub(other, alpha=): PyTorch's legacy order op(alpha, other) too
    (old tutorials' ``p.data.add_(-lr, p.grad.data)``)."""
    if isinstance(other, (int, float)) and not isinstance(alpha, (int, float)):
        other, alpha = alpha, other                  # add_(Number alpha, Tensor other): deprecated in torch
    return other if alpha == 1 else other * alpha


def numpy_aliases(op, dim, keepdim, axis, keepdims, required=False):
    """(dim, keepdim) from torch's names or NumPy's (axis=, keepdims=), which torch accepts too."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}: got dim={dim} and its NumPy alias axis={axis}; give one of them")
        dim = axis
    if required and dim is None:
        raise TypeError(f"{op}: missing the argument dim (the dimension to work along, e.g. {op}(x, dim=-1))")
    return dim, keepdim if keepdims is None else keepdims
