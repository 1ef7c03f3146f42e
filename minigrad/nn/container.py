"""Containers: Sequential, ModuleList, ModuleDict and ParameterList."""
from collections import OrderedDict

from .module import Module, Parameter


class Sequential(Module):
    """Calls its modules in order: Sequential(a, b, c)(x) = c(b(a(x))).

    The modules are named "0", "1", ... (or by the keys of one OrderedDict
    argument), so parameters are "0.weight", "2.bias" as in PyTorch.
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                setattr(self, name, module)
        else:
            for index, module in enumerate(modules):
                if not isinstance(module, Module):       # PyTorch: TypeError "int is not a Module subclass"
                    raise TypeError(f"Sequential: argument {index} is a {type(module).__name__}, not a Module: "
                                    "pass layers such as nn.Linear(3, 4), nn.ReLU()")
                setattr(self, str(index), module)

    def append(self, module):
        setattr(self, str(len(self)), module)
        return self

    def __getitem__(self, index):
        children = list(self.children())
        if isinstance(index, slice):
            return Sequential(*children[index])
        return children[index]

    def __len__(self):
        return len(list(self.children()))

    def __iter__(self):
        return iter(list(self.children()))

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x


class ModuleList(Module):
    """A list of modules whose parameters are found (named "0.weight", "1.weight", ...).

    It has no forward: the owner decides how to call its modules (for example
    one per layer of a stacked RNN).
    """

    def __init__(self, modules=()):
        super().__init__()
        self._length = 0
        self.extend(modules)

    def append(self, module):
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules, got {type(module).__name__}")
        setattr(self, str(self._length), module)
        self._length += 1
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def _index(self, index):
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(f"ModuleList index {index} out of range for {self._length} modules")
        return str(index)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList([getattr(self, str(i)) for i in range(self._length)[index]])
        return getattr(self, self._index(index))

    def __setitem__(self, index, module):
        setattr(self, self._index(index), module)

    def __len__(self):
        return self._length

    def __iter__(self):
        return (getattr(self, str(i)) for i in range(self._length))


class ModuleDict(Module):
    """A dict of modules whose parameters are found, named by key ("wte.weight"), in insertion order.

    Like ModuleList it has no forward; minGPT's ``self.transformer = nn.ModuleDict(dict(wte=..., h=...))``
    then ``self.transformer.wte(idx)`` works as in torch.
    """

    def __init__(self, modules=None):
        super().__init__()
        self._keys = []
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key, module):
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict holds Modules, got {type(module).__name__} for key {key!r}")
        if not isinstance(key, str) or not key.isidentifier():
            raise KeyError(f"ModuleDict keys must be attribute names (letters, digits, _), got {key!r}")
        if hasattr(type(self), key) or key in ("training", "_keys", "_buffer_names"):
            raise KeyError(f"ModuleDict key {key!r} would hide the ModuleDict's own {key!r}: choose another name")
        setattr(self, key, module)
        if key not in self._keys:
            self._keys.append(key)

    def __getitem__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __delitem__(self, key):
        self[key]                           # KeyError if absent
        delattr(self, key)
        self._keys.remove(key)

    def __contains__(self, key):
        return key in self._keys

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def keys(self):
        return list(self._keys)

    def values(self):
        return [getattr(self, key) for key in self._keys]

    def items(self):
        return [(key, getattr(self, key)) for key in self._keys]

    def update(self, modules):
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module
        return self

    def pop(self, key):
        module = self[key]
        del self[key]
        return module


class ParameterList(Module):
    """A list of Parameters that the owner's parameters() finds, named "0", "1", ... as in PyTorch.

    A Tensor that is not a Parameter is made one (as torch does), so
    ``nn.ParameterList([nn.Parameter(w) for w in ...])`` and ``nn.ParameterList(tensors)`` both work.
    """

    def __init__(self, values=None):
        super().__init__()
        self._length = 0
        if values is not None:
            self.extend(values)

    def append(self, value):
        setattr(self, str(self._length), value if isinstance(value, Parameter) else Parameter(value))
        self._length += 1
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList([getattr(self, str(i)) for i in range(self._length)[index]])
        if not -self._length <= index < self._length:
            raise IndexError(f"ParameterList index {index} out of range for {self._length} parameters")
        return getattr(self, str(index % self._length))

    def __setitem__(self, index, value):
        self[index]                                     # IndexError if out of range
        setattr(self, str(index % self._length), value if isinstance(value, Parameter) else Parameter(value))

    def __len__(self):
        return self._length

    def __iter__(self):
        return (getattr(self, str(i)) for i in range(self._length))
