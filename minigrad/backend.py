"""The array backend: which array library holds a tensor's data.

Devices are named as in PyTorch:

    "cpu"   NumPy arrays
    "cuda"  CuPy arrays (imported lazily; install CuPy: ``pip install cupy-cuda12x``, or ``pip install -e ".[gpu]"`` in a clone)

Every op asks ``array_module(*arrays)`` for the module of its inputs (called
``xp`` by convention) and calls ``xp.exp``, ``xp.matmul``, ... on it, never
``numpy`` directly, so the same code runs on both devices.  The device belongs
to the data, not to a global switch.

The default device for new tensors is read from the ``MINIGRAD_DEVICE``
environment variable (default ``"cpu"``).

Tests register one more device, a strict NumPy wrapper that refuses implicit
conversion to NumPy as CuPy does (see ``tests/strict_backend.py``), through
``register_device``.

Memory freed by one training step is reused by the next.  A step builds a graph
whose arrays (activations saved for backward, gradients) are all freed at once when
the step's loss is dropped.  glibc's malloc may hand them back to the operating
system: it maps blocks over its mmap threshold (128 KiB at first, raised as mapped
blocks are freed) and unmaps them on free, and trims a free top of the heap over
twice that threshold.  The next step then faults its arrays in again page by page:
on lesson 7's char-LM step (LSTM, hidden 128, batch 32, T = 64) about 2,000 page
faults per step, and a fifth of the step's time, whether it happens depends on the
process's history (issue 41).  So on Linux with glibc this module calls ``mallopt``
once, at import, to keep freed memory in the process:

    M_MMAP_THRESHOLD  32 MiB    blocks up to 32 MiB (glibc's maximum) come from the heap
    M_TRIM_THRESHOLD  1 GiB     the heap's free top is handed back only beyond 1 GiB
                                (128 MiB was too little: the encoder layer's step at
                                batch 32 frees 230 MiB at once)
    M_TOP_PAD         16 MiB    the heap grows 16 MiB at a time

PyTorch's caching allocators keep freed blocks for the same reason.  The cost: between
steps the process keeps the memory its largest step used (up to 1 GiB more than its
arrays hold), where it could hand it back before; the peak itself does not grow.
Blocks over 32 MiB are still mapped and unmapped each time.  ``empty_cache()`` hands
free memory back now (glibc's ``malloc_trim``, and CuPy's memory pools on "cuda");
``MINIGRAD_KEEP_FREED_MEMORY=0`` in the environment before importing minigrad leaves
malloc as it is.  On macOS, Windows and Linux with another C library (musl) nothing is
changed: their allocators have no such settings, and ``empty_cache()`` only empties
CuPy's pools.

Module-level state (process-wide, as torch's): the registered devices and their
array types, one random generator per device, the seed ``manual_seed`` set, and
glibc's three malloc settings above (``MALLOC_SETTINGS``, set at import).
"""
import ctypes
import os
import sys

import numpy

_cupy = None
_devices = {"cpu": numpy}          # device name -> array module
_array_types = {numpy.ndarray: "cpu"}  # array type -> device name
_generators = {}                    # device name -> random generator
_seed = None

# NumPy < 2 (before NEP 50) lets a Python number set a 0-d array's dtype: float32 0-d * 0.5 is float64
# there.  promotion.promote and the engine's backward correct for it only where this is True.
NUMBERS_SET_0D_DTYPES = (numpy.zeros((), "float32") * 0.5).dtype != "float32"


class DeviceError(RuntimeError):
    """A device that is not available, or inputs that live on different devices."""


def _load_cupy(source=""):
    global _cupy
    if _cupy is None:
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
        except Exception as error:  # ImportError, or CUDA present but no GPU / driver
            instead = ('unset MINIGRAD_DEVICE or set it to "cpu"' if source else 'use device="cpu"')
            raise DeviceError(
                f'device "cuda"{source} is not available ({type(error).__name__}: {error}). '
                "On a machine with an NVIDIA GPU install CuPy: pip install cupy-cuda12x (CuPy for CUDA 12; "
                f'in a clone, pip install -e ".[gpu]" does the same); without one, {instead}.'
            ) from None
        _cupy = cupy
        _devices["cuda"] = cupy
        _array_types[cupy.ndarray] = "cuda"
    return _cupy


def register_device(name, module, array_type):
    """Add a device whose arrays are ``array_type`` and whose functions live in ``module``."""
    _devices[name] = module
    _array_types[array_type] = name


def normalize_device(device):
    """'cuda:0' -> 'cuda'; None -> the default device (checked and loaded like any other)."""
    source = ""
    if device is None:
        device, source = default_device(), " (the MINIGRAD_DEVICE environment variable)"
    name = str(device).split(":")[0]
    if name == "cuda":
        _load_cupy(source)
    elif name not in _devices:
        raise DeviceError(f'unknown device "{device}"{source}: use "cpu" or "cuda"')
    return name


def default_device():
    """The device named by MINIGRAD_DEVICE, or "cpu"."""
    return os.environ.get("MINIGRAD_DEVICE", "cpu") or "cpu"


def get_module(device):
    """The array module (``xp``) of a device name."""
    module = _devices.get(device)
    if module is None:
        return _devices[normalize_device(device)]
    return module


