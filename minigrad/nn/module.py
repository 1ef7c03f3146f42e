"""Module: a layer with parameters, found by walking its attributes.

A Module's parameters are the ``Parameter`` attributes it holds, and those of
the Modules it holds, named by attribute path (``encoder.layers.0.linear1.weight``),
in the order they were assigned - the same names PyTorch gives, so a state
dict moves between the two by name.
"""
from collections import OrderedDict

import numpy

from .. import backend
from ..autograd import no_grad
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor that a Module learns (requires_grad=True by default)."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True, dtype=None, device=None):
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer: subclasses set attributes in ``__init__`` and define ``forward``."""

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
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            yield name, module
            children = [(f"{name}.{n}" if name else n, c) for n, c in module.named_children()]
            stack.extend(reversed(children))

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_parameters(self, prefix=""):
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
            self._buffer_names.append(name)

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
        for parameter in self.parameters():
            parameter.grad = None

    def requires_grad_(self, requires_grad=True):
        for parameter in self.parameters():
            parameter.requires_grad_(requires_grad)
        return self

    def to(self, device=None, dtype=None):
        """Move (and/or cast) every parameter and buffer in place; returns self."""
        if isinstance(device, (numpy.dtype, type)) and dtype is None:
            device, dtype = None, device
        target = None if device is None else backend.normalize_device(device)
        for tensor in self._all_tensors():
            data = tensor.data
            if target is not None and backend.device_of(data) != target:
                data = backend.asarray(backend.to_numpy(data), device=target)
            if dtype is not None and data.dtype.kind == "f":
                data = data.astype(dtype)
            tensor.data = data
            if tensor.grad is not None:
                tensor.grad = None
        return self

    def double(self):
        return self.to(dtype=numpy.float64)

    def float(self):
        return self.to(dtype=numpy.float32)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())

    # -------------------------------------------------------------- state dicts
    def state_dict(self):
        """OrderedDict of name -> Tensor (parameters, then buffers), sharing the data."""
        state = OrderedDict()
        for name, parameter in self.named_parameters():
            state[name] = parameter.detach()
        for name, buffer in self.named_buffers():
            state[name] = buffer.detach()
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy values into the parameters and buffers by name.

        Values may be minigrad Tensors, NumPy arrays or PyTorch tensors.  With
        strict=True, any missing key, unexpected key or shape mismatch raises
        one error that lists them all.  Returns (missing_keys, unexpected_keys).
        """
        own = OrderedDict(self.named_parameters())
        own.update(self.named_buffers())
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
            raise KeyError("\n".join(lines))
        with no_grad():
            for name, value in values.items():
                target = own[name]
                target.data = backend.asarray(value, dtype=target.dtype, device=target.device)
                target._version[0] += 1
        return missing, unexpected

    # -------------------------------------------------------------- printing
    def extra_repr(self):
        return ""

    def __repr__(self):
        children = list(self.named_children())
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children:
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {child_repr}")
        return "\n".join(lines) + "\n)"


def _host_array(value):
    """A NumPy array from a minigrad Tensor, a backend array, or a PyTorch tensor."""
    if isinstance(value, Tensor):
        return backend.to_numpy(value.data)
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch.Tensor
        return value.detach().cpu().numpy()
    if type(value) in backend._array_types:
        return backend.to_numpy(value)
    return numpy.asarray(value)
