"""Samplers: the order in which a DataLoader visits a dataset's indices (torch.utils.data.sampler)."""
from ... import backend, checks


class Sampler:
    """Base class: a sampler defines ``__iter__`` (the indices) and usually ``__len__``."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (or num_samples draws with replacement), new each epoch.

    Drawn lazily, as in torch: with replacement in chunks of 32, without it one permutation per pass,
    so an endless loader (replacement=True, num_samples=int(1e10)) costs no memory up front."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if generator is not None:
            raise NotImplementedError("RandomSampler: generator= is not implemented; seed with minigrad.manual_seed")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"RandomSampler: num_samples should be a positive integer, got {num_samples!r}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples = num_samples

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, generator = len(self.data_source), backend.host_generator()
        if self.replacement:
            for start in range(0, self.num_samples, 32):
                yield from generator.integers(0, n, size=min(32, self.num_samples - start)).tolist()
            return
        for start in range(0, self.num_samples, n):
            yield from generator.permutation(n).tolist()[:self.num_samples - start]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        checks.positive_int("BatchSampler", "batch_size", batch_size)
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
