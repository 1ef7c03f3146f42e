"""The Tensor: an array on a device, plus the graph node that produced it.

``t.data`` is a plain backend array (NumPy on "cpu", CuPy on "cuda");
``t.grad`` is a plain array of the same shape, or None until a backward
reaches ``t``.  Every operator and method below calls one Function from
``minigrad.functions``; follow it with "go to definition" to read its
forward and backward side by side.  The functions that make new tensors
(zeros, randn, cat, ...) are in ``minigrad/creation.py``.

Longer than the ~400 lines of the other files, for a reason: the class holds
PyTorch's Tensor methods, mostly one-line calls of a Function; splitting one
class over several files would mean patching it from outside, which is harder
to follow than one long list.
"""
import numpy

from . import autograd, backend
from . import functions as fn

_default_dtype = numpy.dtype("float32")

float16 = numpy.dtype("float16")
float32 = numpy.dtype("float32")
float64 = numpy.dtype("float64")
int32 = numpy.dtype("int32")
int64 = numpy.dtype("int64")
long = int64
bool_ = numpy.dtype("bool")


def set_default_dtype(dtype):
    """Set the floating dtype of new tensors made from Python numbers (float32 by default)."""
    global _default_dtype
    dtype = numpy.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: expected a floating dtype, got {dtype}")
    _default_dtype = dtype


def get_default_dtype():
    return _default_dtype


def _dtype(dtype):
    return None if dtype is None else numpy.dtype(dtype)


def _index_arrays(index, device):
    """Replace Tensors inside an index by their arrays (x[idx_tensor], x[:, idx_tensor]).

    A list of ints becomes an array on ``device``, the device of the tensor indexed.
    """
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    if isinstance(index, list):
        return backend.asarray(index, device=device) if index and not isinstance(index[0], slice) else index
    return index


