"""Vocab: the two-way map between tokens and integer ids.

The four special tokens always sit at the same ids, in every Vocab:

    id  token    used for
    0   <pad>    filling short sequences in a batch (losses and metrics skip it)
    1   <unk>    any token not in the vocabulary
    2   <bos>    beginning of sequence: the first input of a decoder
    3   <eos>    end of sequence: a decoder emits it to stop

Ordinary tokens follow from id 4, most frequent first (ties alphabetical),
so the same text always gives the same ids.
"""
import json
import numbers
from collections import Counter

from .. import checks

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_IDX, UNK_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3


class Vocab:
    """tokens <-> ids.  ``stoi`` maps a token to its id, ``itos`` lists tokens by id.

    Vocab(tokens) builds from a list of ordinary tokens, in order (specials first
    are added for you); ``Vocab.build`` counts token streams.
    """

    def __init__(self, tokens=(), counts=None):
        tokens = checks.tokens("Vocab", list(tokens))           # a str gives its characters
        self.itos = list(SPECIALS) + [t for t in tokens if t not in SPECIALS]
        self.stoi = {token: i for i, token in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("Vocab: the token list has duplicates")
        self.counts = Counter(counts or {})

    @classmethod
    def build(cls, token_streams, max_size=None, min_freq=1):
        """Count tokens in an iterable of token lists (sentences, or one long stream in a list).

        Keeps tokens seen at least ``min_freq`` times, at most ``max_size`` of them
        (not counting the four specials), most frequent first.
        """
        if max_size is not None:
            checks.non_negative_int("Vocab.build", "max_size", max_size)
        checks.positive_int("Vocab.build", "min_freq", min_freq)
        counts = Counter()
        for tokens in token_streams:              # a list of tokens, or a str: a stream of characters
            counts.update(tokens)
        checks.tokens("Vocab.build", list(counts))               # each distinct token once: cheap
        for special in SPECIALS:
            counts.pop(special, None)
        kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[:max_size]
        return cls(kept, counts)

    pad_idx, unk_idx, bos_idx, eos_idx = PAD_IDX, UNK_IDX, BOS_IDX, EOS_IDX

    def __len__(self):
        return len(self.itos)

    def __contains__(self, token):
        return token in self.stoi

    def __getitem__(self, token):
        """The id of ``token``, or <unk>'s id if it is not in the vocabulary."""
        return self.stoi.get(token, UNK_IDX)

    def __eq__(self, other):
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self):
        return f"Vocab({len(self)} tokens: {self.itos[:8]}{' ...' if len(self) > 8 else ''})"

    def encode(self, tokens, add_bos=False, add_eos=False):
        """A list of tokens -> a list of ids (unknown tokens -> <unk>).  A str is a list of characters
        only to a character vocabulary (every ordinary token one character); to any other it is refused."""
        if isinstance(tokens, str) or not hasattr(tokens, "__iter__"):
            chars = all(len(token) == 1 for token in self.itos[len(SPECIALS):])
            checks.tokens("Vocab.encode", tokens, chars_allowed=chars)
        try:
            ids = list(map(self.stoi.__getitem__, tokens))   # fast path: every token known
        except KeyError:
            get = self.stoi.get
            ids = [get(t, UNK_IDX) for t in tokens]
        if add_bos:
            ids.insert(0, BOS_IDX)
        if add_eos:
            ids.append(EOS_IDX)
        return ids

    def decode(self, ids, stop_at_eos=True, skip_pad=True, skip_bos=True):
        """A list (or 1-D Tensor) of ids -> a list of tokens.

        stop_at_eos: cut at the first <eos> (not included); skip_pad / skip_bos: drop those tokens.
        """
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        ids = list(ids) if hasattr(ids, "__iter__") and not isinstance(ids, (str, bytes)) else ids
        if not isinstance(ids, list) or any(isinstance(i, list) for i in ids):
            raise TypeError(f"Vocab.decode: expected a list or 1-D Tensor of ids, got {str(ids)[:60]}; decode a "
                            "batch one row at a time")
        bad = [i for i in ids if not isinstance(i, numbers.Integral) or isinstance(i, bool) or not 0 <= i < len(self)]
        if bad:
            raise IndexError(f"Vocab.decode: id {bad[0]!r} is not in the vocabulary (ids are ints 0..{len(self) - 1})")
        tokens = []
        for i in ids:
            if i == EOS_IDX and stop_at_eos:
                break
            if (i == PAD_IDX and skip_pad) or (i == BOS_IDX and skip_bos):
                continue
            tokens.append(self.itos[i])
        return tokens

    # ---------------------------------------------------------------- saving
    def to_metadata(self):
        """A JSON-ready dict; put it in a checkpoint: minigrad.save({"model": ..., "vocab": vocab.to_metadata()}, path)."""
        return {"itos": list(self.itos), "specials": list(SPECIALS)}

    @classmethod
    def from_metadata(cls, metadata):
        """The inverse of ``to_metadata`` (checks the specials sit at their fixed ids)."""
        if not isinstance(metadata, dict) or "itos" not in metadata:
            keys = sorted(metadata)[:5] if isinstance(metadata, dict) else []
            raise ValueError(f"Vocab.from_metadata: expected the dict that to_metadata() returns, with 'itos', got "
                             f"{type(metadata).__name__} with keys {keys}")
        itos = list(metadata["itos"])
        if itos[:len(SPECIALS)] != list(SPECIALS) or list(metadata.get("specials", SPECIALS)) != list(SPECIALS):
            raise ValueError(f"Vocab.from_metadata: expected the specials {SPECIALS} at ids 0-3, got {itos[:4]}")
        return cls(itos[len(SPECIALS):])

    def to_json(self, path):
        with open(path, "w", encoding="utf-8") as file:
            json.dump(self.to_metadata(), file, ensure_ascii=False)

    @classmethod
    def from_json(cls, path):
        with open(path, encoding="utf-8") as file:
            return cls.from_metadata(json.load(file))
