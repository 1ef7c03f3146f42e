"""Copy flags: does a submission's code match a reference, minigrad itself, or a classmate's?

The method is MOSS's (Schleimer, Wilkerson and Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003):

1. normalise the syntax tree, not the text: Python parses the source;
   docstrings go, wrappers that change nothing are unwrapped (``(x if 1 else
   0)`` is ``x``, ``x * 1`` and ``x + 0`` are ``x``), constant expressions are
   folded (``2 * 3`` is ``6``) and parentheses the grammar does not need
   vanish with the parse; the tree is written out as tokens (code_tokens.py, the same on every Python):
   comments, blank lines and spacing go, every name becomes ``V`` (so
   renaming changes nothing), while keywords, operators, numbers and
   attribute names (``.T``, ``.sum``: a copier cannot rename them) stay.  A
   file that does not parse is read as text into the same tokens;
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

The comparison with the shipped references and minigrad itself (of only what the
handout does not dictate) is copies.py (``copies.reference_flags``).
"""
import ast
import operator
import hashlib
import os

from ..authoring.make import is_student_file, student_version
from ..spec.assignment import load_assignment
from .code_tokens import tree_tokens
from .text_tokens import text_tokens

K = 5                 # tokens per k-gram
W = 4                 # hashes per winnowing window


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

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Module = _drop_docstring

    def visit_ClassDef(self, node):
        """A method's first argument is ``self`` whatever its name: renaming it changes nothing."""
        node = self._drop_docstring(node)      # first: a wrapped decorator, (staticmethod if 1 else 0), unwraps
        for method in node.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args and not any(
                    isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in method.decorator_list):
                first = method.args.args[0].arg
                method.args.args[0].arg = "self"
                for name in ast.walk(method):
                    if isinstance(name, ast.Name) and name.id == first:
                        name.id = "self"
        return node


def normalised_tree(source):
    """``source`` parsed and normalised (Normaliser); None when it does not parse."""
    try:
        return ast.fix_missing_locations(Normaliser().visit(ast.parse(source)))
    except (SyntaxError, ValueError, RecursionError):
        return None


def tokens(source):
    """The normalised tokens of ``source`` (a list of strings); see the module docstring."""
    tree = normalised_tree(source)
    try:
        words = [token for token, _ in tree_tokens(tree)] if tree is not None else None
    except (RecursionError, ValueError):
        words = None
    if words is None:
        words = text_tokens(source)
    while words and words[-1] in (";", "}"):
        words.pop()
    cleaned = []                               # a statement left empty (a docstring gone): no repeated ";"
    for word in words:
        if word == ";" and cleaned and cleaned[-1] in (";", "{"):
            continue
        cleaned.append(word)
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