class Tensor:
    """A multi-dimensional array that records the operations applied to it.

    Tensor(data, requires_grad=False, dtype=None, device=None)

    data: a number, nested list, NumPy/CuPy array or Tensor.  Python floats
    become the default dtype (float32 unless ``set_default_dtype`` changed it);
    arrays keep their dtype unless ``dtype`` is given.
    """

    __slots__ = ("data", "grad", "requires_grad", "grad_fn", "_output_index",
                 "_version", "_retains_grad", "__weakref__")

    def __init__(self, data, requires_grad=False, dtype=None, device=None):
        if isinstance(data, Tensor):
            device = data.device if device is None else device
            data = data.data
        dtype = _dtype(dtype)
        if dtype is None and not hasattr(data, "dtype"):
            inferred = numpy.asarray(data).dtype
            dtype = _default_dtype if inferred.kind == "f" else inferred
        if device is None and type(data) in backend._array_types and not isinstance(data, numpy.ndarray):
            device = backend.device_of(data)  # device arrays stay put; host data goes to the default
        self.data = backend.asarray(data, dtype=dtype, device=device)
        if self.data is data:  # like torch.tensor: never share memory with the caller's array
            self.data = data.copy()
        self.grad = None
        self.grad_fn = None
        self._output_index = 0
        self._version = [0]
        self._retains_grad = False
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _from_array(cls, array, grad_fn=None, output_index=0):
        """Wrap an op's output array without copying (used by Function.apply)."""
        tensor = cls.__new__(cls)
        tensor.data = backend.ensure_array(array)
        tensor.grad = None
        tensor.grad_fn = grad_fn
        tensor._output_index = output_index
        tensor._version = [0]
        tensor._retains_grad = False
        tensor.requires_grad = grad_fn is not None
        return tensor

    # ------------------------------------------------------------------ properties
    @property
    def shape(self):
        return tuple(self.data.shape)

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def device(self):
        return backend.device_of(self.data)

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.ndim

    def numel(self):
        return int(self.data.size)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        body = numpy.array2string(backend.to_numpy(self.data), separator=", ", precision=4)
        extras = []
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.dtype != _default_dtype and self.dtype.kind == "f":
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    __hash__ = object.__hash__

    # ------------------------------------------------------------------ conversion
    def numpy(self):
        """A NumPy copy of the data, on the host."""
        return backend.to_numpy(self.data)

    def item(self):
        if self.data.size != 1:
            raise ValueError(f"item(): the tensor has {self.data.size} elements, expected exactly 1")
        return self.data.reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    def to(self, device=None, dtype=None):
        """This tensor on ``device`` and/or as ``dtype``; itself if nothing changes.

        Moving between devices keeps the tensor in the graph (gradients flow back).
        """
        if isinstance(device, (numpy.dtype, type)) and dtype is None:
            device, dtype = None, device
        target = self.device if device is None else backend.normalize_device(device)
        result = self
        if target != self.device:
            result = fn.ToDevice.apply(result, target)
        if dtype is not None and numpy.dtype(dtype) != result.dtype:
            result = result.type(dtype)
        return result

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    def type(self, dtype):
        """This tensor cast to ``dtype`` (differentiable between float dtypes)."""
        dtype = numpy.dtype(dtype)
        if dtype == self.dtype:
            return self
        if dtype.kind not in "fc":  # integers and booleans carry no gradient
            return Tensor._from_array(self.data.astype(dtype))
        return fn.Cast.apply(self, dtype)

    def float(self):
        return self.type(float32)

    def double(self):
        return self.type(float64)

    def long(self):
        return self.type(int64)

    def int(self):
        return self.type(int32)

    def bool(self):
        return self.type(bool_)

    # ------------------------------------------------------------------ autograd
    def requires_grad_(self, requires_grad=True):
        if requires_grad and self.dtype.kind not in "fc":
            raise TypeError(
                f"only floating-point tensors can require gradients, got dtype {self.dtype}: "
                "create it with dtype=minigrad.float32 (or float64), or call .float() first"
            )
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("requires_grad_(False) on a non-leaf tensor: use .detach() instead")
        self.requires_grad = requires_grad
        return self

    def detach(self):
        """The same data, cut from the graph (no gradient flows through it)."""
        tensor = Tensor._from_array(self.data)
        tensor._version = self._version  # shares storage, so shares the version counter
        return tensor

    def clone(self):
        return fn.Clone.apply(self)

    def retain_grad(self):
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is None:
            return
        if self.grad_fn.retained is None:
            self.grad_fn.retained = {}
        self.grad_fn.retained[self._output_index] = self
        self._retains_grad = True

    def backward(self, grad=None, retain_graph=False):
        """Compute d(self)/dx for every leaf x that requires grad, added into ``x.grad``.

        grad: dL/d(self), of self's shape; may be omitted only when self holds one element.
        """
        if not self.requires_grad:
            raise RuntimeError(
                "backward(): this tensor does not require grad and has no grad_fn. Did you "
                "create the inputs with requires_grad=True, or compute it under no_grad()?"
            )
        xp = backend.array_module(self.data)
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"backward(): grad can be implicitly created only for a tensor with one "
                    f"element, this one has shape {self.shape}. Reduce it first (loss.sum(), "
                    f"loss.mean()) or pass grad=<array of shape {self.shape}>"
                )
            grad = xp.ones(self.data.shape, dtype=self.dtype)
        else:
            grad = grad.data if isinstance(grad, Tensor) else backend.asarray(grad, self.dtype, self.device)
            if tuple(grad.shape) != self.shape:
                raise ValueError(f"backward(): grad has shape {tuple(grad.shape)}, expected {self.shape}")
        autograd.backward(self, grad, retain_graph=retain_graph)

    def _accumulate(self, grad):
        """self.grad += grad, without writing into an array another tensor may share."""
        grad = backend.ensure_array(grad)
        if self.grad is None:
            self.grad = grad.copy()
        else:
            self.grad = self.grad + grad

    # ------------------------------------------------------------------ in place
    def _check_inplace(self, op):
        if autograd.is_grad_enabled() and self.requires_grad:
            raise RuntimeError(
                f"{op}: in-place change of a tensor that requires grad, which the graph may still "
                "need. Do it inside `with minigrad.no_grad():` (as optimizers do), or use an "
                "out-of-place op such as masked_fill/where/cat."
            )
        self._version[0] += 1

    def __setitem__(self, index, value):
        self._check_inplace("__setitem__")
        self.data[_index_arrays(index, self.device)] = value.data if isinstance(value, Tensor) else value

    def zero_(self):
        self._check_inplace("zero_")
        self.data[...] = 0
        return self

    def fill_(self, value):
        self._check_inplace("fill_")
        self.data[...] = value
        return self

    def copy_(self, source):
        self._check_inplace("copy_")
        source = source.data if isinstance(source, Tensor) else source
        self.data[...] = backend.asarray(source, dtype=self.dtype, device=self.device)
        return self

    def add_(self, other, alpha=1):
        self._check_inplace("add_")
        self.data += alpha * (other.data if isinstance(other, Tensor) else other)
        return self

    def mul_(self, other):
        self._check_inplace("mul_")
        self.data *= other.data if isinstance(other, Tensor) else other
        return self

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return fn.Add.apply(self, other)

    def __radd__(self, other):
        return fn.Add.apply(other, self)

    def __sub__(self, other):
        return fn.Sub.apply(self, other)

    def __rsub__(self, other):
        return fn.Sub.apply(other, self)

    def __mul__(self, other):
        return fn.Mul.apply(self, other)

    def __rmul__(self, other):
        return fn.Mul.apply(other, self)

    def __truediv__(self, other):
        return fn.Div.apply(self, other)

    def __rtruediv__(self, other):
        return fn.Div.apply(other, self)

    def __neg__(self):
        return fn.Neg.apply(self)

    def __pow__(self, exponent):
        return fn.Pow.apply(self, exponent)

    def __rpow__(self, base):
        return fn.Pow.apply(base, self)

    def __matmul__(self, other):
        return fn.MatMul.apply(self, other)

    def __rmatmul__(self, other):
        return fn.MatMul.apply(other, self)

    def __getitem__(self, index):
        return fn.GetItem.apply(self, _index_arrays(index, self.device))

    # comparisons give boolean tensors outside the graph
    def _compare(self, other, op):
        other = other.data if isinstance(other, Tensor) else other
        return Tensor._from_array(op(self.data, other))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return self._compare(other, lambda a, b: a != b)

    def __invert__(self):
        return Tensor._from_array(~self.data)

    def __and__(self, other):
        return self._compare(other, lambda a, b: a & b)

    def __or__(self, other):
        return self._compare(other, lambda a, b: a | b)

    def __bool__(self):
        if self.data.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous: use .any() or .all()")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    # ------------------------------------------------------------------ elementwise
    def exp(self):
        return fn.Exp.apply(self)

    def log(self):
        return fn.Log.apply(self)

    def tanh(self):
        return fn.Tanh.apply(self)

    def sigmoid(self):
        return fn.Sigmoid.apply(self)

    def relu(self):
        return fn.ReLU.apply(self)

    def abs(self):
        return fn.Abs.apply(self)

    def sqrt(self):
        return fn.Pow.apply(self, 0.5)

    def pow(self, exponent):
        return fn.Pow.apply(self, exponent)

    def masked_fill(self, mask, value):
        """A copy with ``value`` where ``mask`` (bool, broadcastable to self) is True."""
        return fn.MaskedFill.apply(self, mask.data if isinstance(mask, Tensor) else mask, value)

    def softmax(self, dim=-1):
        return fn.Softmax.apply(self, dim)

    def log_softmax(self, dim=-1):
        return fn.LogSoftmax.apply(self, dim)

    # ------------------------------------------------------------------ reductions
    def sum(self, dim=None, keepdim=False):
        return fn.Sum.apply(self, dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return fn.Mean.apply(self, dim, keepdim)

    def amax(self, dim=None, keepdim=False):
        """Largest values over ``dim``; ties share the gradient equally (as torch.amax)."""
        return fn.Max.apply(self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        """max() -> the largest value;  max(dim) -> (values, indices), as in PyTorch."""
        if dim is None:
            return fn.Max.apply(self, None, False)
        return fn.Max.apply(self, dim, keepdim), self.argmax(dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        xp = backend.array_module(self.data)
        indices = xp.argmax(self.data, axis=dim)
        if keepdim and dim is not None:
            indices = xp.expand_dims(indices, dim)
        return Tensor._from_array(indices)

    def any(self):
        return Tensor._from_array(self.data.any())

    def all(self):
        return Tensor._from_array(self.data.all())

    # ------------------------------------------------------------------ shape
    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return fn.Reshape.apply(self, shape)

    view = reshape

    def flatten(self, start_dim=0, end_dim=-1):
        shape = self.shape
        end_dim = end_dim % len(shape) if shape else 0
        start_dim = start_dim % len(shape) if shape else 0
        middle = 1
        for n in shape[start_dim:end_dim + 1]:
            middle *= n
        return self.reshape(shape[:start_dim] + (middle,) + shape[end_dim + 1:])

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return fn.Permute.apply(self, tuple(dims))

    def transpose(self, dim0, dim1):
        dims = list(range(self.ndim))
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
        return fn.Permute.apply(self, tuple(dims))

    def unsqueeze(self, dim):
        shape = list(self.shape)
        dim = dim if dim >= 0 else dim + len(shape) + 1
        shape.insert(dim, 1)
        return self.reshape(tuple(shape))

    def squeeze(self, dim=None):
        if dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        if self.shape[dim] != 1:
            return self
        shape = list(self.shape)
        del shape[dim]
        return self.reshape(tuple(shape))

    def expand(self, *shape):
        """Broadcast to ``shape`` (-1 keeps a dimension); the backward sums over the copies."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        own = (1,) * (len(shape) - self.ndim) + self.shape
        shape = tuple(o if s == -1 else s for s, o in zip(shape, own))
        return fn.Expand.apply(self, shape)

    def split(self, split_size_or_sections, dim=0):
        return fn.Split.apply(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        size = -(-self.shape[dim] // chunks)
        return self.split(size, dim)


autograd.use_tensor_class(Tensor)   # the engine wraps its outputs in Tensors (autograd never imports this module)
