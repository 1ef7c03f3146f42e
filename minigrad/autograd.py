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

Module-level state: ``_grad_enabled`` (what ``no_grad`` switches, process-wide
as in torch), ``_sequence`` (numbers the nodes), and ``Tensor``, the class the
engine wraps its outputs in, handed over once by tensor.py (``use_tensor_class``):
Tensor is built on Function, so the engine cannot import it.
"""
import contextlib
import heapq
import itertools

from . import backend

_grad_enabled = True
_sequence = itertools.count()   # numbers the graph nodes in creation order (see backward)

# The class the engine wraps arrays in.  Tensor is built on top of Function, so
# the engine does not import it: tensor.py hands it over with use_tensor_class.
Tensor = None

ONE_OUTPUT = (None,)            # outputs_meta of a one-output node: nothing to zero-fill


def use_tensor_class(tensor_class):
    """Called once by tensor.py: ``Function.apply`` takes and returns instances of this class."""
    global Tensor
    Tensor = tensor_class


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


def inference_mode(mode=True):
    """As ``no_grad()`` (minigrad has no separate inference tensors); inference_mode(False) records."""
    return _GradMode(not mode)


class set_grad_enabled(_GradMode):
    """set_grad_enabled(False) stops recording at once; in a ``with``, only until the block ends."""

    def __init__(self, mode):
        global _grad_enabled
        super().__init__(bool(mode))
        self.previous, _grad_enabled = _grad_enabled, bool(mode)

    def __enter__(self):
        global _grad_enabled
        _grad_enabled = self.enabled       # previous was kept when the switch was made


class Context:
    """One node of the graph: what a Function's backward needs.

    inputs:            for each argument of forward, the Tensor if it needs a
                       gradient, else None (None when apply made no node)
    needs_input_grad:  tuple of booleans, one per argument of forward
    saved_tensors:     the arrays the forward kept with ``save_for_backward``
    retain_graph:      during backward: True if the saved arrays must survive it (a
                       backward may reuse a saved array's memory only when this is False)

    and the engine's own bookkeeping:

    sequence:          creation number (a node is made after the nodes of its inputs)
    versions:          (counter, value) of each Tensor argument when forward read it,
                       to detect a later in-place change
    outputs_meta:      (shape, dtype) of each output of a multi-output node, to zero-fill a
                       missing gradient; ONE_OUTPUT for a node with one output (a node runs
                       only once a gradient reached it, so its only one is never missing)
    retained:          {output index: Tensor} for outputs that called retain_grad()
    freed:             True once a backward without retain_graph dropped saved_tensors
    """

    __slots__ = ("function", "inputs", "needs_input_grad", "saved_tensors", "retain_graph",
                 "sequence", "versions", "outputs_meta", "retained", "freed", "__dict__")

    def __init__(self, function, inputs, needs_input_grad):
        self.function = function
        self.inputs = inputs
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()
        self.retain_graph = True
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

    A Function whose backward reads no values of its Tensor inputs (only shapes,
    indices, masks) and whose output never shares an input's memory sets
    ``reads_input_values = False``: its node then does not check their version
    counters, so changing an input in place afterwards is fine.  (A Function that
    can return a view, such as Reshape or GetItem, keeps the check: it is what
    stops a view from being used after its base changed under it.)

    A Function whose backward returns arrays made for this call alone (the result of a
    product or a sum: never dout, a saved array, a view of one, or one array twice) sets
    ``new_gradients = True``: a leaf's first gradient from it then becomes its ``.grad``
    without a copy, when the array owns its memory (``base is None``), as torch takes a
    gradient that nothing else references.  (Linear: the core suite's MLP step 5-9% faster,
    with SGD 4%, with Adam 0-2%; A/B in one process, Intel Xeon, one thread.)
    """

    reads_input_values = True
    new_gradients = False

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *douts):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on the arrays inside ``args``; record a graph node if a gradient is wanted.

        This runs for every operation, so it is kept lean, in three steps:
        1. one pass over the arguments collects the arrays forward receives and
           ``needs_input_grad`` (each argument's requires_grad, as torch's ctx);
        2. forward;
        3. only when a node is made (grad mode on and some input requires grad), a
           second pass collects the parent tensors and the version counters the
           in-place check reads (forward changes no version, so they are the values it read).
        No_grad inference and code whose inputs need no gradient skip step 3.  (A chain of 1000
        ops on 4 elements, one thread: see benchmarks/results/20261127-issue22-session5.md.)
        """
        arrays = []         # what forward receives: each Tensor's array, other arguments as given
        needs = []          # per argument: does it need a gradient? (requires_grad, as torch's ctx)
        array_type = None
        for arg in args:
            if isinstance(arg, Tensor):
                data = arg._data
                if type(data) is not array_type:
                    if array_type is not None:
                        _check_same_device(args)
                    array_type = type(data)
                arrays.append(data)
                needs.append(arg.requires_grad)
            else:
                arrays.append(arg)
                needs.append(False)
        needs = tuple(needs)
        ctx = Context(cls, None, needs)
        try:
            output = cls.forward(ctx, *arrays)
        except ValueError as error:
            if _names_its_op(str(error)):       # "cross_entropy: ...": the op's own check; one prefix per message
                raise
            shapes = ", ".join(str(tuple(a.shape)) for a in arrays if hasattr(a, "shape"))
            raise ValueError(f"{cls.__name__}: inputs of shapes {shapes}: {error}") from None
        multiple = type(output) is tuple
        if not (_grad_enabled and True in needs):   # nothing to differentiate: no node
            if multiple:
                return tuple([Tensor._from_array(o) for o in output])
            return Tensor._from_array(output)
        parents = []        # per argument: the Tensor if it needs a gradient, else None
        versions = []       # (counter, value) of every Tensor argument, for the in-place check
        for arg, need in zip(args, needs):
            parents.append(arg if need else None)
            if isinstance(arg, Tensor):
                versions.append((arg._version, arg._version[0]))
        ctx.inputs = tuple(parents)
        ctx.sequence = next(_sequence)
        ctx.versions = versions if cls.reads_input_values else []
        if multiple:
            ctx.outputs_meta = [(o.shape, o.dtype) for o in output]
            return tuple(Tensor._from_array(o, ctx, i) for i, o in enumerate(output))
        ctx.outputs_meta = ONE_OUTPUT
        return Tensor._from_array(output, ctx, 0)


def _check_same_device(args):
    """Raise DeviceError, naming both devices, if the Tensor arguments live on different devices."""
    backend.array_module(*(arg._data for arg in args if isinstance(arg, Tensor)))


def _names_its_op(message):
    """True for minigrad's own messages, "op_name: what is wrong ...": they need no second prefix."""
    name, colon, _ = message.partition(": ")
    return bool(colon) and name.replace("_", "").replace(".", "").isalpha() and name == name.lower()


