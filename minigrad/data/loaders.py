"""Loaders for the formats users bring: a folder of reviews, parallel text, word vectors.

    texts, labels = load_text_folder("aclImdb", "train")          # train/pos/*.txt, train/neg/*.txt
    pairs = load_parallel("train.en", "train.de")                  # one sentence per line
    embedding, report = load_embeddings("glove.6B.50d.txt", vocab) # rows aligned to a Vocab

Every loader reads files in sorted order, so results are the same on every run.
"""
import os
import random

from ..nn.embedding import Embedding
from ..tensor import Tensor, float32
from ..creation import randn
from ..text.vocab import PAD_IDX


def _require_dir(path, what):
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{what}: no folder at {os.fspath(path)!r}")


def load_text_folder(root, split="train", classes=None, shuffle=False, seed=0, encoding="utf-8"):
    """An IMDB-style folder: ``root/split/<class>/*.txt``, one example per file.

    classes: the class folder names in label order (default: the sorted
    sub-folders, e.g. ["neg", "pos"] -> neg = 0, pos = 1).
    Returns (texts, labels, classes); files in sorted order, or shuffled with ``seed``.
    """
    folder = os.path.join(os.fspath(root), split)
    _require_dir(folder, "load_text_folder")
    if classes is None:
        classes = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    if not classes:
        raise ValueError(f"load_text_folder: {folder!r} has no class sub-folders (such as pos/ and neg/)")
    examples = []
    for label, name in enumerate(classes):
        class_folder = os.path.join(folder, name)
        _require_dir(class_folder, "load_text_folder")
        for file_name in sorted(os.listdir(class_folder)):
            if file_name.endswith(".txt"):
                with open(os.path.join(class_folder, file_name), encoding=encoding) as file:
                    examples.append((file.read().strip(), label))
    if shuffle:
        random.Random(seed).shuffle(examples)
    return [text for text, _ in examples], [label for _, label in examples], list(classes)


def load_parallel(source_path, target_path, encoding="utf-8", skip_empty=True):
    """Two files with one sentence per line, line i of one translating line i of the other.

    Returns a list of (source, target) string pairs; pairs with an empty side are dropped
    unless ``skip_empty=False``.  Files with different line counts raise ValueError.
    """
    sides = []
    for path in (source_path, target_path):
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"load_parallel: no file at {path!r}")
        with open(path, encoding=encoding) as file:
            sides.append(file.read().splitlines())
    if len(sides[0]) != len(sides[1]):
        raise ValueError(f"load_parallel: {os.fspath(source_path)!r} has {len(sides[0])} lines but "
                         f"{os.fspath(target_path)!r} has {len(sides[1])}; they must align line by line")
    pairs = [(s.strip(), t.strip()) for s, t in zip(*sides)]
    return [p for p in pairs if p[0] and p[1]] if skip_empty else pairs


def read_vectors(path, encoding="utf-8"):
    """A GloVe/word2vec text file (a word, then its floats, space-separated) -> {word: list of floats}.

    A word2vec header line ("count dim") is skipped.  Raises ValueError naming
    the line for a malformed number or a vector whose width differs from the first.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"read_vectors: no embedding file at {path!r}")
    vectors, width = {}, None
    with open(path, encoding=encoding) as file:
        for number, line in enumerate(file, start=1):
            parts = line.rstrip().split(" ")
            if not line.strip():
                continue
            if number == 1 and len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                continue                                   # word2vec header: "400000 50"
            try:
                values = [float(x) for x in parts[1:]]
            except ValueError:
                raise ValueError(f"{path}, line {number}: expected a word then numbers, got "
                                 f"{line.strip()[:60]!r}") from None
            if width is None:
                width = len(values)
                if width == 0:
                    raise ValueError(f"{path}, line {number}: the word {parts[0]!r} has no vector")
            elif len(values) != width:
                raise ValueError(f"{path}, line {number}: the vector of {parts[0]!r} has {len(values)} "
                                 f"numbers, but earlier vectors have {width}")
            vectors.setdefault(parts[0], values)
    if width is None:
        raise ValueError(f"{path}: no vectors in the file")
    return vectors


def load_embeddings(path, vocab, freeze=True, lowercase_fallback=True, device=None):
    """An ``nn.Embedding`` whose row i is the file's vector for ``vocab.itos[i]``.

    Words missing from the file (out of vocabulary, OOV) get small random
    vectors (normal with std 0.1, seeded by ``minigrad.manual_seed``); <pad> gets zeros.
    With ``lowercase_fallback`` a word missing as written is looked up lowercased.
    Returns (embedding, report) where report = {"found": n, "oov": n, "oov_tokens": [...]}
    (specials other than <pad> count as OOV if the file lacks them).
    """
    vectors = read_vectors(path)
    width = len(next(iter(vectors.values())))
    table = randn(len(vocab), width, dtype="float64").numpy() * 0.1
    found, missing = 0, []
    for index, token in enumerate(vocab.itos):
        vector = vectors.get(token)
        if vector is None and lowercase_fallback:
            vector = vectors.get(token.lower())
        if vector is not None:
            table[index] = vector
            found += 1
        elif index != PAD_IDX:
            missing.append(token)
    table[PAD_IDX] = 0.0
    embedding = Embedding.from_pretrained(Tensor(table, dtype=float32, device=device), freeze=freeze,
                                          padding_idx=PAD_IDX)
    return embedding, {"found": found, "oov": len(missing), "oov_tokens": missing}
