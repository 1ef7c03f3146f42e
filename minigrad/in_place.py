"""In-place changes of a tensor (x[i] = v, x.add_(y), x.zero_(), ...) and the views they reach.

An in-place operation changes the tensor's values and, when a graph is being
recorded, its graph node (as in PyTorch): afterwards ``x.grad_fn`` is the
operation's node, whose inputs are the old value (a stand-in Tensor that keeps
the old node) and the operands.  The version counter goes up either way, so a
node that saved the old values raises at backward instead of using them.

A view (x[1:], x.reshape(...)) shares its base's storage and version counter;
an in-place change of an index view is written into the base by index.

The Tensor methods (``__setitem__``, ``add_``, ``masked_fill_``, ...; the rest in
in_place_methods.py) are one call of ``write`` (or ``reshape``) each; this module works on
Tensors, which it knows by the engine's base class (``autograd.TensorBase``) as Function.apply does.
"""
from . import autograd, backend
from . import functions as fn
from .functions.shape import is_basic_index

def write(tensor, op, function, *args, reads_old_values=False):
    """tensor <- function(tensor, *args), in place; returns tensor.  ``op`` names it in errors.

    reads_old_values: the Function's backward reads its first input (mul_, div_),
    so the stand-in gets a copy of the old values rather than the storage about
    to be overwritten.
    """
    recording = autograd.is_grad_enabled() and tensor.dtype.kind in "fc" and (
        tensor.requires_grad or any(isinstance(a, autograd.TensorBase) and a.requires_grad for a in args))
    guard_saved_output(tensor)
    if not recording:
        result = function.apply(tensor, *args)
        _check_castable(op, result, tensor)
        tensor._version[0] += 1
        if result._data is not tensor._data:
            tensor._data[...] = result._data
        return tensor
    if tensor.grad_fn is None and tensor.requires_grad:
        raise RuntimeError(
            f"{op}: a leaf tensor that requires grad is being changed in place while gradients are "
            "recorded. Change it inside `with minigrad.no_grad():` (as optimizers and nn.init do), or "
            "compute a new tensor (x = x.masked_fill(...), y = x.clone(); y[i] = v)."
        )
    if tensor._view_of is not None:
        return write_through_view(tensor, op, function, args)
    is_view = tensor._data.base is not None      # an op's output inside a buffer no other tensor holds
    old = _stand_in(tensor, tensor._data.copy() if reads_old_values or is_view else tensor._data)
    result = function.apply(old, *args)
    if is_view:       # it gets storage of its own (no other tensor sees that buffer)
        tensor._data = result._data.astype(tensor.dtype, copy=False)
        tensor._version = [1]
    else:
        tensor._version[0] += 1
        if result._data is not tensor._data:
            tensor._data[...] = result._data
    _rebase(tensor, result.grad_fn)
    return tensor


class Computed:
    """Stands in for a Function in ``write``: Computed(lambda x: x.exp()) runs as Exp.apply would,
    so an in-place method (exp_) reuses the forward and backward of the out-of-place one (exp)."""

    def __init__(self, compute):
        self.compute = compute

    def apply(self, tensor, *args):
        return self.compute(tensor, *args)


def reshape(tensor, op, view_of):
    """tensor becomes view_of(tensor), a view with another shape (unsqueeze_, transpose_, ...): the
    same storage; while gradients are recorded, the view's node becomes tensor's (as in write)."""
    if tensor.grad_fn is None and tensor.requires_grad and autograd.is_grad_enabled():
        raise RuntimeError(f"{op}: a leaf tensor that requires grad cannot change shape in place while "
                           f"gradients are recorded (as in PyTorch): use x = x.{op[:-1]}(...)")
    if tensor.grad_fn is None or not autograd.is_grad_enabled():
        tensor._data = view_of(tensor)._data
        return tensor
    result = view_of(_stand_in(tensor, tensor._data))
    tensor._data = result._data
    _rebase(tensor, result.grad_fn)
    return tensor


