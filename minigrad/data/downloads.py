"""The large data sets, with one call: download, check, unpack, into a cache folder.

    folder = download("imdb")            # 84 MB once; later calls return at once
    texts, labels = imdb("train")        # 25,000 reviews
    pairs = translation_pairs("multi30k", "train")      # after download("multi30k")

Nothing here runs unless you call it: no lesson default, test or CI run touches
the network.  What ``download`` does, and why:

1. The archive is written to ``<file>.part`` and renamed to ``<file>`` only once
   its SHA-256 matches the pinned value (``DATASETS``): a half-written or
   corrupted file never has the final name.
2. An interrupted download leaves its ``.part``; the next call asks the server
   for the rest (an HTTP Range request) and appends it, or starts again from
   zero if the server sends the whole file instead.
3. Unpacking refuses any archive member that would land outside the data
   set's folder (an absolute path, "..", a link, a device), before writing
   anything, and unpacks into a temporary folder that is renamed into place.
4. Offline (or behind a firewall), the error names the URL, the file, its size
   and checksum, and where to put it by hand: ``download`` then finds it,
   checks it and unpacks it.

The cache folder: the ``root`` argument, else the MINIGRAD_DATA environment
variable, else ``$XDG_CACHE_HOME/minigrad`` (``~/.cache/minigrad``).  Each data
set gets its own sub-folder: ``<cache>/imdb/``, ``<cache>/multi30k/``.
"""
import hashlib
import http.client
import os
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections import namedtuple

from .loaders import load_parallel, load_text_folder

Remote = namedtuple("Remote", "filename urls sha256 size")
"""One archive: its file name, the URLs to try in order, its SHA-256 and size in bytes (None if unknown)."""

MULTI30K_MIRROR = "https://raw.githubusercontent.com/neychev/small_DL_repo/master/datasets/Multi30k"

DATASETS = {
    # Maas et al. (2011), the Large Movie Review Dataset.  SHA-256 and size as pinned by
    # TensorFlow Datasets (tensorflow_datasets/datasets/imdb_reviews/checksums.tsv).
    "imdb": (Remote("aclImdb_v1.tar.gz", ("https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",),
                    "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe", 84125825),),
    # Elliott et al. (2016), Multi30k task 1 (German-English).  SHA-256 as pinned by torchtext
    # (torchtext/datasets/multi30k.py, its "MD5" dict holds SHA-256 sums).  The Sheffield server is
    # often down; the GitHub copy is the one torchtext's users point it to, with the same pinned sums
    # checked (not verified from this machine, which cannot download: the check guards either way).
    "multi30k": tuple(
        Remote(filename, (f"http://www.quest.dcs.shef.ac.uk/wmt16_files_mmt/{filename}",
                          f"{MULTI30K_MIRROR}/{filename}"), sha256, None)
        for filename, sha256 in (
            ("training.tar.gz", "20140d013d05dd9a72dfde46478663ba05737ce983f478f960c1123c6671be5e"),
            ("validation.tar.gz", "a7aa20e9ebd5ba5adce7909498b94410996040857154dab029851af3a866da8c"),
            ("mmt16_task1_test.tar.gz", "0681be16a532912288a91ddd573594fbdd57c0fbb81486eff7c55247e35326c2"))),
}
CHUNK = 1 << 16


class DownloadError(OSError):
    """The data could not be fetched (offline, interrupted, server error); the message says what to do."""


class ChecksumError(DownloadError):
    """The file's SHA-256 is not the pinned one."""


class UnsafeArchiveError(DownloadError):
    """An archive member would be written outside the data set's folder."""


class _Unreachable(DownloadError):
    """This URL gave nothing (no connection, an HTTP error): the next URL is tried."""


