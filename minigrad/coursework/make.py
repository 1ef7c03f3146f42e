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
"""
import os
import re
import shutil

BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
HINT = re.compile(r"^\s*# HINT:\s?(.*)$")
BEGIN_HIDDEN = re.compile(r"^\s*# BEGIN HIDDEN\s*$")
END_HIDDEN = re.compile(r"^\s*# END HIDDEN\s*$")
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


def is_student_file(name):
    """Whether a file of an assignment folder goes to students (grader-only files do not)."""
    return name not in GRADER_ONLY and not name.startswith("hidden") and not name.endswith((".pyc", ".pyo"))


def make_assignment(source, out, solutions=False):
    """Write the student version of the assignment folder ``source`` into ``out``.

    Python files lose their solution blocks (or only the markers, with
    ``solutions=True``); other student files are copied byte for byte.
    Returns the list of written paths, sorted.
    """
    os.makedirs(out, exist_ok=True)
    written = []
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if not os.path.isfile(path) or not is_student_file(name):
            continue
        target = os.path.join(out, name)
        if name.endswith(".py"):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = keep_solutions(text, name) if solutions else strip_solutions(text, name)
            with open(target, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        else:
            shutil.copyfile(path, target)
        written.append(target)
    return written
