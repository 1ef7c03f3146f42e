"""minigrad.data.download against a local HTTP server (127.0.0.1, in a thread): a good archive, one
damaged in transit, a wrong pinned checksum, a connection cut mid-way (then resumed), a server that
ignores Range, an archive that tries to write outside the cache, and no server at all."""
import hashlib
import http.server
import io
import os
import random
import socket
import tarfile
import threading

import pytest

from minigrad import data
from minigrad.data import downloads as dl


def _archive(members):
    """A .tar.gz in memory from {name: bytes}; a name may be hostile ('../x', '/etc/x')."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


GOOD = _archive({"corpus/train.txt": random.Random(0).randbytes(300_000), "corpus/test.txt": b"goodbye\n"})
EVIL = _archive({"corpus/ok.txt": b"fine", "../escaped.txt": b"outside the cache"})


def _symlink_archive():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        link = tarfile.TarInfo("corpus/passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    return buffer.getvalue()


LINK = _symlink_archive()


def sha(content):
    return hashlib.sha256(content).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    """/good, /evil, /link, /not-tar: the file, honouring Range; /corrupt: one byte flipped;
    /truncated: promises the whole file, sends half; /no-range: ignores Range."""
    ranges = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        name = self.path.strip("/")
        body = {"good": GOOD, "corrupt": GOOD, "truncated": GOOD, "no-range": GOOD, "evil": EVIL, "link": LINK,
                "not-tar": b"this is not an archive" * 100}.get(name)
        if body is None:
            self.send_error(404)
            return
        if name == "corrupt":
            body = body[:1000] + bytes([body[1000] ^ 0xFF]) + body[1001:]
        requested = self.headers.get("Range")
        Handler.ranges.append((name, requested))
        start = int(requested[len("bytes="):-1]) if requested and name != "no-range" else 0
        if start >= len(body):                                  # nothing left to send
            self.send_error(416)
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if name == "truncated":
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)      # the connection drops mid-way
            return
        self.wfile.write(body[start:])


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def register(monkeypatch):
    """register(urls, sha256) makes data set 'fixture' download 'fixture.tar.gz' from those URLs."""
    def make(urls, sha256, size=None):
        monkeypatch.setitem(dl.DATASETS, "fixture", (dl.Remote("fixture.tar.gz", tuple(urls), sha256, size),))
    return make


def test_good_archive_is_checked_unpacked_and_not_fetched_twice(server, register, tmp_path, capsys):
    register([f"{server}/good"], sha(GOOD), len(GOOD))
    Handler.ranges.clear()
    folder = data.download("fixture", root=tmp_path)
    assert folder == str(tmp_path / "fixture")
    assert (tmp_path / "fixture" / "corpus" / "train.txt").read_bytes() == random.Random(0).randbytes(300_000)
    assert (tmp_path / "fixture" / "fixture.tar.gz").read_bytes() == GOOD
    assert not list((tmp_path / "fixture").glob("*.part")) and not list((tmp_path / "fixture").glob(".unpack-*"))
    assert "fixture: fixture.tar.gz  [" in capsys.readouterr().err
    (tmp_path / "fixture" / "corpus" / "test.txt").write_bytes(b"edited")
    assert data.download("fixture", root=tmp_path) == folder                 # cached: no second request,
    assert Handler.ranges == [("good", None)]
    assert (tmp_path / "fixture" / "corpus" / "test.txt").read_bytes() == b"edited"   # and no second unpack


def test_progress_bar_reaches_the_total(server, register, tmp_path, capsys):
    register([f"{server}/good"], sha(GOOD))
    data.download("fixture", root=tmp_path)
    err = capsys.readouterr().err
    assert "[" + "#" * 30 + "] 100%" in err and f"{len(GOOD) / 1e6:.1f} MB" in err
    data.download("fixture", root=tmp_path / "quiet", progress=False)
    assert capsys.readouterr().err == ""


def test_cache_folder_from_the_environment_and_the_argument(server, register, tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_DATA", str(tmp_path / "from-env"))
    assert data.cache_dir() == str(tmp_path / "from-env")
    assert data.cache_dir(tmp_path / "arg") == str(tmp_path / "arg")
    monkeypatch.delenv("MINIGRAD_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert data.cache_dir() == str(tmp_path / "xdg" / "minigrad")
    monkeypatch.setenv("MINIGRAD_DATA", str(tmp_path / "from-env"))
    register([f"{server}/good"], sha(GOOD))
    assert data.download("fixture", progress=False) == str(tmp_path / "from-env" / "fixture")


def test_damaged_in_transit_fails_the_checksum_and_leaves_nothing(server, register, tmp_path):
    register([f"{server}/corrupt"], sha(GOOD))
    with pytest.raises(data.ChecksumError, match=f"not the pinned {sha(GOOD)}.*deleted") as error:
        data.download("fixture", root=tmp_path, progress=False)
    assert f"{server}/corrupt" in str(error.value)
    assert os.listdir(tmp_path / "fixture") == []                            # no .part, no archive, no folder


def test_wrong_pinned_checksum_is_refused(server, register, tmp_path):
    register([f"{server}/good"], "0" * 64)
    with pytest.raises(data.ChecksumError, match=f"has SHA-256 {sha(GOOD)}, not the pinned {'0' * 64}"):
        data.download("fixture", root=tmp_path, progress=False)
    assert os.listdir(tmp_path / "fixture") == []


def test_interrupted_download_resumes_where_it_stopped(server, register, tmp_path):
    register([f"{server}/truncated"], sha(GOOD))
    with pytest.raises(data.DownloadError, match=r"(interrupted|stopped) after .*call download again to resume"):
        data.download("fixture", root=tmp_path, progress=False)
    part = tmp_path / "fixture" / "fixture.tar.gz.part"
    assert part.read_bytes() == GOOD[:len(GOOD) // 2]                       # kept for the next call
    assert not (tmp_path / "fixture" / "fixture.tar.gz").exists()           # never the final name
    register([f"{server}/good"], sha(GOOD))
    Handler.ranges.clear()
    data.download("fixture", root=tmp_path, progress=False)
    assert Handler.ranges == [("good", f"bytes={len(GOOD) // 2}-")]         # only the rest was asked for
    assert (tmp_path / "fixture" / "corpus" / "test.txt").read_bytes() == b"goodbye\n"
    assert not part.exists()


def test_a_server_that_ignores_range_gives_a_clean_restart(server, register, tmp_path):
    (tmp_path / "fixture").mkdir()
    (tmp_path / "fixture" / "fixture.tar.gz.part").write_bytes(GOOD[:500])
    register([f"{server}/no-range"], sha(GOOD))
    data.download("fixture", root=tmp_path, progress=False)
    assert (tmp_path / "fixture" / "fixture.tar.gz").read_bytes() == GOOD   # not GOOD[:500] + GOOD


@pytest.mark.parametrize("route, member", [("evil", "'../escaped.txt'"), ("link", "'corpus/passwd' is a link")])
def test_archive_writing_outside_the_cache_is_refused(server, register, tmp_path, route, member):
    body = EVIL if route == "evil" else LINK
    register([f"{server}/{route}"], sha(body))
    with pytest.raises(data.UnsafeArchiveError, match=f"refusing to unpack .*{member}"):
        data.download("fixture", root=tmp_path / "cache", progress=False)
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "cache" / "escaped.txt").exists()
    assert sorted(os.listdir(tmp_path / "cache" / "fixture")) == ["fixture.tar.gz"]   # nothing unpacked, no marker


def test_a_file_that_is_not_an_archive_says_so(server, register, tmp_path):
    body = b"this is not an archive" * 100
    register([f"{server}/not-tar"], sha(body))
    with pytest.raises(data.DownloadError, match="is not a readable .tar.gz"):
        data.download("fixture", root=tmp_path, progress=False)


def test_offline_error_names_the_url_the_file_and_where_to_put_it(register, tmp_path):
    with socket.socket() as probe:                      # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/aclImdb_v1.tar.gz"
    register([url, f"http://127.0.0.1:{port}/mirror"], sha(GOOD), len(GOOD))
    with pytest.raises(data.DownloadError) as error:
        data.download("fixture", root=tmp_path, progress=False)
    message = str(error.value)
    assert url in message and "/mirror" in message                          # every URL tried
    assert str(tmp_path / "fixture" / "fixture.tar.gz") in message and sha(GOOD) in message
    assert f"{len(GOOD):,} bytes" in message and "by hand" in message


def test_a_file_put_there_by_hand_is_checked_and_used(register, tmp_path):
    register(["http://127.0.0.1:9/unused"], sha(GOOD))
    (tmp_path / "fixture").mkdir()
    (tmp_path / "fixture" / "fixture.tar.gz").write_bytes(GOOD)
    data.download("fixture", root=tmp_path, progress=False)                 # no network needed
    assert (tmp_path / "fixture" / "corpus" / "test.txt").exists()
    register(["http://127.0.0.1:9/unused"], "1" * 64)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "fixture").mkdir()
    (tmp_path / "other" / "fixture" / "fixture.tar.gz").write_bytes(GOOD)
    with pytest.raises(data.ChecksumError, match="is there but its SHA-256 is .* Delete it"):
        data.download("fixture", root=tmp_path / "other", progress=False)


def test_unknown_data_set():
    with pytest.raises(ValueError, match="unknown data set 'imbd'; the data sets are 'imdb', 'multi30k'"):
        data.download("imbd")


def test_pins_are_sha256_of_the_published_archives():
    imdb, = data.DATASETS["imdb"]
    assert imdb.filename == "aclImdb_v1.tar.gz" and imdb.size == 84125825
    assert imdb.urls[0].startswith("https://ai.stanford.edu/~amaas/")
    assert [r.filename for r in data.DATASETS["multi30k"]] == ["training.tar.gz", "validation.tar.gz",
                                                              "mmt16_task1_test.tar.gz"]
    for remote in data.DATASETS["imdb"] + data.DATASETS["multi30k"]:
        assert len(remote.sha256) == 64 and int(remote.sha256, 16) >= 0


def _imdb_folder(root, reviews):
    for split in ("train", "test"):
        for label in ("pos", "neg", *(("unsup",) if split == "train" else ())):
            folder = root / "imdb" / "aclImdb" / split / label
            folder.mkdir(parents=True)
            for i in range(reviews):
                (folder / f"{i}_7.txt").write_text(f"{label} review {i}<br />")


def test_imdb_reads_the_downloaded_folder_without_the_unlabeled_reviews(tmp_path, monkeypatch):
    _imdb_folder(tmp_path, 3)
    texts, labels = data.imdb("train", root=tmp_path)
    assert len(texts) == 6 and labels == [0, 0, 0, 1, 1, 1] and texts[0].startswith("neg review")
    assert data.imdb("test", root=tmp_path / "imdb") == data.imdb("test", root=tmp_path / "imdb" / "aclImdb")
    monkeypatch.setenv("MINIGRAD_DATA", str(tmp_path))
    assert data.imdb("test") == data.imdb("test", root=tmp_path)
    with pytest.raises(FileNotFoundError, match=r"imdb is not downloaded .*minigrad.data.download\('imdb'\)"):
        data.imdb("train", root=tmp_path / "nowhere")


def test_multi30k_reads_the_downloaded_folder(tmp_path):
    folder = tmp_path / "multi30k"
    folder.mkdir()
    for prefix, n in (("train", 3), ("val", 2), ("test", 1)):
        (folder / f"{prefix}.de").write_text("".join(f"ein Hund {prefix} {i}\n" for i in range(n)))
        (folder / f"{prefix}.en").write_text("".join(f"a dog {prefix} {i}\n" for i in range(n)))
    assert data.translation_pairs("multi30k", "validation", root=tmp_path) == [
        ("ein Hund val 0", "a dog val 0"), ("ein Hund val 1", "a dog val 1")]
    assert len(data.translation_pairs("multi30k", root=folder)) == 6
    with pytest.raises(FileNotFoundError, match="multi30k is not downloaded"):
        data.translation_pairs("multi30k", "train", root=tmp_path / "nowhere")


def test_a_complete_part_left_before_the_rename_is_used(server, register, tmp_path):
    (tmp_path / "fixture").mkdir()
    (tmp_path / "fixture" / "fixture.tar.gz.part").write_bytes(GOOD)      # the rename never happened
    register([f"{server}/good"], sha(GOOD))
    Handler.ranges.clear()
    data.download("fixture", root=tmp_path, progress=False)
    assert Handler.ranges == [("good", f"bytes={len(GOOD)}-")]             # answered 416: nothing left
    assert (tmp_path / "fixture" / "fixture.tar.gz").read_bytes() == GOOD
