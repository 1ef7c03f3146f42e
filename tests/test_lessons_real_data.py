"""The lessons' real-data options that need a download, run on a stand-in: an aclImdb-shaped folder of
generated reviews in a temporary cache (MINIGRAD_DATA), so no test touches the network."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from imdb_standin import write_imdb_standin

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("cache")
    write_imdb_standin(root, reviews_per_class=300, words=120)
    return root


def _lesson(name, cache, out, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_QUICK="1", MINIGRAD_DATA=str(cache),
               MINIGRAD_LESSON_OUT=str(out), MPLBACKEND="Agg", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    result = subprocess.run([sys.executable, str(ROOT / "lessons" / name), *args], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=240)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "unknown option" not in output and "unexpected argument" not in output   # the lesson's own options
    return output


def test_transformer_lesson_trains_on_the_downloaded_imdb(cache, tmp_path):
    output = _lesson("11_transformer_classifier.py", cache, tmp_path, "--data", "imdb")
    assert "IMDB reviews (first 200 words), 600 training examples, 500 held out" in output
    assert "Transformer, the course slides (published)" in output and "against the slides' 0.82" in output
    assert "accuracy checks run in full mode only" in output


def test_transformer_lesson_without_the_download_says_how_to_get_it(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_QUICK="1", MINIGRAD_DATA=str(tmp_path / "empty"),
               MINIGRAD_LESSON_OUT=str(tmp_path), MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, str(ROOT / "lessons" / "11_transformer_classifier.py"), "--data", "imdb"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode != 0
    assert "imdb is not downloaded" in result.stderr and "minigrad.data.download('imdb')" in result.stderr


def test_sentiment_lesson_reads_the_downloaded_imdb(cache, tmp_path):
    output = _lesson("06_sentiment.py", cache, tmp_path, "--imdb", "--names", "Nakamura, Kowalski")
    assert "IMDB (500 training reviews, first 200 words" in output
    assert "classes ['neg', 'pos']" in output                      # the unlabeled train/unsup folder is left out
    assert "Nakamura" in output and "Kowalski" in output
