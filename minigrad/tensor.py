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

from . import autograd, backend, return_types
from . import functions as fn
from .devices import device_named
from .functions.gather import sort_indices
from .sampling import multinomial_indices

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
                 "_version", "_retains_grad", "_view_of", "_history", "__weakref__")

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
        self._view_of = None        # (tensor, index) when this tensor is a view of that one's storage
        self._history = None        # [(node number, grad_fn, output index)] before each in-place change
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
        tensor._view_of = None
        tensor._history = None
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
        """A ``minigrad.device`` (a str such as "cpu", with torch's ``.type`` and ``.index``)."""
        return device_named(backend.device_of(self.data))

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

    def to(self, device=None, dtype=None, non_blocking=False, copy=False):
        """This tensor on ``device`` and/or as ``dtype``; itself if nothing changes (a clone if copy=True).

        Moving between devices keeps the tensor in the graph (gradients flow back).
        to(other) takes the device and dtype of the tensor ``other``; non_blocking is accepted
        and has no effect (every copy completes before it returns).
        """
        if isinstance(device, Tensor):
            device, dtype = device.device, device.dtype
        if copy:
            moved = self.to(device, dtype)
            return moved.clone() if moved is self else moved
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

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/dx for every leaf x that requires grad, added into ``x.grad``.

        gradient: dL/d(self), of self's shape; may be omitted only when self holds one element.
        retain_graph: keep the saved values for a second backward (default: create_graph, as torch).
        create_graph and inputs (PyTorch's higher-order gradients, partial backward) are not implemented.
        """
        if create_graph or inputs is not None:
            raise NotImplementedError("backward(): create_graph and inputs are not implemented in minigrad "
                                      "(no higher-order gradients); use the default backward()")
        grad, retain_graph = gradient, bool(retain_graph)
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
                    f"loss.mean()) or pass gradient=<array of shape {self.shape}>"
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
    # An in-place operation changes the tensor's values and, when a graph is being
    # recorded, its graph node (as in PyTorch): afterwards ``self.grad_fn`` is the
    # operation's node, whose inputs are the old value (a stand-in Tensor that keeps
    # the old node) and the operands.  The version counter goes up either way, so a
    # node that saved the old values raises at backward instead of using them.

    def _write_in_place(self, op, function, *args, reads_old_values=False):
        """self <- function(self, *args), in place; returns self.

        reads_old_values: the Function's backward reads its first input (mul_, div_),
        so the stand-in gets a copy of the old values rather than the storage about
        to be overwritten.
        """
        recording = autograd.is_grad_enabled() and self.dtype.kind in "fc" and (
            self.requires_grad or any(isinstance(a, Tensor) and a.requires_grad for a in args))
        self._guard_saved_output()
        if not recording:
            result = function.apply(self, *args)
            self._version[0] += 1
            if result.data is not self.data:
                self.data[...] = result.data
            return self
        if self.grad_fn is None and self.requires_grad:
            raise RuntimeError(
                f"{op}: a leaf tensor that requires grad is being changed in place while gradients are "
                "recorded. Change it inside `with minigrad.no_grad():` (as optimizers and nn.init do), or "
                "compute a new tensor (x = x.masked_fill(...), y = x.clone(); y[i] = v)."
            )
        if self._view_of is not None:
            return self._write_through_view(op, function, args)
        is_view = self.data.base is not None        # an op's output inside a buffer no other tensor holds
        old = Tensor._from_array(self.data.copy() if reads_old_values or is_view else self.data,
                                 self.grad_fn, self._output_index)
        old.requires_grad = self.requires_grad      # a fresh version counter: the node reads no old values
        result = function.apply(old, *args)
        if function in _READS_NO_INPUT_VALUES:
            result.grad_fn.versions = []            # a later write into value or self is fine
        if is_view:       # it gets storage of its own (no other tensor sees that buffer)
            self.data = result.data.astype(self.dtype, copy=False)
            self._version = [1]
        else:
            self._version[0] += 1
            if result.data is not self.data:
                self.data[...] = result.data
        self._rebase(result.grad_fn)
        return self

    def _rebase(self, node):
        """Make ``node`` (output 0) this tensor's grad_fn; nodes that used the tensor before keep
        the node it had then (the engine asks _node_before), so the recorded graph stays as it was."""
        self._history = (self._history or []) + [(node.sequence, self.grad_fn, self._output_index)]
        self.grad_fn, self._output_index, self.requires_grad = node, 0, True

    def _node_before(self, sequence):
        """(grad_fn, output index) this tensor had when the node numbered ``sequence`` used it."""
        for changed_at, node, index in self._history:
            if sequence < changed_at:
                return node, index
        return self.grad_fn, self._output_index

    def _write_through_view(self, op, function, args):
        """An in-place change of a view x[index], recorded as PyTorch does: the new values are
        written into x by index (x's node becomes a SetItem), and this view becomes x[index] again."""
        base, index = self._view_of
        if self.grad_fn is not None and self.grad_fn.function is fn.GetItem:
            self.grad_fn.versions = []      # it reads no values of base; base's node is kept for it
        if index is None:
            raise RuntimeError(
                f"{op}: in-place change, while gradients are recorded, of a view made by reshape/view/"
                "permute/transpose/expand/split. minigrad passes such a change on to the tensor it views "
                "only for index views (x[1:], x[:, 0]): write into that tensor by index, or .clone() "
                "the view first."
            )
        old = Tensor._from_array(self.data.copy(), self.grad_fn, self._output_index)
        old.requires_grad = self.requires_grad
        base[index] = function.apply(old, *args)   # into base's storage, which this view shares
        self._rebase(base[index].grad_fn)
        return self

    def _guard_saved_output(self):
        """If the node that made self (or the tensor self views) saved that array (exp, tanh and
        softmax save their output), make its backward check the version too: after this in-place
        change it raises instead of using the new values."""
        tensor = self
        while tensor is not None:
            node = tensor.grad_fn
            for saved in (() if node is None else node.saved_tensors):
                if saved is tensor.data or getattr(saved, "base", None) is tensor.data:
                    node.versions.append((tensor._version, tensor._version[0]))
                    break
            tensor = None if tensor._view_of is None else tensor._view_of[0]

    def _mark_view(self, result, index=None):
        """If ``result`` shares self's storage it is a view of self, as in PyTorch: the two share a
        version counter, and an in-place change of ``result`` reaches self (see _write_through_view)."""
        if result.data is not self.data and backend.array_module(self.data).may_share_memory(result.data, self.data):
            result._version = self._version
            result._view_of = (self, index)
        return result

    def _operand(self, value):
        """A Tensor or Python number as it is; anything else (list, array) as an array on self's device."""
        if isinstance(value, (Tensor, bool, int, float)):
            return value
        return backend.asarray(value, dtype=self.dtype, device=self.device)

    def __setitem__(self, index, value):
        """self[index] = value (slices, integers, integer arrays, boolean masks; value broadcasts).

        Differentiable in both: see minigrad/functions/indexing.py.
        """
        index = _index_arrays(index, self.device)
        if isinstance(value, Tensor) and value._view_of is not None and value._view_of[0] is self \
                and _is_basic(index) and _is_basic(value._view_of[1]) and value._view_of[1] == index:
            return      # x[i] += v: the in-place change of the view x[i] has already written into x
        self._write_in_place("__setitem__", fn.SetItem, index, self._operand(value))

    def zero_(self):
        return self._write_in_place("zero_", fn.SetItem, Ellipsis, 0)

    def fill_(self, value):
        """Every element set to ``value`` (a number, or a one-element tensor that then gets the gradient)."""
        return self._write_in_place("fill_", fn.SetItem, Ellipsis, self._operand(value))

    def copy_(self, source):
        """Copy ``source`` (broadcast to self's shape, cast to self's dtype, moved to self's device) into self."""
        if isinstance(source, Tensor) and source.device != self.device:
            source = source.to(self.device)
        return self._write_in_place("copy_", fn.SetItem, Ellipsis, self._operand(source))

    def masked_fill_(self, mask, value):
        """``value`` where ``mask`` (bool, broadcastable to self) is True, in place."""
        mask = mask.data if isinstance(mask, Tensor) else mask
        if isinstance(value, Tensor):               # a 0-d tensor value receives the gradient
            return self._write_in_place("masked_fill_", fn.SetItem, _broadcast_mask(mask, self), value)
        return self._write_in_place("masked_fill_", fn.MaskedFill, mask, value)

    def index_copy_(self, dim, index, source):
        """self.index_copy_(dim, index, source): self[..., index[i], ...] = source[..., i, ...] along ``dim``."""
        return self._write_in_place("index_copy_", fn.SetItem, _along(self, dim, index, "index_copy_"),
                                    self._operand(source))

    def index_copy(self, dim, index, source):
        """A copy of self with index_copy_ applied (differentiable in self and source)."""
        return self.clone().index_copy_(dim, index, source)

    def scatter_(self, dim, index, src=None, value=None):
        """scatter (src, a tensor or number, written at index along dim), in place."""
        src = value if src is None else src
        index = index.data if isinstance(index, Tensor) else index
        return self._write_in_place("scatter_", fn.Scatter, dim, index, self._operand(src))

    def index_fill_(self, dim, index, value):
        """self[..., index[i], ...] = value along ``dim``, in place (the annotated Transformer's label smoothing)."""
        return self._write_in_place("index_fill_", fn.SetItem, _along(self, dim, index, "index_fill_"),
                                    self._operand(value))

    def add_(self, other, alpha=1):
        return self._write_in_place("add_", fn.Add, other if alpha == 1 else other * alpha)

    def sub_(self, other, alpha=1):
        return self._write_in_place("sub_", fn.Sub, other if alpha == 1 else other * alpha)

    def mul_(self, other):
        return self._write_in_place("mul_", fn.Mul, other, reads_old_values=True)

    def div_(self, other):
        return self._write_in_place("div_", fn.Div, other, reads_old_values=True)

    # x += y changes x in place (every name bound to x sees it), as in PyTorch
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return fn.Add.apply(*_promote(self, other))

    def __radd__(self, other):
        return fn.Add.apply(*_promote(other, self))

    def __sub__(self, other):
        return fn.Sub.apply(*_promote(self, other))

    def __rsub__(self, other):
        return fn.Sub.apply(*_promote(other, self))

    def __mul__(self, other):
        return fn.Mul.apply(*_promote(self, other))

    def __rmul__(self, other):
        return fn.Mul.apply(*_promote(other, self))

    def __truediv__(self, other):
        return fn.Div.apply(*_promote(self, other, division=True))

    def __rtruediv__(self, other):
        return fn.Div.apply(*_promote(other, self, division=True))

    def __neg__(self):
        return fn.Neg.apply(self)

    def __pow__(self, exponent):
        return fn.Pow.apply(*_promote(self, exponent))

    def __rpow__(self, base):
        return fn.Pow.apply(*_promote(base, self))

    def __matmul__(self, other):
        _same_float_dtype("matmul", self, other)
        return fn.MatMul.apply(self, other)

    def __rmatmul__(self, other):
        _same_float_dtype("matmul", other, self)
        return fn.MatMul.apply(other, self)

    def __getitem__(self, index):
        """self[index]; with slices and integers the result is a view (it shares self's storage)."""
        index = _index_arrays(index, self.device)
        picked = self._mark_view(fn.GetItem.apply(self, index), index)
        if picked.grad_fn is not None and picked._view_of is None:
            picked.grad_fn.versions = []    # a copy, and GetItem's backward reads no values of self
        return picked

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
        """A copy with ``value`` where ``mask`` (bool, broadcastable to self) is True.

        value: a number, or a 0-d tensor (which then receives the gradient of the filled positions).
        """
        mask = mask.data if isinstance(mask, Tensor) else mask
        if isinstance(value, Tensor):
            return self.clone().masked_fill_(mask, value)
        return fn.MaskedFill.apply(self, mask, value)

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
        """max() -> the largest value (ties share the gradient);  max(dim) -> (values, indices), as in PyTorch."""
        if dim is None:
            return fn.Max.apply(self, None, False)
        if isinstance(dim, Tensor):                                 # max(other): elementwise, as torch
            return self.maximum(dim)
        indices = self.argmax(dim, keepdim=True)
        values = self.gather(dim, indices)                           # the gradient goes to that index, as torch
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return return_types.max(values, indices)

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
        return self._mark_view(fn.Reshape.apply(self, shape))

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
        return self._mark_view(fn.Permute.apply(self, tuple(dims)))

    def transpose(self, dim0, dim1):
        dims = list(range(self.ndim))
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
        return self._mark_view(fn.Permute.apply(self, tuple(dims)))

    def unsqueeze(self, dim):
        shape = list(self.shape)
        dim = dim if dim >= 0 else dim + len(shape) + 1
        shape.insert(dim, 1)
        return self.reshape(tuple(shape))

    def squeeze(self, dim=None):
        """Drop size-1 dimensions: all of them, or those among ``dim`` (an int or a tuple); others stay."""
        if dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        dims = {d % max(self.ndim, 1) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        return self.reshape(tuple(n for d, n in enumerate(self.shape) if not (d in dims and n == 1)))

    def expand(self, *shape):
        """Broadcast to ``shape`` (-1 keeps a dimension); the backward sums over the copies."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        own = (1,) * (len(shape) - self.ndim) + self.shape
        shape = tuple(o if s == -1 else s for s, o in zip(shape, own))
        return self._mark_view(fn.Expand.apply(self, shape))

    def split(self, split_size_or_sections, dim=0):
        return tuple(self._mark_view(piece) for piece in fn.Split.apply(self, split_size_or_sections, dim))

    def chunk(self, chunks, dim=0):
        size = -(-self.shape[dim] // chunks)
        return self.split(size, dim)

    # ------------------------------------------------------------------ more of torch.Tensor's methods
    # (each one line on top of a Function above, or on one of minigrad/functions/)
    def sin(self):
        return fn.Sin.apply(self)

    def cos(self):
        return fn.Cos.apply(self)

    def __abs__(self):
        return fn.Abs.apply(self)

    def add(self, other, alpha=1):
        """self + alpha * other."""
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        """self - alpha * other."""
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def neg(self):
        return -self

    def rsqrt(self):
        return fn.Pow.apply(self, -0.5)

    def square(self):
        return fn.Pow.apply(self, 2)

    def maximum(self, other):
        """Elementwise max(self, other) (broadcasting); a tie splits the gradient evenly."""
        return fn.Maximum.apply(self, other)

    def minimum(self, other):
        """Elementwise min(self, other) (broadcasting); a tie splits the gradient evenly."""
        return fn.Minimum.apply(self, other)

    def clamp(self, min=None, max=None):
        """Values limited to [min, max] (numbers); the gradient is 1 inside (bounds included), 0 outside."""
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            raise TypeError("clamp: the bounds must be numbers here; for tensor bounds use "
                            "x.maximum(low).minimum(high) (gradients reach the bounds too)")
        return fn.Clamp.apply(self, min, max)

    clip = clamp

    def tril(self, diagonal=0):
        """The lower triangle of the last two dims (j - i <= diagonal kept), zeros above it."""
        return fn.Where.apply(_triangle(self, diagonal, lower=True), self, 0)

    def triu(self, diagonal=0):
        """The upper triangle of the last two dims (j - i >= diagonal kept), zeros below it."""
        return fn.Where.apply(_triangle(self, diagonal, lower=False), self, 0)

    def bmm(self, mat2):
        """Batched matrix product (b, n, m) @ (b, m, p) -> (b, n, p); no broadcasting, as torch.bmm."""
        if self.ndim != 3 or mat2.ndim != 3 or self.shape[0] != mat2.shape[0]:
            raise ValueError(f"bmm: expected (b, n, m) and (b, m, p) with the same b, got {self.shape} and "
                             f"{mat2.shape}; use matmul (or @) to broadcast")
        return self @ mat2

    def mm(self, mat2):
        if self.ndim != 2 or mat2.ndim != 2:
            raise ValueError(f"mm: expected two matrices, got {self.shape} and {mat2.shape}; use matmul (or @)")
        return self @ mat2

    matmul = __matmul__

    def t(self):
        if self.ndim > 2:
            raise ValueError(f"t(): expects at most 2 dimensions, got {self.shape}; use transpose(dim0, dim1)")
        return self.T

    def gather(self, dim, index):
        """out[i][j] = self[i][index[i][j]] for dim=1 (torch.gather); gradient to the picked entries."""
        return fn.Gather.apply(self, dim, index.data if isinstance(index, Tensor) else index)

    def scatter(self, dim, index, src=None, value=None):
        """A copy with src (a tensor or number; ``value=`` as torch) written at index along dim (torch.scatter)."""
        src = value if src is None else src
        return fn.Scatter.apply(self, dim, index.data if isinstance(index, Tensor) else index, src)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (smallest) entries along dim, largest first; gradient to values."""
        indices = Tensor._from_array(sort_indices(self.data, dim, descending=largest, k=k))
        return return_types.topk(self.gather(dim, indices), indices)

    def sort(self, dim=-1, descending=False, *, stable=False):
        """(values, indices) sorted along dim (stable: equal values keep their order)."""
        indices = Tensor._from_array(sort_indices(self.data, dim, descending=descending))
        return return_types.sort(self.gather(dim, indices), indices)

    def argsort(self, dim=-1, descending=False, *, stable=False):
        return Tensor._from_array(sort_indices(self.data, dim, descending=descending))

    def amin(self, dim=None, keepdim=False):
        """Smallest values over ``dim``; ties share the gradient equally (as torch.amin)."""
        if self.dtype.kind in "ub":            # unsigned and boolean values cannot be negated (nor differentiated)
            return Tensor._from_array(self.data.min(axis=tuple(dim) if isinstance(dim, list) else dim,
                                                    keepdims=keepdim))
        return -fn.Max.apply(-self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        xp = backend.array_module(self.data)
        indices = xp.argmin(self.data, axis=dim)
        if keepdim and dim is not None:
            indices = xp.expand_dims(indices, dim)
        return Tensor._from_array(indices)

    def min(self, dim=None, keepdim=False):
        """min() -> the smallest value;  min(dim) -> (values, indices), the gradient to the index given."""
        if dim is None:
            return self.amin()
        if isinstance(dim, Tensor):                                 # min(other): elementwise, as torch
            return self.minimum(dim)
        indices = self.argmin(dim, keepdim=True)
        values = self.gather(dim, indices)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return return_types.min(values, indices)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """sum((x - mean)^2) / (n - correction) over dim; correction = 1 (unbiased, torch's default)."""
        correction = (1 if unbiased else 0) if correction is None else correction
        mean = self.mean(dim, keepdim=True)
        count = self.numel() // max(mean.numel(), 1)                # n, the number of values reduced
        return ((self - mean) ** 2).sum(dim, keepdim) / max(count - correction, 0)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return self.var(dim, unbiased, keepdim, correction=correction) ** 0.5

    def cumsum(self, dim):
        """Running sums along dim: y_i = x_1 + ... + x_i."""
        return fn.CumSum.apply(self, dim)

    def flip(self, *dims):
        """Reversed along each of ``dims`` (flip(0), flip(0, 1) or flip((0, 1)))."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return fn.Flip.apply(self, tuple(dims))

    def norm(self, p="fro", dim=None, keepdim=False):
        """The vector p-norm over dim (all elements by default); "fro" is p = 2, float("inf") the max |x|."""
        return fn.Norm.apply(self, 2 if p == "fro" else p, dim, keepdim)

    def repeat(self, *sizes):
        """Tile the tensor sizes[i] times along dim i (torch.Tensor.repeat, numpy.tile)."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        if len(sizes) < self.ndim:
            raise ValueError(f"repeat: {len(sizes)} repeat counts for a tensor with {self.ndim} dimensions")
        own = (1,) * (len(sizes) - self.ndim) + self.shape
        spread = self.reshape([n for side in own for n in (1, side)])             # (1, a, 1, b, ...)
        tiled = spread.expand([n for r, side in zip(sizes, own) for n in (r, side)])  # (r0, a, r1, b, ...)
        return tiled.reshape([r * side for r, side in zip(sizes, own)])

    def repeat_interleave(self, repeats, dim=None):
        """Each element repeated ``repeats`` (an int) times along dim (the flattened tensor when None)."""
        if not isinstance(repeats, int):
            raise TypeError("repeat_interleave: only an int number of repeats is supported")
        source = self.reshape(-1) if dim is None else self
        dim = 0 if dim is None else dim % source.ndim
        shape = source.shape
        copies = source.unsqueeze(dim + 1).expand(shape[:dim + 1] + (repeats,) + shape[dim + 1:])
        return copies.reshape(shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1:])

    def multinomial(self, num_samples, replacement=False):
        return Tensor._from_array(multinomial_indices(self.data, num_samples, replacement))

    def index_select(self, dim, index):
        """The entries at the 1-D integer ``index`` along dim (repeats allowed: their gradients add up)."""
        index = index.data if isinstance(index, Tensor) else backend.asarray(index, device=self.device)
        if index.ndim != 1 or index.dtype.kind not in "iu":
            raise ValueError(f"index_select: index must be a 1-D integer tensor, got {index.dtype} "
                             f"of shape {tuple(index.shape)}")
        return self[(slice(None),) * (dim % self.ndim) + (index,)]

    def masked_select(self, mask):
        """1-D tensor of the entries where ``mask`` (bool, broadcastable) is True, in row-major order."""
        mask = mask.data if isinstance(mask, Tensor) else mask
        shape = backend.broadcast_shape(self.shape, tuple(mask.shape))
        full_mask = backend.array_module(mask).broadcast_to(mask, shape)
        return self.expand(shape)[Tensor._from_array(full_mask)]

    def select(self, dim, index):
        """The slice at ``index`` along dim, that dimension removed (x.select(0, i) is x[i])."""
        return self[(slice(None),) * (dim % self.ndim) + (index,)]

    def unbind(self, dim=0):
        """The slices along dim, as a tuple (each with that dimension removed)."""
        return tuple(self.select(dim, i) for i in range(self.shape[dim]))

    @property
    def is_cuda(self):
        return self.device == "cuda"

    def nelement(self):
        return self.numel()

    def narrow(self, dim, start, length):
        """The slice start:start+length along ``dim`` (a view in torch; here the usual slicing op)."""
        dim = dim % self.ndim
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def nonzero(self):
        """(n, ndim) int64 indices of the non-zero elements, in row-major order (no gradient)."""
        xp = backend.array_module(self.data)
        return Tensor._from_array(xp.stack(xp.nonzero(self.data), axis=-1).astype("int64"))

    def pin_memory(self):
        """Itself: there is no page-locked host memory in minigrad (torch uses it only for speed)."""
        return self

    def contiguous(self):
        """Itself: minigrad arrays need no contiguous copy before view()."""
        return self

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def type_as(self, other):
        return self.type(other.dtype)

    def view_as(self, other):
        return self.reshape(other.shape)

    reshape_as = view_as

    def expand_as(self, other):
        return self.expand(other.shape)

    def half(self):
        return self.type(float16)

    def eq(self, other):
        return self == other

    def ne(self, other):
        return self != other

    def lt(self, other):
        return self < other

    def le(self, other):
        return self <= other

    def gt(self, other):
        return self > other

    def ge(self, other):
        return self >= other

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A new leaf tensor from ``data``, with this tensor's dtype and device unless given."""
        return Tensor(data, requires_grad=requires_grad, dtype=dtype or self.dtype, device=device or self.device)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return _filled(size, fill_value, dtype or self.dtype, device or self.device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _filled(size, 0, dtype or self.dtype, device or self.device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _filled(size, 1, dtype or self.dtype, device or self.device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """Zero-filled, as minigrad.empty (never garbage)."""
        return _filled(size, 0, dtype or self.dtype, device or self.device, requires_grad)


def _filled(size, value, dtype, device, requires_grad):
    """A new leaf tensor of ``size`` (a tuple, or the sizes as separate arguments) filled with ``value``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif isinstance(size, list):
        size = tuple(size)
    device = backend.normalize_device(device)
    data = backend.get_module(device).full(size, value, dtype=dtype)
    return Tensor(data, requires_grad=requires_grad, device=device)


# Functions whose backward reads no values of their inputs (only shapes, indices, masks)
_READS_NO_INPUT_VALUES = (fn.SetItem, fn.MaskedFill, fn.Add, fn.Sub)


def _promote(a, b, division=False):
    """PyTorch's type promotion where NumPy's differs: an integer tensor meeting a float tensor takes
    that tensor's dtype (NumPy: float64); meeting a Python float, or divided, the default dtype."""
    a_int = type(a) is not float and isinstance(a, Tensor) and a.data.dtype.kind in "iub"
    b_int = type(b) is not float and isinstance(b, Tensor) and b.data.dtype.kind in "iub"
    if not (a_int or b_int):
        return a, b                                    # the common case: floats, or a float and a number
    if a_int and isinstance(b, Tensor) and b.dtype.kind == "f":
        return a.type(b.dtype), b
    if b_int and isinstance(a, Tensor) and a.dtype.kind == "f":
        return a, b.type(a.dtype)
    numbers_only = all(isinstance(v, Tensor) and v.dtype.kind in "iub" or isinstance(v, int) for v in (a, b))
    if isinstance(a, float) or isinstance(b, float) or (division and numbers_only):
        a = a.type(_default_dtype) if a_int else a
        b = b.type(_default_dtype) if b_int else b
    return a, b


def _same_float_dtype(op, a, b):
    """matmul, mm, bmm: PyTorch refuses float32 @ float64 (no quiet promotion); so does minigrad."""
    a_dtype, b_dtype = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if a_dtype is not None and b_dtype is not None and a_dtype != b_dtype and a_dtype.kind == b_dtype.kind == "f":
        raise RuntimeError(f"{op}: expected both sides to have the same dtype, got {a_dtype} and {b_dtype}. "
                           "Cast one side (x.double(), w.float()), as PyTorch requires too")


def _is_basic(index):
    """True for an index of ints, slices, None and Ellipsis only (it picks a view)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)


def _broadcast_mask(mask, tensor):
    """A boolean mask broadcast to ``tensor``'s shape (an index for every element it selects)."""
    if getattr(mask, "dtype", None) is None or mask.dtype.kind != "b":
        raise TypeError(f"masked_fill: the mask must be a boolean tensor, got {getattr(mask, 'dtype', type(mask))}")
    try:
        return backend.array_module(mask).broadcast_to(mask, tensor.shape)
    except ValueError:
        raise ValueError(f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast to the "
                         f"input's shape {tensor.shape}") from None


def _along(tensor, dim, index, op):
    """The index that picks positions ``index`` (1-D integers) along ``dim``: (:, ..., :, index)."""
    index = index.data if isinstance(index, Tensor) else backend.asarray(index, device=tensor.device)
    if index.ndim != 1 or index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be a 1-D integer tensor, got {index.dtype} of shape {tuple(index.shape)}")
    return (slice(None),) * (dim % tensor.ndim) + (index,)


def _triangle(tensor, diagonal, lower):
    """Boolean (n, m) mask of the kept triangle of the last two dimensions of ``tensor``."""
    if tensor.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: needs at least 2 dimensions, got {tensor.shape}")
    xp = backend.array_module(tensor.data)
    n, m = tensor.shape[-2:]
    if lower:
        return xp.tri(n, m, diagonal, dtype=bool)            # j - i <= diagonal
    return ~xp.tri(n, m, diagonal - 1, dtype=bool)           # j - i >= diagonal


autograd.use_tensor_class(Tensor)   # the engine wraps its outputs in Tensors (autograd never imports this module)
