"""Datasets and batching with ``torch.utils.data``'s names: Dataset, TensorDataset, Subset, random_split,
the samplers and DataLoader.

    dataset = TensorDataset(inputs, targets)                 # tensors with the same first dimension
    for x, y in DataLoader(dataset, batch_size=32, shuffle=True):
        ...                                                  # x (32, ...), y (32, ...)

Shuffling draws from the generator ``minigrad.manual_seed`` seeds (so the order is reproducible, but
not torch's order for the same seed).  Batches are built in this process: ``num_workers`` and
``pin_memory`` are accepted and change nothing but speed in torch, so nothing here.
"""
from .. import backend
from ..creation import stack
from ..tensor import Tensor


class Dataset:
    """Base class: a dataset defines ``__getitem__(index)`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors); every tensor has the same first dimension."""

    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError(f"TensorDataset: tensors need the same first dimension, got "
                             f"{[tuple(t.shape) for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths):
    """Subsets of the given lengths (or fractions summing to 1) of a random permutation of ``dataset``."""
    n = len(dataset)
    if all(0 <= length <= 1 for length in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != n:
        counts = [int(n * fraction) for fraction in lengths]
        for i in range(n - sum(counts)):                  # the remainder, one each, round robin (as torch)
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"random_split: lengths {list(lengths)} do not add up to the dataset's {n} samples")
    order = backend.host_generator().permutation(n).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets


class SequentialSampler:
    """Indices 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler:
    """A random permutation of the indices (or num_samples draws with replacement), new each epoch."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if generator is not None:
            raise NotImplementedError("RandomSampler: generator= is not implemented; seed with minigrad.manual_seed")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples = num_samples

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, generator = len(self.data_source), backend.host_generator()
        if self.replacement:
            return iter(generator.integers(0, n, size=self.num_samples).tolist())
        order = []
        while len(order) < self.num_samples:
            order += generator.permutation(n).tolist()
        return iter(order[:self.num_samples])

    def __len__(self):
        return self.num_samples


class BatchSampler:
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate(samples):
    """A list of samples -> one batch: tensors stacked on a new first dimension, numbers made tensors
    (ints int64, floats float64, as torch), tuples/lists/dicts collated field by field (tuples and
    lists give a list), anything else (strings) returned as given."""
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(samples, dim=0)
    if isinstance(first, (tuple, list)):
        return [default_collate(field) for field in zip(*samples)]     # a list of fields, as torch's
    if isinstance(first, dict):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, bool):
        return Tensor(samples, dtype="bool")
    if isinstance(first, int):
        return Tensor(samples, dtype="int64")
    if isinstance(first, float):
        return Tensor(samples, dtype="float64")
    if hasattr(first, "shape") and hasattr(first, "dtype"):      # NumPy arrays and scalars
        return Tensor(backend.get_module("cpu").stack(samples))
    return samples                                                # strings and other objects, as given


class DataLoader:
    """Batches of a dataset: DataLoader(dataset, batch_size=1, shuffle=False, sampler=None, ...).

    Iterating gives collate_fn([dataset[i] for i in batch]) for each batch of indices.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, **options):
        if generator is not None:
            raise NotImplementedError("DataLoader: generator= is not implemented; seed with minigrad.manual_seed")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True cannot be used together (as torch)")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("DataLoader: batch_sampler excludes batch_size, shuffle, sampler and drop_last")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler

    def __iter__(self):
        if self.batch_sampler is None:                            # batch_size=None: samples one by one
            return (self.dataset[i] for i in self.sampler)
        return (self.collate_fn([self.dataset[i] for i in batch]) for batch in self.batch_sampler)

    def __len__(self):
        return len(self.sampler if self.batch_sampler is None else self.batch_sampler)
