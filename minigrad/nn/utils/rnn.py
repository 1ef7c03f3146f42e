"""``torch.nn.utils.rnn``: batches of sequences of different lengths, padded or packed.

Padded: ``pad_sequence`` stacks them into (T, B, *) with zeros after each one; pass the
true lengths to nn.RNN / nn.LSTM / nn.GRU (``rnn(x, lengths=lengths)``, minigrad's
shortcut) or pack them.

Packed, as PyTorch: a ``PackedSequence`` holds only the real steps, time step by time
step, the longest sequences first.  For lengths (3, 1, 2):

    sorted_indices = (0, 2, 1)          the batch, longest first (stable for ties)
    batch_sizes    = (3, 2, 1)          how many sequences are still running at t = 0, 1, 2
    data           = x[0, 0] x[0, 2] x[0, 1] | x[1, 0] x[1, 2] | x[2, 0]       (6, *)
    unsorted_indices = (0, 2, 1)        where each original sequence sits in the sorted order

The recurrent layers take a PackedSequence and return one (their ``h_n`` in the original
batch order); inside, they run on the padded batch with ``lengths=``, the same recurrence.
Packing and unpacking are indexing and ``cat``, so gradients flow through ``data``.
"""
from typing import NamedTuple

from ... import checks, functional as F
from ...creation import cat, stack, tensor
from ...tensor import Tensor, int64


class PackedSequence(NamedTuple):
    """(data (sum of lengths, *), batch_sizes (T,), sorted_indices (B,) or None, unsorted_indices (B,) or None).

    Made by ``pack_padded_sequence`` or ``pack_sequence``, not by hand; the index fields are
    int64 Tensors, None when the batch came already sorted (``enforce_sorted=True``).
    """
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor = None
    unsorted_indices: Tensor = None


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors (L_i, *) into (L_max, B, *) (or (B, L_max, *) with batch_first), padding with
    ``padding_value`` after each sequence (before it with padding_side="left"); differentiable."""
    if not sequences:
        raise ValueError("pad_sequence: expected at least one sequence")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        pad = [0, 0] * (s.ndim - 1) + ([0, missing] if padding_side == "right" else [missing, 0])
        padded.append(F.pad(s, pad, value=padding_value) if missing else s)
    return stack(padded, dim=0 if batch_first else 1)


def _lengths_list(lengths, batch):
    values = lengths.tolist() if hasattr(lengths, "tolist") else list(lengths)
    if len(values) != batch:
        raise ValueError(f"pack_padded_sequence: {len(values)} lengths for a batch of {batch} sequences")
    if any(int(length) <= 0 for length in values):
        raise RuntimeError(f"pack_padded_sequence: every length must be >= 1, got {values}")
    return [int(length) for length in values]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (batch_first: (B, T, *)) whose sequence b has lengths[b] real steps.

    enforce_sorted=True: the lengths must already decrease (the sorted indices are then None);
    False: the batch is sorted here, longest first, ties in batch order.
    """
    checks.tensors("pack_padded_sequence", input=input)
    steps = input.transpose(0, 1) if batch_first else input           # (T, B, *)
    lengths = _lengths_list(lengths, steps.shape[1])
    if max(lengths) > steps.shape[0]:
        raise ValueError(f"pack_padded_sequence: a length of {max(lengths)} is longer than the "
                         f"{steps.shape[0]} time steps of the input (batch_first={batch_first})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(f"pack_padded_sequence: lengths {lengths} must decrease when enforce_sorted=True; "
                               f"pass enforce_sorted=False to have them sorted here")
        order = list(range(len(lengths)))
    else:
        order = sorted(range(len(lengths)), key=lambda b: -lengths[b])  # stable: ties keep batch order
    batch_sizes = [sum(length > t for length in lengths) for t in range(max(lengths))]
    order_index = tensor(order, dtype=int64, device=input.device)
    data = cat([steps[t].index_select(0, order_index[:size]) for t, size in enumerate(batch_sizes)], dim=0)
    sorted_indices = unsorted_indices = None
    if not enforce_sorted:
        sorted_indices = order_index
        position = {b: place for place, b in enumerate(order)}       # the inverse permutation
        unsorted_indices = tensor([position[b] for b in range(len(order))], dtype=int64, device=input.device)
    return PackedSequence(data, tensor(batch_sizes, dtype=int64), sorted_indices, unsorted_indices)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors (L_i, *): ``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpack: (padded (T, B, *) (batch_first: (B, T, *)) in the original batch order, lengths int64 (B,)).

    total_length: pad to this many steps (at least the longest sequence), as for a
    DataParallel-style fixed T.
    """
    data, batch_sizes = sequence.data, [int(size) for size in sequence.batch_sizes.tolist()]
    steps, batch = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: total_length={total_length} is shorter than the longest "
                             f"sequence ({steps} steps)")
        steps = total_length
    rows, offset = [], 0
    for size in batch_sizes:                                    # time step t: its `size` running sequences
        rows.append(F.pad(data[offset:offset + size], [0, 0] * (data.ndim - 1) + [0, batch - size],
                          value=padding_value) if size < batch else data[offset:offset + size])
        offset += size
    blank = data.new_full((batch, *data.shape[1:]), padding_value)
    rows += [blank] * (steps - len(batch_sizes))
    padded = stack(rows, dim=0)                                 # (T, B, *), sorted order
    lengths = [sum(size > b for size in batch_sizes) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[int(b)] for b in sequence.unsorted_indices.tolist()]
    return (padded.transpose(0, 1) if batch_first else padded), tensor(lengths, dtype=int64)


def repack_like(padded, packed):
    """Pack ``padded`` (T, B, *) in the original batch order with ``packed``'s batch sizes and order."""
    order = packed.sorted_indices
    batch_sizes = [int(size) for size in packed.batch_sizes.tolist()]
    pieces = [padded[t] if order is None else padded[t].index_select(0, order) for t in range(len(batch_sizes))]
    data = cat([piece[:size] for piece, size in zip(pieces, batch_sizes)], dim=0)
    return PackedSequence(data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
