"""The copy flags' tokens are the same on every Python (issue 38): expected values written down here, once.

code_tokens.py writes a syntax tree as tokens by its own walk, and reads text that does not parse with its own
regular expression, so nothing depends on ``ast.unparse`` or ``tokenize`` (3.10's unparse writes
``(a, b) = f()``, 3.12's tokenize splits f-strings and stops at an apostrophe in prose).  The values below were
computed once; CI runs this file on Python 3.10, 3.11, 3.12 and 3.13, and any drift fails here, before it moves
a flag.  Changing the normal form on purpose: recompute them (the messages print the new values), and
re-measure the margins of tests/test_grader_flags*.py.
"""
import glob
import hashlib
import os

from minigrad.coursework.grading import copies, similarity
from minigrad.coursework.grading.code_tokens import tree_tokens
from minigrad.coursework.grading.text_tokens import text_tokens

HERE = os.path.dirname(os.path.abspath(__file__))
HONEST = os.path.join(HERE, "fixtures", "honest")

# What differs from one Python to the next in ast.unparse and tokenize, all in one file (valid on 3.10 to 3.13).
VERSION_SENSITIVE = '''
import numpy as np
from .helpers import (affine as aff, tanh_back)


@np.vectorize
def step(x, h, w, /, scale=2, *extra, eps=1e-5, **options) -> "Array":
    """A docstring."""
    a, b = np.split(x @ w.T, 2, axis=-1)              # 3.10's unparse: (a, b) = ...
    for i, (p, q) in enumerate(zip(a, b)):           # 3.10's unparse: for (i, (p, q)) in ...
        h[i] = p * q if i % 2 else -p ** 2 + (-p) ** 2
    name = f"{x.shape!r:>10} and {h.dtype}"          # 3.12's tokenize: FSTRING_START ... FSTRING_END
    raw, msg = rb"\\d" + b"x", f'{"nested"}' 'joined'
    total = sum(v for v in h.ravel() if (w := v) > 0 and not v is None)
    lookup = {**options, "eps": eps, 1: [*a, *b], 2: {k: v for k, v in options.items()}}
    first, *rest = sorted({abs(v) for v in rest_of(h)}, key=lambda v, s=1: -v * s)
    total += 1_000 * 0x10 + 1.5e-3 - 3j
    del lookup[2]
    assert 0 <= i < 10 != 11, "in range"
    return h, (a, b), lookup[1][::2, ...], x[:, None][1:-1, 0], name, raw, msg, total, first


class Cell(np.ndarray, metaclass=type):
    size: int = 3

    def forward(me, x):
        global np
        try:
            with open(x) as f, open(x) as g:
                return me.attn(me.ln1(x), mask=None)[0]
        except (ValueError, KeyError) as error:
            raise RuntimeError("no") from error
        else:
            pass
        finally:
            me.closed = True

    async def wait(self):
        async for item in self.items():
            await item
        match self.size:
            case [1, *more]:
                return more
            case {"k": value} if value:
                return value
            case Cell(size=3) | None:
                return None
        yield from range(3)
'''

SOURCES = {
    "version_sensitive": VERSION_SENSITIVE,
    "honest rnn 01": os.path.join(HONEST, "rnn", "01_einsum_while_loops.py"),
    "honest rnn 01, renamed": "renamed",        # test_grader_flags's disguise: written by this Python's ast.unparse
    "honest rnn 14": os.path.join(HONEST, "rnn", "14_in_place_zip_reversed.py"),
    "honest transformer 30": os.path.join(HONEST, "transformer", "30_library_helpers_hinted.py"),
    "hint in words": "Don't loop twice: h = np.tanh(x @ Wx + h_prev @ Wh + b); it's cached as cache = (x, h_prev, Wx, "
                     "Wh, h) and\nreturn h, cache; dtanh = dh * (1 - h ** 2) · `self.attn(x)` is attn(x), f'{x}' too.",
    "broken file": "def f(x):\n    y = (x + 1)) * 2\n    return y  # a bracket too many\n  z = 'it's'\n",
}


