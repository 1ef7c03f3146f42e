"""Copy flags are evidence, calibrated on honest work (issue 38 item 1).

tests/fixtures/honest/rnn holds 30 correct rnn submissions in independent styles (CS231n's Wx/Wh names,
einsum, while loops, long names, recursion, in-place updates, a vectorised BPTT, a closure as the cache,
per-entry loops, ...; units.py and make.py say how they are put together).  None may be flagged; every
disguised copy of the grader's tests must be, with the lines that match; a near-identical pair of students
is flagged in gradebook.csv.
"""
import ast
import csv
import glob
import importlib.util
import itertools
import os
import re
import shutil

import numpy
import pytest

from minigrad.coursework import load_assignment
from minigrad.coursework.spec.assignment import list_assignments
from minigrad.coursework.authoring.make import student_version
from minigrad.coursework.grading import copies as reference, similarity
from minigrad.coursework.grading.gradebook import grade_folder
from minigrad.coursework.grading.grader import Grader
from minigrad.functions import rnn_steps as steps
from minigrad.functions.rnn_steps import rnn_step_backward, rnn_step_forward

HERE = os.path.dirname(os.path.abspath(__file__))




def corpus(name):
    return sorted(glob.glob(os.path.join(HERE, "fixtures", "honest", name, "[0-9][0-9]_*.py")))


