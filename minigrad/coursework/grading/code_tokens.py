"""The tokens the copy flags compare: the same on every Python (3.10 to 3.13), by construction.

Two ways in, one vocabulary out:

- ``tree_tokens(tree)``: a parsed (and normalised) syntax tree written out token by token by a plain walk
  of our own, never through ``ast.unparse`` or ``tokenize``, whose output changes from one Python to the next
  (3.10's ``ast.unparse`` writes ``(a, b) = f()``, 3.11's ``a, b = f()``; 3.12's tokenizer splits an
  f-string into pieces and stops at an apostrophe in prose).  Each token comes with the line of the statement
  it belongs to;
- ``text_tokens(text)``: text that does not parse (a hint in words, README prose, a broken file) read by one
  regular expression of our own.

The vocabulary: every name is ``V``; keywords, operators, numbers (as ``repr`` writes their value) and
attribute names stay (``. sum``); every string, f-strings too, is ``S``; ``self.attn`` is ``V``, as the
hints' ``attn``; a statement ends with ``;``, a block is ``{`` ... ``}``.  Parentheses are written where
precedence needs them, and a tuple without them where Python allows it (``a, b = f()``, ``return a, b``,
``x[i, j]``): how code is written by hand, and so how a hint in words reads.
"""
import ast
import re

# keyword.kwlist, the same on Python 3.10 to 3.13 (the soft keywords match, case, _ and type are names)
KEYWORDS = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally for from "
    "global if import in is lambda nonlocal not or pass raise return try while with yield".split())

# how tightly an expression binds, loosest first (the grammar's order, as Lib/ast.py's _Precedence)
NAMED, TUPLE, YIELD, TEST, OR, AND, NOT, CMP, BOR, BXOR, BAND, SHIFT, ARITH, TERM, FACTOR, POWER, AWAIT, ATOM = \
    range(18)

BINARY = {ast.BitOr: ("|", BOR), ast.BitXor: ("^", BXOR), ast.BitAnd: ("&", BAND), ast.LShift: ("<<", SHIFT),
          ast.RShift: (">>", SHIFT), ast.Add: ("+", ARITH), ast.Sub: ("-", ARITH), ast.Mult: ("*", TERM),
          ast.MatMult: ("@", TERM), ast.Div: ("/", TERM), ast.FloorDiv: ("//", TERM), ast.Mod: ("%", TERM),
          ast.Pow: ("**", POWER)}
UNARY = {ast.Not: ("not", NOT), ast.Invert: ("~", FACTOR), ast.UAdd: ("+", FACTOR), ast.USub: ("-", FACTOR)}
COMPARE = {ast.Eq: ["=="], ast.NotEq: ["!="], ast.Lt: ["<"], ast.LtE: ["<="], ast.Gt: [">"], ast.GtE: [">="],
           ast.Is: ["is"], ast.IsNot: ["is", "not"], ast.In: ["in"], ast.NotIn: ["not", "in"]}


def precedence(node):
    """How tightly ``node`` binds (NAMED ... ATOM): below what its place needs, it is written in parentheses."""
    if isinstance(node, ast.BinOp):
        return BINARY[type(node.op)][1]
    if isinstance(node, ast.UnaryOp):
        return UNARY[type(node.op)][1]
    if isinstance(node, ast.BoolOp):
        return AND if isinstance(node.op, ast.And) else OR
    if isinstance(node, ast.Tuple):
        return TUPLE if node.elts else ATOM          # () is an atom
    kinds = {ast.NamedExpr: NAMED, ast.Yield: YIELD, ast.YieldFrom: YIELD, ast.IfExp: TEST, ast.Lambda: TEST,
             ast.Compare: CMP, ast.Await: AWAIT}
    return kinds.get(type(node), ATOM)


def tree_tokens(tree):
    """[(token, line)] of a syntax tree (a module, or any statement or expression in it)."""
    writer = TokenWriter()
    if isinstance(tree, ast.Module):
        writer.statements(tree.body)
    elif isinstance(tree, ast.stmt):
        writer.statement(tree)
    else:
        writer.expression(tree, NAMED)
    return writer.out


