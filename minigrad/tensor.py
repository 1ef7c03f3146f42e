"""The Tensor: an array on a device, plus the graph node that produced it.

``t._data`` is the backend array behind a tensor (NumPy on "cpu", CuPy on
"cuda"); ``t.data`` is, as in PyTorch, a Tensor sharing that array, outside the
graph; ``t.numpy()`` is that array on the host.  ``t.grad`` is, as in PyTorch, a
Tensor of the same shape that does not require grad, or None until a backward
reaches ``t`` (gradients.py).  Every operator and method below calls one Function
from ``minigrad.functions``, or a helper in a module with one job; follow it with
"go to definition" to read its forward and backward side by side:

    in_place.py     x[i] = v, add_, zero_, ...: the in-place writes, views and version counters
    gradients.py    .grad (what it is, how a backward adds into it) and register_hook
    composed.py     methods made of other methods (max(dim), var, repeat, ...)
    torch_compat/   what makes the class answer to PyTorch's names and rules:
      in_place_methods.py   the other in-place methods (clamp_, exp_, normal_, unsqueeze_, ...), inherited
      tensor_math.py        more arithmetic (outer, dot, cumprod, prod, logsumexp, div(rounding_mode=), %, roll), inherited
      numpy_interop.py      np.asarray(t), np.exp(t), NumPy scalars on the left, t as a list index, inherited
      arguments.py          torch's argument forms (sizes, indices, masks) turned into one form
      promotion.py          the dtype rules where PyTorch's differ from NumPy's
    creation.py     the functions that make new tensors (zeros, randn, cat, ...)

Longer than the ~400 lines of the other files, for a reason: the class holds
about 170 of PyTorch's Tensor methods and operators, each a one- to three-line call.
The methods added later for whole teaching programs (in-place forms, more arithmetic,
the NumPy protocol) are plain classes in the three modules marked "inherited" above,
which Tensor inherits: no patching from outside, and "go to definition" lands on them.
"""
import math
import numbers

import numpy

from . import autograd, backend, checks, composed, dtypes, gradients, in_place
from . import functions as fn
from .dtypes import bool_, float16, float32, float64, get_default_dtype, int32, int64, long, set_default_dtype  # noqa: F401
from .functions.gather import sort_indices
from .sampling import multinomial_indices
from .torch_compat import absent, arguments, promotion, return_types
from .torch_compat.devices import device_named
from .torch_compat.in_place_methods import InPlaceMethods
from .torch_compat.numpy_interop import NumPyInterop
from .torch_compat.tensor_math import MathMethods

