"""Module: a layer with parameters, found by walking its attributes.

A Module's parameters are the ``Parameter`` attributes it holds, and those of
the Modules it holds, named by attribute path (``encoder.layers.0.linear1.weight``),
in the order they were assigned - the same names PyTorch gives, so a state
dict moves between the two by name.
"""
from collections import OrderedDict, namedtuple

import numpy

from .. import backend
from ..autograd import no_grad
from ..tensor import Tensor


IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Parameter(Tensor):
    """A leaf Tensor that a Module learns (requires_grad=True by default)."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True, dtype=None, device=None):
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer: subclasses set attributes in ``__init__`` and define ``forward``."""

    training = True        # class-level defaults, so a subclass that forgets super().__init__() still works
    _buffer_names = ()

    def __init__(self):
        self.training = True
        self._buffer_names = []

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # -------------------------------------------------------------- walking the tree
    def named_children(self):
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value

    def children(self):
        for _, child in self.named_children():
            yield child

    def named_modules(self, prefix=""):
        """(name, module) for self and every module below it, depth first; a shared module once."""
        stack = [(prefix, self)]
        seen = set()
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, c) for n, c in module.named_children()]
            stack.extend(reversed(children))

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule, children first, then on self (as torch); returns self.

        model.apply(init_weights)   # def init_weights(m): if isinstance(m, nn.Linear): nn.init.zeros_(m.bias)
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def named_parameters(self, prefix=""):
        """(name, Parameter): each module's own parameters in assignment order, then its children's."""
        seen = set()
        for module_name, module in self.named_modules(prefix):
            for name, value in vars(module).items():
                if isinstance(value, Parameter) and id(value) not in seen:
                    seen.add(id(value))
                    yield (f"{module_name}.{name}" if module_name else name), value

    def parameters(self):
        for _, parameter in self.named_parameters():
            yield parameter

    def register_buffer(self, name, tensor, persistent=True):
        """Keep a non-learned tensor (moved by .to(), saved in state_dict when persistent)."""
        setattr(self, name, tensor)
        if persistent and name not in self._buffer_names:
            self._buffer_names = list(self._buffer_names) + [name]

    def named_buffers(self, prefix=""):
        for module_name, module in self.named_modules(prefix):
            for name in module._buffer_names:
                value = getattr(module, name)
                if value is not None:
                    yield (f"{module_name}.{name}" if module_name else name), value

    def _all_tensors(self):
        """Every parameter and every buffer, persistent or not."""
        for module in self.modules():
            for value in vars(module).values():
                if isinstance(value, Tensor):
                    yield value

    # -------------------------------------------------------------- modes and moves
    def train(self, mode=True):
        for module in self.modules():
            module.training = mode
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients: ``p.grad = None``, or with set_to_none=False ``p.grad.zero_()`` (as PyTorch)."""
        for parameter in self.parameters():
            if set_to_none or parameter.grad is None:
                parameter.grad = None
            else:
                parameter.grad.zero_()

    def requires_grad_(self, requires_grad=True):
        for parameter in self.parameters():
            parameter.requires_grad_(requires_grad)
        return self

    def to(self, device=None, dtype=None):
        """Move (and/or cast floating) parameters, buffers and their grads in place; returns self.

        model.to("cuda"), model.to(minigrad.float64), model.to("cpu", minigrad.float32)
        """
        if dtype is None and _as_dtype(device) is not None:
            device, dtype = None, device
        dtype = _as_dtype(dtype)
        target = None if device is None else backend.normalize_device(device)
        for tensor in self._all_tensors():
            tensor._data = _moved(tensor._data, target, dtype)
            if tensor.grad is not None:                 # its gradient moves with it (as PyTorch's p.grad.data = ...)
                tensor.grad._data = _moved(tensor.grad._data, target, dtype)
        return self

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    def double(self):
        return self.to(dtype=numpy.float64)

    def float(self):
        return self.to(dtype=numpy.float32)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())

    # -------------------------------------------------------------- state dicts
    def _state_entries(self):
        """(name, tensor) for every parameter and persistent buffer, module by module (its own
        parameters, its buffers, then its children), under EVERY name it has: a tied weight
        (nanoGPT's lm_head.weight = transformer.wte.weight) appears under each, as in PyTorch."""
        stack = [("", self)]
        while stack:
            prefix, module = stack.pop()
            for name, value in vars(module).items():
                if isinstance(value, Parameter):
                    yield prefix + name, value
            for name in module._buffer_names:
                value = getattr(module, name)
                if value is not None:
                    yield prefix + name, value
            stack.extend(reversed([(f"{prefix}{name}.", child) for name, child in module.named_children()]))

    def state_dict(self):
        """OrderedDict of name -> Tensor (sharing the data), with PyTorch's keys: a tied weight
        is listed under each of its names."""
        return OrderedDict((name, tensor.detach()) for name, tensor in self._state_entries())

    def load_state_dict(self, state_dict, strict=True):
        """Copy values into the parameters and buffers by name.

        Values may be minigrad Tensors, NumPy arrays or PyTorch tensors (a PyTorch
        model's state dict loads as it is); they are copied (and cast to each
        parameter's dtype).  A tied weight is expected under each of its names, as
        PyTorch writes it (the last one loaded wins).  A shape mismatch always raises; with strict=True a missing or
        unexpected key raises too, in one RuntimeError that lists them all.  Returns
        (missing_keys, unexpected_keys).
        """
        state_dict = OrderedDict(state_dict)
        for name, module in self.named_modules():     # a layer may rename keys of older checkpoints
            upgrade = getattr(module, "_upgrade_state_dict", None)
            if upgrade is not None:
                upgrade(f"{name}." if name else "", state_dict)
        own = OrderedDict(self._state_entries())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        mismatched = []
        values = {}
        for name, target in own.items():
            if name not in state_dict:
                continue
            value = _host_array(state_dict[name])
            if tuple(value.shape) != target.shape:
                mismatched.append(f"{name}: checkpoint {tuple(value.shape)}, model {target.shape}")
            else:
                values[name] = value
        if mismatched or (strict and (missing or unexpected)):
            lines = [f"load_state_dict into {type(self).__name__} failed:"]
            if missing:
                lines.append("  missing keys: " + ", ".join(missing))
            if unexpected:
                lines.append("  unexpected keys: " + ", ".join(unexpected))
            if mismatched:
                lines.append("  shape mismatches: " + "; ".join(mismatched))
            if not mismatched:
                lines.append("  (pass strict=False to load the keys that match)")
            raise RuntimeError("\n".join(lines))
        with no_grad():
            for name, value in values.items():
                target = own[name]
                target._data = backend.asarray(value, dtype=target.dtype, device=target.device)
                target._version[0] += 1
        return IncompatibleKeys(missing, unexpected)

    # -------------------------------------------------------------- printing
    def extra_repr(self):
        return ""

    def __repr__(self):
        """The module tree, one child per line, as PyTorch prints it."""
        extra = self.extra_repr()
        children = [f"({name}): {child!r}" for name, child in self.named_children()]
        if not children and "\n" not in extra:
            return f"{type(self).__name__}({extra})"
        lines = (extra.split("\n") if extra else []) + children
        body = "\n".join("  " + line.replace("\n", "\n  ") for line in lines)
        return f"{type(self).__name__}(\n{body}\n)"


def _host_array(value):
    """A NumPy array from a minigrad Tensor, a backend array, or a PyTorch tensor."""
    if isinstance(value, Tensor):
        return backend.to_numpy(value._data)
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch.Tensor: .numpy() shares its memory
        return value.detach().cpu().numpy().copy()
    if type(value) in backend._array_types:
        return backend.to_numpy(value)
    return numpy.array(value)


def _as_dtype(value):
    """The NumPy dtype that ``value`` names ("float64", minigrad.float64), or None (a device name)."""
    if isinstance(value, (numpy.dtype, type)):
        return numpy.dtype(value)
    try:
        return numpy.dtype(value) if isinstance(value, str) else None
    except TypeError:
        return None


def _moved(array, device, dtype):
    """``array`` on ``device`` (None: where it is) and, if floating, as ``dtype`` (None: as it is)."""
    if device is not None and backend.device_of(array) != device:
        array = backend.asarray(backend.to_numpy(array), device=device)
    if dtype is not None and array.dtype.kind == "f" and array.dtype != dtype:
        array = array.astype(dtype)
    return array
