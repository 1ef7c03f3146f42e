"""The corpora that ship with minigrad: the files are the published ones, and the splits are fixed,
disjoint and complete."""
import gzip
import hashlib
import os

import pytest

from minigrad import data
from minigrad.data import shipped

EXPECTED_SHA256 = {   # minigrad/data/corpora/SOURCES.md
    "tinyshakespeare.txt.gz": "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    "eng-fra.txt.gz": "d952b56a181da5270b7bb4ded3f3bbe61e67a9b1de0e0fbc1d46438c71fb55a7",
    "names": "110a82ab049a19a2c72a6e4fd2454c537043939c572364d8e6a5200d97d84f8e",
}


def test_shipped_files_are_the_published_ones_and_sources_list_them():
    for name in ("tinyshakespeare.txt.gz", "eng-fra.txt.gz"):
        with gzip.open(os.path.join(shipped.CORPORA, name), "rb") as file:
            assert hashlib.sha256(file.read()).hexdigest() == EXPECTED_SHA256[name], name
    names = hashlib.sha256()
    for language in data.LANGUAGES:
        with open(os.path.join(shipped.CORPORA, "names", f"{language}.txt"), "rb") as file:
            names.update(file.read())
    assert names.hexdigest() == EXPECTED_SHA256["names"]
    with open(os.path.join(shipped.CORPORA, "SOURCES.md"), encoding="utf-8") as file:
        sources = file.read()
    for name, digest in EXPECTED_SHA256.items():
        assert digest in sources, f"SOURCES.md does not list the checksum of {name}"
    for licence in ("public domain", "CC-BY 2.0", "BSD-3-Clause"):
        assert licence in sources
    assert sorted(os.listdir(os.path.join(shipped.CORPORA, "names"))) == [f"{x}.txt" for x in data.LANGUAGES]


def test_shakespeare_splits_are_contiguous_and_start_a_speech():
    text = data.shakespeare()
    assert len(text) == 1115394 and text.startswith("First Citizen:\nBefore we proceed")
    parts = [data.shakespeare(split) for split in data.SPLITS]
    assert "".join(parts) == text
    assert [round(len(p) / len(text), 2) for p in parts] == [0.9, 0.05, 0.05]
    for part in parts:
        speaker = part.split("\n", 1)[0]
        assert speaker.endswith(":") and speaker[:-1].replace(" ", "").isalpha(), speaker
    assert data.shakespeare("validation").startswith("GREMIO:\nGood morrow, neighbour Baptista.")


def test_names_split_is_stratified_disjoint_and_fixed():
    everything = data.names_by_language()
    assert list(everything) == list(data.LANGUAGES) and len(everything) == 18
    assert sum(map(len, everything.values())) == 18018                      # distinct (language, name) pairs
    assert len(everything["Arabic"]) == 108 and "Nguyen" in everything["Vietnamese"]
    assert all(n == n.strip() and n for names in everything.values() for n in names)
    splits = {split: data.names_by_language(split) for split in data.SPLITS}
    for language, names in everything.items():
        parts = [set(splits[s][language]) for s in data.SPLITS]
        assert sorted(set.union(*parts)) == names
        assert sum(map(len, parts)) == len(names)                           # disjoint
        assert abs(len(parts[2]) - 0.1 * len(names)) <= 1 and abs(len(parts[1]) - 0.1 * len(names)) <= 1
    # fixed by the text alone: these are the test names of the smallest language on every run
    assert splits["test"]["Vietnamese"] == data.names_by_language("test")["Vietnamese"]
    assert len(splits["test"]["Vietnamese"]) == 7


def test_translation_pairs_split_keeps_every_sentence_in_one_split():
    everything = data.translation_pairs("eng-fra")
    assert len(everything) == 5000 and everything[0] == ("Go.", "Va !")
    splits = {split: data.translation_pairs("eng-fra", split) for split in data.SPLITS}
    assert sorted(p for s in data.SPLITS for p in splits[s]) == sorted(everything)
    assert [len(splits[s]) for s in data.SPLITS] == [3997, 502, 501]
    for side in (0, 1):                                                    # English, then French
        seen = [{pair[side] for pair in splits[s]} for s in data.SPLITS]
        assert not seen[0] & seen[1] and not seen[0] & seen[2] and not seen[1] & seen[2]
    credited = data.translation_pairs("eng-fra", "test", attribution=True)
    assert [c[:2] for c in credited] == splits["test"]
    assert all(c[2].startswith("CC-BY 2.0 (France) Attribution: tatoeba.org #") for c in credited)


def test_bad_arguments_say_what_to_use():
    with pytest.raises(ValueError, match="shakespeare: unknown split 'valid'.*'validation'"):
        data.shakespeare("valid")
    with pytest.raises(ValueError, match="unknown pair set 'fra-eng'.*'eng-fra'"):
        data.translation_pairs("fra-eng")
    with pytest.raises(ValueError, match="names_by_language: unknown split"):
        data.names_by_language("dev")
