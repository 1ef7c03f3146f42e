"""What ``t.grad`` is, and what happens when a backward reaches ``t`` (as in PyTorch).

``t.grad`` is a Tensor of t's shape, dtype and device that does not require grad, or None.
The engine (autograd.backward) hands each tensor its gradient once per backward, summed over
the tensor's uses, through ``receive``:

    1. the hooks registered with ``t.register_hook(hook)`` see it, in the order they were
       registered; a hook may return a new gradient that replaces it;
    2. a leaf adds it into ``t.grad``: the first time into a copy (the engine's array may be
       shared with other gradients), after that in place into .grad's own storage, so a
       ``g = p.grad`` read before a second backward stays ``p.grad`` and shows the sum;
       a non-leaf that called ``retain_grad()`` keeps it out of place (a new Tensor each time).

Both rules are PyTorch's.  Tensor's methods ``grad``, ``register_hook`` and ``retain_grad`` call
this module; it knows tensors by the engine's base class, as in_place.py does.
"""
import itertools
import warnings

from . import autograd

NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
    "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
    "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead."
)


class Hooks:
    """A tensor's gradient hooks ({handle id: hook}, in order) and whether it keeps its gradient
    (``retain_grad()`` on a non-leaf); a tensor has one only after register_hook or retain_grad."""

    def __init__(self):
        self.functions = {}
        self.retains_grad = False


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` takes the hook out (as torch.utils.hooks'
    handle; ``with t.register_hook(hook):`` removes it at the end of the block)."""

    next_id = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle.next_id)

    def remove(self):
        self.hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.remove()


def read(tensor):
    """``t.grad``; on a non-leaf that did not call retain_grad() it is None, and reading it warns, as PyTorch's."""
    if tensor._grad is None and tensor.grad_fn is not None and not retains_grad(tensor):
        warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=3)
    return tensor._grad


def checked(tensor, grad):
    """``t.grad = grad``: None, or a Tensor of t's shape, dtype and device (PyTorch's checks and words)."""
    if grad is None:
        return None
    if not isinstance(grad, autograd.TensorBase):
        kind = type(grad)
        raise TypeError(f"t.grad = value: assigned grad expected to be a Tensor or None but got grad of type "
                        f"{kind.__module__}.{kind.__qualname__}; wrap an array with minigrad.tensor(array)")
    if grad.shape != tensor.shape:
        raise RuntimeError(f"t.grad = value: attempting to assign a gradient of size '{list(grad.shape)}' to a tensor "
                           f"of size '{list(tensor.shape)}'. Please ensure that the gradient and the tensor are the "
                           "same size")
    if grad.dtype != tensor.dtype:
        raise RuntimeError(f"t.grad = value: attempting to assign a gradient with dtype '{grad.dtype}' to a tensor "
                           f"with dtype '{tensor.dtype}': convert it first (value.to(minigrad.{tensor.dtype}))")
    if grad.device != tensor.device:
        raise RuntimeError(f"t.grad = value: attempting to assign a gradient with device type '{grad.device}' to a "
                           f"tensor with device type '{tensor.device}'. Please ensure that the gradient and the "
                           "tensor are on the same device")
    return grad


def receive(tensor, grad):
    """dL/d(tensor), complete for this backward, reaches ``tensor`` (a leaf, or a non-leaf with hooks or
    retain_grad()): hooks first, then kept in .grad (see the module's docstring).  Returns the
    gradient to pass on, which a hook may have replaced."""
    hooks = tensor._hooks
    if hooks is not None and hooks.functions:
        grad = run_hooks(tensor, hooks, grad)
    if tensor.grad_fn is None:                      # a leaf: add into .grad
        old = tensor._grad
        if old is None:
            tensor._grad = tensor._from_array(grad.copy())
        else:
            old._data += grad                       # in place, into .grad's own storage (as PyTorch)
            old._version[0] += 1                    # a graph that saved .grad's old values notices
    elif hooks.retains_grad:                        # a non-leaf: a new Tensor each time (as PyTorch)
        old = tensor._grad
        tensor._grad = tensor._from_array(grad.copy() if old is None else old._data + grad)
    return grad


def run_hooks(tensor, hooks, grad):
    """grad through each hook: hook(grad as a Tensor) returns None (keep it) or the gradient to use instead."""
    for hook in list(hooks.functions.values()):
        result = hook(tensor._from_array(grad))
        if result is None:
            continue
        name = getattr(hook, "__name__", type(hook).__name__)
        if not isinstance(result, autograd.TensorBase):
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}': the hook {name} "
                            "given to register_hook must return a Tensor (the new gradient) or None")
        if result.shape != tuple(grad.shape):
            raise RuntimeError(f"hook '{name}' has changed the size of value: it returned a gradient of shape "
                               f"{result.shape} for a tensor of shape {tuple(grad.shape)}")
        if result.dtype != grad.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.dtype} got {result.dtype})")
        grad = result._data
    return grad


def watched(tensor):
    """tensor's Hooks, made on first use; a non-leaf's node learns of it, so that the engine
    hands the tensor its gradient before running the node's backward."""
    if tensor._hooks is None:
        tensor._hooks = Hooks()
    node = tensor.grad_fn
    if node is not None:
        if node.watched is None:
            node.watched = {}
        node.watched[tensor._output_index] = tensor
    return tensor._hooks


def register_hook(tensor, hook):
    """t.register_hook(hook): see Tensor.register_hook."""
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient: "
                           "call t.requires_grad_() first, or register the hook on a tensor computed from it")
    functions = watched(tensor).functions
    handle = RemovableHandle(functions)
    functions[handle.id] = hook
    return handle


def retains_grad(tensor):
    """True if retain_grad() was called on this non-leaf tensor (as torch's ``retains_grad``)."""
    return tensor.grad_fn is not None and tensor._hooks is not None and tensor._hooks.retains_grad
