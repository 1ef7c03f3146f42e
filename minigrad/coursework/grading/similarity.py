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

One piece of state lives in this module: ``_file_runs`` caches the token runs
of minigrad's own files (functools.lru_cache, keyed by path and modification
time), computed once per process instead of once per student.
"""
import ast
import copy
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
    return _tokens(normal_form(source))


def _tokens(source):
    """The tokens of ``source`` as it is (no normal_form first)."""
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


PAIR_FLAG_AT = 0.9    # two students: >= 90% of the LARGER one's own fingerprints shared (near-identical)
MIN_PAIR_FINGERPRINTS = 8   # fewer own fingerprints than this: too little code to judge a pair


def pair_flags(sources, base=None):
    """{student: [flag, ...]} for every pair of students whose own code is near-identical.

    A pair is near-identical when the fingerprints they share are at least PAIR_FLAG_AT of the larger
    one's (``pairwise`` divides by the smaller: one student's short file inside a classmate's long one is
    1.0 there, and a lead to look at, not a flag).  ``base``: what every student was given (``handout``)."""
    given = fingerprints(base) if base else set()
    prints = {name: fingerprints(source) - given for name, source in sources.items()}
    names = sorted(prints)
    flags = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            larger = max(len(prints[a]), len(prints[b]))
            if min(len(prints[a]), len(prints[b])) < MIN_PAIR_FINGERPRINTS:
                continue
            shared = len(prints[a] & prints[b]) / larger
            if shared >= PAIR_FLAG_AT:
                for one, other in ((a, b), (b, a)):
                    flags.setdefault(one, []).append(
                        f"near-identical to {other}'s submission: {shared:.0%} of the larger one's own code "
                        "(names, spacing and comments aside) is in both (similarity.csv)")
    return flags


def handout(assignment):
    """{name: text} of what every student of ``assignment`` is given: the student files (.py, .md) and every
    hint level of checks.json: the ``base`` of ``pairwise`` and ``pair_flags``."""
    from ..authoring.assignment import load_assignment
    from ..authoring.make import is_student_file, student_version
    assignment = load_assignment(assignment)
    given = {}
    for name in sorted(os.listdir(assignment.path)):
        path = os.path.join(assignment.path, name)
        if os.path.isfile(path) and is_student_file(name) and name.endswith(".py"):
            given[name] = student_version(path)
        elif os.path.isfile(path) and is_student_file(name) and name.endswith(".md"):
            with open(path, encoding="utf-8") as f:
                given[name] = f.read()
    given["hints"] = "\n".join(h for c in assignment.checks for h in c.hints.levels + c.hints.forward_levels)
    return given


# --------------------------------------------------------------------------- references and minigrad itself

MINIGRAD_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY_FOLDERS = ("functions", "nn")          # minigrad's own implementation of what the assignments teach
LIBRARY_FILES = ("functional.py", "autograd.py", "masks.py")


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


# What a flag against a reference needs.  The evidence is a long run of the same normalised tokens: MOSS's
# fingerprints (above) find every shared 5-gram, and a short formula or the loop the hints dictate is shared
# by honest work too (tests/fixtures/honest: 30 independently styled rnn solutions); a copy shares runs of
# whole statements.  So a token counts as matched when it lies in a run of RUN tokens that the source holds,
# and as the student's own only when it is not in a run of HANDED_OUT tokens of what the handout already says
# (the student file, its tests, README and train script, every hint level of checks.json).
RUN = 24              # tokens (names are V, ";" "{" "}" dropped): about two statements
HANDED_OUT = 6        # tokens: a run this long of the handout's text is the handout's, not the student's
MIN_OWN = 40          # own tokens below this: too little code to judge
MIN_FUNCTION_OWN = 20        # the same, for one function
OWN_FLAG_AT = 0.6     # a submission whose own tokens are >= 60% matched in one source is flagged
FUNCTION_OWN_FLAG_AT = 0.9   # one function whose own tokens are >= 90% matched (>= MIN_FUNCTION_OWN of them)
STRUCTURE = {";", "{", "}"}


def _compound_header(node):
    """The tokens of a compound statement's first line(s): the statement with empty bodies, unparsed."""
    head = copy.copy(node)
    for field in ("body", "orelse", "finalbody", "handlers"):
        if hasattr(head, field):
            setattr(head, field, [ast.Pass()] if field == "body" else [])
    return _tokens(ast.unparse(head))[:-1]      # without the "pass" of the empty body


def _statements(nodes, out, lines_of):
    for node in nodes:
        bodies = [b for b in ("body", "handlers", "orelse", "finalbody") if isinstance(getattr(node, b, None), list)]
        if isinstance(node, ast.ExceptHandler) or bodies and not isinstance(node, (ast.Lambda, ast.IfExp)):
            out += [(t, node.lineno) for t in _compound_header(node)]
            for field in bodies:
                if field == "orelse" and node.orelse:
                    out.append(("else", node.orelse[0].lineno))
                _statements(getattr(node, field), out, lines_of)
        else:
            out += [(t, node.lineno) for t in _tokens(ast.unparse(node))]


def line_tokens(source):
    """[(token, line)] of ``source``: tokens() of each normalised statement, with the line it starts on (so a
    flag can say which lines match); structure tokens (";", "{", "}") dropped.  [] when it does not parse."""
    try:
        tree = Normaliser().visit(ast.parse(source))
        out = []
        _statements(ast.fix_missing_locations(tree).body, out, None)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [(t, line) for t, line in out if t not in STRUCTURE]