def cache_dir(root=None):
    """The cache folder: ``root``, else $MINIGRAD_DATA, else $XDG_CACHE_HOME/minigrad (~/.cache/minigrad)."""
    if root is not None:
        return os.path.abspath(os.fspath(root))
    if os.environ.get("MINIGRAD_DATA"):
        return os.path.abspath(os.environ["MINIGRAD_DATA"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "minigrad")


def download(name, root=None, progress=True):
    """Fetch, check and unpack the data set ``name`` ("imdb" or "multi30k"); returns its folder.

    A data set already unpacked there is not fetched again.  See the module
    docstring for the cache folder, resuming and what happens offline.
    """
    if name not in DATASETS:
        raise ValueError(f"download: unknown data set {name!r}; the data sets are {', '.join(map(repr, DATASETS))}")
    folder = os.path.join(cache_dir(root), name)
    os.makedirs(folder, exist_ok=True)
    for remote in DATASETS[name]:
        marker = os.path.join(folder, f".{remote.filename}.unpacked")
        if os.path.exists(marker):
            continue
        archive = fetch(remote, folder, progress=progress, label=name)
        unpack(archive, folder)
        with open(marker, "w") as file:
            file.write(remote.sha256 + "\n")
    return folder


def _by_hand(remote, path):
    size = f"{remote.size:,} bytes, " if remote.size else ""
    return (f"To get it by hand, download {remote.urls[0]} and put it at {path} ({size}sha256 {remote.sha256}); "
            "then call download again: it checks and unpacks it.")


def fetch(remote, folder, progress=True, label=None):
    """Download one ``Remote`` archive into ``folder`` (resuming a ``.part``); returns the checked file's path."""
    path = os.path.join(folder, remote.filename)
    if os.path.exists(path):                              # fetched earlier, or put there by hand
        found = sha256_file(path)
        if found != remote.sha256:
            raise ChecksumError(f"{path} is there but its SHA-256 is {found}, not the expected {remote.sha256}: "
                                f"it is not the published {remote.filename}. Delete it and call download again. "
                                + _by_hand(remote, path))
        return path
    failures = []
    for url in remote.urls:
        try:
            _fetch_url(url, path + ".part", remote, progress, label or remote.filename)
            break
        except _Unreachable as error:                     # try the next URL
            failures.append(f"{url}: {error}")
    else:
        raise DownloadError(f"could not download {remote.filename} ({'; '.join(failures)}). "
                            "Offline or behind a firewall? " + _by_hand(remote, path))
    found = sha256_file(path + ".part")
    if found != remote.sha256:
        os.remove(path + ".part")                         # a wrong file is never resumed
        raise ChecksumError(f"{remote.filename} from {url} has SHA-256 {found}, not the pinned {remote.sha256}: "
                            "the download was corrupted or the file on the server changed, so it was deleted. "
                            "Call download again. " + _by_hand(remote, path))
    os.replace(path + ".part", path)                      # the final name only for a checked file
    return path


def _fetch_url(url, part, remote, progress, label):
    """Write ``url`` into ``part``, appending to what an earlier, interrupted call left there."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    request = urllib.request.Request(url, headers={"User-Agent": "minigrad"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=30)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:                    # nothing after what we have:
            if sha256_file(part) == remote.sha256:        # complete already (stopped before the rename),
                return
            os.remove(part)                               # or longer than the file: start again
            return _fetch_url(url, part, remote, progress, label)
        raise _Unreachable(f"HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        raise _Unreachable(str(getattr(error, "reason", error))) from None
    with response:
        if have and response.status != 206:               # the server ignored the range: the whole file comes
            have = 0
        length = response.headers.get("Content-Length")
        total = have + int(length) if length is not None else remote.size
        bar = _ProgressBar(label, remote.filename, total, have) if progress else None
        with open(part, "ab" if have else "wb") as file:
            done = have
            try:
                while True:
                    chunk = response.read(CHUNK)
                    if not chunk:
                        break
                    file.write(chunk)
                    done += len(chunk)
                    if bar:
                        bar.update(done)
            except (OSError, http.client.HTTPException) as error:    # the connection dropped
                of = f" of {total:,}" if total else ""
                raise DownloadError(f"the download of {url} was interrupted after {done:,}{of} bytes "
                                    f"({error!r}); call download again to resume from {part}") from None
            finally:
                file.flush()
                os.fsync(file.fileno())
                if bar:
                    bar.close()
        if total is not None and done < total:
            raise DownloadError(f"the download of {url} stopped after {done:,} of {total:,} bytes; "
                                f"call download again to resume from {part}")


class _ProgressBar:
    """'imdb: aclImdb_v1.tar.gz  [#####.....]  45%  38.1/84.1 MB  5.2 MB/s' on stderr, redrawn in place."""

    def __init__(self, label, filename, total, start):
        self.prefix, self.total, self.start, self.done = f"{label}: {filename}", total, start, start
        self.started, self.drawn = time.perf_counter(), float("-inf")

    def update(self, done, final=False):
        """Record ``done`` bytes; redraw at most five times a second (and always when ``final``)."""
        self.done, now = done, time.perf_counter()
        if not final and now - self.drawn < 0.2:
            return
        self.drawn = now
        speed = (done - self.start) / max(now - self.started, 1e-9) / 1e6
        if self.total:
            filled = int(30 * done / self.total)
            shown = (f"[{'#' * filled}{'.' * (30 - filled)}] {100 * done / self.total:3.0f}%  "
                     f"{done / 1e6:.1f}/{self.total / 1e6:.1f} MB")
        else:
            shown = f"{done / 1e6:.1f} MB"
        sys.stderr.write(f"\r{self.prefix}  {shown}  {speed:.1f} MB/s")
        sys.stderr.flush()

    def close(self):
        self.update(self.done, final=True)
        sys.stderr.write("\n")
        sys.stderr.flush()


def sha256_file(path):
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_members(archive, folder):
    """Raise UnsafeArchiveError unless every member of the open tar ``archive`` stays inside ``folder``.

    Refused: absolute paths, any ".." that leaves the folder, symbolic and hard
    links, devices and FIFOs.  Regular files and folders only.
    """
    folder = os.path.realpath(folder)
    for member in archive.getmembers():
        target = os.path.realpath(os.path.join(folder, member.name))
        if os.path.isabs(member.name) or os.path.commonpath([folder, target]) != folder:
            raise UnsafeArchiveError(f"refusing to unpack {archive.name}: its member {member.name!r} would be "
                                     f"written outside {folder}")
        if not (member.isfile() or member.isdir()):
            raise UnsafeArchiveError(f"refusing to unpack {archive.name}: its member {member.name!r} is a link or "
                                     "a special file (only files and folders are unpacked)")


def unpack(archive_path, folder):
    """Unpack a .tar.gz into ``folder``: checked first (``check_members``), then written via a temporary folder."""
    staging = tempfile.mkdtemp(prefix=".unpack-", dir=folder)
    try:
        with tarfile.open(archive_path, "r:*") as archive:
            check_members(archive, staging)
            if hasattr(tarfile, "data_filter"):            # Python >= 3.10.12 / 3.11.4: a second guard
                archive.extractall(staging, filter="data")
            else:
                archive.extractall(staging)
        for entry in os.listdir(staging):
            target = os.path.join(folder, entry)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)                      # a stale copy from an older unpack
            os.replace(os.path.join(staging, entry), target)
    except tarfile.TarError as error:
        raise DownloadError(f"{archive_path} is not a readable .tar.gz ({error}); delete it and download again") \
            from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


# ----------------------------------------------------------------------------- readers of the downloaded sets

def _dataset_folder(name, root, inside):
    """The folder holding ``inside``: ``root`` itself, ``root/inside``'s parent, or ``<cache>/name``."""
    candidates = [os.fspath(root)] if root is not None else []
    candidates += [os.path.join(c, name) for c in candidates] + [os.path.join(cache_dir(root), name)]
    for candidate in candidates:
        if os.path.exists(os.path.join(candidate, inside)):
            return candidate
    raise FileNotFoundError(f"{name} is not downloaded (no {inside} in {', '.join(dict.fromkeys(candidates))}): "
                            f"run  python -c \"import minigrad.data; minigrad.data.download('{name}')\"  "
                            f"(or pass root= the folder download returned)")


def imdb(split="train", root=None, shuffle=False, seed=0):
    """The IMDB reviews (after ``download("imdb")``): (texts, labels), label 0 negative, 1 positive.

    25,000 reviews per split ("train" or "test"), half of each label; the unlabeled
    ``train/unsup`` folder is left out.  ``root``: the folder ``download`` returned,
    the ``aclImdb`` folder itself, or a cache folder.  Files in sorted order, or
    shuffled with ``seed``.
    """
    if split not in ("train", "test"):
        raise ValueError(f"imdb: unknown split {split!r}; IMDB has 'train' and 'test'")
    if root is not None and os.path.isdir(os.path.join(os.fspath(root), "train", "pos")):
        folder = os.fspath(root)                           # the aclImdb folder itself
    else:
        folder = os.path.join(_dataset_folder("imdb", root, "aclImdb"), "aclImdb")
    texts, labels, _ = load_text_folder(folder, split, classes=["neg", "pos"], shuffle=shuffle, seed=seed)
    return texts, labels


def multi30k_pairs(split=None, root=None):
    """Multi30k task 1 (after ``download("multi30k")``): (German, English) pairs of ``split``, or all."""
    prefixes = {"train": "train", "validation": "val", "test": "test"}
    folder = _dataset_folder("multi30k", root, "train.de")
    pairs = []
    for name, prefix in prefixes.items():
        if split in (None, name):
            pairs += load_parallel(os.path.join(folder, f"{prefix}.de"), os.path.join(folder, f"{prefix}.en"))
    return pairs
