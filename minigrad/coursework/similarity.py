"""Copy flags: does a submission's code match a reference, minigrad itself, or a classmate's?

The method is MOSS's (Schleimer, Wilkerson and Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003):

1. normalise: Python's own tokenizer reads the source; comments, docstrings,
   blank lines and spacing go; every name becomes ``V`` (so renaming changes
   nothing), while keywords, operators, numbers and attribute names
   (``.T``, ``.sum``: a copier cannot rename them) stay;
2. hash every run of K consecutive tokens (a k-gram);
3. winnow: in every window of W consecutive hashes keep the smallest.  Any
   match of at least W + K - 1 tokens is then sure to share a fingerprint,
   and a file keeps about 2 / (W + 1) of its hashes.

The code every student starts from (the handed-out file, the ``base``) is
removed from both sides first, as MOSS's ``-b`` does, so only what the
students wrote is compared.  The results are flags for a person to look at,
never a score: short textbook formulas (``dx = dout * y * (1 - y)``) come out
alike when written honestly.
"""
import ast
import functools
import hashlib
import io
import keyword
import os
import tokenize

K = 5                 # tokens per k-gram
W = 4                 # hashes per winnowing window
FLAG_AT = 0.6         # a submission whose own code is >= 60% found in one source is flagged
MIN_FINGERPRINTS = 8  # fewer own fingerprints than this: too little code to judge
MIN_FUNCTION_FINGERPRINTS = 6   # the same, for one function
FUNCTION_FLAG_AT = 0.75     # one function >= 75% found in a source (short textbook formulas reach ~65%)

SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT} \
    if hasattr(tokenize, "TYPE_COMMENT") else {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


def tokens(source):
    """The normalised tokens of ``source`` (a list of strings); see the module docstring."""
    out = []
    previous = None        # the previous significant token
    at_statement_start = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in SKIPPED:
                continue
            if token.type == tokenize.STRING and at_statement_start:
                continue                       # a docstring (or any bare string statement)
            if token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                at_statement_start = True
                out.append({tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}[token.type])
                previous = token
                continue
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                kept = previous is not None and previous.string == "."
                out.append(token.string if kept else "V")
            elif token.type == tokenize.STRING:
                out.append("S")
            else:
                out.append(token.string)
            at_statement_start = False
            previous = token
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass                                   # a file that does not tokenize to the end: what was read
    while out and out[-1] in (";", "}"):
        out.pop()
    # a docstring removed after "def f():" leaves an empty ";" : drop repeated separators
    cleaned = []
    for token in out:
        if token == ";" and cleaned and cleaned[-1] in (";", "{"):
            continue
        cleaned.append(token)
    return cleaned


def normalise(source):
    """``source`` as one line of normalised tokens, e.g. "def V ( V ) : { return V * 2 }"."""
    return " ".join(tokens(source))


def _hash(gram):
    return int.from_bytes(hashlib.blake2b(" ".join(gram).encode(), digest_size=8).digest(), "big")


def fingerprints(source, k=K, window=W):
    """The winnowed k-gram hashes of ``source``: a set of ints (stable from run to run)."""
    words = tokens(source)
    hashes = [_hash(words[i:i + k]) for i in range(len(words) - k + 1)]
    if len(hashes) <= window:
        return set(hashes)
    chosen = set()
    for start in range(len(hashes) - window + 1):
        chosen.add(min(hashes[start:start + window]))
    return chosen


def similarity(a_source, b_source, base=None):
    """How much code two sources share, in [0, 1]: |A & B| / min(|A|, |B|) of their fingerprints.

    ``base`` (the handed-out file) is removed from both first.  1 means the
    smaller one is entirely found in the other; 0, nothing in common.
    """
    given = fingerprints(base) if base else set()
    return _shared(fingerprints(a_source) - given, fingerprints(b_source) - given)


def _shared(a, b):
    """|A & B| / min(|A|, |B|) of two fingerprint sets; 0 when either is empty."""
    smaller = min(len(a), len(b))
    return len(a & b) / smaller if smaller else 0.0


def pairwise(sources, base=None):
    """Every pair of ``sources`` (a dict name -> source) with its similarity, most similar first.

    Returns a list of (name_a, name_b, score), name_a < name_b.  Pass the
    handed-out file as ``base`` so that the code every student starts from
    does not count.
    """
    given = fingerprints(base) if base else set()
    prints = {name: fingerprints(source) - given for name, source in sources.items()}
    names = sorted(prints)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pairs.append((a, b, _shared(prints[a], prints[b])))
    return sorted(pairs, key=lambda pair: (-pair[2], pair[0], pair[1]))


# --------------------------------------------------------------------------- references and minigrad itself

MINIGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY_FOLDERS = ("functions", "nn")          # minigrad's own implementation of what the assignments teach
LIBRARY_FILES = ("functional.py", "autograd.py", "masks.py")


@functools.lru_cache(maxsize=None)
def _file_fingerprints(path, mtime):
    with open(path, encoding="utf-8") as f:
        return frozenset(fingerprints(f.read()))


def _library_sources():
    """minigrad's own source files that implement layers and their backwards."""
    paths = [os.path.join(MINIGRAD_DIR, name) for name in LIBRARY_FILES]
    for folder in LIBRARY_FOLDERS:
        directory = os.path.join(MINIGRAD_DIR, folder)
        paths += [os.path.join(directory, name) for name in sorted(os.listdir(directory)) if name.endswith(".py")]
    return [p for p in paths if os.path.isfile(p)]


def _imports(source):
    """Module names a source imports ("minigrad.functions.rnn_steps", ...); empty when it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def reference_flags(source, assignment):
    """Flags (a list of str, empty when none) for a submission that copies a reference or minigrad's code.

    source:     the submission's text
    assignment: an Assignment, a shipped assignment's name, or an assignment folder

    The handed-out (student) version of the assignment's file is removed first;
    what is left, the student's own code, is looked for in: every shipped
    assignment's reference (with its library code expanded), and minigrad's
    own implementation (functions/, nn/, attention.py, ...).  A source holding
    at least FLAG_AT of the student's own fingerprints, or FUNCTION_FLAG_AT of
    one function's, is flagged, naming the functions.  Imports of minigrad
    modules the handed-out file does not import are flagged too.
    """
    from . import list_assignments, load_assignment
    from .make import student_version
    assignment = load_assignment(assignment)
    handed_out = student_version(assignment.reference)
    own = fingerprints(source) - fingerprints(handed_out)
    flags = []
    extra = sorted(name for name in _imports(source) - _imports(handed_out)
                   if name == "minigrad" or name.startswith("minigrad."))
    for name in extra:
        if not any(other.startswith(name + ".") for other in extra):   # the most specific name only
            flags.append(f"imports {name}, which the handed-out file does not: minigrad's own code "
                         "may be doing the work")
    if len(own) < MIN_FINGERPRINTS:
        return flags
    candidates = []
    for shipped in list_assignments():
        prints = frozenset(fingerprints(student_version(shipped.reference, solutions=True)))
        candidates.append((f"the reference solution of the shipped assignment {shipped.name!r}", prints))
    for path in _library_sources():
        relative = os.path.relpath(path, os.path.dirname(MINIGRAD_DIR)).replace(os.sep, "/")
        candidates.append((f"minigrad's own {relative}", _file_fingerprints(path, os.path.getmtime(path))))
    base = fingerprints(handed_out)
    functions = [(name, fingerprints(text) - base) for name, text in _functions(source)]
    functions = [(name, prints) for name, prints in functions if len(prints) >= MIN_FUNCTION_FINGERPRINTS]
    for what, prints in candidates:
        share = len(own & prints) / len(own)
        matched = [f"{name} ({len(mine & prints) / len(mine):.0%})" for name, mine in functions
                   if len(mine & prints) >= FUNCTION_FLAG_AT * len(mine)]
        if share >= FLAG_AT or matched:
            flags.append(f"{share:.0%} of the submission's own code matches {what} (names, spacing and "
                         "comments aside)" + (f"; functions that match it: {', '.join(matched)}" if matched else ""))
    return flags


def _functions(source):
    """(qualified name, source text) of every function and method of ``source``; none when it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    found = []

    def visit(nodes, prefix):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + node.name, "\n".join(lines[node.lineno - 1:node.end_lineno])))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")
    visit(tree.body, "")
    return found
