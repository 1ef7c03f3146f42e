"""The lessons' real-data options that need a download, run on a stand-in: an aclImdb-shaped folder of
generated reviews in a temporary cache (MINIGRAD_DATA), so no test touches the network (lesson 11's
whole path downloads a tiny archive of that layout from a server on 127.0.0.1)."""
import hashlib
import http.server
import os
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from imdb_standin import write_imdb_standin
from minigrad import data
from minigrad.data import downloads

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
    # quick mode: 600 stand-in training reviews split 540 / 60 as the tutorial splits 25,000 (22,500 / 2,500)
    assert "IMDB reviews (first 200 words), 540 training examples, 60 held out, 500 test, 1 epochs of batches " \
           "of 128" in output
    assert "Transformer, the Technion tutorial (published)" in output
    assert "against the Technion tutorial's 0.822" in output and "Keras" not in output
    assert "accuracy checks run in full mode only" in output


def _tiny_imdb_archive(folder):
    """aclImdb_v1.tar.gz in IMDB's layout (aclImdb/train/pos, neg, unsup; aclImdb/test/pos, neg), 20 short
    reviews per class and split."""
    source = write_imdb_standin(folder / "source", reviews_per_class=20, words=40)
    archive = folder / "aclImdb_v1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(os.path.join(source, "aclImdb"), arcname="aclImdb")
    return archive


def test_the_whole_imdb_path_of_lesson_11_on_a_tiny_archive_served_from_127_0_0_1(tmp_path, monkeypatch):
    """download("imdb") from a local server (checked against its SHA-256 and unpacked), then the lesson in full
    mode (the tutorial's 10 epochs, batches of 128, AdamW, the 90 / 10 split, 50,000 words, the LayerNorm after
    the embedding) on what it fetched: every step of `--data imdb` but the size."""
    archive = _tiny_imdb_archive(tmp_path)
    content = archive.read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        remote = downloads.Remote("aclImdb_v1.tar.gz", (f"http://127.0.0.1:{server.server_address[1]}/imdb",),
                                  hashlib.sha256(content).hexdigest(), len(content))
        monkeypatch.setitem(downloads.DATASETS, "imdb", (remote,))
        folder = data.download("imdb", root=tmp_path / "cache", progress=False)
    finally:
        server.shutdown()
        server.server_close()
    assert sorted(os.listdir(os.path.join(folder, "aclImdb", "train"))) == ["neg", "pos", "unsup"]
    env = {k: v for k, v in os.environ.items() if k != "MINIGRAD_QUICK"}      # full mode
    env.update(PYTHONPATH=str(ROOT), MINIGRAD_DATA=str(tmp_path / "cache"), MINIGRAD_LESSON_OUT=str(tmp_path / "out"),
               MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, str(ROOT / "lessons" / "11_transformer_classifier.py"), "--data", "imdb"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "(quick mode" not in output
    assert "36 training / 4 validation / 40 test examples" in output
    assert "IMDB reviews (first 200 words), 36 training examples, 4 held out, 40 test, 10 epochs of batches of 128" \
           in output
    assert "(embedding_norm): LayerNorm" in output                  # the tutorial's LayerNorm after the embedding
    assert "against the Technion tutorial's 0.822" in output
    assert "(40 training reviews, not IMDB's 25,000: the accuracy checks need the real reviews)" in output


def test_transformer_lesson_without_the_download_says_how_to_get_it(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_QUICK="1", MINIGRAD_DATA=str(tmp_path / "empty"),
               MINIGRAD_LESSON_OUT=str(tmp_path), MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, str(ROOT / "lessons" / "11_transformer_classifier.py"), "--data", "imdb"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode != 0
    assert "imdb is not downloaded" in result.stderr and "minigrad.data.download('imdb')" in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr, result.stderr   # one line


def test_sentiment_lesson_reads_the_downloaded_imdb(cache, tmp_path):
    output = _lesson("06_sentiment.py", cache, tmp_path, "--imdb", "--names", "Nakamura, Kowalski")
    assert "IMDB (500 training reviews, first 200 words" in output
    assert "classes ['neg', 'pos']" in output                      # the unlabeled train/unsup folder is left out
    assert "Nakamura" in output and "Kowalski" in output
