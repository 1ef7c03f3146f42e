"""Checkpoints: ``minigrad.save(state, path)`` and ``minigrad.load(path)``.

A checkpoint is one NumPy ``.npz`` file, never a pickle, so loading a file
from someone else cannot run code.  ``state`` is a nested dict (lists and
tuples allowed) whose leaves are Tensors or arrays, or small JSON values
(numbers, strings, booleans, None), for example

    {"model": model.state_dict(), "optimizer": opt.state_dict(),
     "vocab": {"<pad>": 0, "the": 1}, "step": 10}

Inside the file each array is an entry named by its path of keys joined with
"/" ("model/encoder.weight", "optimizer/state/0/exp_avg"), readable with a
plain ``numpy.load``; the entry "__tree__" holds the structure and every
non-array value as JSON.  Dict keys come back as strings (an optimizer's
``load_state_dict`` accepts "0" for 0) and tuples come back as lists.

Saving is atomic: the file is written under a temporary name in the same
directory, flushed to disk, then renamed over ``path`` in one step, so a crash
mid-save leaves the previous checkpoint whole.
"""
import errno
import json
import os
import zipfile

import numpy

from . import backend
from .atomic_file import atomic_write
from .tensor import Tensor

SEPARATOR = "/"
TREE = "__tree__"


class CheckpointError(RuntimeError):
    """A file that is not a readable minigrad checkpoint, or a state that cannot be saved."""


def _split(value, name, arrays):
    """``value`` with each array replaced by {"__array__": entry name}; arrays collected in ``arrays``."""
    if isinstance(value, Tensor):
        value = value._data
    if type(value) in backend._array_types or isinstance(value, numpy.ndarray):
        if name in arrays or name == TREE:
            raise CheckpointError(f"save: two arrays would share the entry name {name!r}")
        arrays[name] = backend.to_numpy(value)
        return {"__array__": name}
    if isinstance(value, dict):
        tree = {}
        for key, item in value.items():
            key = str(key)
            if SEPARATOR in key:
                raise CheckpointError(f"save: the key {key!r} contains {SEPARATOR!r}, used to join nested keys")
            tree[key] = _split(item, f"{name}{SEPARATOR}{key}" if name else key, arrays)
        return tree
    if isinstance(value, (list, tuple)):
        return [_split(item, f"{name}{SEPARATOR}{i}" if name else str(i), arrays) for i, item in enumerate(value)]
    if isinstance(value, numpy.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    hint = ""
    if hasattr(value, "state_dict"):      # torch.save(model, f) pickles a whole module; minigrad never pickles
        hint = (f"; save its {type(value).__name__}.state_dict() instead, and rebuild the object and call "
                "load_state_dict on it after minigrad.load")
    raise CheckpointError(
        f"save: cannot store {name or 'the state'!r} of type {type(value).__name__}: "
        f"a checkpoint holds Tensors, arrays, numbers, strings, lists and dicts{hint}"
    )


def _join(tree, arrays, device):
    """The inverse of ``_split``: put the arrays back, as Tensors on ``device``."""
    if isinstance(tree, dict):
        if set(tree) == {"__array__"}:
            return Tensor(arrays[tree["__array__"]], device=device)
        return {key: _join(item, arrays, device) for key, item in tree.items()}
    if isinstance(tree, list):
        return [_join(item, arrays, device) for item in tree]
    return tree


def save(obj, f):
    """Write ``obj`` (a nested dict of Tensors, arrays and JSON values) to the file ``f`` atomically."""
    path = os.fspath(f)
    arrays = {}
    tree = _split(obj, "", arrays)
    arrays[TREE] = numpy.array(json.dumps(tree))              # a 0-d unicode array, not an object
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, f"minigrad.save: {path!r} is a directory; give a file path such as "
                                f"{os.path.join(path, 'checkpoint.npz')!r}")
    try:
        with atomic_write(path, "wb") as file:               # the old file or the new, never half
            numpy.savez(file, **arrays)
    except OSError as error:                                 # its message names only the temporary file
        raise OSError(error.errno, f"minigrad.save: cannot write the checkpoint {path!r}: {error.strerror or error} "
                                   "(is its folder writable, and is there space?)") from error


def load(f, map_location=None, *, device=None):
    """Read a checkpoint written by ``save``: the same nested structure, arrays as Tensors on ``device``
    (``map_location``, as torch names it, may give the device: "cpu", "cuda").

    Raises FileNotFoundError for a missing file and CheckpointError for a file
    that is truncated, corrupt or not a checkpoint; both name the file.
    """
    if map_location is not None:
        if not isinstance(map_location, str) or device is not None:
            raise TypeError(f"minigrad.load: map_location must be a device name such as 'cpu' (not a function "
                            f"or dict), got {map_location!r}")
        device = map_location
    path = os.fspath(f)
    if not os.path.exists(path):
        raise FileNotFoundError(f"minigrad.load: no checkpoint file at {path!r}")
    try:
        with numpy.load(path, allow_pickle=False) as archive:    # never unpickle
            arrays = {name: archive[name] for name in archive.files}
        tree = json.loads(str(arrays.pop(TREE))) if TREE in arrays else {name: {"__array__": name} for name in arrays}
    except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as error:
        raise CheckpointError(
            f"minigrad.load: {path!r} is not a readable checkpoint (truncated or corrupt?): "
            f"{type(error).__name__}: {error}"
        ) from error
    return _join(tree, arrays, device)
