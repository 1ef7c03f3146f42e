"""Tokenizers: text -> a list of string tokens, and back.

Three granularities, from small units to large:

    CharTokenizer   every character is a token ("cat" -> ["c", "a", "t"])
    WordTokenizer   lowercased words, punctuation split off
                    ("Don't stop!" -> ["don", "'", "t", "stop", "!"])
    BPETokenizer    sub-words learned from data by byte-pair encoding:
                    start from characters, repeatedly merge the most
                    frequent adjacent pair ("l o w </w>" -> "lo w </w>" -> "low </w>")

Each has ``tokenize(text) -> list[str]`` and ``detokenize(tokens) -> str``.
Word detokenizing is approximate (spaces around punctuation are lost).
"""
import re
from collections import Counter

from .. import checks

# a run of letters/digits/underscore, or one character that is neither space nor word
_WORD = re.compile(r"\w+|[^\w\s]")


class CharTokenizer:
    """Characters as tokens; ``detokenize`` is exact."""

    def tokenize(self, text):
        return list(checks.text("CharTokenizer.tokenize", text))

    def detokenize(self, tokens):
        return "".join(tokens)


class WordTokenizer:
    """Words and punctuation marks as tokens, lowercased unless ``lower=False``."""

    def __init__(self, lower=True):
        self.lower = lower

    def tokenize(self, text):
        return word_tokenize(checks.text("WordTokenizer.tokenize", text), self.lower)

    def detokenize(self, tokens):
        text = " ".join(tokens)
        return re.sub(r" ([^\w\s])", r"\1", text)   # no space before punctuation


def char_tokenize(text):
    """'cat' -> ['c', 'a', 't']."""
    return list(checks.text("char_tokenize", text))


def word_tokenize(text, lower=True):
    """'Not bad, really!' -> ['not', 'bad', ',', 'really', '!'].

    The same as ``_WORD.findall(text)``, but the regular expression runs once per
    distinct whitespace-separated chunk ("really!"), not once per occurrence:
    text repeats its words, so this is about twice as fast on a large corpus.
    """
    checks.text("word_tokenize", text)
    cache, tokens = {}, []
    for chunk in (text.lower() if lower else text).split():
        pieces = cache.get(chunk)
        if pieces is None:
            pieces = cache[chunk] = _WORD.findall(chunk)
        tokens += pieces
    return tokens


class BPETokenizer:
    """Byte-pair encoding (Sennrich et al., 2016) on words.

    Words come from ``word_tokenize``; each word is spelled as characters plus
    an end-of-word marker ``</w>``, so merges never cross word boundaries and
    ``detokenize`` knows where spaces go.

        bpe = BPETokenizer.train(texts, num_merges=100)
        bpe.tokenize("lower")      # ['low', 'er</w>'] once those merges are learned
        bpe.merges                 # [('e', 'r</w>'), ('l', 'o'), ...] in the order learned
    """

    END = "</w>"

    def __init__(self, merges, lower=True):
        self.merges = [tuple(pair) for pair in merges]
        for pair in self.merges:
            if len(pair) != 2 or not all(isinstance(symbol, str) and symbol for symbol in pair):
                raise ValueError(f"BPETokenizer: every merge is a pair of non-empty symbols (a, b), got {pair!r}; "
                                 "merges come from BPETokenizer.train or to_metadata()")
        self.ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        self.lower = lower
        self._cache = {}

    @classmethod
    def train(cls, texts, num_merges, lower=True):
        """Learn up to ``num_merges`` merges from an iterable of strings.

        Each step merges the most frequent adjacent pair over all words
        (weighted by word count); ties go to the pair that sorts first, so
        training is deterministic.
        """
        checks.non_negative_int("BPETokenizer.train", "num_merges", num_merges)
        if isinstance(texts, str):
            raise TypeError("BPETokenizer.train: texts must be an iterable of str, got one str (it would be read "
                            "one character per text); pass [text]")
        words = Counter()
        for text in texts:
            words.update(word_tokenize(text, lower))
        spelled = {word: tuple(word[:-1]) + (word[-1] + cls.END,) for word in words}
        merges = []
        for _ in range(num_merges):
            pairs = Counter()
            for word, symbols in spelled.items():
                for pair in zip(symbols, symbols[1:]):
                    pairs[pair] += words[word]
            if not pairs:
                break
            best = min(pairs, key=lambda pair: (-pairs[pair], pair))
            merges.append(best)
            spelled = {word: _merge(symbols, best) for word, symbols in spelled.items()}
        return cls(merges, lower)

    def encode_word(self, word):
        """One word -> its sub-word tokens, applying learned merges in the order learned."""
        if word in self._cache:
            return self._cache[word]
        symbols = tuple(word[:-1]) + (word[-1] + self.END,)
        while len(symbols) > 1:
            pairs = [pair for pair in zip(symbols, symbols[1:]) if pair in self.ranks]
            if not pairs:
                break
            symbols = _merge(symbols, min(pairs, key=self.ranks.__getitem__))
        self._cache[word] = list(symbols)
        return self._cache[word]

    def tokenize(self, text):
        tokens = []
        for word in word_tokenize(checks.text("BPETokenizer.tokenize", text), self.lower):
            tokens.extend(self.encode_word(word))
        return tokens

    def detokenize(self, tokens):
        return "".join(tokens).replace(self.END, " ").strip()

    def to_metadata(self):
        """JSON-ready dict, e.g. to save next to a model in a checkpoint."""
        return {"merges": [list(pair) for pair in self.merges], "lower": self.lower}

    @classmethod
    def from_metadata(cls, metadata):
        return cls(metadata["merges"], metadata.get("lower", True))


def _merge(symbols, pair):
    """Replace every adjacent occurrence of ``pair`` in ``symbols`` by the joined symbol."""
    first, second = pair
    merged, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == first and symbols[i + 1] == second:
            merged.append(first + second)
            i += 2
        else:
            merged.append(symbols[i])
            i += 1
    return tuple(merged)
