"""Make the student version of an assignment from its reference solution.

A reference solution marks what students must write:

    def sigmoid_backward(dout, cache):
        y = cache
        # BEGIN SOLUTION
        # HINT: the derivative of the sigmoid is y * (1 - y), with y the forward's output
        dx = dout * y * (1 - y)
        # END SOLUTION
        return dx

and the student version keeps the hints and replaces the rest of the block by
one ``raise`` at the block's indentation:

        # HINT: the derivative of the sigmoid is y * (1 - y), with y the forward's output
        raise NotImplementedError("sigmoid_backward: not implemented yet. Hint: ...")

Lines between ``# BEGIN HIDDEN`` and ``# END HIDDEN`` (hidden tests) are left
out entirely, and so are files only the grader reads: ``checks.json``,
``__init__.py`` and any file whose name starts with ``hidden``.  The output
depends only on the input text, so it is byte-identical from run to run.

Where an assignment teaches what the library itself implements, the reference
imports the library's own code instead of copying it, so the two cannot drift:

    # BEGIN LIBRARY
    from minigrad.functions.rnn_steps import rnn_step_backward, rnn_step_forward
    # END LIBRARY

The grader runs the reference as it is (the import runs the library's code);
``make`` replaces the block by the source of what it imports, with the helpers
those functions call and the imports they need, then handles the solution
markers inside it as in any other code.
"""
import ast
import importlib.util
import os
import re
import shutil

BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
HINT = re.compile(r"^\s*# HINT:\s?(.*)$")
BEGIN_HIDDEN = re.compile(r"^\s*# BEGIN HIDDEN\s*$")
END_HIDDEN = re.compile(r"^\s*# END HIDDEN\s*$")
BEGIN_LIBRARY = re.compile(r"^# BEGIN LIBRARY\s*$")
END_LIBRARY = re.compile(r"^# END LIBRARY\s*$")
DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)")
GRADER_ONLY = ("checks.json", "__init__.py")


class MarkerError(ValueError):
    """A solution or hidden block that is not closed, closed twice, or nested."""


def _enclosing_name(lines, indent):
    """The innermost def or class above the block that encloses ``indent``, e.g. "LSTM.backward"."""
    names = []
    for line in reversed(lines):
        match = DEF.match(line)
        if match and len(match.group(1)) < indent:
            names.append(match.group(3))
            indent = len(match.group(1))
    return ".".join(reversed(names)) or "this block"


def strip_solutions(text, filename="<text>"):
    """The student version of one source file's ``text`` (see the module docstring)."""
    out = []
    block = None      # (indent, hints, line number) inside a solution block
    hidden = None     # line number where a hidden block started
    for number, line in enumerate(text.splitlines(), start=1):
        if hidden is not None:
            if BEGIN.match(line) or BEGIN_HIDDEN.match(line):
                raise MarkerError(f"{filename}:{number}: a block starts inside the hidden block of line {hidden}")
            if END_HIDDEN.match(line):
                hidden = None
            continue
        if block is not None:
            if BEGIN.match(line) or BEGIN_HIDDEN.match(line):
                raise MarkerError(f"{filename}:{number}: a block starts inside the solution block of line {block[2]}")
            if END.match(line):
                indent, hints, _ = block
                name = _enclosing_name(out, len(indent))
                message = f"{name}: not implemented yet."
                if hints:
                    message += " Hint: " + "; ".join(hints)
                out.extend(f"{indent}# HINT: {hint}" for hint in hints)
                out.append(f"{indent}raise NotImplementedError({message!r})")
                block = None
                continue
            hint = HINT.match(line)
            if hint:
                block[1].append(hint.group(1).strip())
            continue
        begin = BEGIN.match(line)
        if begin:
            block = (begin.group(1), [], number)
        elif BEGIN_HIDDEN.match(line):
            hidden = number
        elif END.match(line) or END_HIDDEN.match(line):
            raise MarkerError(f"{filename}:{number}: an END marker without its BEGIN")
        else:
            out.append(line)
    if block is not None:
        raise MarkerError(f"{filename}:{block[2]}: # BEGIN SOLUTION is never closed by # END SOLUTION")
    if hidden is not None:
        raise MarkerError(f"{filename}:{hidden}: # BEGIN HIDDEN is never closed by # END HIDDEN")
    return "\n".join(out) + "\n"


def keep_solutions(text, filename="<text>"):
    """The instructor's version: markers and hidden blocks removed, solution code kept."""
    strip_solutions(text, filename)  # the same marker errors
    out, hidden = [], False
    for line in text.splitlines():
        if BEGIN_HIDDEN.match(line) or END_HIDDEN.match(line):
            hidden = BEGIN_HIDDEN.match(line) is not None
        elif not hidden and not BEGIN.match(line) and not END.match(line):
            out.append(line)
    return "\n".join(out) + "\n"


