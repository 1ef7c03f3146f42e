"""Expressions as tokens: ExpressionWriter, the half of code_tokens.py's TokenWriter that writes them.

Parentheses are written where precedence needs them (the grammar's order, as Lib/ast.py's _Precedence), and a
tuple without them where Python allows it; see code_tokens.py for the vocabulary.
"""
import ast

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


class ExpressionWriter:
    """Writes expressions as tokens into ``out``, each with ``line``, the line of the statement they are in."""

    def __init__(self):
        self.out = []
        self.line = 1

    def put(self, *tokens):
        self.out += [(token, self.line) for token in tokens]

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
