"""The named tuples that max(dim), min(dim), topk and sort return, as ``torch.return_types``.

    values, indices = x.max(dim=1)      # or  x.max(dim=1).values
"""
from collections import namedtuple

max = namedtuple("max", ["values", "indices"])
min = namedtuple("min", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
