"""The tokens the copy flags compare: the same on every Python (3.10 to 3.13), by construction.

Two ways in, one vocabulary out:

- ``tree_tokens(tree)``: a parsed (and normalised) syntax tree written out token by token by a plain walk
  of our own, never through ``ast.unparse`` or ``tokenize``, whose output changes from one Python to the next
  (3.10's ``ast.unparse`` writes ``(a, b) = f()``, 3.11's ``a, b = f()``; 3.12's tokenizer splits an
  f-string into pieces and stops at an apostrophe in prose).  Each token comes with the line of the statement
  it belongs to;
- ``text_tokens(text)`` (text_tokens.py): text that does not parse (a hint in words, README prose, a broken
  file) read by regular expressions of our own.

Expressions are expression_tokens.py's.

The vocabulary: every name is ``V``; keywords, operators, numbers (as ``repr`` writes their value) and
attribute names stay (``. sum``); every string, f-strings too, is ``S``; ``self.attn`` is ``V``, as the
hints' ``attn``; a statement ends with ``;``, a block is ``{`` ... ``}``.  Parentheses are written where
precedence needs them, and a tuple without them where Python allows it (``a, b = f()``, ``return a, b``,
``x[i, j]``): how code is written by hand, and so how a hint in words reads.
"""
import ast

from .expression_tokens import NAMED, TEST, TUPLE, YIELD, BINARY, ExpressionWriter


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


class TokenWriter(ExpressionWriter):
    """Writes statements (and, ExpressionWriter, expressions) as tokens into ``out``, each with its line."""

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

def dotted(name):
    """The tokens of a module name: ``numpy.linalg`` is ``V . linalg`` (a name, then attribute names)."""
    first, *rest = name.split(".")
    return ["V"] + [token for part in rest for token in (".", part)]
