"""Generated datasets (deterministic, correct by construction), the stdlib corpus, and file loaders."""
import re

import numpy as np
import pytest

import minigrad
from minigrad import data
from minigrad.text import Vocab, word_tokenize


def test_sine_waves_shapes_determinism_and_targets():
    x, y = data.sine_waves(8, steps=50, horizon=2, noise=0.0, seed=1)
    assert x.shape == (8, 50, 1) and y.shape == (8, 2) and x.dtype == minigrad.float32
    again, _ = data.sine_waves(8, steps=50, horizon=2, noise=0.0, seed=1)
    assert np.array_equal(x.numpy(), again.numpy())
    assert not np.array_equal(x.numpy(), data.sine_waves(8, seed=2)[0].numpy())
    # noise-free: the series is smooth, so the target is close to the last value
    assert np.all(np.abs(y.numpy()[:, 0] - x.numpy()[:, -1, 0]) < 1.3)
    assert np.abs(x.numpy()).max() <= 2.0


def test_adding_problem_marks_two_values_one_per_half():
    x, y = data.adding_problem(50, length=20, seed=0)
    values, markers = x.numpy()[:, :, 0], x.numpy()[:, :, 1]
    assert np.all(markers.sum(axis=1) == 2)
    assert np.all(markers[:, :10].sum(axis=1) == 1)
    assert np.allclose((values * markers).sum(axis=1), y.numpy()[:, 0], atol=1e-6)


def test_copy_and_reverse_tasks():
    sources, targets = data.copy_task(20, n_symbols=5, min_len=2, max_len=6, seed=3)
    assert sources == targets and all(2 <= len(s) <= 6 for s in sources)
    assert {t for s in sources for t in s} <= set(range(4, 9))
    rsources, rtargets = data.reverse_task(20, n_symbols=5, min_len=2, max_len=6, seed=3)
    assert rsources == sources and all(t == s[::-1] for s, t in zip(rsources, rtargets))


def test_dates_targets_are_iso_and_agree_with_the_source():
    months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    pairs = data.dates(200, seed=0)
    assert pairs == data.dates(200, seed=0) and len({p[0] for p in pairs}) > 150
    for human, iso in pairs:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", iso)
        year, month, day = (int(v) for v in iso.split("-"))
        assert str(day) in human and (str(year) in human or f"{year % 100:02d}" in human)
        assert months[month - 1] in human.lower() or f"{month:02d}" in human


def test_sentiment_labels_follow_negation_and_order():
    examples = data.sentiment(400, seed=0)
    assert examples == data.sentiment(400, seed=0)
    positive = {"good", "great", "fun", "moving", "clever", "funny", "beautiful", "gripping"}

    def clause_polarity(words):
        sign = 1 if words[-1] in positive else -1
        return -sign if ("not" in words or "never" in words) else sign

    kinds = set()
    for text, label in examples:
        last_clause = re.split(r" but | and ", text)[-1].split()
        assert label == (clause_polarity(last_clause) > 0)
        kinds |= {"not" in text.split() or "never" in text.split(), " but " in text}
    assert kinds == {True, False}
    assert 0.3 < np.mean([label for _, label in examples]) < 0.7


def test_translation_is_a_word_order_permutation():
    for english, target in data.translation(50, seed=1):
        assert len(english.split()) == len(target.split())
    assert data.translation(1, seed=0) == data.translation(1, seed=0)
    inverse = {v: k for k, v in data.synthetic._LEXICON.items()}
    for english, target in data.translation(100, seed=2):
        words, back = english.split(), [inverse[w] for w in target.split()]
        assert sorted(words) == sorted(back)                 # word for word
        verb = next(w for w in words if w in data.synthetic._TRANSITIVE)
        assert back[-1] == verb                              # verb-final
        subject = words[:words.index(verb)]
        assert back[:len(subject)] == subject[::-1]          # noun phrases reversed


def test_stdlib_corpus_is_deterministic_prose():
    text = data.stdlib_corpus()
    assert len(text) > 100_000
    assert ">>>" not in text
    assert text == "\n\n".join(text.split("\n\n"))
    vocab = Vocab.build([word_tokenize(text)], min_freq=3)
    assert "the" in vocab and len(vocab) > 1000


def test_read_text(tmp_path):
    (tmp_path / "a.txt").write_text("hello\nworld", encoding="utf-8")
    assert data.read_text(tmp_path / "a.txt") == "hello\nworld"
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        data.read_text(tmp_path / "missing.txt")