def library_path(module):
    """The source file of a minigrad module, e.g. "minigrad.functions.rnn_steps" -> .../rnn_steps.py."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise MarkerError(f"no Python source for the library module {module!r}")
    return spec.origin


def _top_level_definitions(tree):
    """{name: the top-level statement that defines it}: def, class, or NAME = ... (a constant)."""
    definitions = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definitions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            definitions.update((t.id, node) for t in targets if isinstance(t, ast.Name))
    return definitions


def _closure(definitions, names, where):
    """``names`` and every top-level definition they use, transitively (a set of names)."""
    needed, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        if name not in definitions:
            raise MarkerError(f"{where} defines no function, class or constant {name!r} at its top level")
        needed.add(name)
        todo += [n.id for n in ast.walk(definitions[name]) if isinstance(n, ast.Name) and n.id in definitions]
    return needed


def _imports_used(tree, package, used):
    """The module's import lines that bind a name in ``used``, made absolute ("from .. import backend" ->
    "from minigrad import backend"), keeping only those names."""
    lines = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            names = [a for a in node.names if (a.asname or a.name) in used]
            line = f"from {source} import "
        elif isinstance(node, ast.Import):
            names = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
            line = "import "
        else:
            continue
        if names:
            lines.append(line + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in names))
    return lines


def _library_source(imports, filename, number, present):
    """The source of the definitions ``imports`` (``from minigrad.x import a, b`` lines) names.

    Adds the module-level functions, classes and constants those definitions use
    (transitively) and the library's own imports they need, unless already ``present``.
    """
    try:
        statements = ast.parse(imports).body
    except SyntaxError as error:
        raise MarkerError(f"{filename}:{number}: a LIBRARY block holds only imports ({error.msg})")
    out = []
    for statement in statements:
        if not isinstance(statement, ast.ImportFrom) or statement.level or not statement.module.startswith("minigrad."):
            raise MarkerError(f"{filename}:{number}: a LIBRARY block holds only 'from minigrad.<module> import ...' lines")
        path = library_path(statement.module)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines, tree = text.splitlines(), ast.parse(text)
        definitions = _top_level_definitions(tree)
        needed = _closure(definitions, [alias.name for alias in statement.names],
                          f"{filename}:{number}: {statement.module}")
        used = {n.id for name in needed for n in ast.walk(definitions[name]) if isinstance(n, ast.Name)}
        package = statement.module.rpartition(".")[0]
        relative = os.path.relpath(path, os.path.dirname(os.path.dirname(library_path("minigrad"))))
        out += ["", "", f"# ----- from {relative.replace(os.sep, '/')}, minigrad's own code (the same file the library runs)"]
        out += [line for line in _imports_used(tree, package, used) if line not in present and line not in out]
        copied = {id(definitions[name]) for name in needed}
        for node in tree.body:
            if id(node) in copied:
                start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                end = node.end_lineno      # the body's last statement; a closing "# END SOLUTION" may follow
                while end < len(lines) and lines[end].strip().startswith("#") \
                        and len(lines[end]) - len(lines[end].lstrip()) > node.col_offset:
                    end += 1
                out += ["", ""] + lines[start - 1:end]
        out += ["", "", "# ----- end of the library's code"]
    return out


def expand_library(text, filename="<text>"):
    """``text`` with each ``# BEGIN LIBRARY`` block replaced by the source it imports (see the module docstring)."""
    out, block = [], None       # block: (line number, the import lines)
    present = set(text.splitlines())
    for number, line in enumerate(text.splitlines(), start=1):
        if block is not None:
            if BEGIN_LIBRARY.match(line):
                raise MarkerError(f"{filename}:{number}: a LIBRARY block starts inside the one of line {block[0]}")
            if END_LIBRARY.match(line):
                while out and not out[-1].strip():
                    out.pop()
                out += _library_source("\n".join(block[1]), filename, block[0], present)
                block = None
            else:
                block[1].append(line)
        elif BEGIN_LIBRARY.match(line):
            block = (number, [])
        elif END_LIBRARY.match(line):
            raise MarkerError(f"{filename}:{number}: # END LIBRARY without its BEGIN")
        else:
            out.append(line)
    if block is not None:
        raise MarkerError(f"{filename}:{block[0]}: # BEGIN LIBRARY is never closed by # END LIBRARY")
    return "\n".join(out) + "\n"


def is_student_file(name):
    """Whether a file of an assignment folder goes to students (grader-only files do not)."""
    return name not in GRADER_ONLY and not name.startswith("hidden") and not name.endswith((".pyc", ".pyo"))


def student_version(path, solutions=False):
    """The text students get for the Python file ``path`` (LIBRARY blocks expanded, solutions out or kept)."""
    with open(path, encoding="utf-8") as f:
        text = expand_library(f.read(), os.path.basename(path))
    name = os.path.basename(path)
    return keep_solutions(text, name) if solutions else strip_solutions(text, name)


def make_assignment(source, out, solutions=False, force=False):
    """Write the student version of the assignment folder ``source`` into ``out``.

    Python files lose their solution blocks (or only the markers, with
    ``solutions=True``); other student files are copied byte for byte.
    An ``out`` that exists and is not empty is an error unless ``force``
    (then the files written replace those of the same name; nothing else is touched).
    Returns the list of written paths, sorted.
    """
    if os.path.isdir(out) and os.path.samefile(out, source):
        raise FileExistsError(f"{out} is the assignment's own folder: write the student version somewhere else")
    if os.path.isdir(out) and os.listdir(out) and not force:
        raise FileExistsError(f"{out} already exists and is not empty: minigrad assignment make does not "
                              "overwrite it. Choose a new folder, or pass --force (force=True) to replace "
                              "the files it writes there")
    if os.path.exists(out) and not os.path.isdir(out):
        raise FileExistsError(f"{out} exists and is a file, not a folder: choose a folder to write the assignment into")
    os.makedirs(out, exist_ok=True)
    written = []
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if not os.path.isfile(path) or not is_student_file(name):
            continue
        target = os.path.join(out, name)
        if name.endswith(".py"):
            text = student_version(path, solutions)
            with open(target, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        else:
            shutil.copyfile(path, target)
        written.append(target)
    return written
