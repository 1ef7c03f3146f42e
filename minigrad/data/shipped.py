"""The classic small corpora that ship with minigrad (no download), with fixed splits.

    text = shakespeare("train")                      # str: 1,003,857 characters of plays
    names = names_by_language("test")                # {"Arabic": ["Abadi", ...], ...}: 18 languages
    pairs = translation_pairs("eng-fra", "train")    # [("Go.", "Va !"), ...]: (English, French)

Each returns plain Python structures.  The splits are the same on every run,
on every machine and Python version: they depend on the text only (no random
generator).  ``split=None`` gives everything.  Where each file comes from and
its licence: ``minigrad/data/corpora/SOURCES.md``.
"""
import gzip
import hashlib
import os

from .downloads import multi30k_pairs       # the downloaded sets' readers live with the downloader

CORPORA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpora")
SPLITS = ("train", "validation", "test")
LANGUAGES = ("Arabic", "Chinese", "Czech", "Dutch", "English", "French", "German", "Greek", "Irish", "Italian",
             "Japanese", "Korean", "Polish", "Portuguese", "Russian", "Scottish", "Spanish", "Vietnamese")
PAIR_SETS = ("eng-fra", "multi30k")


def _check_split(function, split):
    if split is not None and split not in SPLITS:
        raise ValueError(f"{function}: unknown split {split!r}; use one of {', '.join(map(repr, SPLITS))} "
                         "or None for everything")


def _read_gzip(name):
    with gzip.open(os.path.join(CORPORA, name), "rt", encoding="utf-8", newline="") as file:
        return file.read()


def _hash_order(key):
    """A sort key that looks random but depends on ``key`` alone (the same everywhere, forever)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _three_way(items, validation=0.1, test=0.1):
    """items (already in a fixed order) -> (train, validation, test): the last ``test`` fraction is test, ..."""
    n_test, n_validation = round(len(items) * test), round(len(items) * validation)
    n_train = len(items) - n_test - n_validation
    return {"train": items[:n_train], "validation": items[n_train:n_train + n_validation],
            "test": items[n_train + n_validation:]}


# ----------------------------------------------------------------------------- Shakespeare

def shakespeare(split=None):
    """Tiny Shakespeare (Karpathy's char-rnn corpus): 1,115,394 characters of plays as one string.

    Speeches look like "ROMEO:\\nBut soft, what light ...\\n\\n".  The splits are contiguous,
    cut between two speeches: "train" the first 90% of the characters, "validation"
    the next 5%, "test" the last 5% (so held-out text comes from plays, scenes and
    speakers the model may not have read, as in nanoGPT's 90/10 split).
    """
    _check_split("shakespeare", split)
    text = _read_gzip("tinyshakespeare.txt.gz")
    if split is None:
        return text
    first = text.index("\n\n", int(0.90 * len(text))) + 2      # cut between two speeches
    second = text.index("\n\n", int(0.95 * len(text))) + 2
    return {"train": text[:first], "validation": text[first:second], "test": text[second:]}[split]


# ----------------------------------------------------------------------------- names

def names_by_language(split=None):
    """Surnames by language (PyTorch's name-classification tutorial): {language: [names]}.

    18 languages (``LANGUAGES``), 20,077 lines of which 18,018 distinct (language, name)
    pairs: duplicates within a language are dropped (Arabic.txt repeats 108 names to 2,000
    lines), so a test name is never also a training name of the same language.  A name
    listed under two languages stays under both: it is ambiguous.  The split is by
    language (stratified): 80% train, 10% validation, 10% test of each language's names,
    chosen by a hash of the name.  Names keep their accents ("Müller"); each list is sorted.
    """
    _check_split("names_by_language", split)
    result = {}
    for language in LANGUAGES:
        with open(os.path.join(CORPORA, "names", f"{language}.txt"), encoding="utf-8") as file:
            names = sorted({line.strip() for line in file if line.strip()})
        if split is not None:
            names = sorted(_three_way(sorted(names, key=lambda n: _hash_order(f"{language}/{n}")))[split])
        result[language] = names
    return result


# ----------------------------------------------------------------------------- sentence pairs

def _connected_groups(pairs):
    """Groups of pairs linked by a shared English or French sentence (union-find over sentences)."""
    parent = {}

    def root(node):
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]                  # path halving
            node = parent[node]
        return node

    for english, french in pairs:
        a, b = root(("en", english)), root(("fr", french))
        if a != b:
            parent[a] = b
    groups = {}
    for pair in pairs:
        groups.setdefault(root(("en", pair[0])), []).append(pair)
    return list(groups.values())


def _eng_fra(split, attribution):
    rows = [line.split("\t") for line in _read_gzip("eng-fra.txt.gz").splitlines() if line.strip()]
    triples = [(english, french, credit) for english, french, credit in rows]
    if split is not None:
        groups = _connected_groups([(e, f) for e, f, _ in triples])
        groups.sort(key=lambda group: _hash_order(group[0][0] + "\t" + group[0][1]))
        total, chosen, count = len(triples), {"train": set(), "validation": set(), "test": set()}, 0
        for group in groups:                                     # fill test, then validation, then train
            name = "test" if count < 0.1 * total else "validation" if count < 0.2 * total else "train"
            chosen[name].update(group)
            count += len(group)
        triples = [t for t in triples if (t[0], t[1]) in chosen[split]]
    return [t if attribution else t[:2] for t in triples]


def translation_pairs(name="eng-fra", split=None, attribution=False, root=None):
    """Sentence pairs as a list of (source, target) string tuples, in file order.

    ``"eng-fra"`` (shipped): 5,000 short Tatoeba pairs (English, French); for French ->
    English swap them: ``[(fr, en) for en, fr in pairs]``.  One English sentence often has
    several French translations and the other way round; the split keeps every group of
    pairs linked by a shared sentence together (about 80% train, 10% validation, 10%
    test of the pairs), so no English or French sentence of a held-out pair was seen in
    training, and all references of a held-out sentence are in its split.
    ``attribution=True`` adds each pair's CC-BY credit as a third element.

    ``"multi30k"`` (downloaded: ``minigrad.data.download("multi30k")``): image captions,
    (German, English); split "train" 29,000, "validation" 1,014, "test" 1,000 pairs (the
    published Multi30k task-1 splits, test = test2016).  ``root``: the folder
    ``download`` returned, or the cache folder it used (default: ``minigrad.data.cache_dir()``).
    """
    if name not in PAIR_SETS:
        raise ValueError(f"translation_pairs: unknown pair set {name!r}; the pair sets are "
                         f"{', '.join(map(repr, PAIR_SETS))}")
    _check_split("translation_pairs", split)
    if name == "eng-fra":
        if root is not None:
            raise ValueError("translation_pairs: 'eng-fra' ships with minigrad and takes no root folder")
        return _eng_fra(split, attribution)
    if attribution:
        raise ValueError("translation_pairs: attribution=True is for 'eng-fra' (Multi30k has no per-line credit)")
    return multi30k_pairs(split, root)

