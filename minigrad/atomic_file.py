"""Write a file all at once: readers see the old file or the new one, never half of it.

    with atomic_write("model.npz", "wb") as file:
        numpy.savez(file, **arrays)

writes into a temporary file beside the target (same folder, so the same file
system), flushes it to disk, and only then renames it over the target
(os.replace is atomic on POSIX and Windows).  If anything fails on the way,
the temporary file is removed and the old file is left as it was.  Used by
checkpoints (serialization.py) and by the grader's reports.
"""
import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8"):
    """Open a temporary file for writing (``mode`` "w" or "wb"); on success it replaces ``path``."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write: mode must be 'w' or 'wb', got {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=None if mode == "wb" else encoding) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())                     # on disk before the rename
        os.chmod(temporary, 0o644)                      # mkstemp made it 0600: readable like any new file
        os.replace(temporary, path)                     # atomic: the old file or the new, never half
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
