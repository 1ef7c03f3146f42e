"""What the inference fast paths share (transformer_fast_path.py, rnn_fast_path.py): a Function's
forward run on arrays outside the graph, and the test that no gradient can be wanted."""
from .. import autograd
from ..autograd import Context


def forward(function, *args):
    """``function.forward`` on arrays, outside the graph: what Function.apply runs, minus the node."""
    return function.forward(Context(function, None, (False,) * len(args)), *args)


def no_gradient_wanted(data, parameters, tensors, caches=()):
    """True when every parameter has the array type and dtype of ``data`` (the input's array), and
    (in grad mode) nothing among the parameters, ``tensors`` (inputs, states, masks; None or arrays
    allowed) and the cached keys and values (dicts of Tensors) requires grad."""
    grad_wanted = autograd.is_grad_enabled()
    if grad_wanted and any(getattr(tensor, "requires_grad", False) for tensor in tensors):
        return False
    if grad_wanted and any(getattr(cached, "requires_grad", False)
                           for cache in caches if cache for cached in cache.values()):
        return False
    for parameter in parameters:
        if parameter is None:
            continue
        if type(parameter._data) is not type(data) or parameter._data.dtype != data.dtype:
            return False                        # the ordinary forward names the mismatch
        if grad_wanted and parameter.requires_grad:
            return False
    return True