def _stale_input_error(node):
    return GraphError(
        f"backward of {node.name()}: one of its inputs (or its output) was modified in place "
        "after the forward used it, so its saved values are stale. Use an out-of-place "
        "operation (y = x * 2 instead of x.mul_(2)), or clone the tensor first."
    )


def _gradient_count_error(node, count):
    return GraphError(
        f"backward of {node.name()} returned {count} gradient(s), but its forward takes "
        f"{len(node.inputs)} argument(s): a backward must return one entry per argument of "
        "forward, in order (None for an argument that gets no gradient)"
    )


def backward(tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate dL/dx into ``x.grad`` for every leaf x that requires grad (``tensor.backward()``).

    ``gradient`` is dL/d(tensor) (a Tensor or array of tensor's shape; ones when it
    is omitted, which only a one-element tensor allows).

    Order: every node was created after the nodes that produced its inputs,
    so taking nodes newest first (a heap keyed on the creation number) reaches
    a node only after all the nodes that send it gradient.  That is a
    topological order, found without a separate sort and without recursion
    (an unrolled RNN has thousands of nodes).  ``pending`` holds, for each
    node reached but not yet run, dL/d(each of its outputs) summed over uses.
    """
    if create_graph or inputs is not None:
        raise NotImplementedError("backward(): create_graph and inputs are not implemented in minigrad "
                                  "(no higher-order gradients); use the default backward()")
    if not tensor.requires_grad:
        raise RuntimeError(
            "backward(): this tensor does not require grad and has no grad_fn. Did you "
            "create the inputs with requires_grad=True, or compute it under no_grad()?"
        )
    grad, retain_graph = _output_gradient(tensor, gradient), bool(retain_graph)
    root = tensor.grad_fn
    if root is None:            # a leaf: its gradient is grad itself
        tensor._accumulate(grad)
        return
    pending = {root: [None] * len(root.outputs_meta)}
    pending[root][tensor._output_index] = grad
    heap = [(-root.sequence, root)]
    while heap:
        node = heapq.heappop(heap)[1]
        douts = pending.pop(node)
        if node.freed:
            raise GraphError(
                f"backward through {node.name()} a second time: its saved values were "
                "freed by the first backward. Pass retain_graph=True to the first "
                ".backward() if you need to call it twice."
            )
        for counter, value in node.versions:
            if counter[0] != value:
                raise _stale_input_error(node)
        if node.retained is not None:
            for index, retained in node.retained.items():
                if douts[index] is not None:
                    retained._accumulate(douts[index])
        if len(douts) > 1:
            _zero_fill(node, douts)
        node.retain_graph = retain_graph
        grads = node.function.backward(node, *douts)
        if type(grads) is not tuple:
            grads = (grads,)
        if len(grads) != len(node.inputs):
            raise _gradient_count_error(node, len(grads))
        if not retain_graph:
            node.saved_tensors = ()
            node.freed = True
        for parent, dinput in zip(node.inputs, grads):
            if parent is None or dinput is None:
                continue
            if dinput.shape != parent._data.shape:
                raise GraphError(
                    f"backward of {node.name()} returned a gradient of shape {tuple(dinput.shape)} "
                    f"for an input of shape {parent.shape}: a backward must return one "
                    "gradient per input, of that input's shape"
                )
            if backend.NUMBERS_SET_0D_DTYPES and dinput.dtype != parent._data.dtype:
                dinput = dinput.astype(parent._data.dtype)      # NumPy < 2: 1 - y * y on 0-d float32 is float64
            parent_node, index = parent.grad_fn, parent._output_index
            if parent._history is not None:   # changed in place later: the node it had when used here
                parent_node, index = parent._node_before(node.sequence)
            if parent_node is None:     # a leaf
                parent._accumulate(dinput, node.function.new_gradients and dinput.base is None)
                continue
            slots = pending.get(parent_node)
            if slots is None:           # first gradient to reach this node: schedule it
                slots = pending[parent_node] = [None] * len(parent_node.outputs_meta)
                heapq.heappush(heap, (-parent_node.sequence, parent_node))
            slots[index] = dinput if slots[index] is None else slots[index] + dinput   # never in place


def _output_gradient(tensor, gradient):
    """dL/d(tensor) as an array of tensor's shape: ``gradient``, or ones for a one-element tensor."""
    if gradient is None:
        if tensor._data.size != 1:
            raise RuntimeError(
                f"backward(): grad can be implicitly created only for a tensor with one "
                f"element, this one has shape {tensor.shape}. Reduce it first (loss.sum(), "
                f"loss.mean()) or pass gradient=<array of shape {tensor.shape}>"
            )
        return backend.array_module(tensor._data).ones(tensor._data.shape, dtype=tensor.dtype)
    grad = gradient._data if isinstance(gradient, Tensor) else backend.asarray(gradient, tensor.dtype, tensor.device)
    if tuple(grad.shape) != tensor.shape:
        raise ValueError(f"backward(): grad has shape {tuple(grad.shape)}, expected {tensor.shape}")
    return grad


def _zero_fill(node, douts):
    """Zeros for the outputs of a multi-output node that received no gradient."""
    present = [d for d in douts if d is not None]
    xp = backend.array_module(*present)
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

