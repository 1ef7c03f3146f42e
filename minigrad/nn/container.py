"""Containers: Sequential and ModuleList."""
from collections import OrderedDict

from .module import Module


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