def test_load_text_folder(tmp_path):
    for label, texts in {"pos": ["great fun", "loved it"], "neg": ["dull"]}.items():
        (tmp_path / "train" / label).mkdir(parents=True)
        for i, text in enumerate(texts):
            (tmp_path / "train" / label / f"{i}_7.txt").write_text(text + "\n", encoding="utf-8")
    texts, labels, classes = data.load_text_folder(tmp_path, "train")
    assert classes == ["neg", "pos"] and texts == ["dull", "great fun", "loved it"] and labels == [0, 1, 1]
    shuffled = data.load_text_folder(tmp_path, "train", shuffle=True, seed=1)
    assert sorted(zip(*shuffled[:2])) == sorted(zip(texts, labels))
    with pytest.raises(FileNotFoundError, match="test"):
        data.load_text_folder(tmp_path, "test")


def test_load_parallel(tmp_path):
    (tmp_path / "src.txt").write_text("a dog\n\nthe cat\n", encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("ein Hund\nleer\ndie Katze\n", encoding="utf-8")
    assert data.load_parallel(tmp_path / "src.txt", tmp_path / "tgt.txt") == [("a dog", "ein Hund"),
                                                                              ("the cat", "die Katze")]
    (tmp_path / "short.txt").write_text("one line\n", encoding="utf-8")
    with pytest.raises(ValueError, match="3 lines"):
        data.load_parallel(tmp_path / "src.txt", tmp_path / "short.txt")
    with pytest.raises(FileNotFoundError):
        data.load_parallel(tmp_path / "nope.txt", tmp_path / "tgt.txt")


def test_load_embeddings_aligns_rows_and_reports_oov(tmp_path, device):
    path = tmp_path / "vectors.txt"
    path.write_text("the 0.1 0.2 0.3\ncat 1 2 3\nDog 4 5 6\n", encoding="utf-8")
    vocab = Vocab(["the", "cat", "dog", "zebra"])
    embedding, report = data.load_embeddings(path, vocab, device=device)
    weight = embedding.weight.numpy()
    assert weight.shape == (8, 3) and embedding.weight.device == device
    assert np.allclose(weight[vocab["cat"]], [1, 2, 3]) and np.allclose(weight[vocab["the"]], [0.1, 0.2, 0.3])
    assert np.all(weight[0] == 0)
    assert report["found"] == 2 and report["oov_tokens"] == ["<unk>", "<bos>", "<eos>", "dog", "zebra"]
    assert not embedding.weight.requires_grad
    embedding, report = data.load_embeddings(path, Vocab(["Dog"]))
    assert report["found"] == 1 and np.allclose(embedding.weight.numpy()[4], [4, 5, 6])   # lowercase fallback


def test_embedding_files_with_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("the 0.1 0.2\ncat 1 x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        data.read_vectors(bad)
    bad.write_text("2 3\nthe 0.1 0.2 0.3\ncat 1 2\n", encoding="utf-8")   # header skipped, width differs
    with pytest.raises(ValueError, match="line 3.*2 numbers.*3"):
        data.read_vectors(bad)
    with pytest.raises(FileNotFoundError):
        data.load_embeddings(tmp_path / "missing.txt", Vocab())


def test_time_series_is_gerons_setup():
    """Hands-On ML ch. 15: 10,000 series of 51 steps, naive forecast MSE about 0.020 on the validation rows."""
    series = data.time_series(10000, n_steps=51, seed=0).numpy()[:, :, 0]
    assert series.shape == (10000, 51) and series.dtype == np.float32
    assert np.abs(series).max() <= 0.5 + 0.2 + 0.05
    validation = series[7000:9000]
    naive = np.mean((validation[:, -1] - validation[:, -2]) ** 2)
    assert 0.018 < naive < 0.023, naive
    np.testing.assert_array_equal(data.time_series(5, seed=1).numpy(), data.time_series(5, seed=1).numpy())
    assert not np.array_equal(data.time_series(5, seed=1).numpy(), data.time_series(5, seed=2).numpy())


def test_time_series_follows_the_formula():
    rng = np.random.default_rng(4)
    f1, f2, o1, o2 = rng.random((4, 3, 1))
    noise = rng.random((3, 20))
    t = np.linspace(0, 1, 20)
    expected = (0.5 * np.sin((t - o1) * (f1 * 10 + 10)) + 0.2 * np.sin((t - o2) * (f2 * 20 + 20))
                + 0.1 * (noise - 0.5))
    np.testing.assert_allclose(data.time_series(3, n_steps=20, seed=4).numpy()[:, :, 0], expected, atol=1e-6)