class Tensor(autograd.TensorBase, InPlaceMethods, MathMethods, NumPyInterop):
    """A multi-dimensional array that records the operations applied to it.

    Tensor(data, requires_grad=False, dtype=None, device=None)

    data: a nested list, NumPy/CuPy array or Tensor (copied).  A list becomes the default
    dtype (float32 unless ``set_default_dtype`` changed it), whatever its numbers, as torch.Tensor's
    does (``Tensor([0])`` is a float accumulator); arrays and tensors keep their dtype unless
    ``dtype`` is given (minigrad.tensor infers it from a list).  A single number is refused:
    torch.Tensor(5) is a tensor of size 5, so use minigrad.tensor(5) for the
    value, minigrad.zeros(5) for the size.
    """

    __slots__ = ("_data", "_grad", "requires_grad", "grad_fn", "_output_index",
                 "_version", "_view_of", "_history", "_hooks", "__weakref__")

    def __init__(self, data, requires_grad=False, dtype=None, device=None):
        if isinstance(data, numbers.Number):
            raise TypeError(
                f"{type(self).__name__}({data!r}): a single number is ambiguous (torch.Tensor(5) is an "
                f"uninitialised tensor of size 5, and torch.Tensor(2.5) is refused). Use minigrad.tensor({data!r}) "
                f"for a 0-d tensor holding the value, or minigrad.zeros(5) / minigrad.empty(5) for a size"
            )
        if dtype is None and not hasattr(data, "dtype"):
            dtype = get_default_dtype()            # torch.Tensor([0]) is float32, not int64
        self._data = arguments.new_array(data, dtype, device)
        self._grad = None           # .grad (a property: see grad below)
        self.grad_fn = None
        self._output_index = 0
        self._version = [0]
        self._view_of = None        # (tensor, index) when this tensor is a view of that one's storage
        self._history = None        # [(node number, grad_fn, output index)] before each in-place change
        self._hooks = None          # gradients.Hooks once register_hook or retain_grad is called
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _from_array(array, grad_fn=None, output_index=0):
        """Wrap an op's output array in a Tensor, without copying (used by Function.apply)."""
        tensor = Tensor.__new__(Tensor)
        tensor._data = array if type(array) in backend._array_types else backend.ensure_array(array)
        tensor._grad = None
        tensor.grad_fn = grad_fn
        tensor._output_index = output_index
        tensor._version = [0]
        tensor._view_of = None
        tensor._history = None
        tensor._hooks = None
        tensor.requires_grad = grad_fn is not None
        return tensor

    @classmethod
    def _new_leaf(cls, data, requires_grad=False, dtype=None, device=None):
        """A new leaf holding a copy of ``data``, Python numbers included (minigrad.tensor, new_tensor)."""
        leaf = cls._from_array(arguments.new_array(data, dtype, device))
        return leaf.requires_grad_(True) if requires_grad else leaf

    # ------------------------------------------------------------------ properties
    @property
    def data(self):
        """A Tensor sharing this tensor's storage, outside the graph (as torch's ``.data``).

        It does not require grad, and its in-place changes (``p.data.add_(g, alpha=-lr)``) update
        this tensor without being recorded, not even in the version counter: prefer
        ``.detach()``, whose changes a backward that needs the old values detects.
        ``.numpy()`` gives the values as a NumPy array.
        """
        return Tensor._from_array(self._data)

    @data.setter
    def data(self, value):
        """``p.data = t``: p now holds t's storage (same shape not required, as in PyTorch)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"t.data = value: value must be a Tensor (as in PyTorch), got "
                            f"{type(value).__name__}; wrap an array with minigrad.tensor(array)")
        self._data = value._data

    @property
    def shape(self):
        return tuple(self._data.shape)

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        """A ``minigrad.device`` (a str such as "cpu", with torch's ``.type`` and ``.index``)."""
        return device_named(backend.device_of(self._data))

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        """The last two dimensions swapped (a batch of matrices transposed)."""
        if self.ndim < 2:
            raise ValueError(f"mT: needs at least 2 dimensions, got shape {self.shape}")
        return self.transpose(-2, -1)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.ndim

    def numel(self):
        return int(self._data.size)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        body = numpy.array2string(backend.to_numpy(self._data), separator=", ", precision=4)
        extras = []
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.dtype != get_default_dtype() and self.dtype.kind == "f":
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    __hash__ = object.__hash__

    def __getattr__(self, name):
        """Tensor methods that minigrad leaves out on purpose: say so, and what to use (minigrad/torch_compat/absent.py);
        an in-place method whose out-of-place method exists (x.floor_ for x.floor) says to use that one."""
        out_of_place = name[:-1] if name.endswith("_") and not name.startswith("_") else None
        return absent.explain("minigrad.Tensor", name, out_of_place if hasattr(Tensor, out_of_place or "_") else None)

    @property
    def is_cuda(self):
        return self.device == "cuda"

    nelement = numel

    def is_floating_point(self):
        return self.dtype.kind == "f"

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force=False):
        """The data as a NumPy array: on the CPU the tensor's own array, so writes to one show in
        the other (as in PyTorch); a copy for a tensor that requires grad or lives on "cuda",
        where PyTorch raises unless ``force=True`` (TORCH_DIFFERENCES.md)."""
        if self.requires_grad or self.device != "cpu":
            return backend.to_numpy(self._data)
        return self._data

    def item(self):
        if self._data.size != 1:
            raise ValueError(f"item(): the tensor has {self._data.size} elements, expected exactly 1")
        return self._data.reshape(()).item()

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

    def type(self, dtype=None, non_blocking=False):
        """This tensor cast to ``dtype`` (differentiable between float dtypes).  As in PyTorch, dtype may be
        a legacy type (minigrad.FloatTensor, "torch.LongTensor"), and type() gives the type's name."""
        if dtype is None:
            return dtypes.type_name(self.dtype)
        dtype = numpy.dtype(dtypes.dtype_of_type(dtype) or dtype)
        if dtype == self.dtype:
            return self
        if dtype.kind not in "fc":  # integers and booleans carry no gradient
            return Tensor._from_array(self._data.astype(dtype))
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

    def pin_memory(self):
        """Itself: there is no page-locked host memory in minigrad (torch uses it only for speed)."""
        return self

    def type_as(self, tensor):
        return self.type(tensor.dtype)

    def half(self):
        return self.type(float16)

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
        tensor = Tensor._from_array(self._data)
        tensor._version = self._version  # shares storage, so shares the version counter
        return tensor

    def clone(self):
        return fn.Clone.apply(self)

    @property
    def grad(self):
        """dL/d(self) after a backward: a Tensor of self's shape that does not require grad, or None.
        Each backward adds into it (in place, as PyTorch); ``p.grad = None`` forgets it.  On a
        non-leaf it stays None unless retain_grad() was called, and reading it warns, as PyTorch's."""
        return gradients.read(self)

    @grad.setter
    def grad(self, value):
        """p.grad = None, or a Tensor of p's shape, dtype and device (checked as PyTorch checks)."""
        self._grad = gradients.checked(self, value)

    @grad.deleter
    def grad(self):
        self._grad = None

    def retain_grad(self):
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is not None:
            gradients.watched(self).retains_grad = True

    @property
    def retains_grad(self):
        """True if retain_grad() was called on this non-leaf tensor (as torch's ``retains_grad``)."""
        return gradients.retains_grad(self)

    def register_hook(self, hook):
        """Call ``hook(grad)`` each time a backward computes dL/d(self) (on a leaf: summed over its uses,
        before it is added into .grad).  The hook returns None, or a Tensor of the same shape to use
        instead; it should not change grad in place.  Returns a handle: ``handle.remove()`` takes it out."""
        return gradients.register_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/dx for every leaf x that requires grad, added into ``x.grad``.

        gradient: dL/d(self), of self's shape; may be omitted only when self holds one element.
        retain_graph: keep the saved values for a second backward (default: create_graph, as torch).
        create_graph and inputs (PyTorch's higher-order gradients, partial backward) are not implemented.
        """
        autograd.backward(self, gradient, retain_graph, create_graph, inputs)

    def _receive_gradient(self, grad):
        """The engine hands over dL/d(self), complete for this backward; returns the gradient to pass on."""
        return gradients.receive(self, backend.ensure_array(grad))

    # ------------------------------------------------------------------ in place
    # Each one is a call of in_place.write: the values change in place and, while gradients
    # are recorded, so does the tensor's graph node (read minigrad/in_place.py).
    def _node_before(self, sequence):
        """(grad_fn, output index) this tensor had when the node numbered ``sequence`` used it."""
        return in_place.node_before(self, sequence)

    def __setitem__(self, index, value):
        """self[index] = value (slices, integers, integer arrays, boolean masks; value broadcasts).

        Differentiable in both: see minigrad/functions/indexing.py.
        """
        in_place.set_item(self, arguments.array_index(index, self.device), value)

    def zero_(self):
        return in_place.write(self, "zero_", fn.SetItem, Ellipsis, 0)

    def fill_(self, value):
        """Every element set to ``value`` (a number, or a one-element tensor that then gets the gradient)."""
        return in_place.write(self, "fill_", fn.SetItem, Ellipsis, in_place.operand(self, value))

    def copy_(self, src, non_blocking=False):
        """Copy ``src`` (broadcast to self's shape, cast to self's dtype, moved to self's device) into self."""
        if isinstance(src, Tensor) and src.device != self.device:
            src = src.to(self.device)
        return in_place.write(self, "copy_", fn.SetItem, Ellipsis, in_place.operand(self, src))

    def masked_fill_(self, mask, value):
        """``value`` where ``mask`` (bool, broadcastable to self) is True, in place."""
        mask = arguments.array_of(mask)
        if isinstance(value, Tensor):               # a 0-d tensor value receives the gradient
            return in_place.write(self, "masked_fill_", fn.SetItem, arguments.broadcast_mask(mask, self), value)
        return in_place.write(self, "masked_fill_", fn.MaskedFill, mask, value)

    def index_copy_(self, dim, index, source):
        """self.index_copy_(dim, index, source): self[..., index[i], ...] = source[..., i, ...] along ``dim``."""
        index = arguments.index_along(self, dim, index, "index_copy_")
        return in_place.write(self, "index_copy_", fn.SetItem, index, in_place.operand(self, source))

    def index_copy(self, dim, index, source):
        """A copy of self with index_copy_ applied (differentiable in self and source)."""
        return self.clone().index_copy_(dim, index, source)

    def scatter_(self, dim, index, src=None, value=None):
        """scatter (src, a tensor or number, written at index along dim), in place."""
        src = value if src is None else src
        return in_place.write(self, "scatter_", fn.Scatter, dim, arguments.array_of(index), in_place.operand(self, src))

    def index_fill_(self, dim, index, value):
        """self[..., index[i], ...] = value along ``dim``, in place (the annotated Transformer's label smoothing)."""
        index = arguments.index_along(self, dim, index, "index_fill_")
        return in_place.write(self, "index_fill_", fn.SetItem, index, in_place.operand(self, value))

    def add_(self, other, alpha=1):
        """self += alpha * other, in place (also the legacy add_(alpha, other))."""
        return in_place.write(self, "add_", fn.Add, arguments.scaled_operand("add_", other, alpha))

    def sub_(self, other, alpha=1):
        """self -= alpha * other, in place (also the legacy sub_(alpha, other))."""
        return in_place.write(self, "sub_", fn.Sub, arguments.scaled_operand("sub_", other, alpha))

    def mul_(self, other):
        return in_place.write(self, "mul_", fn.Mul, other, reads_old_values=True)

    def div_(self, other):
        return in_place.write(self, "div_", fn.Div, other, reads_old_values=True)

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
        return fn.Add.apply(*promotion.promote(self, other))

    def __radd__(self, other):
        return fn.Add.apply(*promotion.promote(other, self))

    def __sub__(self, other):
        return fn.Sub.apply(*promotion.promote(self, other))

    def __rsub__(self, other):
        return fn.Sub.apply(*promotion.promote(other, self))

    def __mul__(self, other):
        return fn.Mul.apply(*promotion.promote(self, other))

    def __rmul__(self, other):
        return fn.Mul.apply(*promotion.promote(other, self))

    def __truediv__(self, other):
        return fn.Div.apply(*promotion.promote(self, other, division=True))

    def __rtruediv__(self, other):
        return fn.Div.apply(*promotion.promote(other, self, division=True))

    def __neg__(self):
        return fn.Neg.apply(self)

    def __pow__(self, exponent):
        return fn.Pow.apply(*promotion.promote(self, exponent))

    def __rpow__(self, base):
        return fn.Pow.apply(*promotion.promote(base, self))

    def __matmul__(self, other):
        promotion.same_dtype("matmul", input=self, other=other)
        return fn.MatMul.apply(self, other)

    def __rmatmul__(self, other):
        promotion.same_dtype("matmul", input=other, other=self)
        return fn.MatMul.apply(other, self)

    def __getitem__(self, index):
        """self[index]; with slices and integers the result is a view (it shares self's storage)."""
        index = arguments.array_index(index, self.device)
        picked = in_place.mark_view(self, fn.GetItem.apply(self, index), index)
        if picked.grad_fn is not None and picked._view_of is None:
            picked.grad_fn.versions = []    # a copy, and GetItem's backward reads no values of self
        return picked

    # comparisons give boolean tensors outside the graph
    def _compare(self, other, op):
        other = other._data if isinstance(other, Tensor) else other
        return Tensor._from_array(op(self._data, other))

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
        return Tensor._from_array(~self._data)

    def __and__(self, other):
        return self._compare(other, lambda a, b: a & b)

    def __or__(self, other):
        return self._compare(other, lambda a, b: a | b)

    def __bool__(self):
        if self._data.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous: use .any() or .all()")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def add(self, other, alpha=1):
        """self + alpha * other."""
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        """self - alpha * other."""
        return self - (other * alpha if alpha != 1 else other)

    mul = __mul__

    neg = __neg__

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

    eq = __eq__

    ne = __ne__

    lt = __lt__

    le = __le__

    gt = __gt__

    ge = __ge__

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
        return self ** 0.5

    def pow(self, exponent):
        return self ** exponent

    def masked_fill(self, mask, value):
        """A copy with ``value`` where ``mask`` (bool, broadcastable to self) is True.

        value: a number, or a 0-d tensor (which then receives the gradient of the filled positions).
        """
        mask = mask._data if isinstance(mask, Tensor) else mask
        if isinstance(value, Tensor):
            return self.clone().masked_fill_(mask, value)
        return fn.MaskedFill.apply(self, mask, value)

    def softmax(self, dim=-1):
        dim = checks.dim("softmax", dim, self.ndim)
        if not self.ndim:                                   # one value: softmax 1, as torch
            return fn.Softmax.apply(self.reshape(1), 0).reshape(())
        return fn.Softmax.apply(self, dim)

    def log_softmax(self, dim=-1):
        dim = checks.dim("log_softmax", dim, self.ndim)
        if not self.ndim:
            return fn.LogSoftmax.apply(self.reshape(1), 0).reshape(())
        return fn.LogSoftmax.apply(self, dim)

    def sin(self):
        return fn.Sin.apply(self)

    def cos(self):
        return fn.Cos.apply(self)

    __abs__ = abs

    def rsqrt(self):
        return self ** -0.5

    def square(self):
        return self ** 2

    def maximum(self, other):
        """Elementwise max(self, other) (broadcasting); a tie splits the gradient evenly."""
        return fn.Maximum.apply(*promotion.promote(self, other))

    def minimum(self, other):
        """Elementwise min(self, other) (broadcasting); a tie splits the gradient evenly."""
        return fn.Minimum.apply(*promotion.promote(self, other))

    def clamp(self, min=None, max=None):
        """Values limited to [min, max] (numbers); the gradient is 1 inside (bounds included), 0 outside."""
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            raise TypeError("clamp: the bounds must be numbers here; for tensor bounds use "
                            "x.maximum(low).minimum(high) (gradients reach the bounds too)")
        for bound in (min, max):
            self, _ = promotion.promote(self, bound)     # an integer tensor with a float bound: the default dtype
        return fn.Clamp.apply(self, min, max)

    clip = clamp

    # ------------------------------------------------------------------ reductions
    # the reductions also take NumPy's names axis= and keepdims=, as torch does (arguments.numpy_aliases)
    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        dim, keepdim = arguments.numpy_aliases("sum", dim, keepdim, axis, keepdims)
        dim = checks.reduction_dims("sum", dim, self.ndim)
        return fn.Sum.apply(self, dim, keepdim)

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        dim, keepdim = arguments.numpy_aliases("mean", dim, keepdim, axis, keepdims)
        dim = checks.reduction_dims("mean", dim, self.ndim)
        return fn.Mean.apply(self, dim, keepdim)

    def amax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Largest values over ``dim``; ties share the gradient equally (as torch.amax)."""
        dim, keepdim = arguments.numpy_aliases("amax", dim, keepdim, axis, keepdims)
        dim = checks.reduction_dims("amax", dim, self.ndim)
        return fn.Max.apply(self, dim, keepdim)

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """max() -> the largest value (ties share the gradient);  max(dim) -> (values, indices), the
        first index of the largest value, as in PyTorch."""
        dim, keepdim = arguments.numpy_aliases("max", dim, keepdim, axis, keepdims)
        checks.reduction_of_empty("max", self, dim, RuntimeError)
        if not isinstance(dim, Tensor):
            checks.dims("max", dim, self.ndim)
        if dim is None:
            return fn.Max.apply(self, None, False)
        if isinstance(dim, Tensor):                                 # max(other): elementwise, as torch
            return self.maximum(dim)
        return return_types.max(*composed.values_and_indices(self, dim, keepdim, largest=True))

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The int64 index of the largest value (the first one at a tie, as PyTorch documents)."""
        dim, keepdim = arguments.numpy_aliases("argmax", dim, keepdim, axis, keepdims)
        checks.reduction_of_empty("argmax", self, dim, IndexError)
        dim = checks.reduction_dims("argmax", dim, self.ndim)
        return composed.index_of_extreme(self, dim, keepdim, largest=True)

    def any(self):
        return Tensor._from_array(self._data.any())

    def all(self):
        return Tensor._from_array(self._data.all())

    def amin(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Smallest values over ``dim``; ties share the gradient equally (as torch.amin)."""
        dim, keepdim = arguments.numpy_aliases("amin", dim, keepdim, axis, keepdims)
        dim = checks.reduction_dims("amin", dim, self.ndim)
        if self.dtype.kind in "ub":            # unsigned and boolean values cannot be negated (nor differentiated)
            return Tensor._from_array(self._data.min(axis=tuple(dim) if isinstance(dim, list) else dim,
                                                    keepdims=keepdim))
        return -fn.Max.apply(-self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The int64 index of the smallest value (the first one at a tie, as PyTorch documents)."""
        dim, keepdim = arguments.numpy_aliases("argmin", dim, keepdim, axis, keepdims)
        checks.reduction_of_empty("argmin", self, dim, IndexError)
        dim = checks.reduction_dims("argmin", dim, self.ndim)
        return composed.index_of_extreme(self, dim, keepdim, largest=False)

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """min() -> the smallest value;  min(dim) -> (values, indices), the first index of the smallest
        value (the gradient goes to it)."""
        dim, keepdim = arguments.numpy_aliases("min", dim, keepdim, axis, keepdims)
        checks.reduction_of_empty("min", self, dim, RuntimeError)
        if not isinstance(dim, Tensor):
            checks.dims("min", dim, self.ndim)
        if dim is None:
            return self.amin()
        if isinstance(dim, Tensor):                                 # min(other): elementwise, as torch
            return self.minimum(dim)
        return return_types.min(*composed.values_and_indices(self, dim, keepdim, largest=False))

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None, axis=None, keepdims=None):
        """sum((x - mean)^2) / (n - correction) over dim; correction = 1 (unbiased, torch's default)."""
        dim, keepdim = arguments.numpy_aliases("var", dim, keepdim, axis, keepdims)
        dim = checks.reduction_dims("var", dim, self.ndim)
        correction = (1 if unbiased else 0) if correction is None else correction
        return composed.variance(self, dim, keepdim, correction)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None, axis=None, keepdims=None):
        dim, keepdim = arguments.numpy_aliases("std", dim, keepdim, axis, keepdims)
        return self.var(dim, unbiased, keepdim, correction=correction) ** 0.5

    def cumsum(self, dim=None, *, axis=None):
        """Running sums along dim: y_i = x_1 + ... + x_i."""
        dim, _ = arguments.numpy_aliases("cumsum", dim, False, axis, None, required=True)
        dim = checks.dim("cumsum", dim, self.ndim)
        if not self.ndim:                                   # a 0-d tensor is its own running sum
            return fn.CumSum.apply(self.reshape(1), 0).reshape(())
        return fn.CumSum.apply(self, dim)

    def norm(self, p="fro", dim=None, keepdim=False):
        """The vector p-norm over dim (all elements by default); "fro" is p = 2, float("inf") the max |x|."""
        dim = checks.reduction_dims("norm", dim, self.ndim)
        return fn.Norm.apply(self, 2 if p == "fro" else p, dim, keepdim)

    # ------------------------------------------------------------------ shape
    def reshape(self, *shape):
        """The same values in another shape (one size may be -1, inferred): a view when NumPy can
        reshape without copying, else a copy (as torch.reshape)."""
        if not shape:
            raise TypeError("reshape() missing the shape: x.reshape(2, 3), x.reshape((2, 3)), or x.reshape(()) "
                            "for a 0-d tensor")
        shape = checks.reshape_sizes("reshape", arguments.sizes(shape), self.shape)
        return in_place.mark_view(self, fn.Reshape.apply(self, shape))

    def view(self, *shape):
        """reshape that always shares storage, as PyTorch's: a view of a transposed, sliced or expanded
        tensor that no reshaping can express without copying raises (use .reshape(...), or
        .contiguous().view(...)).  A layer's own output is laid out as minigrad finds fastest, so
        there (never on a view) a copy is made where PyTorch's contiguous output needs none."""
        if not shape:
            raise TypeError("view() missing the shape: x.view(2, 3), x.view((2, 3)), or x.view(()) for a 0-d tensor")
        shape = checks.reshape_sizes("view", arguments.sizes(shape), self.shape)
        result = in_place.mark_view(self, fn.Reshape.apply(self, shape))
        if self._view_of is not None and result._view_of is None and self.numel() > 1:
            raise RuntimeError(
                f"view: view size is not compatible with input tensor's size and stride (at least one dimension "
                f"spans across two contiguous subspaces). Use .reshape(...) instead. (The tensor of shape "
                f"{self.shape} is a transposed, sliced or expanded view, so shape {shape} needs a copy; "
                "x.contiguous().view(...) makes it explicit.)")
        return result

    def flatten(self, start_dim=0, end_dim=-1):
        shape = self.shape
        start, end = checks.dim("flatten", start_dim, self.ndim), checks.dim("flatten", end_dim, self.ndim)
        if start > end:
            raise RuntimeError(f"flatten: start_dim={start_dim} comes after end_dim={end_dim} for a tensor of "
                               f"{self.ndim} dimensions; flatten(start_dim, end_dim) needs start_dim <= end_dim")
        if not self.ndim:
            return self.reshape(1)
        return self.reshape(shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])

    def permute(self, *dims):
        dims = arguments.sizes(dims)
        if len(dims) != self.ndim:
            raise RuntimeError(f"permute: number of dims don't match in permute: the tensor has {self.ndim} "
                               f"dimensions, got dims={dims}; name each dimension once")
        return in_place.mark_view(self, fn.Permute.apply(self, checks.dims("permute", dims, self.ndim)))

    def transpose(self, dim0, dim1):
        dims = list(range(self.ndim))
        dim0, dim1 = checks.dim("transpose", dim0, self.ndim), checks.dim("transpose", dim1, self.ndim)
        if not self.ndim:
            return in_place.mark_view(self, fn.Permute.apply(self, ()))
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
        return in_place.mark_view(self, fn.Permute.apply(self, tuple(dims)))

    def unsqueeze(self, dim):
        shape = list(self.shape)
        shape.insert(checks.dim("unsqueeze", dim, self.ndim + 1), 1)     # dim in [-ndim - 1, ndim]
        return self.reshape(tuple(shape))

    def squeeze(self, dim=None):
        """Drop size-1 dimensions: all of them, or those among ``dim`` (an int or a tuple); others stay."""
        if dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        dims = checks.dims("squeeze", dim, self.ndim)
        dims = {dims} if isinstance(dims, int) else set(dims)
        return self.reshape(tuple(n for d, n in enumerate(self.shape) if not (d in dims and n == 1)))

    def expand(self, *shape):
        """Broadcast to ``shape`` (-1 keeps a dimension); the backward sums over the copies."""
        shape = arguments.sizes(shape)
        new = len(shape) - self.ndim
        if new < 0 or -1 in shape[:new]:
            raise RuntimeError(f"expand: the expanded size of the tensor ({list(shape)}) needs at least its "
                               f"{self.ndim} dims, and -1 isn't allowed in a leading, new dimension (got {shape} for "
                               f"shape {self.shape})")
        own = (1,) * new + self.shape
        shape = tuple(o if s == -1 else s for s, o in zip(shape, own))
        for index, (size, old) in enumerate(zip(shape, own)):
            if old != 1 and size != old:
                raise RuntimeError(f"expand: The expanded size of the tensor ({size}) must match the existing size "
                                   f"({old}) at non-singleton dimension {index}.  Target sizes: {list(shape)}.  "
                                   f"Tensor sizes: {list(self.shape)}")
        return in_place.mark_view(self, fn.Expand.apply(self, shape))

    def split(self, split_size, dim=0):
        """Pieces of split_size along dim (the last shorter), or of the sizes in a list split_size."""
        dim = checks.dim("split", dim, self.ndim)
        if isinstance(split_size, int) and split_size <= 0 and not (split_size == 0 and self.shape[dim] == 0):
            raise RuntimeError(f"split: split_size must be a positive int (0 only for a dimension of size 0), "
                               f"got split_size={split_size} for dim {dim} of size {self.shape[dim]}")
        return tuple(in_place.mark_view(self, piece) for piece in fn.Split.apply(self, split_size, dim))

    def chunk(self, chunks, dim=0):
        checks.positive_int("chunk", "chunks", chunks, RuntimeError)
        size = -(-self.shape[checks.dim("chunk", dim, self.ndim)] // chunks)
        return self.split(size, dim)

    def t(self):
        if self.ndim > 2:
            raise ValueError(f"t(): expects at most 2 dimensions, got {self.shape}; use transpose(dim0, dim1)")
        return self.T

    def flip(self, *dims):
        """Reversed along each of ``dims`` (flip(0), flip(0, 1) or flip((0, 1)))."""
        dims = checks.dims("flip", arguments.sizes(dims), self.ndim)
        return fn.Flip.apply(self, dims if self.ndim else ())      # a 0-d tensor flipped is itself

    def repeat(self, *sizes):
        """Tile the tensor sizes[i] times along dim i (torch.Tensor.repeat, numpy.tile)."""
        return composed.repeat(self, checks.sizes("repeat", arguments.sizes(sizes)))

    def repeat_interleave(self, repeats, dim=None):
        """Each element repeated ``repeats`` (an int) times along dim (the flattened tensor when None)."""
        if isinstance(repeats, int) and repeats < 0:
            raise RuntimeError(f"repeat_interleave: Repeats must be non-negative, got repeats={repeats}")
        if dim is not None:
            checks.dim("repeat_interleave", dim, self.ndim)
        return composed.repeat_interleave(self, repeats, dim)

    def unbind(self, dim=0):
        """The slices along dim, as a tuple (each with that dimension removed).  One Split, so that
        backward joins the T slice gradients once (T selects would each fill a zero tensor of x's shape)."""
        if self.shape[checks.dim("unbind", dim, self.ndim)] == 0:
            return ()                                   # split would give one empty piece
        return tuple(piece.squeeze(dim) for piece in self.split(1, dim))

    def narrow(self, dim, start, length):
        """The slice start:start+length along ``dim`` (a view in torch; here the usual slicing op)."""
        dim = checks.dim("narrow", dim, self.ndim)
        size = self.shape[dim]
        start = start + size if start < 0 else start                   # a negative start counts from the end
        if length < 0 or not 0 <= start <= size or start + length > size:
            raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({size}) "
                               f"of dim {dim}; need 0 <= length and start + length <= {size}")
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def contiguous(self):
        """Itself, or a copy laid out contiguously when it is a transposed, sliced or expanded view
        (then ``view`` works on it), as in PyTorch."""
        if self._view_of is None or self._data.flags.c_contiguous:
            return self
        return self.clone()

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def expand_as(self, other):
        return self.expand(other.shape)

    # ------------------------------------------------------------------ indexing and selection
    def tril(self, diagonal=0):
        """The lower triangle of the last two dims (j - i <= diagonal kept), zeros above it."""
        return fn.Where.apply(composed.triangle(self, diagonal, lower=True), self, 0)

    def triu(self, diagonal=0):
        """The upper triangle of the last two dims (j - i >= diagonal kept), zeros below it."""
        return fn.Where.apply(composed.triangle(self, diagonal, lower=False), self, 0)

    def gather(self, dim, index):
        """out[i][j] = self[i][index[i][j]] for dim=1 (torch.gather); gradient to the picked entries."""
        dim = checks.dim("gather", dim, self.ndim)
        return fn.Gather.apply(self, dim, index._data if isinstance(index, Tensor) else index)

    def scatter(self, dim, index, src=None, value=None):
        """A copy with src (a tensor or number; ``value=`` as torch) written at index along dim (torch.scatter)."""
        src = value if src is None else src
        return fn.Scatter.apply(self, dim, index._data if isinstance(index, Tensor) else index, src)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (smallest) entries along dim, largest first; gradient to values."""
        dim = checks.dim("topk", dim, self.ndim)
        indices = Tensor._from_array(sort_indices(self._data, dim, descending=largest, k=k))
        return return_types.topk(self.gather(dim, indices), indices)

    def sort(self, dim=-1, descending=False, *, stable=False):
        """(values, indices) sorted along dim (stable: equal values keep their order)."""
        dim = checks.dim("sort", dim, self.ndim)
        indices = Tensor._from_array(sort_indices(self._data, dim, descending=descending))
        return return_types.sort(self.gather(dim, indices), indices)

    def argsort(self, dim=-1, descending=False, *, stable=False):
        return Tensor._from_array(sort_indices(self._data, dim, descending=descending))

    def multinomial(self, num_samples, replacement=False):
        checks.positive_int("multinomial", "num_samples", num_samples, RuntimeError)     # PyTorch: n_sample <= 0
        return Tensor._from_array(multinomial_indices(self._data, num_samples, replacement))

    def index_select(self, dim, index):
        """The entries at the 1-D integer ``index`` along dim (repeats allowed: their gradients add up)."""
        index = index._data if isinstance(index, Tensor) else backend.asarray(index, device=self.device)
        if index.ndim != 1 or index.dtype.kind not in "iu":
            raise ValueError(f"index_select: index must be a 1-D integer tensor, got {index.dtype} "
                             f"of shape {tuple(index.shape)}")
        return self[(slice(None),) * checks.dim("index_select", dim, self.ndim) + (index,)]

    def masked_select(self, mask):
        """1-D tensor of the entries where ``mask`` (bool, broadcastable) is True, in row-major order."""
        return composed.masked_select(self, arguments.array_of(mask))

    def select(self, dim, index):
        """The slice at ``index`` along dim, that dimension removed (x.select(0, i) is x[i])."""
        dim = checks.dim("select", dim, self.ndim)
        if isinstance(index, int) and not -self.shape[dim] <= index < self.shape[dim]:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                             f"dimension {dim}")
        return self[(slice(None),) * dim + (index,)]

    def nonzero(self):
        """(n, ndim) int64 indices of the non-zero elements, in row-major order (no gradient)."""
        xp = backend.array_module(self._data)
        return Tensor._from_array(xp.stack(xp.nonzero(self._data), axis=-1).astype("int64"))

    # ------------------------------------------------------------------ new tensors like this one
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A new leaf tensor from ``data``, with this tensor's dtype and device unless given."""
        return Tensor._new_leaf(data, requires_grad, dtype or self.dtype, device or self.device)

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
    device = backend.normalize_device(device)
    data = backend.get_module(device).full(checks.sizes("new_full", arguments.sizes(size)), value, dtype=dtype)
    return Tensor._from_array(data).requires_grad_(requires_grad)      # a new array: no copy
