"""Checks of bad input at the public boundary: one helper per kind of argument.

    dim(op, dim, ndim)                 one dimension index -> the same, counted from 0
    dims(op, dims, ndim)               None, an int, or a tuple of distinct dims -> checked
    reduction_dims(op, dims, ndim)     the same for a reduction (None for a 0-d tensor)
    reduction_of_empty(op, t, dim, error)      max() / argmax() of an empty tensor
    sizes(op, shape)                   the sizes of a new tensor: ints >= 0 that fit in memory
    reshape_sizes(op, shape, old)      a target shape for reshape/view of shape old: ints >= 0, at most one -1
    positive_int(op, name, value)      a count that must be >= 1 (batch_size, seq_len, ...)
    non_negative_int(op, name, value)  a count that may be 0 (max_size, num_merges, ...)
    floating_input(op, error, input, weight)   a layer's input must be floating (float32 weights)
    hyper_parameter(op, name, value, ...)      an optimizer's number, in PyTorch's words
    text(op, value) / tokens(op, value)        a str / a list of str tokens (a str only to a char vocabulary)
    grad_array(op, p)                  p.grad's array, of p's shape (what the optimizers compute with)
    tensors(op, **arguments)           a layer's or an F function's tensor arguments are Tensors, not arrays

Each raises PyTorch's exception type where PyTorch has the name (IndexError for
a dimension out of range, RuntimeError for a bad size, ValueError for an
optimizer's hyper-parameter, TypeError for an array where a Tensor goes), with
a message that names the operation, the bad value and the fix.  They run once
per call at a function's or a layer's entry, never inside the loops of a kernel.
"""
import math
import numbers


def _is_int(value):
    """True for Python and NumPy integers (bool excluded: True is not a size)."""
    if type(value) is int:          # the usual case, without the slower ABC check below
        return True
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def dim(op, dim, ndim):
    """``dim`` in [-ndim, ndim - 1] (a 0-d tensor accepts -1 and 0, as PyTorch) -> dim counted from 0."""
    if not _is_int(dim):
        raise TypeError(f"{op}: dim must be an int, got {dim!r} ({type(dim).__name__})")
    top = max(ndim, 1)
    if not -top <= dim < top:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-top}, {top - 1}], but got "
                         f"{dim}): there is no dim {dim} in a tensor of {ndim} dimensions; count dims from 0, or "
                         "from the end with -1")
    return dim % top


def dims(op, dims, ndim):
    """None (every dim), one dim, or a tuple/list of distinct dims -> the same form, counted from 0."""
    if dims is None:
        return None
    if not isinstance(dims, (tuple, list)):
        return dim(op, dims, ndim)
    checked = tuple(dim(op, d, ndim) for d in dims)
    if len(set(checked)) != len(checked):
        raise RuntimeError(f"{op}: a dim appears more than once in dims={tuple(dims)} (tensor of {ndim} "
                           "dimensions); name each dimension once")
    return checked


def reduction_dims(op, dims_, ndim):
    """The dims of a reduction (sum, mean, amax, argmax, var, norm), checked; None for a 0-d tensor,
    whose only value is the whole reduction whichever valid dim (0 or -1) is named, as in PyTorch."""
    dims(op, dims_, ndim)
    return None if ndim == 0 else dims_


def reduction_of_empty(op, tensor, dim, error):
    """max() / argmax() over all of an empty tensor has no answer: PyTorch raises ``error`` there."""
    if dim is None and tensor.numel() == 0:
        raise error(f"{op}(): Expected reduction dim to be specified for input.numel() == 0: the tensor is empty "
                    f"(shape {tensor.shape}); give dim=, or check the tensor is not empty")


def sizes(op, shape):
    """The sizes of a new tensor (a tuple of ints >= 0), refused as PyTorch refuses them."""
    for size in shape:
        if not _is_int(size):
            raise TypeError(f"{op}: sizes must be ints, got {size!r} ({type(size).__name__}) in {tuple(shape)}; "
                            f"for a size computed as a float use int(...)")
    for size in shape:
        if size < 0:
            raise RuntimeError(f"{op}: Trying to create tensor with negative dimension {size}: {list(shape)}; "
                               "every size must be >= 0")
    if math.prod(int(s) for s in shape) >= 2 ** 63:
        raise RuntimeError(f"{op}: Storage size calculation overflowed with sizes={list(shape)}; "
                           "no tensor can hold that many elements")
    return tuple(int(s) for s in shape)


def allocation_error(op, shape, error):
    """The error for a new tensor that does not fit in memory (NumPy's MemoryError or 'array is too big')."""
    return RuntimeError(f"{op}: cannot allocate a tensor of size {list(shape)} ({math.prod(shape):,} elements): "
                        f"{error}; use smaller sizes")