CORPUS = corpus("rnn")
RNN = load_assignment("rnn")
REFERENCE = student_version(RNN.reference, solutions=True)
LSTM_GRU = load_assignment("lstm_gru")
# each set's make.py: which two units file k is made of (two files sharing one share half their code)
UNITS = {"rnn": lambda k: {("a", k % 10), ("b", (k + 3 * (k // 10)) % 10)},
         "lstm_gru": lambda k: {("a", k % 6), ("b", (k + k // 6) % 6)},
         "primitives": lambda k: {("some of", 6)}}   # any two share up to 3 of the 6 bodies: none is independent
SETS = ["primitives", "rnn", "lstm_gru"]          # attention and transformer: tests/test_grader_flags_sets.py
# the honest corpus's highest share of own code matched in a source, measured: primitives' bodies are a line
# or two, and the natural line is the library's (`unbroadcast(dout * b, _shape(a))`), so its margin is the least
HONEST_AT_MOST = {"rnn": 0.05, "lstm_gru": 0.1, "primitives": 0.45}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def units(path, name="rnn"):
    """The two units a corpus file is made of (its set's make.py): two files sharing one share its code."""
    return UNITS[name](int(os.path.basename(path)[:2]))


# ----------------------------------------------------------------------------- what a copier does

class Rename(ast.NodeTransformer):
    """Every variable and argument (not a function, a module or an attribute) gets a new name."""

    def __init__(self, tree):
        stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        stored |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        self.names = {name: f"v{number}_" for number, name in enumerate(sorted(stored))}

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node


def renamed(source):
    """What a copier does: every local renamed, comments gone, the spacing changed."""
    tree = ast.parse(source)
    text = ast.unparse(Rename(tree).visit(tree))
    return "\n\n".join(text.replace(", ", ",").replace(" = ", "=").split("\n"))


class Wrap(ast.NodeTransformer):
    """Every name read becomes (x if 1 else 0): the same program, other text (test_grader_course_attacks)."""

    def visit_Name(self, node):
        return ast.IfExp(ast.Constant(1), node, ast.Constant(0)) if isinstance(node.ctx, ast.Load) else node


def wrapped(source):
    return ast.unparse(Wrap().visit(ast.parse(source)))


def reordered(source):
    """The functions in reverse order, a dead statement at the top of each."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            node.body.insert(0, ast.parse("_unused = None").body[0])
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    rest = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
    tree.body = rest + functions[::-1]
    return ast.unparse(tree)


def copies(assignment):
    """The disguised copies of the grader's tests, of ``assignment``'s reference as students get it."""
    reference = student_version(assignment.reference, solutions=True)
    return {"renamed": renamed(reference), "wrapped": wrapped(reference), "reordered": reordered(renamed(reference)),
            "in a helper module": {assignment.module: "from mine import *\n", "mine.py": renamed(reference)}}


COPIES = copies(RNN)


# ----------------------------------------------------------------------------- the corpus

def test_the_honest_corpus_has_thirty_correct_solutions_in_distinct_styles():
    assert len(CORPUS) == 30 and len({frozenset(units(p)) for p in CORPUS}) == 30
    rng = numpy.random.default_rng(0)
    T, N, D, H = 4, 3, 5, 6
    x, h0 = rng.standard_normal((T, N, D)), rng.standard_normal((N, H))
    w_ih, w_hh = 0.5 * rng.standard_normal((H, D)), 0.5 * rng.standard_normal((H, H))
    b_ih, b_hh, dh = rng.standard_normal(H), rng.standard_normal(H), rng.standard_normal((T, N, H))
    hs, caches, h = [], [], h0
    for t in range(T):                                   # the library's own steps: the expected values
        h, cache = rnn_step_forward(x[t], h, w_ih, w_hh, b_ih, b_hh)
        hs.append(h)
        caches.append(cache)
    carry, dxs, sums = numpy.zeros((N, H)), [None] * T, [0, 0, 0, 0]
    for t in reversed(range(T)):
        dxs[t], carry, *weights = rnn_step_backward(dh[t] + carry, caches[t])
        sums = [a + b for a, b in zip(sums, weights)]
    expected = [numpy.stack(dxs), carry] + sums
    for path in CORPUS:
        spec = importlib.util.spec_from_file_location("honest_rnn", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out, cache = module.rnn_forward(x, h0, w_ih, w_hh, b_ih, b_hh)
        grads = module.rnn_backward(dh, cache)
        assert numpy.allclose(out, numpy.stack(hs)) and len(grads) == 6, path
        assert all(numpy.allclose(a, b) for a, b in zip(grads, expected)), path
        step, step_cache = module.rnn_step_forward(x[0], h0, w_ih, w_hh, b_ih, b_hh)
        step_grads = module.rnn_step_backward(dh[0], step_cache)
        assert numpy.allclose(step, hs[0]), path
        assert all(numpy.allclose(a, b) for a, b in zip(step_grads, rnn_step_backward(dh[0], caches[0]))), path


def test_the_lstm_gru_corpus_has_thirty_correct_solutions_in_distinct_styles():
    paths = corpus("lstm_gru")
    assert len(paths) == 30 and len({frozenset(units(p, "lstm_gru")) for p in paths}) == 30
    rng = numpy.random.default_rng(1)
    N, D, H = 3, 5, 4
    x, h, c = rng.standard_normal((N, D)), rng.standard_normal((N, H)), rng.standard_normal((N, H))
    lstm = [0.5 * rng.standard_normal((4 * H, D)), 0.5 * rng.standard_normal((4 * H, H)),
            rng.standard_normal(4 * H), rng.standard_normal(4 * H)]
    gru = [0.5 * rng.standard_normal((3 * H, D)), 0.5 * rng.standard_normal((3 * H, H)),
           rng.standard_normal(3 * H), rng.standard_normal(3 * H)]
    dh, dc = rng.standard_normal((N, H)), rng.standard_normal((N, H))
    h1, c1, cache = steps.lstm_step_forward(x, h, c, *lstm)
    expected_lstm = (h1, c1) + tuple(steps.lstm_step_backward(dh, dc, cache))
    expected_gru = {}
    for after in (True, False):
        h1, cache = steps.gru_step_forward(x, h, *gru, after)
        expected_gru[after] = (h1,) + tuple(steps.gru_step_backward(dh, cache))
    for path in paths:
        spec = importlib.util.spec_from_file_location("honest_lstm_gru", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        h1, c1, cache = module.lstm_step_forward(x, h, c, *lstm)
        got = (h1, c1) + tuple(module.lstm_step_backward(dh, dc, cache))
        assert len(got) == 9 and all(numpy.allclose(a, b) for a, b in zip(got, expected_lstm)), path
        for after in (True, False):
            h1, cache = module.gru_step_forward(x, h, *gru, after)
            got = (h1,) + tuple(module.gru_step_backward(dh, cache))
            assert len(got) == 7 and all(numpy.allclose(a, b) for a, b in zip(got, expected_gru[after])), path


def test_the_primitives_corpus_is_thirty_correct_fillings_of_the_handout():
    """Each file is the handed-out primitives.py with the eight functions filled in (make.py): distinct, and
    every Function's backward right by minigrad.gradcheck (the grader gave all 30 full marks: the note's run)."""
    import minigrad
    from minigrad.functions.softmax import softmax_forward
    paths = corpus("primitives")
    assert len(paths) == len({read(p) for p in paths}) == 30
    rng = numpy.random.default_rng(3)

    def tensor(*shape):
        return minigrad.tensor(rng.standard_normal(shape), requires_grad=True)
    for path in paths:
        spec = importlib.util.spec_from_file_location("honest_primitives", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        minigrad.gradcheck(lambda a, b: module.Mul.apply(a, b), (tensor(3, 4), tensor(4)))
        minigrad.gradcheck(lambda a, b: module.MatMul.apply(a, b), (tensor(3, 4), tensor(4, 2)))
        minigrad.gradcheck(lambda x: module.Tanh.apply(x), (tensor(3, 4),))
        minigrad.gradcheck(lambda x: module.Sigmoid.apply(x), (tensor(3, 4),))
        minigrad.gradcheck(lambda x: module.Sum.apply(x, 1, False), (tensor(2, 3, 4),))
        minigrad.gradcheck(lambda x: module.Sum.apply(x, (0, 2), True), (tensor(2, 3, 4),))
        minigrad.gradcheck(lambda x: module.Softmax.apply(x, -1), (tensor(3, 5),))
        x = rng.standard_normal((3, 5))
        assert numpy.allclose(module.softmax_forward(x)[0], softmax_forward(x)[0]), path


@pytest.mark.parametrize("name", SETS)
def test_no_honest_submission_is_flagged_and_every_disguised_copy_is(name):
    assignment = load_assignment(name)
    flagged = {os.path.basename(p): reference.reference_flags(read(p), assignment) for p in corpus(name)}
    assert {student: f for student, f in flagged.items() if f} == {}
    for what, copy in copies(assignment).items():
        flags = reference.reference_flags(copy, assignment)
        assert any(f"the reference solution of the shipped assignment {name!r}" in f for f in flags), (what, flags)
        assert any(re.search(rf"matching: (mine|{name})\.py lines \d", f) for f in flags), (what, flags)


@pytest.mark.parametrize("name", SETS)
def test_the_margin_between_the_honest_corpus_and_the_copies(name):
    """The honest corpus's highest share of own code matched in any source (HONEST_AT_MOST), and the copies'
    lowest (rnn 0.94, lstm_gru 0.96, primitives 0.81; honest: rnn 0.03, lstm_gru 0.07, primitives 0.44): the same
    on Python 3.10 to 3.13 (the tokens are: tests/test_code_tokens.py)."""
    assignment = load_assignment(name)

    def best(source):
        files = {assignment.module: source} if isinstance(source, str) else source
        words = [t for file in sorted(files) for t, _ in reference.line_tokens(files[file])]
        own = [not g for g in reference._covered(words, reference._handed_out(assignment), reference.HANDED_OUT)]
        shares = [sum(m and o for m, o in zip(reference._covered(words, runs, reference.RUN), own)) / sum(own)
                  for _, runs in reference._candidates(list_assignments)]
        return max(shares)
    honest = max(best(read(p)) for p in corpus(name))
    copied = min(best(c) for c in copies(assignment).values())
    assert honest <= HONEST_AT_MOST[name] and copied > 0.8 and honest < reference.OWN_FLAG_AT < copied, \
        (honest, copied)


def test_the_handout_s_own_helpers_and_hinted_loop_are_not_evidence():
    """The issue's case: the loop the hints dictate matched rnn_fast.py's rnn_forward at 86%."""
    hinted = [p for p in CORPUS if "hinted_loop" in p or "helpers" in p]
    assert len(hinted) == 6
    assert all(reference.reference_flags(read(p), RNN) == [] for p in hinted)


@pytest.mark.parametrize("name", SETS)
def test_near_identical_classmates_are_flagged_and_independent_ones_are_not(name):
    """Honest pairs: at most 0.86 of the larger one's fingerprints (two files of make.py sharing one unit
    verbatim; pairs sharing none: rnn 0.32, lstm_gru 0.65: two GRU backwards written apart converge on the
    same steps; primitives: pairs sharing 3 of 6 function bodies, at most 0.79); a renamed or wrapped copy of
    a classmate: 1.0."""
    sources = {os.path.basename(p): read(p) for p in corpus(name)}
    base = similarity.handout(load_assignment(name))
    assert similarity.pair_flags(sources, base=base) == {}
    given = similarity.fingerprints(base)
    prints = {student: similarity.fingerprints(text) - given for student, text in sources.items()}
    score = {(a, b): len(prints[a] & prints[b]) / max(len(prints[a]), len(prints[b]))
             for a, b in itertools.combinations(sorted(prints), 2)}
    independent = max([s for (a, b), s in score.items() if not units(a, name) & units(b, name)], default=0.0)
    sharing_a_unit = max(score.values())       # make.py's pairs share one unit verbatim: half a copy
    assert independent < 0.75 and sharing_a_unit < similarity.PAIR_FLAG_AT, (independent, sharing_a_unit)
    for student in sorted(sources)[::15]:
        for copy in (renamed(sources[student]), wrapped(sources[student])):
            flags = similarity.pair_flags(dict(sources, copier=copy), base=base)
            assert sorted(flags) == sorted([student, "copier"]), (student, flags)
            assert f"near-identical to {student}'s submission" in flags["copier"][0]


def test_gradebook_csv_flags_a_near_identical_pair(tmp_path):
    """A renamed copy of a classmate: 1.00 in similarity.csv, and now in gradebook.csv's flags as well."""
    chosen = ["01_einsum_while_loops.py", "14_in_place_zip_reversed.py"]
    for name in chosen:
        os.makedirs(tmp_path / "class" / name[:-3])
        shutil.copyfile(os.path.join(HERE, "fixtures", "honest", "rnn", name), tmp_path / "class" / name[:-3] / "rnn.py")
    os.makedirs(tmp_path / "class" / "zz_copier")
    (tmp_path / "class" / "zz_copier" / "rnn.py").write_text(renamed(read(os.path.join(HERE, "fixtures", "honest",
                                                                                      "rnn", chosen[0]))))
    grade_folder(tmp_path / "class", "rnn", tmp_path / "out", jobs=2, seed=3, only=["rnn_step"])
    with open(tmp_path / "out" / "gradebook.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["01_einsum_while_loops"]["flags"].startswith("near-identical to zz_copier's submission")
    assert rows["zz_copier"]["flags"].startswith("near-identical to 01_einsum_while_loops's submission")
    assert rows["14_in_place_zip_reversed"]["flags"] == ""
    assert {row["total"] for row in rows.values()} == {"2"}


def test_the_grader_gives_corpus_solutions_full_marks(tmp_path):
    """Three of the styles through the whole grader, one reference run (all 30: the note's run, grade -j 2)."""
    with Grader("rnn", seed=2) as grader:
        for name in ["02_helpers_recursion.py", "08_closure_batch_first.py", "11_einsum_einsum_bptt.py"]:
            folder = tmp_path / name[:-3]
            os.makedirs(folder)
            shutil.copyfile(os.path.join(HERE, "fixtures", "honest", "rnn", name), folder / "rnn.py")
            results = grader.grade(str(folder))
            assert all(r["passed"] and not r["flags"] for r in results), [(r["name"], r["message"]) for r in results]
