"""Copy flags: does a submission's code match a reference, minigrad itself, or a classmate's?

The method is MOSS's (Schleimer, Wilkerson and Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003):

1. normalise the syntax tree, not the text: Python parses the source;
   docstrings go, wrappers that change nothing are unwrapped (``(x if 1 else
   0)`` is ``x``, ``x * 1`` and ``x + 0`` are ``x``), constant expressions are
   folded (``2 * 3`` is ``6``) and parentheses vanish with the parse; the tree
   is written back as text and tokenized: comments, blank lines and spacing
   go, every name becomes ``V`` (so renaming changes nothing), while keywords,
   operators, numbers and attribute names (``.T``, ``.sum``: a copier cannot
   rename them) stay.  A file that does not parse is tokenized as it is;
2. hash every run of K consecutive tokens (a k-gram);
3. winnow: in every window of W consecutive hashes keep the smallest.  Any
   match of at least W + K - 1 tokens is then sure to share a fingerprint,
   and a file keeps about 2 / (W + 1) of its hashes.

A submission is every .py file of it (``submission_sources``): the
assignment's file and any helper module it imports from.  The code every
student starts from (the handed-out file, the ``base``) is removed from both
sides first, as MOSS's ``-b`` does, so only what the
students wrote is compared.  The results are flags for a person to look at,
never a score: short textbook formulas (``dx = dout * y * (1 - y)``) come out
alike when written honestly.

One piece of state lives in this module: ``_file_fingerprints`` caches the
fingerprints of minigrad's own files (functools.lru_cache, keyed by path and
modification time), computed once per process instead of once per student.
"""
import ast
import functools
import operator
import hashlib
import io
import keyword
import os
import tokenize

from ..spec.assignment import list_assignments, load_assignment
from ..authoring.make import student_version

K = 5                 # tokens per k-gram
W = 4                 # hashes per winnowing window
FLAG_AT = 0.6         # a submission whose own code is >= 60% found in one source is flagged
MIN_FINGERPRINTS = 8  # fewer own fingerprints than this: too little code to judge
MIN_FUNCTION_FINGERPRINTS = 6   # the same, for one function
FUNCTION_FLAG_AT = 0.85     # one function >= 85% found in a source (a short textbook BPTT loop reaches ~80%)

SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT} \
    if hasattr(tokenize, "TYPE_COMMENT") else {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


FOLDABLE = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
            ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
NEUTRAL = {ast.Add: 0, ast.Sub: 0, ast.Mult: 1, ast.Div: 1, ast.Pow: 1}   # x op n is x


def _number(node):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


class Normaliser(ast.NodeTransformer):
    """Undo what changes the text of a copy but not what it computes (see the module docstring)."""

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if _number(node.operand) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return ast.copy_location(ast.Constant(-node.operand.value if isinstance(node.op, ast.USub)
                                                  else +node.operand.value), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        kind = type(node.op)
        if _number(node.left) and _number(node.right) and kind in FOLDABLE:
            small = kind is not ast.Pow or abs(node.right.value) <= 64   # no 9 ** 9 ** 9 at grading time
            try:
                if small:
                    return ast.copy_location(ast.Constant(FOLDABLE[kind](node.left.value, node.right.value)), node)
            except (ArithmeticError, ValueError):
                pass
        if kind in NEUTRAL and _number(node.right) and node.right.value == NEUTRAL[kind]:
            return node.left
        if kind in (ast.Add, ast.Mult) and _number(node.left) and node.left.value == NEUTRAL[kind]:
            return node.right
        return node

    def _drop_docstring(self, node):
        self.generic_visit(node)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Module = _drop_docstring


def normal_form(source):
    """``source`` parsed, normalised (Normaliser) and written back; the text itself when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    try:
        return ast.unparse(ast.fix_missing_locations(Normaliser().visit(tree)))
    except (RecursionError, ValueError):
        return source


def tokens(source):
    """The normalised tokens of ``source`` (a list of strings); see the module docstring."""
    source = normal_form(source)
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


def submission_sources(folder):
    """{relative path: text} of every .py file of a submission folder (helper modules too), in a fixed order."""
    found = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        found[os.path.relpath(path, folder)] = f.read()
                except OSError:
                    pass
    return found


def joined(source):
    """One text from a submission's sources (a dict of files, or already a str)."""
    return source if isinstance(source, str) else "\n\n".join(source[name] for name in sorted(source))


def _hash(gram):
    return int.from_bytes(hashlib.blake2b(" ".join(gram).encode(), digest_size=8).digest(), "big")


def fingerprints(source, k=K, window=W):
    """The winnowed k-gram hashes of ``source``: a set of ints (stable from run to run)."""
    words = tokens(joined(source))
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

MINIGRAD_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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

    source:     the submission: {file name: text} (``submission_sources``), or one file's text
    assignment: an Assignment, a shipped assignment's name, or an assignment folder

    The handed-out (student) version of the assignment's file is removed first;
    what is left, the student's own code, is looked for in: every shipped
    assignment's reference (with its library code expanded), and minigrad's
    own implementation (functions/, nn/, attention.py, ...).  A source holding
    at least FLAG_AT of the student's own fingerprints, or FUNCTION_FLAG_AT of
    one function's, is flagged, naming the functions.  Imports of minigrad
    modules the handed-out file does not import are flagged too.
    """
    assignment = load_assignment(assignment)
    handed_out = student_version(assignment.reference)
    files = {assignment.module: source} if isinstance(source, str) else dict(source)
    own = fingerprints(files) - fingerprints(handed_out)
    flags = []
    imported = set().union(*(_imports(text) for text in files.values())) if files else set()
    extra = sorted(name for name in imported - _imports(handed_out)
                   if name == "minigrad" or name.startswith("minigrad."))
    for name in extra:
        if not any(other.startswith(name + ".") for other in extra):   # the most specific name only
            flags.append(f"imports {name}, which the handed-out file does not: minigrad's own code "
                         "may be doing the work")
    reaching = sorted(set().union(*(_reaching(text) for text in files.values()))) if files else []
    if reaching:
        flags.append(f"reaches modules or objects by name at run time ({', '.join(reaching)}): code found that "
                     "way is not in any import, so it may be minigrad's own code doing the work")
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
    functions = [(name, fingerprints(text) - base) for file_text in files.values() for name, text in _functions(file_text)]
    functions = [(name, prints) for name, prints in functions if len(prints) >= MIN_FUNCTION_FINGERPRINTS]
    for what, prints in candidates:
        share = len(own & prints) / len(own)
        matched = [f"{name} ({len(mine & prints) / len(mine):.0%})" for name, mine in functions
                   if len(mine & prints) >= FUNCTION_FLAG_AT * len(mine)]
        if share >= FLAG_AT or matched:
            flags.append(f"{share:.0%} of the submission's own code matches {what} (names, spacing and "
                         "comments aside)" + (f"; functions that match it: {', '.join(matched)}" if matched else ""))
    return flags


REACHING = {("sys", "modules"), ("importlib", "import_module"), ("gc", "get_objects"), ("gc", "get_referrers"),
            ("importlib", "__import__"), ("builtins", "__import__")}


def _reaching(source):
    """What ``source`` uses to reach modules or objects by name (sys.modules, __import__, ...)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in REACHING:
            found.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id == "__import__":
            found.add("__import__")
        elif isinstance(node, ast.ImportFrom) and node.module in ("sys", "importlib", "gc") \
                and any((node.module, alias.name) in REACHING for alias in node.names):
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if (node.module, alias.name) in REACHING)
    return found


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
