"""``torch.utils`` names that teaching programs use: ``minigrad.utils.data`` (Dataset, DataLoader)."""
from . import data  # noqa: F401
