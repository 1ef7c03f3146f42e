"""Datasets: Dataset, TensorDataset, Subset, random_split (torch.utils.data.dataset)."""
from ... import backend


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
