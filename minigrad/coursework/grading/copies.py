"""Copy flags against a reference: does a submission's own code match a shipped reference or minigrad itself?

Honest code converges on what the handout dictates (the skeleton, the signatures, the loop the hints spell
out), so only the student's OWN tokens are compared: a token is the handout's when it lies in a run of
HANDED_OUT tokens of the handed-out files (the student file with its docstrings and library helpers, the
tests, README.md) or of any hint level of checks.json (similarity's tokens read ``self.attn(x)`` as the
hints' ``attn(x)``).  A token is matched when it lies in a run of RUN tokens (about three statements) that
a source holds: every shipped assignment's reference (library code
inlined) and minigrad's own implementation (functions/, nn/, ...).  Tokens are similarity.py's (names are
placeholders, keywords, operators, numbers and attribute names stay: code_tokens.py, the same on every Python),
each with the line of its statement so a flag can say which lines match.  Calibrated on the honest corpora of
tests/fixtures/honest (see the README), with the same numbers on Python 3.10 to 3.13.

State: ``_file_runs``, ``_reference_runs``, ``_handed_out_grams`` and ``_shipped`` cache what they read
(functools.lru_cache, keyed by path and modification time): computed once per process, not once per student.
"""
import ast
import functools
import os
import re

from ..authoring.make import is_student_file, student_version
from ..spec.assignment import list_assignments, load_assignment
from .code_tokens import tree_tokens
from .similarity import normalised_tree, tokens


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
RUN = 32              # tokens (names are V, ";" "{" "}" dropped): about three statements; one API call dictated
                      # by the hints and the library (24 tokens: `F.scaled_dot_product_attention(q, k, v, ...)`) is not
HANDED_OUT = 6        # tokens: a run this long of the handout's text is the handout's, not the student's
MIN_OWN = 40          # own tokens below this: too little code to judge
MIN_FUNCTION_OWN = 20        # the same, for one function
OWN_FLAG_AT = 0.6     # a submission whose own tokens are >= 60% matched in one source is flagged
FUNCTION_OWN_FLAG_AT = 0.9   # one function whose own tokens are >= 90% matched (>= MIN_FUNCTION_OWN of them)
STRUCTURE = {";", "{", "}"}


def line_tokens(source):
    """[(token, line)] of ``source``: its normalised tree written as tokens (code_tokens.py), each with the line
    its statement starts on (so a flag can say which lines match); structure tokens (";", "{", "}") dropped.
    [] when it does not parse."""
    tree = normalised_tree(source)
    try:
        written = tree_tokens(tree) if tree is not None else []
    except (RecursionError, ValueError):
        return []
    return [(t, line) for t, line in written if t not in STRUCTURE]


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
    words = []
    for name, _ in stamp:
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or not is_student_file(name) or not name.endswith((".py", ".md")):
            continue
        if name.endswith(".py"):
            words.append([t for t, _ in line_tokens(student_version(path))])
        else:
            with open(path, encoding="utf-8") as f:
                words += [tokens(code) for code in markdown_code(f.read())]
    words += [tokens(hint) for hint in hints]
    return frozenset().union(*(_grams([t for t in w if t not in STRUCTURE], HANDED_OUT) for w in words))


def markdown_code(text):
    """The code of a handout's markdown: its fenced blocks and `inline` spans, each on its own.  Prose is left
    out: its words are not code a student types in (the corpora are calibrated so)."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return blocks + re.findall(r"`([^`\n]+)`", prose)


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
