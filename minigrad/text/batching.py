"""From lists of ids to padded batches.

    pad_batch(sequences)          pad (or truncate) to one length -> Batch(ids, lengths, mask)
    BucketIterator(sequences, B)  batches of similar lengths (less padding), shuffled, seeded
    LMBatches(stream, B, T)       a long stream cut into (B, T) inputs and next-token targets,
                                  each batch continuing the previous one (truncated BPTT)
    pair_batch(pairs, src_vocab, tgt_vocab)
                                  (source, target) pairs -> padded source ids and <bos> target <eos> ids

Shapes: batch-first (N, T) by default, time-first (T, N) with ``batch_first=False``.
"""
import random
from collections import namedtuple

from .. import backend, checks
from ..tensor import Tensor, int64
from .vocab import PAD_IDX

Batch = namedtuple("Batch", ["ids", "lengths", "mask"])
Batch.__doc__ = """A padded batch.

ids: int64 Tensor (N, T) (or (T, N) time-first); lengths: int64 Tensor (N,), the
true lengths after truncation; mask: bool Tensor shaped like ids, True on real tokens.
"""


def pad_batch(sequences, pad=PAD_IDX, length=None, batch_first=True, device=None):
    """Pad a list of N id lists to the longest one, or to exactly ``length`` (truncating longer ones).

    Returns Batch(ids (N, T), lengths (N,), mask (N, T)); with batch_first=False ids and mask are (T, N).
    """
    if not sequences:
        raise ValueError("pad_batch: no sequences")
    if length is not None:
        checks.non_negative_int("pad_batch", "length", length)
    T = max(len(s) for s in sequences) if length is None else length
    rows = [list(s[:T]) + [pad] * (T - len(s)) for s in sequences]
    lengths = [min(len(s), T) for s in sequences]
    ids = backend.asarray(rows, dtype=int64, device=device).reshape(len(rows), T)
    xp = backend.array_module(ids)
    lengths = backend.asarray(lengths, dtype=int64, device=backend.device_of(ids))
    mask = xp.arange(T)[None, :] < lengths[:, None]          # (N, T)
    if not batch_first:
        ids, mask = ids.T.copy(), mask.T.copy()
    return Batch(Tensor._from_array(ids), Tensor._from_array(lengths), Tensor._from_array(mask))


def pair_batch(pairs, src_vocab, tgt_vocab, tokenize=list, device=None):
    """(source, target) pairs of strings -> (src (N, S), tgt (N, T + 2)) int64 id Tensors, padded with <pad>.

    Each target is wrapped in <bos> ... <eos>: a seq2seq model reads ``tgt[:, :-1]`` (teacher forcing)
    and is scored against ``tgt[:, 1:]``.  ``tokenize`` splits a string (characters by default).
    """
    src = pad_batch([src_vocab.encode(tokenize(s)) for s, _ in pairs], device=device).ids
    tgt = pad_batch([tgt_vocab.encode(tokenize(t), add_bos=True, add_eos=True) for _, t in pairs], device=device).ids
    return src, tgt


class BucketIterator:
    """Batches of sequences with similar lengths, so little of each batch is padding.

    Every pass (epoch): shuffle the examples, cut them into pools of
    ``pool`` batches, sort each pool by length, cut pools into batches, and
    shuffle the batches.  ``seed`` fixes every epoch's order (epoch e uses
    seed + e); ``shuffle=False`` gives sorted batches in a fixed order.

    Yields Batch objects, or (Batch, labels) when ``labels`` is given, where
    labels is the list of those examples' labels (a Tensor if they are numbers).
    ``indices`` of the last batch's examples are in ``self.last_indices``.
    """

    def __init__(self, sequences, batch_size, labels=None, shuffle=True, seed=0, pool=50,
                 pad=PAD_IDX, batch_first=True, device=None):
        checks.positive_int("BucketIterator", "batch_size", batch_size)
        checks.positive_int("BucketIterator", "pool", pool)
        self.sequences, self.labels = list(sequences), labels
        if labels is not None and len(labels) != len(self.sequences):
            raise ValueError(f"BucketIterator: {len(labels)} labels for {len(self.sequences)} sequences; give one "
                             "label per sequence")
        self.batch_size, self.shuffle, self.seed, self.pool = batch_size, shuffle, seed, pool
        self.pad, self.batch_first, self.device = pad, batch_first, device
        self.epoch = 0
        self.last_indices = None

    def __len__(self):
        return -(-len(self.sequences) // self.batch_size)

    def batches(self):
        """This epoch's batches as lists of example indices (advances the epoch)."""
        rng = random.Random(self.seed + self.epoch)   # host-side bookkeeping, plain Python
        self.epoch += 1
        order = list(range(len(self.sequences)))
        if self.shuffle:
            rng.shuffle(order)
        size = self.batch_size * self.pool if self.shuffle else len(order)
        batches = []
        for start in range(0, len(order), size):
            pooled = sorted(order[start:start + size], key=lambda i: len(self.sequences[i]))
            batches += [pooled[i:i + self.batch_size] for i in range(0, len(pooled), self.batch_size)]
        if self.shuffle:
            rng.shuffle(batches)
        return batches

    def __iter__(self):
        for indices in self.batches():
            self.last_indices = indices
            batch = pad_batch([self.sequences[i] for i in indices], self.pad, None, self.batch_first, self.device)
            if self.labels is None:
                yield batch
            else:
                labels = [self.labels[i] for i in indices]
                if all(isinstance(y, (int, float)) for y in labels):
                    labels = Tensor._new_leaf(labels, device=self.device)      # ints stay int64
                yield batch, labels


class LMBatches:
    """A token stream as (inputs, targets) batches for a language model, for truncated BPTT.

    The stream is cut into ``batch_size`` equal rows (the tail that does not fit
    is dropped); row b is one long contiguous piece of text.  Batch i holds
    columns [i*T, (i+1)*T) of every row as inputs and the same columns shifted
    by one as targets, so row b of batch i+1 continues row b of batch i: carry
    the hidden state over (detached) and the model reads the whole row.

        for x, y in LMBatches(ids, batch_size=32, seq_len=35):   # x, y: (32, 35) int64
            ...

    The last batch may be shorter than seq_len.  ``batch_first=False`` gives (T, B).
    """

    def __init__(self, stream, batch_size, seq_len, batch_first=True, device=None):
        checks.positive_int("LMBatches", "batch_size", batch_size)
        checks.positive_int("LMBatches", "seq_len", seq_len)
        self.batch_size, self.seq_len, self.batch_first = batch_size, seq_len, batch_first
        columns = len(stream) // batch_size
        if columns < 2:
            raise ValueError(f"LMBatches: a stream of {len(stream)} tokens is too short for batch_size={batch_size}")
        ids = backend.asarray(list(stream[:columns * batch_size]), dtype=int64, device=device)
        self.rows = ids.reshape(batch_size, columns)              # (B, L)

    def __len__(self):
        return -(-(self.rows.shape[1] - 1) // self.seq_len)

    def __iter__(self):
        L = self.rows.shape[1]
        for start in range(0, L - 1, self.seq_len):
            end = min(start + self.seq_len, L - 1)
            x, y = self.rows[:, start:end], self.rows[:, start + 1:end + 1]
            if not self.batch_first:
                x, y = x.T, y.T
            yield Tensor._from_array(x.copy()), Tensor._from_array(y.copy())