def source(name):
    given = SOURCES[name]
    if given == "renamed":
        from test_grader_flags import renamed
        return renamed(source("honest rnn 01"))
    if os.path.isfile(given):
        with open(given, encoding="utf-8") as f:
            return f.read()
    return given


EXPECTED_TOKENS = {
    'version_sensitive':
        ('import V as V ; from . V import V as V , V ; @ V . vectorize ; def V ( V , V , V , / , V = 2 , * V ,'
        ' V = 1e-05 , ** V ) -> S : ; { V , V = V . split ( V @ V . T , 2 , V = - 1 ) ; for V , ( V , V ) in '
        'V ( V ( V , V ) ) : ; { V [ V ] = V * V if V % 2 else - V ** 2 + ( - V ) ** 2 ; } V = S ; V , V = S '
        '+ S , S ; V = V ( V for V in V . ravel ( ) if ( V := V ) > 0 and not V is None ) ; V = { ** V , S : '
        'V , 1 : [ * V , * V ] , 2 : { V : V for V , V in V . items ( ) } } ; V , * V = V ( { V ( V ) for V '
        'in V ( V ) } , V = lambda V , V = 1 : - V * V ) ; V += 16000.0015 - 3j ; del V [ 2 ] ; assert 0 <= V'
        ' < 10 != 11 , S ; return V , ( V , V ) , V [ 1 ] [ : : 2 , ... ] , V [ : , None ] [ 1 : - 1 , 0 ] , '
        'V , V , V , V , V ; } class V ( V . ndarray , V = V ) : ; { V : V = 3 ; def V ( V , V ) : ; { global'
        ' V ; try : ; { with V ( V ) as V , V ( V ) as V : ; { return V ( V ( V ) , V = None ) [ 0 ] ; } } '
        'except ( V , V ) as V : ; { raise V ( S ) from V ; } else : ; { pass ; } finally : ; { V = True ; } '
        '} async def V ( V ) : ; { async for V in V ( ) : ; { await V ; } match V : ; { case MatchSequence '
        'MatchValue 1 MatchStar : ; { return V ; } case MatchMapping S MatchAs if V : ; { return V ; } case '
        'MatchOr MatchClass V MatchValue 3 MatchSingleton : ; { return None ; } } yield from V ( 3 )'),
    'hint in words':
        ('V S V V as V = ( V , V , V , V , V ) and ; return V , V ; V = V * ( 1 - V ** 2 ) · ` V ( V ) ` is V '
        '( V ) , S V .'),
    'broken file':
        "def V ( V ) : ; { V = ( V + 1 ) ) * 2 ; return V ; } V = S V '",
}

EXPECTED_MATRIX = {
    'broken file | hint in words': 0.0,
    'broken file | honest rnn 01': 0.09090909090909091,
    'broken file | honest rnn 01, renamed': 0.09090909090909091,
    'broken file | honest rnn 14': 0.09090909090909091,
    'broken file | honest transformer 30': 0.0,
    'broken file | version_sensitive': 0.36363636363636365,
    'hint in words | honest rnn 01': 0.11764705882352941,
    'hint in words | honest rnn 01, renamed': 0.11764705882352941,
    'hint in words | honest rnn 14': 0.17647058823529413,
    'hint in words | honest transformer 30': 0.11764705882352941,
    'hint in words | version_sensitive': 0.17647058823529413,
    'honest rnn 01 | honest rnn 01, renamed': 1.0,
    'honest rnn 01 | honest rnn 14': 0.18333333333333332,
    'honest rnn 01 | honest transformer 30': 0.16666666666666666,
    'honest rnn 01 | version_sensitive': 0.075,
    'honest rnn 01, renamed | honest rnn 14': 0.18333333333333332,
    'honest rnn 01, renamed | honest transformer 30': 0.16666666666666666,
    'honest rnn 01, renamed | version_sensitive': 0.075,
    'honest rnn 14 | honest transformer 30': 0.20512820512820512,
    'honest rnn 14 | version_sensitive': 0.07534246575342465,
    'honest transformer 30 | version_sensitive': 0.1282051282051282,
}

