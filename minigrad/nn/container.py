"""Containers: Sequential and ModuleList."""
from .module import Module


class Sequential(Module):
    """Calls its modules in order: Sequential(a, b, c)(x) = c(b(a(x)))."""

    def __init__(self, *modules):
        super().__init__()
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def __getitem__(self, index):
        return list(self.children())[index]

    def __len__(self):
        return len(list(self.children()))

    def __iter__(self):
        return iter(list(self.children()))

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x


class ModuleList(Module):
    """A list of modules whose parameters are found (named 0, 1, 2, ...)."""

    def __init__(self, modules=()):
        super().__init__()
        self._length = 0
        for module in modules:
            self.append(module)

    def append(self, module):
        setattr(self, str(self._length), module)
        self._length += 1
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList([getattr(self, str(i)) for i in range(self._length)[index]])
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(f"ModuleList index {index} out of range for {self._length} modules")
        return getattr(self, str(index))

    def __len__(self):
        return self._length

    def __iter__(self):
        return (getattr(self, str(i)) for i in range(self._length))
