"""Text that does not parse as tokens (a hint in words, README prose, a broken file): code_tokens.py's vocabulary.

Regular expressions of our own read it, never Python's tokenize (3.12 rewrote it: it splits f-strings and
stops at an apostrophe in prose), so the tokens are the same on every Python.
"""
import ast
import re

# keyword.kwlist, the same on Python 3.10 to 3.13 (the soft keywords match, case, _ and type are names)
KEYWORDS = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally for from "
    "global if import in is lambda nonlocal not or pass raise return try while with yield".split())


TOKEN = re.compile(r"""
    (?P<space>[ \t\f]+|\\\r?\n)
  | (?P<comment>\#[^\r\n]*)
  | (?P<newline>\r?\n|\r)
  | (?P<quote>[rRbBuUfF]{0,2}['"])
  | (?P<number>(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+
                |(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9][0-9_]*)?)[jJ]?)
  | (?P<name>[^\W\d]\w*)
  | (?P<op>\*\*=|//=|>>=|<<=|\.\.\.|->|:=|\*\*|//|<<|>>|<=|>=|==|!=|[-+*/%@&|^]=|[-+*/%@&|^~<>()\[\]{},:;.=])
  | (?P<other>\S)
""", re.VERBOSE)
NOT_A_STRING = re.compile(TOKEN.pattern.replace("""(?P<quote>[rRbBuUfF]{0,2}['"])""", "(?!)"), re.VERBOSE)
TRIPLE_BODY = {q: re.compile(rf"(?:\\.|[^\\])*?(?:{q * 3}|\Z)", re.DOTALL) for q in "'\""}   # to the end, if open
SINGLE_BODY = {q: re.compile(rf"(?:\\.|[^\\{q}\r\n])*") for q in "'\""}                   # up to the line's end


def lexemes(text):
    """(kind, text, start) of every lexeme of ``text``: TOKEN's kinds, with "string" for a string.

    A quote that no quote closes on its line (an apostrophe in prose) is a lexeme of its own, and so is
    each later one of its kind up to where the search for a closing quote stopped: none of them can be
    closed there either, so the search is never repeated (a line of ``\\'`` is read in linear time)."""
    pos, open_until = 0, {"'": -1, '"': -1}
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if match is None:                      # a space Python does not count as one (\v, no-break space)
            pos += 1
            continue
        kind, end = match.lastgroup, match.end()
        if kind == "quote":
            quote = text[end - 1]
            if text.startswith(quote * 3, end - 1):
                end = TRIPLE_BODY[quote].match(text, end + 2).end()
            elif end - 1 >= open_until[quote]:
                stop = SINGLE_BODY[quote].match(text, end).end()
                if stop < len(text) and text[stop] == quote:
                    end = stop + 1
                else:
                    open_until[quote] = stop
                    kind = None
            else:
                kind = None
            if kind is None:                   # not a string: its prefix letters are a name, the quote alone
                match = NOT_A_STRING.match(text, pos)
                kind, end = match.lastgroup, match.end()
            else:
                kind = "string"
        yield kind, text[pos:end], pos
        pos = end


OPENING, CLOSING = set("([{"), set(")]}")


def text_tokens(text):
    """The tokens of text that does not parse, in tree_tokens's vocabulary (a list of str).

    Regular expressions read it (``lexemes``): comments and spacing go; a line ends with ``;`` (outside brackets); a
    deeper or shallower indent opens or closes a block; a string that starts a statement (a docstring) goes;
    any character Python has no token for is a token of its own.  The same on every Python."""
    out = []
    previous = None            # the previous token's text
    depth = 0                  # open brackets
    indents = [0]
    line_start = 0             # where the current line starts, while only spacing has been read on it
    at_statement_start = True
    for kind, word, start in lexemes(text):
        if kind in ("space", "comment"):
            continue
        if kind == "newline":
            if depth == 0:
                if line_start is None:
                    out.append(";")
                    at_statement_start = True
                line_start = start + len(word)
            continue
        if line_start is not None:            # the first token of a line: its indent opens or closes blocks
            column = len(text[line_start:start].expandtabs(8))
            if column > indents[-1]:
                indents.append(column)
                out.append("{")
            while column < indents[-1]:
                indents.pop()
                out.append("}")
            line_start = None
        if kind == "string" and at_statement_start:
            continue                           # a docstring (or any bare string statement)
        at_statement_start = False
        if word == "." and previous == "self" and out and out[-1] == "V":
            out.pop()                          # self.attn reads as attn, as tree_tokens writes it
            previous = None
            continue
        if kind == "name" and word not in KEYWORDS:
            out.append(word if previous == "." else "V")
        elif kind == "string":
            out.append("S")
        elif kind == "number":
            out.append(_number(word))
        else:
            out.append(word)
            depth = max(0, depth + (word in OPENING) - (word in CLOSING))
        previous = word
    if line_start is None:                     # the end closes the last statement and every open block
        out.append(";")
    out += ["}"] * (len(indents) - 1)
    return out


def _number(word):
    """A number as repr writes its value (tree_tokens's way: ``1e-5`` and ``0.00001`` are both ``1e-05``)."""
    try:
        value = ast.literal_eval(word)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return word
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        return repr(value)
    return word
