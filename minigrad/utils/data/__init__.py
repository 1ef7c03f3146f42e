"""Datasets and batching with ``torch.utils.data``'s names: Dataset, TensorDataset, Subset, random_split,
the samplers and DataLoader.

    dataset = TensorDataset(inputs, targets)                 # tensors with the same first dimension
    for x, y in DataLoader(dataset, batch_size=32, shuffle=True):
        ...                                                  # x (32, ...), y (32, ...)

Shuffling draws from the generator ``minigrad.manual_seed`` seeds (so the order is reproducible, but
not torch's order for the same seed).  Batches are built in this process: ``num_workers`` and
``pin_memory`` are accepted and change nothing but speed in torch, so nothing here.

The modules are torch's: ``dataset``, ``sampler`` and ``dataloader`` (``from torch.utils.data.dataloader
import DataLoader`` works with minigrad's name).
"""
from . import dataloader, dataset, sampler  # noqa: F401
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from ...torch_compat import absent as _absent


def __getattr__(name):
    """Names of torch.utils.data that minigrad leaves out: say so, and what to use (minigrad/torch_compat/absent.py)."""
    return _absent.explain("minigrad.utils.data", name)