def reshape_sizes(op, shape, old):
    """A target shape for a tensor of shape ``old``: ints >= 0 and at most one -1 (which is inferred)."""
    numel = math.prod(old)
    for size in shape:
        if not _is_int(size):
            raise TypeError(f"{op}: sizes must be ints, got {size!r} ({type(size).__name__}) in {tuple(shape)}")
    for index, size in enumerate(shape):
        if size < -1:
            raise RuntimeError(f"{op}: invalid shape dimension {size} at index {index} of shape {list(shape)}; "
                               "sizes are >= 0, with at most one -1 to infer")
    inferred = list(shape).count(-1)
    if inferred > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred, got shape {list(shape)}")
    known = -math.prod(shape) if inferred else math.prod(shape)     # the product of the sizes other than -1
    if inferred:
        if known == 0:
            raise RuntimeError(f"{op}: cannot reshape tensor of {numel} elements into shape {list(shape)} because "
                               "the unspecified dimension size -1 can be any value and is ambiguous")
        if numel % known:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}: a tensor of shape "
                               f"{tuple(old)} has {numel} elements, which the known sizes cannot divide")
    elif known != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}: a tensor of shape "
                           f"{tuple(old)} has {numel} elements, so the sizes {tuple(shape)} must multiply to {numel} "
                           "(use -1 for one size to infer it)")
    return tuple(map(int, shape))


def positive_int(op, name, value, error=ValueError):
    """A count that must be an int >= 1 (PyTorch's DataLoader words)."""
    if not _is_int(value) or value <= 0:
        raise error(f"{op}: {name} should be a positive integer value, but got {name}={value!r}")
    return value


def non_negative_int(op, name, value):
    """A count that must be an int >= 0."""
    if not _is_int(value) or value < 0:
        raise ValueError(f"{op}: {name} must be an int >= 0, got {name}={value!r}")
    return value


def floating_input(op, error, input, weight):
    """A layer's input must be floating like its weights (an int64 batch of ids is not features):
    PyTorch refuses it too."""
    kind = getattr(getattr(input, "dtype", None), "kind", "f")
    if kind not in "fc":
        raise error(f"{op}: input dtype {input.dtype} does not match weight dtype {weight.dtype}: convert the "
                    f"input (x.float()), or, for token ids, look them up first (nn.Embedding)")


def hyper_parameter(op, name, value, low=0, high=math.inf, high_open=False, words=None):
    """``low <= value <= high`` (``< high`` when high_open), in PyTorch's words ("Adam: Invalid learning
    rate: -1").  NaN is refused everywhere (PyTorch's SGD lets a NaN lr through: every step then makes
    the weights NaN)."""
    words = words or {"lr": "learning rate", "eps": "epsilon value"}.get(name, f"{name} value")
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{op}: Invalid {words}: {value!r} ({name} must be a number, got {type(value).__name__})")
    above = value >= high if high_open else value > high
    if math.isnan(value) or value < low or above:
        bound = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise ValueError(f"{op}: Invalid {words}: {value} ({name} must be in {bound})")
    return value


def text(op, value):
    """A str (of text to tokenize)."""
    if not isinstance(value, str):
        raise TypeError(f"{op}: expected a str of text, got {type(value).__name__}"
                        + ("; to tokenize several texts, call it once per text" if isinstance(value, (list, tuple))
                           else ""))
    return value


def tokens(op, value, chars_allowed=False):
    """A list (or tuple) of non-empty str tokens; a str itself (one token per character) only where
    ``chars_allowed`` (a character vocabulary)."""
    if isinstance(value, str) and chars_allowed:
        return value
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{op}: expected a list of tokens, got {type(value).__name__} {str(value)[:40]!r}; tokenize "
                        "the text first (WordTokenizer().tokenize(text), or list(text) for characters)")
    for token in value:
        if not isinstance(token, str) or not token:
            raise ValueError(f"{op}: every token must be a non-empty str, got {token!r}; an empty token comes "
                             "from text.split(' '): use text.split() or a tokenizer")
    return value


def grad_array(op, p):
    """The array of p.grad, a Tensor whose type, shape, dtype and device the ``.grad`` setter checked.  Its
    shape is checked again against p's: after ``p.data = <another shape>`` (allowed, as in PyTorch) a step
    would otherwise broadcast silently."""
    grad = p.grad._data
    if tuple(grad.shape) != tuple(p.shape):
        raise RuntimeError(f"{op}: attempting to use a gradient of size {list(grad.shape)} for a parameter of size "
                           f"{list(p.shape)}; the gradient must have the parameter's shape")
    return grad


def tensors(op, **arguments):
    """Each argument given to a layer or an F function where a Tensor goes must be a Tensor (None: an
    optional one left out).  A NumPy array, a list or a number is refused in PyTorch's words
    ("linear(): argument 'input' must be Tensor, not numpy.ndarray") with the fix, rather than
    failing later with a message about shapes or attributes that hides the real problem.
    A Tensor is known by its array ``_data`` (this module sits below the engine's
    TensorBase); one attribute test per argument, cheap enough for every call of a layer."""
    for name, value in arguments.items():
        if value is None or hasattr(value, "_data"):                   # absent, or a Tensor
            continue
        kind = type(value).__name__                                   # list, float, ...
        if type(value).__module__ != "builtins":
            kind = type(value).__module__.split(".")[0] + "." + kind    # numpy.ndarray, cupy.ndarray
        fix = "minigrad.tensor(x)"
        if kind == "numpy.ndarray":
            fix += " (a copy) or minigrad.from_numpy(x) (sharing its memory)"
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {kind}; wrap it with {fix}")
