"""Reverse-mode automatic differentiation.

Every operation is a ``Function`` with a ``forward`` on arrays and a hand-written
``backward``.  ``Function.apply`` runs the forward and, when gradients are
wanted, records a ``Context`` node: the function, its input tensors and what
the forward saved.  ``backward`` then walks these nodes from the output back
to the leaves in reverse topological order, applying the chain rule

    dL/dx = sum over the uses y of x of  (dL/dy) (dy/dx)

one node at a time.  Gradients arriving at the same tensor from several uses
are added (``a + b``, never in place), which is why a tensor used twice gets
the sum of both contributions.
"""
import contextlib

from . import backend

_grad_enabled = True


class GraphError(RuntimeError):
    """A backward that cannot be run: a freed graph, or an input changed in place."""


def is_grad_enabled():
    return _grad_enabled


class _GradMode(contextlib.ContextDecorator):
    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        global _grad_enabled
        self.previous = _grad_enabled
        _grad_enabled = self.enabled

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self.previous
        return False


def no_grad():
    """Context manager and decorator: operations inside record no graph."""
    return _GradMode(False)


def enable_grad():
    """Context manager and decorator: record the graph even inside ``no_grad``."""
    return _GradMode(True)


class Context:
    """One node of the graph: what a Function's backward needs.

    inputs:            for each argument of forward, the Tensor if it needs a
                       gradient, else None
    needs_input_grad:  tuple of booleans, one per argument of forward
    saved_tensors:     the arrays the forward kept with ``save_for_backward``
    """

    __slots__ = ("function", "inputs", "needs_input_grad", "saved_tensors",
                 "versions", "outputs_meta", "retained", "freed", "__dict__")

    def __init__(self, function, inputs, needs_input_grad):
        self.function = function
        self.inputs = inputs
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()
        self.versions = None
        self.outputs_meta = None
        self.retained = None
        self.freed = False

    def save_for_backward(self, *arrays):
        self.saved_tensors = arrays

    def name(self):
        return self.function.__name__


class Function:
    """Base class of every differentiable operation.

    Subclasses define two static methods:

        forward(ctx, *args)  -> array or tuple of arrays
            ``args`` are arrays where the caller passed Tensors, and plain
            values (axes, shapes, flags) as given.
        backward(ctx, *douts) -> tuple with one gradient array (or None) per arg
            ``douts`` holds dL/d(output) for each output, zeros for outputs
            that received no gradient.

    and are called through ``SomeFunction.apply(*args)``.
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *douts):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        arrays = []
        parents = []
        needs = []
        any_needs = False
        for arg in args:
            if isinstance(arg, Tensor):
                arrays.append(arg.data)
                need = arg.requires_grad
                parents.append(arg if need else None)
                needs.append(need)
                any_needs = any_needs or need
            else:
                arrays.append(arg)
                parents.append(None)
                needs.append(False)
        record = any_needs and _grad_enabled
        ctx = Context(cls, tuple(parents), tuple(needs))
        try:
            output = cls.forward(ctx, *arrays)
        except ValueError as error:
            shapes = ", ".join(str(tuple(a.shape)) for a in arrays if hasattr(a, "shape"))
            raise ValueError(f"{cls.__name__}: inputs of shapes {shapes}: {error}") from None
        multiple = isinstance(output, tuple)
        outputs = output if multiple else (output,)
        if not record:
            results = tuple(Tensor._from_array(o) for o in outputs)
            return results if multiple else results[0]
        ctx.versions = tuple((t._version, t._version[0]) for t in parents if t is not None)
        ctx.outputs_meta = tuple((o.shape, o.dtype) for o in outputs)
        results = tuple(Tensor._from_array(o, ctx, i) for i, o in enumerate(outputs))
        return results if multiple else results[0]


def _check_versions(ctx):
    for counter, value in ctx.versions:
        if counter[0] != value:
            raise GraphError(
                f"backward of {ctx.name()}: one of its inputs was modified in place after "
                "the forward used it, so its saved values are stale. Use an out-of-place "
                "operation (y = x * 2 instead of x.mul_(2)), or clone the tensor first."
            )


def _topological_order(root_node):
    """Nodes reachable from ``root_node``, each after every node it feeds (iterative DFS)."""
    order = []
    visited = set()
    stack = [(root_node, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for parent in node.inputs:
            if parent is not None and parent.grad_fn is not None and parent.grad_fn not in visited:
                stack.append((parent.grad_fn, False))
    order.reverse()  # root first
    return order


def backward(tensor, grad, retain_graph=False):
    """Accumulate dL/dx into ``x.grad`` for every leaf x that requires grad.

    ``grad`` is dL/d(tensor) (an array of tensor's shape).
    """
    root = tensor.grad_fn
    if root is None:
        if tensor.requires_grad:  # a leaf: its gradient is grad itself
            tensor._accumulate(grad)
        return
    pending = {root: [None] * len(root.outputs_meta)}
    pending[root][tensor._output_index] = grad
    for node in _topological_order(root):
        douts = pending.pop(node, None)
        if douts is None:
            continue
        if node.freed:
            raise GraphError(
                f"backward through {node.name()} a second time: its saved values were "
                "freed by the first backward. Pass retain_graph=True to the first "
                ".backward() if you need to call it twice."
            )
        _check_versions(node)
        if node.retained is not None:
            for index, retained in node.retained.items():
                if douts[index] is not None:
                    retained._accumulate(douts[index])
        xp = None
        for index, dout in enumerate(douts):
            if dout is None:
                xp = xp or backend.array_module(*(d for d in douts if d is not None))
                shape, dtype = node.outputs_meta[index]
                douts[index] = xp.zeros(shape, dtype=dtype)
        grads = node.function.backward(node, *douts)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if not retain_graph:
            node.saved_tensors = ()
            node.freed = True
        for parent, dinput in zip(node.inputs, grads):
            if parent is None or dinput is None:
                continue
            if dinput.shape != parent.shape:
                raise GraphError(
                    f"backward of {node.name()} returned a gradient of shape {tuple(dinput.shape)} "
                    f"for an input of shape {parent.shape}: a backward must return one "
                    "gradient per input, of that input's shape"
                )
            parent_node = parent.grad_fn
            if parent_node is None:
                parent._accumulate(dinput)
                continue
            slots = pending.get(parent_node)
            if slots is None:
                slots = pending[parent_node] = [None] * len(parent_node.outputs_meta)
            previous = slots[parent._output_index]
            slots[parent._output_index] = dinput if previous is None else previous + dinput


def unbroadcast(grad, shape):
    """Sum ``grad`` over the dimensions that broadcasting added or stretched, back to ``shape``.

    If y = f(x) broadcast x from ``shape`` to grad.shape, each element of x was
    used once per copy, so dL/dx sums dL/dy over the copies.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


# Tensor is defined on top of Function, so it is imported last.
from .tensor import Tensor  # noqa: E402
