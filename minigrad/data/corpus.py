"""Real text with nothing to download: English prose from the standard library's docstrings,
or any text file the user gives.

    text = stdlib_corpus()          # about 240 KB (40,000 words) of English, the same on every run
    text = read_text("novel.txt")   # your own text
"""
import functools
import importlib
import inspect
import os
import warnings

# Modules whose documentation is mostly prose.  Fixed and ordered, so the corpus
# is the same on every run (it can differ between Python versions).
STDLIB_MODULES = (
    "abc", "argparse", "asyncio.tasks", "bisect", "calendar", "collections", "concurrent.futures",
    "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib",
    "email.message", "enum", "fractions", "functools", "gettext", "glob", "gzip", "heapq", "hmac",
    "http.client", "http.cookiejar", "inspect", "io", "ipaddress", "json", "logging", "mailbox",
    "numbers", "operator", "optparse", "os", "pathlib", "pickle", "pprint", "queue", "random", "re",
    "sched", "secrets", "shlex", "shutil", "smtplib", "socket", "statistics", "string", "subprocess",
    "tarfile", "tempfile", "textwrap", "threading", "timeit", "tokenize", "trace", "typing",
    "unittest.case", "urllib.parse", "urllib.request", "uuid", "warnings", "weakref", "zipfile",
)


def _docstrings(module):
    """The module's docstring, then those of its own classes, functions and methods, by name."""
    yield inspect.getdoc(module)
    for name, member in sorted(vars(module).items()):
        if getattr(member, "__module__", None) != module.__name__ or name.startswith("_"):
            continue
        yield inspect.getdoc(member)
        if inspect.isclass(member):
            for method_name, method in sorted(vars(member).items()):
                if not method_name.startswith("_") and callable(method):
                    yield inspect.getdoc(method)


def _is_prose(paragraph):
    """Sentences, not code, tables or option lists."""
    lines = paragraph.splitlines()
    if any(line.startswith((" ", ">>>", "...", "-", "*", "+", "|", ":", "=")) for line in lines):
        return False
    letters = sum(c.isalpha() or c == " " for c in paragraph)
    return len(paragraph) >= 60 and letters >= 0.85 * len(paragraph) and paragraph.rstrip()[-1] in ".:!?"


@functools.lru_cache(maxsize=1)
def stdlib_corpus():
    """English prose gathered deterministically from the docstrings of STDLIB_MODULES.

    Paragraphs of sentences only (no code examples), each line joined into
    one, duplicates removed, separated by blank lines.
    """
    seen, paragraphs = set(), []
    for name in STDLIB_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:          # a module missing from a trimmed install
            continue
        with warnings.catch_warnings():             # typing.io and friends warn when read
            warnings.simplefilter("ignore", DeprecationWarning)
            docs = list(_docstrings(module))
        for doc in docs:
            for paragraph in (doc or "").split("\n\n"):
                paragraph = paragraph.strip()
                if _is_prose(paragraph):
                    paragraph = " ".join(paragraph.split())
                    if paragraph not in seen:
                        seen.add(paragraph)
                        paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def read_text(path, encoding="utf-8"):
    """The contents of a text file (FileNotFoundError names the path)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"read_text: no text file at {path!r}")
    with open(path, encoding=encoding) as file:
        return file.read()