def device_of(array):
    """The device name of one array."""
    device = _array_types.get(type(array))
    if device is None:
        for array_type, name in _array_types.items():
            if isinstance(array, array_type):
                return name
        raise TypeError(f"not a backend array: {type(array).__name__}")
    return device


def array_module(*arrays):
    """The array module (``xp``) shared by ``arrays``; raise if they live on different devices.

    Non-array arguments (Python numbers, None) are ignored.
    """
    device = None
    for array in arrays:
        found = _array_types.get(type(array))
        if found is None:
            if array is None or isinstance(array, (int, float, bool, numpy.generic)):
                continue
            found = device_of(array)
        if device is None:
            device = found
        elif found != device:
            raise DeviceError(
                f'expected all inputs on one device, found "{device}" and "{found}": '
                f'move them with .to("{device}") or .to("{found}")'
            )
    return _devices[device or "cpu"]


def asarray(data, dtype=None, device=None):
    """``data`` (a list, number, NumPy or device array) as an array on ``device``."""
    device = normalize_device(device)
    xp = _devices[device]
    if type(data) in _array_types and device_of(data) != device:
        data = to_numpy(data)
    return xp.asarray(data, dtype=dtype)


def to_numpy(array):
    """A NumPy copy of ``array`` on the host (CuPy and test arrays have ``.get()``)."""
    if isinstance(array, numpy.ndarray):
        return array.copy()
    if hasattr(array, "get"):
        return array.get()
    return numpy.array(array)


# ----------------------------------------------------------------------------- random

def manual_seed(seed):
    """Seed every device's generator, so initialisation and dropout repeat exactly.

    All devices draw from one NumPy generator on the host and copy to the
    device, so the same seed gives the same numbers on "cpu" and "cuda".
    """
    global _seed
    _seed = int(seed)
    _generators.clear()
    _generators["host"] = numpy.random.default_rng(_seed)


def host_generator():
    """The NumPy ``Generator`` behind every random draw (seeded by ``manual_seed``)."""
    generator = _generators.get("host")
    if generator is None:
        generator = numpy.random.default_rng(_seed)
        _generators["host"] = generator
    return generator


def random_uniform(shape, dtype, device, low=0.0, high=1.0):
    """Uniform draws on [low, high) as a ``device`` array of ``dtype``."""
    host = host_generator().uniform(low, high, size=shape)
    return asarray(host, dtype=dtype, device=device)


def random_normal(shape, dtype, device, mean=0.0, std=1.0):
    """Normal draws as a ``device`` array of ``dtype``."""
    host = host_generator().normal(mean, std, size=shape)
    return asarray(host, dtype=dtype, device=device)


def random_integers(low, high, shape, device):
    """Integers in [low, high) as an int64 ``device`` array."""
    host = host_generator().integers(low, high, size=shape)
    return asarray(host, dtype="int64", device=device)


def random_bernoulli(shape, p_keep, device):
    """A boolean ``device`` array, True with probability ``p_keep`` (dropout masks)."""
    host = host_generator().random(size=shape) < p_keep
    return asarray(host, device=device)


def ensure_array(value):
    """NumPy turns 0-d results into NumPy scalars; make them 0-d arrays again."""
    if type(value) in _array_types:
        return value
    if isinstance(value, numpy.generic):
        return numpy.asarray(value)
    return value


def broadcast_shape(*shapes):
    """The shape that ``shapes`` broadcast to; ValueError if they do not."""
    return numpy.broadcast_shapes(*(tuple(s) for s in shapes))


# ----------------------------------------------------------------------------- memory

# glibc's malloc.h: the mallopt parameter numbers and the values set at import (see the module docstring)
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
MALLOC_SETTINGS = {M_MMAP_THRESHOLD: 32 * 2**20, M_TRIM_THRESHOLD: 2**30, M_TOP_PAD: 16 * 2**20}


def _glibc():
    """The process's C library when it is glibc (Linux), else None (macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)            # the symbols already loaded into this process
        libc.gnu_get_libc_version           # only glibc has it (musl has mallopt, but it does nothing)
    except (OSError, AttributeError):
        return None
    return libc


def keep_freed_memory():
    """Set glibc's ``MALLOC_SETTINGS`` (called once, at import); True where they were set.

    False, changing nothing, on another C library or when ``MINIGRAD_KEEP_FREED_MEMORY=0``.
    """
    libc = _glibc()
    if libc is None or os.environ.get("MINIGRAD_KEEP_FREED_MEMORY", "1") == "0":
        return False
    return all(libc.mallopt(parameter, value) == 1 for parameter, value in MALLOC_SETTINGS.items())


def empty_cache():
    """Hand the memory that freed arrays left in the process back to the operating system.

    glibc: ``malloc_trim(0)`` (the memory ``MALLOC_SETTINGS`` keeps); "cuda": CuPy's memory pools,
    as ``torch.cuda.empty_cache()``.  Arrays still in use are untouched; the next step simply
    faults its memory in again.  Elsewhere it does nothing.
    """
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
    if _cupy is not None:
        _cupy.get_default_memory_pool().free_all_blocks()
        _cupy.get_default_pinned_memory_pool().free_all_blocks()


KEEPS_FREED_MEMORY = keep_freed_memory()
