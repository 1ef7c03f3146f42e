"""DataLoader and default_collate (torch.utils.data.dataloader)."""
from ... import backend, checks
from ...creation import stack
from ...tensor import Tensor
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def default_collate(batch):
    """A list of samples -> one batch: tensors stacked on a new first dimension, numbers made tensors
    (ints int64, floats float64, as torch), tuples/lists/dicts collated field by field (tuples and
    lists give a list), anything else (strings) returned as given."""
    samples = batch
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
        if batch_size is not None:
            checks.positive_int("DataLoader", "batch_size", batch_size)
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
