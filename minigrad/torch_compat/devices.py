"""``minigrad.device``: a device name, as ``torch.device``.

    minigrad.device("cpu"), minigrad.device("cuda"), minigrad.device("cuda", 0), minigrad.device("cuda:0")

A device is a ``str`` ("cpu", "cuda:0"), so it goes wherever a device name
goes (``device=`` arguments, ``.to()``), compares equal to the plain name and
has torch's ``.type`` and ``.index``.  ``tensor.device`` returns one.
minigrad uses the current GPU for every "cuda" index (see TORCH_DIFFERENCES.md).

Module-level state: ``_named``, a cache of one ``device`` per name (``tensor.device`` is called often).
"""
from .. import backend


class device(str):
    """A device name with ``.type`` ("cpu", "cuda") and ``.index`` (int or None)."""

    def __new__(cls, type, index=None):
        name = str(type)
        kind, _, number = name.partition(":")
        if number and index is not None:
            raise ValueError(f"device: the index is given twice, in {name!r} and as index={index}")
        if number:
            if not number.isdigit():
                raise ValueError(f"device: {name!r} is not a device name such as 'cpu', 'cuda' or 'cuda:0'")
            index = int(number)
        if kind != "cuda" and kind not in backend._devices:
            raise ValueError(f"device: unknown device type {kind!r}: use 'cpu' or 'cuda'")
        text = kind if index is None else f"{kind}:{index}"
        self = super().__new__(cls, text)
        self.type, self.index = kind, index
        return self

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    __hash__ = str.__hash__


_named = {}


def device_named(name):
    """The ``device`` for a backend's device name, made once per name (``tensor.device`` calls this)."""
    found = _named.get(name)
    if found is None:
        found = _named[name] = device(name)
    return found