def _grams(words, n):
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _covered(words, grams, n, runs=None):
    """Which positions of ``words`` lie in a run of n tokens found in ``grams`` (a list of bool); ``runs``:
    the n-grams of ``words`` in order, when the caller has them already."""
    runs = runs if runs is not None else [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    hit = [False] * len(words)
    for i, run in enumerate(runs):
        if run in grams:
            hit[i:i + n] = [True] * n
    return hit


@functools.lru_cache(maxsize=None)
def _shipped(list_assignments):
    return tuple((shipped.name, shipped.reference) for shipped in list_assignments())


@functools.lru_cache(maxsize=None)
def _reference_runs(path, mtime):
    from ..authoring.make import student_version
    return frozenset(_grams([t for t, _ in line_tokens(student_version(path, solutions=True))], RUN))


@functools.lru_cache(maxsize=None)
def _file_runs(path, mtime):
    with open(path, encoding="utf-8") as f:
        return frozenset(_grams([t for t, _ in line_tokens(f.read())], RUN))


def _handed_out(assignment):
    """The HANDED_OUT-grams of what students are given: the student files and every hint level."""
    stamp = tuple((name, os.path.getmtime(os.path.join(assignment.path, name)))
                  for name in sorted(os.listdir(assignment.path)))
    hints = tuple(h for check in assignment.checks for h in check.hints.levels + check.hints.forward_levels)
    return _handed_out_grams(assignment.path, stamp, hints)


@functools.lru_cache(maxsize=16)
def _handed_out_grams(folder, stamp, hints):
    from ..authoring.make import is_student_file, student_version
    words = []
    for name, _ in stamp:
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or not is_student_file(name) or not name.endswith((".py", ".md")):
            continue
        if name.endswith(".py"):
            words.append([t for t, _ in line_tokens(student_version(path))])
        else:
            with open(path, encoding="utf-8") as f:
                words.append(tokens(f.read()))      # prose and code alike: the code's runs are what counts
    words += [tokens(hint) for hint in hints]
    return frozenset().union(*(_grams([t for t in w if t not in STRUCTURE], HANDED_OUT) for w in words))


def _ranges(lines):
    """"3-7, 12" from a sorted list of line numbers."""
    spans = []
    for line in lines:
        if spans and line == spans[-1][1] + 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans)


def reference_flags(source, assignment):
    """Flags (a list of str, empty when none) for a submission that copies a reference or minigrad's code.

    source:     the submission: {file name: text} (``submission_sources``), or one file's text
    assignment: an Assignment, a shipped assignment's name, or an assignment folder

    The student's own tokens are those not in a run of HANDED_OUT tokens of the handout (student files,
    README, hints); each source (every shipped assignment's reference, minigrad's functions/, nn/, ...) is
    searched for runs of RUN tokens.  A source matching OWN_FLAG_AT of the student's own tokens, or
    FUNCTION_OWN_FLAG_AT of one function's, is flagged, with the functions and the lines that match.  Imports
    of minigrad modules the handed-out file does not import are flagged too.
    """
    assignment = load_assignment(assignment)
    handed_out = student_version(assignment.reference)
    files = {assignment.module: source} if isinstance(source, str) else dict(source)
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
    located = [(t, name, line) for name in sorted(files) for t, line in line_tokens(files[name])]
    words = [t for t, _, _ in located]
    given = _covered(words, _handed_out(assignment), HANDED_OUT)
    own = [not g for g in given]
    if sum(own) < MIN_OWN:
        return flags
    functions = []      # (name, the positions of its own tokens)
    for name in sorted(files):
        for function, start, end in _function_lines(files[name]):
            inside = [k for k, (_, file, line) in enumerate(located) if file == name and start <= line <= end and own[k]]
            if len(inside) >= MIN_FUNCTION_OWN:
                functions.append((function, inside))
    student_runs = [tuple(words[i:i + RUN]) for i in range(len(words) - RUN + 1)]
    for what, runs in _candidates(list_assignments):
        matched = [m and o for m, o in zip(_covered(words, runs, RUN, student_runs), own)]
        share = sum(matched) / sum(own)
        whole = [f"{function} ({sum(matched[k] for k in inside) / len(inside):.0%})" for function, inside in functions
                 if sum(matched[k] for k in inside) >= FUNCTION_OWN_FLAG_AT * len(inside)]
        if share >= OWN_FLAG_AT or whole:
            lines = {}
            for (_, name, line), hit in zip(located, matched):
                if hit:
                    lines.setdefault(name, set()).add(line)
            where = "; ".join(f"{name} lines {_ranges(sorted(found))}" for name, found in sorted(lines.items()))
            flags.append(f"{share:.0%} of the submission's own code (what the handout and its hints do not "
                         f"already say) matches {what} in runs of {RUN}+ tokens (names, spacing and comments "
                         f"aside)" + (f"; functions that match it: {', '.join(whole)}" if whole else "")
                         + f"; matching: {where}")
    return flags


def _candidates(list_assignments):
    """(what, its RUN-grams) of every source a submission may have copied: the shipped references, minigrad."""
    for name, path in _shipped(list_assignments):
        yield f"the reference solution of the shipped assignment {name!r}", _reference_runs(path, os.path.getmtime(path))
    for path in _library_sources():
        relative = os.path.relpath(path, os.path.dirname(MINIGRAD_DIR)).replace(os.sep, "/")
        yield f"minigrad's own {relative}", _file_runs(path, os.path.getmtime(path))


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


def _function_lines(source):
    """(qualified name, first line, last line) of every function and method of ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []

    def visit(nodes, prefix):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + node.name, node.lineno, node.end_lineno))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")
    visit(tree.body, "")
    return found
