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

Saving to a path is atomic: the file is written under a temporary name in the same
directory, flushed to disk, then renamed over ``path`` in one step, so a crash
mid-save leaves the previous checkpoint whole.  As in PyTorch, ``f`` may also be
an open binary file object (``io.BytesIO()``, ``open(name, "wb")``): then the
checkpoint is written into it at its position, and the caller owns the file.
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
    """Write ``obj`` (a nested dict of Tensors, arrays and JSON values) to ``f``: a path, written
    atomically, or a binary file object open for writing."""
    arrays = {}
    tree = _split(obj, "", arrays)
    arrays[TREE] = numpy.array(json.dumps(tree))              # a 0-d unicode array, not an object
    if hasattr(f, "write"):                                  # an open binary file object: the caller's
        numpy.savez(f, **arrays)
        return
    path = os.fspath(f)
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
    """Read a checkpoint written by ``save`` from a path or a binary file object: the same nested
    structure, arrays as Tensors on ``device`` (``map_location``, as torch names it, may give the
    device: "cpu", "cuda").

    Raises FileNotFoundError for a missing file and CheckpointError for a file
    that is truncated, corrupt or not a checkpoint; both name the file.
    """
    if map_location is not None:
        if not isinstance(map_location, str) or device is not None:
            raise TypeError(f"minigrad.load: map_location must be a device name such as 'cpu' (not a function "
                            f"or dict), got {map_location!r}")
        device = map_location
    if hasattr(f, "read"):                                      # an open binary file object
        path = getattr(f, "name", type(f).__name__)
        start = f.tell()
        head = f.read(6)
        f.seek(start)
    else:
        path = f = os.fspath(f)
        if not os.path.exists(path):
            raise FileNotFoundError(f"minigrad.load: no checkpoint file at {path!r}")
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, f"minigrad.load: {path!r} is a directory; give the checkpoint "
                                    f"file's path, such as {os.path.join(path, 'checkpoint.npz')!r}")
        with open(path, "rb") as file:
            head = file.read(6)
    if not head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY")):   # a zip (.npz) or a .npy
        raise CheckpointError(
            f"minigrad.load: {path!r} is not a minigrad checkpoint: minigrad.save writes .npz (zip) files, and this "
            f"file starts with {head!r}. A PyTorch file (torch.save) is a pickle, which minigrad never loads: "
            "in PyTorch, save {name: tensor.numpy()} with numpy.savez instead")
    try:
        with numpy.load(f, allow_pickle=False) as archive:       # never unpickle
            arrays = {name: archive[name] for name in archive.files}
        strangers = [name for name, value in arrays.items() if not isinstance(value, numpy.ndarray)]
        if strangers:                                            # zip members that are not .npy arrays
            raise CheckpointError(
                f"minigrad.load: {path!r} is not a minigrad checkpoint: it is a zip archive, but {strangers[0]!r} "
                "in it is not a NumPy array (a PyTorch checkpoint from torch.save is a zip of pickles, which "
                "minigrad never loads: in PyTorch, save {name: tensor.numpy()} with numpy.savez instead)")
        tree = json.loads(str(arrays.pop(TREE))) if TREE in arrays else {name: {"__array__": name} for name in arrays}
    except ValueError as error:
        if "allow_pickle" not in str(error):
            raise CheckpointError(f"minigrad.load: {path!r} is not a readable checkpoint (truncated or corrupt?): "
                                  f"{type(error).__name__}: {error}") from error
        raise CheckpointError(                       # NumPy's advice (allow_pickle=) is not minigrad's
            f"minigrad.load: {path!r} is not a minigrad checkpoint: it holds pickled Python objects, which "
            "minigrad never unpickles (minigrad.save writes arrays of numbers and a JSON tree only)") from None
    except (OSError, EOFError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as error:
        raise CheckpointError(
            f"minigrad.load: {path!r} is not a readable checkpoint (truncated or corrupt?): "
            f"{type(error).__name__}: {error}"
        ) from error
    return _join(tree, arrays, device)