class TokenWriter:
    """Writes statements and expressions as tokens into ``out``, each with the line of its statement."""

    def __init__(self):
        self.out = []
        self.line = 1

    def put(self, *tokens):
        self.out += [(token, self.line) for token in tokens]

    # ------------------------------------------------------------------ statements

    def statements(self, nodes):
        for node in nodes:
            self.statement(node)

    def statement(self, node):
        self.line = getattr(node, "lineno", self.line)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return                                     # a docstring, or any bare string: not code
        write = getattr(self, "write_" + type(node).__name__, None)
        if write is None:
            self.generic(node)
            self.put(";")
        elif write(node) != "block":
            self.put(";")

    def block(self, body):
        """``: { body }`` after a compound statement's first line."""
        self.put(":", ";", "{")
        self.statements(body)
        self.put("}")

    def orelse(self, body, word="else"):
        if body:
            self.line = body[0].lineno
            self.put(word)
            self.block(body)

    def write_FunctionDef(self, node, words=("def",)):
        self.decorators(node.decorator_list)
        self.line = node.lineno
        self.put(*words, "V")
        self.type_params(node)
        self.put("(")
        self.arguments(node.args)
        self.put(")")
        if node.returns is not None:
            self.put("->")
            self.expression(node.returns, TEST)
        self.block(node.body)
        return "block"

    def write_AsyncFunctionDef(self, node):
        return self.write_FunctionDef(node, ("async", "def"))

    def write_ClassDef(self, node):
        self.decorators(node.decorator_list)
        self.line = node.lineno
        self.put("class", "V")
        self.type_params(node)
        if node.bases or node.keywords:
            self.put("(")
            self.call_arguments(node.bases, node.keywords)
            self.put(")")
        self.block(node.body)
        return "block"

    def decorators(self, decorators):
        for decorator in decorators:
            self.line = getattr(decorator, "lineno", self.line)
            self.put("@")
            self.expression(decorator, TEST)
            self.put(";")

    def type_params(self, node):
        """``[T, ...]`` of Python 3.12's generics (a field older Pythons do not have, and cannot parse)."""
        if getattr(node, "type_params", None):
            self.put("[")
            self.commas(node.type_params, self.generic)
            self.put("]")

    def write_Return(self, node):
        self.put("return")
        if node.value is not None:
            self.expression(node.value, TUPLE)

    def write_Delete(self, node):
        self.put("del")
        self.commas(node.targets, lambda target: self.expression(target, TEST))

    def write_Assign(self, node):
        for target in node.targets:
            self.expression(target, TUPLE)
            self.put("=")
        self.expression(node.value, TUPLE)

    def write_AugAssign(self, node):
        self.expression(node.target, TUPLE)
        self.put(BINARY[type(node.op)][0] + "=")
        self.expression(node.value, TUPLE)

    def write_AnnAssign(self, node):
        self.expression(node.target, TUPLE)
        self.put(":")
        self.expression(node.annotation, TEST)
        if node.value is not None:
            self.put("=")
            self.expression(node.value, TUPLE)

    def write_For(self, node, words=("for",)):
        self.put(*words)
        self.expression(node.target, TUPLE)
        self.put("in")
        self.expression(node.iter, TUPLE)
        self.block(node.body)
        self.orelse(node.orelse)
        return "block"

    def write_AsyncFor(self, node):
        return self.write_For(node, ("async", "for"))

    def write_While(self, node):
        self.put("while")
        self.expression(node.test, NAMED)
        self.block(node.body)
        self.orelse(node.orelse)
        return "block"

    def write_If(self, node, word="if"):
        self.put(word)
        self.expression(node.test, NAMED)
        self.block(node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            self.line = node.orelse[0].lineno
            self.write_If(node.orelse[0], "elif")
        else:
            self.orelse(node.orelse)
        return "block"

    def write_With(self, node, words=("with",)):
        self.put(*words)
        self.commas(node.items, self.with_item)
        self.block(node.body)
        return "block"

    def write_AsyncWith(self, node):
        return self.write_With(node, ("async", "with"))

    def with_item(self, item):
        self.expression(item.context_expr, TEST)
        if item.optional_vars is not None:
            self.put("as")
            self.expression(item.optional_vars, TEST)

    def write_Match(self, node):
        self.put("match")
        self.expression(node.subject, TUPLE)
        self.put(":", ";", "{")
        for case in node.cases:
            self.line = getattr(case.pattern, "lineno", self.line)
            self.put("case")
            self.generic(case.pattern)
            if case.guard is not None:
                self.put("if")
                self.expression(case.guard, NAMED)
            self.block(case.body)
        self.put("}")
        return "block"

    def write_Raise(self, node):
        self.put("raise")
        if node.exc is not None:
            self.expression(node.exc, TEST)
        if node.cause is not None:
            self.put("from")
            self.expression(node.cause, TEST)

    def write_Try(self, node, star=()):
        self.put("try")
        self.block(node.body)
        for handler in node.handlers:
            self.line = handler.lineno
            self.put("except", *star)
            if handler.type is not None:
                self.expression(handler.type, TEST)
            if handler.name is not None:
                self.put("as", "V")
            self.block(handler.body)
        self.orelse(node.orelse)
        self.orelse(node.finalbody, "finally")
        return "block"

    def write_TryStar(self, node):
        return self.write_Try(node, ("*",))

    def write_Assert(self, node):
        self.put("assert")
        self.expression(node.test, TEST)
        if node.msg is not None:
            self.put(",")
            self.expression(node.msg, TEST)

    def write_Import(self, node):
        self.put("import")
        self.commas(node.names, self.alias)

    def write_ImportFrom(self, node):
        self.put("from", *["."] * node.level)
        if node.module:
            self.put(*dotted(node.module))
        self.put("import")
        self.commas(node.names, self.alias)

    def alias(self, alias):
        self.put(*(["*"] if alias.name == "*" else dotted(alias.name)))
        if alias.asname:
            self.put("as", "V")

    def write_Global(self, node, word="global"):
        self.put(word)
        self.commas(node.names, lambda name: self.put("V"))

    def write_Nonlocal(self, node):
        self.write_Global(node, "nonlocal")

    def write_Expr(self, node):
        self.expression(node.value, YIELD)

    def write_Pass(self, node):
        self.put("pass")

    def write_Break(self, node):
        self.put("break")

    def write_Continue(self, node):
        self.put("continue")

    # ------------------------------------------------------------------ expressions

    def expression(self, node, level):
        """``node`` as tokens, in parentheses when it binds less tightly than ``level`` (its place) needs."""
        grouped = precedence(node) < level
        if grouped:
            self.put("(")
        write = getattr(self, "expr_" + type(node).__name__, None)
        if write is None:
            self.generic(node)
        else:
            write(node)
        if grouped:
            self.put(")")

    def commas(self, items, write):
        for i, item in enumerate(items):
            if i:
                self.put(",")
            write(item)

    def expr_Name(self, node):
        self.put("V")

    def expr_Constant(self, node):
        value = node.value
        if isinstance(value, (str, bytes)):
            self.put("S")
        elif value is None or isinstance(value, bool):
            self.put(str(value))
        elif value is Ellipsis:
            self.put("...")
        elif isinstance(value, (int, float)) and value < 0:    # folded by the Normaliser: -1 is written - 1
            self.put("-", repr(-value))
        else:
            self.put(repr(value))

    def expr_JoinedStr(self, node):
        self.put("S")                                  # an f-string is one string, whatever is inside

    def expr_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            self.put("V")                              # self.attn reads as attn: the hints name a module's layers bare
            return
        self.expression(node.value, ATOM)
        self.put(".", node.attr)

    def expr_Subscript(self, node):
        self.expression(node.value, ATOM)
        self.put("[")
        if isinstance(node.slice, ast.Tuple) and node.slice.elts:
            self.commas(node.slice.elts, lambda item: self.expression(item, TEST))
            if len(node.slice.elts) == 1:
                self.put(",")
        else:
            self.expression(node.slice, TEST)
        self.put("]")

    def expr_Slice(self, node):
        if node.lower is not None:
            self.expression(node.lower, TEST)
        self.put(":")
        if node.upper is not None:
            self.expression(node.upper, TEST)
        if node.step is not None:
            self.put(":")
            self.expression(node.step, TEST)

    def expr_Call(self, node):
        self.expression(node.func, ATOM)
        if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.GeneratorExp):
            self.expr_GeneratorExp(node.args[0])       # f(x for x in y): its parentheses are the call's
            return
        self.put("(")
        self.call_arguments(node.args, node.keywords)
        self.put(")")

    def call_arguments(self, args, keywords):
        self.commas(list(args) + list(keywords), self.argument)

    def argument(self, node):
        if isinstance(node, ast.keyword):
            self.put(*(["V", "="] if node.arg else ["**"]))
            self.expression(node.value, TEST)
        else:
            self.expression(node, TEST)

    def expr_Starred(self, node):
        self.put("*")
        self.expression(node.value, BOR)

    def expr_BinOp(self, node):
        word, level = BINARY[type(node.op)]
        right_first = isinstance(node.op, ast.Pow)     # 2 ** 3 ** 2 is 2 ** (3 ** 2)
        self.expression(node.left, level + right_first)
        self.put(word)
        self.expression(node.right, level + (not right_first))

    def expr_UnaryOp(self, node):
        word, level = UNARY[type(node.op)]
        self.put(word)
        self.expression(node.operand, level)

    def expr_BoolOp(self, node):
        word, level = ("and", AND) if isinstance(node.op, ast.And) else ("or", OR)
        for i, value in enumerate(node.values):
            if i:
                self.put(word)
            self.expression(value, level + 1)

    def expr_Compare(self, node):
        self.expression(node.left, CMP + 1)
        for op, right in zip(node.ops, node.comparators):
            self.put(*COMPARE[type(op)])
            self.expression(right, CMP + 1)

    def expr_IfExp(self, node):
        self.expression(node.body, OR)
        self.put("if")
        self.expression(node.test, OR)
        self.put("else")
        self.expression(node.orelse, TEST)

    def expr_Lambda(self, node):
        self.put("lambda")
        self.arguments(node.args)
        self.put(":")
        self.expression(node.body, TEST)

    def expr_NamedExpr(self, node):
        self.expression(node.target, ATOM)
        self.put(":=")
        self.expression(node.value, TEST)

    def expr_Await(self, node):
        self.put("await")
        self.expression(node.value, ATOM)

    def expr_Yield(self, node, words=("yield",)):
        self.put(*words)
        if node.value is not None:
            self.expression(node.value, TUPLE)

    def expr_YieldFrom(self, node):
        self.expr_Yield(node, ("yield", "from"))

    def expr_Tuple(self, node):
        if not node.elts:
            self.put("(", ")")
            return
        self.commas(node.elts, lambda item: self.expression(item, TEST))
        if len(node.elts) == 1:
            self.put(",")

    def expr_List(self, node, brackets=("[", "]")):
        self.put(brackets[0])
        self.commas(node.elts, lambda item: self.expression(item, TEST))
        self.put(brackets[1])

    def expr_Set(self, node):
        self.expr_List(node, ("{", "}"))

    def expr_Dict(self, node):
        self.put("{")
        self.commas(list(zip(node.keys, node.values)), self.dict_item)
        self.put("}")

    def dict_item(self, item):
        key, value = item
        if key is None:
            self.put("**")
            self.expression(value, BOR)
        else:
            self.expression(key, TEST)
            self.put(":")
            self.expression(value, TEST)

    def expr_ListComp(self, node, brackets=("[", "]")):
        self.put(brackets[0])
        if isinstance(node, ast.DictComp):
            self.dict_item((node.key, node.value))
        else:
            self.expression(node.elt, TEST)
        for generator in node.generators:
            self.put(*(["async", "for"] if generator.is_async else ["for"]))
            self.expression(generator.target, TUPLE)
            self.put("in")
            self.expression(generator.iter, OR)
            for condition in generator.ifs:
                self.put("if")
                self.expression(condition, OR)
        self.put(brackets[1])

    def expr_SetComp(self, node):
        self.expr_ListComp(node, ("{", "}"))

    def expr_DictComp(self, node):
        self.expr_ListComp(node, ("{", "}"))

    def expr_GeneratorExp(self, node):
        self.expr_ListComp(node, ("(", ")"))

    def arguments(self, args):
        """A def's or a lambda's parameters: names are V, defaults and annotations stay."""
        positional = list(args.posonlyargs) + list(args.args)
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        items = []
        for i, (arg, default) in enumerate(zip(positional, defaults)):
            items.append((None, arg, default))
            if args.posonlyargs and i == len(args.posonlyargs) - 1:
                items.append(("/", None, None))
        if args.vararg is not None:
            items.append(("*", args.vararg, None))
        elif args.kwonlyargs:
            items.append(("*", None, None))
        items += [(None, arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
        if args.kwarg is not None:
            items.append(("**", args.kwarg, None))
        self.commas(items, self.parameter)

    def parameter(self, item):
        star, arg, default = item
        if star:
            self.put(star)
        if arg is not None:
            self.put("V")
            if arg.annotation is not None:
                self.put(":")
                self.expression(arg.annotation, TEST)
        if default is not None:
            self.put("=")
            self.expression(default, TEST)

    def generic(self, node):
        """What has no writer of its own (a match pattern, a type alias): its kind, then its parts."""
        self.put(type(node).__name__)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expression(child, ATOM)
            elif isinstance(child, ast.stmt):
                self.statement(child)
            elif not isinstance(child, ast.expr_context):     # Load, Store: not written
                self.generic(child)


def dotted(name):
    """The tokens of a module name: ``numpy.linalg`` is ``V . linalg`` (a name, then attribute names)."""
    first, *rest = name.split(".")
    return ["V"] + [token for part in rest for token in (".", part)]


# ---------------------------------------------------------------------------------------------- text

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
