"""``minigrad.cuda``: is a GPU there?  (The arrays on it are CuPy's; see ``minigrad/backend.py``.)"""
from . import backend


def is_available():
    """True only when CuPy is installed and sees at least one NVIDIA GPU."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:          # no CuPy, or CuPy without a driver or a GPU
        return False


def device_count():
    """The number of GPUs CuPy sees (0 without CuPy)."""
    if not is_available():
        return 0
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def manual_seed(seed):
    """Same as ``minigrad.manual_seed``: every device draws from one host generator."""
    backend.manual_seed(seed)


manual_seed_all = manual_seed


def synchronize():
    """Wait for the GPU to finish its queued work (nothing to wait for without one)."""
    if is_available():
        import cupy
        cupy.cuda.Device().synchronize()


def empty_cache():
    """Hand cached memory back, as ``torch.cuda.empty_cache()``: CuPy's pools, and on Linux the host's
    freed memory that the backend keeps for the next step (``minigrad.empty_cache``, backend.py)."""
    backend.empty_cache()