EXPECTED_CORPUS_DIGESTS = {
    'attention': 'b615e1f7486bee6a',
    'lstm_gru': '02b3b84e12c3a779',
    'primitives': 'cc2811f1ff59e94f',
    'rnn': '4e95b4298b664391',
    'transformer': 'd893159654d7925e',
}


def test_the_tokens_of_what_differs_between_pythons():
    got = {name: similarity.normalise(source(name)) for name in ("version_sensitive", "hint in words", "broken file")}
    assert got == EXPECTED_TOKENS, got


def test_the_similarity_matrix_of_a_fixed_set():
    """Every pair of SOURCES, |A & B| / min(|A|, |B|) of their fingerprints: the exact floats, on every Python."""
    texts = {name: source(name) for name in SOURCES}
    got = {f"{a} | {b}": score for a, b, score in similarity.pairwise(texts)}
    assert got == EXPECTED_MATRIX, got


def test_the_honest_corpora_tokenize_the_same_on_every_python():
    """A digest of every corpus file's tokens (similarity's and copies', with their lines)."""
    got = {}
    for corpus in sorted(os.listdir(HONEST)):
        digest = hashlib.sha256()
        for path in sorted(glob.glob(os.path.join(HONEST, corpus, "[0-9][0-9]_*.py"))):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            digest.update(f"{os.path.basename(path)}\n{similarity.normalise(text)}\n{copies.line_tokens(text)}\n"
                          .encode())
        got[corpus] = digest.hexdigest()[:16]
    assert got == EXPECTED_CORPUS_DIGESTS, got


def test_code_read_as_text_has_the_tree_s_tokens():
    """A hint typed as words and the same code parsed agree token for token: the handout's runs match code."""
    for code in ["h, cache = rnn_step_forward(x[t], h, w_ih, w_hh, b_ih, b_hh)",
                 "x = x + self.attn(self.ln1(x), mask)\nreturn x + self.ff(self.ln2(x))",
                 "dz = dh * (1 - h ** 2); eps = 1e-5; y = x[:, ::2].sum(axis=-1, keepdims=True)",
                 "for t in reversed(range(T)):\n    dx[t], dh = step_backward(dh + dout[t], caches[t])"]:
        assert text_tokens(code)[:-1] == [t for t, _ in tree_tokens(similarity.normalised_tree(code))][:-1]


def test_text_that_does_not_parse_is_read_the_same_way_on_every_python():
    """An apostrophe opens a string to the next quote on its line (or stays alone), any character Python has no
    token for is one, numbers are written as repr writes their value, indents open and close blocks."""
    assert text_tokens("it's f'{x}' · `a.b` 1e-5 0x10 \"\"\"open") == \
        ["V", "S", "{", "V", "}", "'", "·", "`", "V", ".", "b", "`", "1e-05", "16", "S", ";"]
    assert text_tokens("def f(x):\n    '''doc'''\n    self.w = 1\n        y\n  x\n") == \
        ["def", "V", "(", "V", ")", ":", ";", "{", ";", "V", "=", "1", ";", "{", "V", ";", "}", "}", "V", ";"]


def test_a_line_of_unclosed_quotes_is_read_in_linear_time():
    """Student text is untrusted: each quote of ``'\\'\\'\\'...`` used to search the rest of its line for a closing
    quote (Python 3.11's tokenize too: 40,000 characters took 100 s); the search now runs once per line."""
    import time
    started = time.perf_counter()
    words = text_tokens("x = '" + "\\'" * 100_000 + '\ny = "' + '\\"' * 100_000)
    assert len(words) == 400_008 and time.perf_counter() - started < 20
