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

When no gradient is wanted (inside ``no_grad``, or no input requires grad),
``Function.apply`` runs the forward and nothing else: no node, nothing saved.
That one switch (DeZero's ``enable_backprop``) is what makes inference cheap,
so every layer has one forward for training and decoding alike.

Module-level state: ``_sequence`` (numbers the nodes); grad mode is grad_mode.py's.  The engine
knows tensors as ``TensorBase``, the base class of tensor.py's Tensor, which it never imports.
"""
import heapq
import itertools
import warnings

from . import backend, grad_mode
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401

_sequence = itertools.count()   # numbers the graph nodes in creation order (see backward)

ONE_OUTPUT = (None,)            # outputs_meta of a one-output node: nothing to zero-fill


class TensorBase:
    """What the engine knows of a tensor; minigrad.Tensor (tensor.py) is its one subclass.

    The engine reads ``_data`` (the array), ``requires_grad``, ``grad_fn`` (the node that made
    it, None for a leaf), ``_output_index`` (which output of that node), ``_version`` and
    ``_history`` (in-place changes, in_place.py), and calls ``_receive_gradient(grad)`` on a leaf
    and on an output with hooks (gradients.py), ``_from_array(array, node, index)`` to wrap an output.
    """

    __slots__ = ()


class GraphError(RuntimeError):
    """A backward that cannot be run: a freed graph, or an input changed in place."""


class Context:
    """One node of the graph: what a Function's backward needs.

    inputs:            for each argument of forward, the Tensor if it needs a gradient, else None
    needs_input_grad:  tuple of booleans, one per argument of forward (requires_grad, as torch's)
    recording:         True when this context becomes a node (grad mode on, some input needs a gradient)
    saved_tensors:     the arrays the forward kept with ``save_for_backward`` (none when not recording)

    and the engine's own bookkeeping:

    sequence:          creation number (a node is made after the nodes of its inputs)
    versions:          (counter, value) of each Tensor argument when forward read it,
                       to detect a later in-place change
    outputs_meta:      (shape, dtype) of each output of a multi-output node, to zero-fill a
                       missing gradient; ONE_OUTPUT for a node with one output
    watched:           {output index: Tensor} for outputs with hooks or retain_grad() (gradients.py)
    freed:             True once a backward without retain_graph dropped saved_tensors
    """

    __slots__ = ("function", "inputs", "needs_input_grad", "recording", "saved_tensors",
                 "sequence", "versions", "outputs_meta", "watched", "freed", "__dict__")

    def __init__(self, function, needs_input_grad, recording):
        self.function = function
        self.inputs = None
        self.needs_input_grad = needs_input_grad
        self.recording = recording
        self.saved_tensors = ()
        self.watched = None
        self.freed = False

    def save_for_backward(self, *arrays):
        if self.recording:                      # no node, no backward: nothing to keep
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

    ``reads_input_values = False`` says that backward reads no values of the Tensor inputs
    (only shapes, indices, masks) and that the output never shares an input's memory: as
    torch, which checks only the tensors a backward saved, changing such an input in place
    after the forward is then allowed (its node skips the version check).
    """

    reads_input_values = True

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *douts):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on the arrays inside ``args``; record a graph node if a gradient is wanted.

        1. one pass over the arguments collects the arrays forward receives and
           ``needs_input_grad`` (each argument's requires_grad, as torch's ctx);
        2. forward;
        3. only when a gradient is wanted (grad mode on and some input requires grad): the node,
           with its parent tensors and the version counters the in-place check reads.
        Otherwise the outputs are plain Tensors and the context, which saved nothing, is dropped.
        """
        arrays = []         # what forward receives: each Tensor's array, other arguments as given
        needs = []          # per argument: does it need a gradient?
        like = None         # the first Tensor argument: its _from_array wraps the outputs
        for arg in args:
            if isinstance(arg, TensorBase):
                if like is None:
                    like = arg
                elif type(arg._data) is not type(like._data):        # DeviceError, naming both devices
                    backend.array_module(*(a._data for a in args if isinstance(a, TensorBase)))
                arrays.append(arg._data)
                needs.append(arg.requires_grad)
            else:
                arrays.append(arg)
                needs.append(False)
        if like is None:
            raise TypeError(f"{cls.__name__}.apply: needs at least one Tensor argument, got only "
                            f"{', '.join(type(a).__name__ for a in args)}")
        needs = tuple(needs)
        ctx = Context(cls, needs, grad_mode.enabled and True in needs)
        try:
            output = cls.forward(ctx, *arrays)
        except ValueError as error:
            op, colon, _ = str(error).partition(": ")
            if colon and op == op.lower() and op.replace("_", "").replace(".", "").isalpha():
                raise                           # "cross_entropy: ...": the op's own check; one prefix per message
            shapes = ", ".join(str(tuple(a.shape)) for a in arrays if hasattr(a, "shape"))
            raise ValueError(f"{cls.__name__}: inputs of shapes {shapes}: {error}") from None
        multiple = type(output) is tuple
        if not ctx.recording:                   # no gradient wanted: no node
            if multiple:
                return tuple([like._from_array(o) for o in output])
            return like._from_array(output)
        ctx.inputs = tuple([arg if need else None for arg, need in zip(args, needs)])
        ctx.sequence = next(_sequence)
        ctx.versions = [(arg._version, arg._version[0]) for arg in args
                        if cls.reads_input_values and isinstance(arg, TensorBase)]
        if multiple:
            ctx.outputs_meta = [(o.shape, o.dtype) for o in output]
            return tuple(like._from_array(o, ctx, i) for i, o in enumerate(output))
        ctx.outputs_meta = ONE_OUTPUT
        return like._from_array(output, ctx, 0)


def backward(tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Add dL/dx into ``x.grad`` for every leaf x that requires grad (``tensor.backward()``).

    ``gradient`` is dL/d(tensor) (a Tensor or array of tensor's shape; ones when it
    is omitted, which only a one-element tensor allows).

    Order: every node was created after the nodes that produced its inputs, so taking nodes
    newest first (a heap keyed on the creation number) reaches a node only after all the nodes
    that send it gradient.  That is a topological order, found without a separate sort and
    without recursion (an unrolled RNN has thousands of nodes).  ``pending`` holds, for each node
    reached but not yet run, dL/d(each of its outputs) summed over uses; ``leaves`` the same for
    each leaf, handed over once (to its hooks, then into .grad) when the walk is done.
    """
    if create_graph or inputs is not None:
        raise NotImplementedError("backward(): create_graph and inputs are not implemented in minigrad "
                                  "(no higher-order gradients); use the default backward()")
    if not tensor.requires_grad:
        raise RuntimeError("backward(): this tensor does not require grad and has no grad_fn. Did you create the "
                           "inputs with requires_grad=True, or compute it under no_grad()?")
    grad, retain_graph = _output_gradient(tensor, gradient), bool(retain_graph)
    root = tensor.grad_fn
    if root is None:            # a leaf: its gradient is grad itself
        tensor._receive_gradient(grad)
        return
    pending, leaves = {root: [None] * len(root.outputs_meta)}, {}
    pending[root][tensor._output_index] = grad
    heap = [(-root.sequence, root)]
    while heap:
        node = heapq.heappop(heap)[1]
        douts = pending.pop(node)
        if node.freed:
            raise GraphError(f"backward through {node.name()} a second time: its saved values were freed by the first "
                             "backward. Pass retain_graph=True to the first .backward() if you need to call it twice.")
        for counter, value in node.versions:
            if counter[0] != value:
                raise GraphError(f"backward of {node.name()}: one of its inputs (or its output) was modified in "
                                 "place after the forward used it, so its saved values are stale. Use an out-of-"
                                 "place operation (y = x * 2 instead of x.mul_(2)), or clone the tensor first.")
        if node.watched is not None:     # outputs with hooks (which may replace it) or retain_grad()
            for index, output in node.watched.items():
                if douts[index] is not None:
                    douts[index] = output._receive_gradient(douts[index])
        if len(douts) > 1:
            _zero_fill(node, douts)
        grads = node.function.backward(node, *douts)
        if type(grads) is not tuple:
            grads = (grads,)
        if len(grads) != len(node.inputs):
            raise GraphError(f"backward of {node.name()} returned {len(grads)} gradient(s), but its forward takes "
                             f"{len(node.inputs)} argument(s): a backward must return one entry per argument of "
                             "forward, in order (None for an argument that gets no gradient)")
        if not retain_graph:
            node.saved_tensors = ()
            node.freed = True
        for parent, dinput in zip(node.inputs, grads):
            if parent is None or dinput is None:
                continue
            if dinput.shape != parent._data.shape:
                raise GraphError(f"backward of {node.name()} returned a gradient of shape {tuple(dinput.shape)} for an "
                                 f"input of shape {parent.shape}: a backward must return one gradient per input, of "
                                 "that input's shape")
            if backend.NUMBERS_SET_0D_DTYPES and dinput.dtype != parent._data.dtype:
                dinput = dinput.astype(parent._data.dtype)      # NumPy < 2: 1 - y * y on 0-d float32 is float64
            parent_node, index = parent.grad_fn, parent._output_index
            if parent._history is not None:   # changed in place later: the node it had when used here
                parent_node, index = parent._node_before(node.sequence)
            if parent_node is None:     # a leaf: summed over its uses, handed over at the end
                leaves[parent] = dinput if parent not in leaves else leaves[parent] + dinput   # never in place
                continue
            slots = pending.get(parent_node)
            if slots is None:           # first gradient to reach this node: schedule it
                slots = pending[parent_node] = [None] * len(parent_node.outputs_meta)
                heapq.heappush(heap, (-parent_node.sequence, parent_node))
            slots[index] = dinput if slots[index] is None else slots[index] + dinput   # never in place
    for leaf, grad in leaves.items():
        leaf._receive_gradient(grad)


def Variable(data, requires_grad=False, volatile=False):
    """Deprecated since PyTorch 0.4, where Variable became Tensor; kept for old tutorials, as torch keeps it:
    a new leaf sharing data's storage (data.detach().requires_grad_(requires_grad)), a Tensor."""
    if not isinstance(data, TensorBase):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    if volatile:
        warnings.warn("volatile was removed and now has no effect. Use `with minigrad.no_grad():` instead.")
    return data.detach().requires_grad_(requires_grad)


def _output_gradient(tensor, gradient):
    """dL/d(tensor) as an array of tensor's shape: ``gradient``, or ones for a one-element tensor."""
    if gradient is None:
        if tensor._data.size != 1:
            raise RuntimeError(f"backward(): grad can be implicitly created only for a tensor with one element, this "
                               f"one has shape {tensor.shape}. Reduce it first (loss.sum(), loss.mean()) or pass "
                               f"gradient=<array of shape {tensor.shape}>")
        return backend.array_module(tensor._data).ones(tensor._data.shape, dtype=tensor.dtype)
    grad = gradient._data if isinstance(gradient, TensorBase) else backend.asarray(gradient, tensor.dtype, tensor.device)
    if tuple(grad.shape) != tensor.shape:
        raise ValueError(f"backward(): grad has shape {tuple(grad.shape)}, expected {tensor.shape}")
    return grad


def _zero_fill(node, douts):
    """Zeros for the outputs of a multi-output node that received no gradient."""
    xp = backend.array_module(*[d for d in douts if d is not None])
    for index, dout in enumerate(douts):
        if dout is None:
            shape, dtype = node.outputs_meta[index]
            douts[index] = xp.zeros(shape, dtype=dtype)


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