def _check_castable(op, result, tensor):
    """PyTorch refuses to write a float result into an integer tensor (or an integer into a bool one)."""
    order = "biuf"
    if order.index(result.dtype.kind if result.dtype.kind in order else "f") > order.index(tensor.dtype.kind) \
            and not (result.dtype.kind in "iu" and tensor.dtype.kind in "iu"):
        raise RuntimeError(f"{op}: result type {result.dtype} can't be cast to the tensor's type {tensor.dtype} "
                           f"(as in PyTorch): compute out of place (y = x.float().{op[:-1]}(...))")


def write_through_view(view, op, function, args):
    """An in-place change of a view x[index], recorded as PyTorch does: the new values are
    written into x by index (x's node becomes a SetItem), and the view becomes x[index] again."""
    base, index = view._view_of
    if view.grad_fn is not None and view.grad_fn.function is fn.GetItem:
        view.grad_fn.versions = []      # it reads no values of base; base's node is kept for it
    if index is None:
        raise RuntimeError(
            f"{op}: in-place change, while gradients are recorded, of a view made by reshape/view/"
            "permute/transpose/expand/split. minigrad passes such a change on to the tensor it views "
            "only for index views (x[1:], x[:, 0]): write into that tensor by index, or .clone() "
            "the view first."
        )
    base[index] = function.apply(_stand_in(view, view._data.copy()), *args)  # into the shared storage
    _rebase(view, base[index].grad_fn)
    return view


def set_item(tensor, index, value):
    """tensor[index] = value, ``index`` already holding arrays (see Tensor.__setitem__)."""
    if isinstance(value, autograd.TensorBase) and value._view_of is not None and value._view_of[0] is tensor \
            and is_basic_index(index) and is_basic_index(value._view_of[1]) and value._view_of[1] == index:
        return      # x[i] += v: the in-place change of the view x[i] has already written into x
    write(tensor, "__setitem__", fn.SetItem, index, operand(tensor, value))


def operand(tensor, value):
    """A Tensor or Python number as it is; anything else (list, array) as an array on tensor's device."""
    if isinstance(value, (autograd.TensorBase, bool, int, float)):
        return value
    return backend.asarray(value, dtype=tensor.dtype, device=tensor.device)


def mark_view(base, result, index=None):
    """If ``result`` shares base's storage it is a view of base, as in PyTorch: the two share a
    version counter, and an in-place change of ``result`` reaches base (see write_through_view).
    ``index`` is the index that picked result (None for reshape, permute, ...)."""
    if result._data is not base._data and backend.array_module(base._data).may_share_memory(result._data, base._data):
        result._version = base._version
        result._view_of = (base, index)
    return result


def guard_saved_output(tensor):
    """If the node that made tensor (or the tensor it views) saved that array (exp, tanh and
    softmax save their output), make its backward check the version too: after this in-place
    change it raises instead of using the new values."""
    while tensor is not None:
        node = tensor.grad_fn
        for saved in (() if node is None else node.saved_tensors):
            if saved is tensor._data or getattr(saved, "base", None) is tensor._data:
                node.versions.append((tensor._version, tensor._version[0]))
                break
        tensor = None if tensor._view_of is None else tensor._view_of[0]


def node_before(tensor, sequence):
    """(grad_fn, output index) ``tensor`` had when the node numbered ``sequence`` used it."""
    for changed_at, node, index in tensor._history:
        if sequence < changed_at:
            return node, index
    return tensor.grad_fn, tensor._output_index


def _rebase(tensor, node):
    """Make ``node`` (output 0) tensor's grad_fn; nodes that used the tensor before keep the node
    it had then (the engine asks node_before), so the recorded graph stays as it was."""
    tensor._history = (tensor._history or []) + [(node.sequence, tensor.grad_fn, tensor._output_index)]
    tensor.grad_fn, tensor._output_index, tensor.requires_grad = node, 0, True


def _stand_in(tensor, data):
    """A Tensor holding ``data`` in tensor's place in the graph (its node, its requires_grad), with a
    fresh version counter: the node made from it reads no values the in-place change overwrites."""
    old = tensor._from_array(data, tensor.grad_fn, tensor._output_index)
    old.requires_grad = tensor.requires_grad
    return old
