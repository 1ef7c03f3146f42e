"""Copy flags: normalised, winnowed fingerprints find a disguised copy and leave honest work alone."""
import re

from minigrad.coursework import load_assignment
from minigrad.coursework.authoring.make import student_version
from minigrad.coursework.grading.copies import reference_flags
from minigrad.coursework.grading.similarity import fingerprints, normalise, pairwise, similarity

RNN = load_assignment("rnn")

# An honest rnn.py, written independently of the reference: a dict cache, einsum, lists, no helpers.
HONEST = '''
import numpy as np


def rnn_step_forward(x, h_prev, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    pre = np.dot(x, w_ih.T) + np.dot(h_prev, w_hh.T)
    for bias in (b_ih, b_hh):
        if bias is not None:
            pre = pre + bias
    out = np.tanh(pre) if nonlinearity == "tanh" else np.where(pre > 0, pre, 0.0)
    memo = {"x": x, "h_prev": h_prev, "w_ih": w_ih, "w_hh": w_hh, "out": out, "kind": nonlinearity,
            "biases": (b_ih is not None, b_hh is not None)}
    return out, memo


def rnn_step_backward(dh, memo):
    out = memo["out"]
    if memo["kind"] == "tanh":
        g = dh * (1.0 - np.square(out))
    else:
        g = np.where(out > 0, dh, 0.0)
    grads = [np.dot(g, memo["w_ih"]), np.dot(g, memo["w_hh"]),
             np.einsum("nh,nd->hd", g, memo["x"]), np.einsum("nh,nk->hk", g, memo["h_prev"])]
    with_ih, with_hh = memo["biases"]
    grads.append(g.sum(0) if with_ih else None)
    grads.append(g.sum(0) if with_hh else None)
    return tuple(grads)


def rnn_forward(x, h0, w_ih, w_hh, b_ih, b_hh):
    states, memos = [], []
    state = h0
    for x_t in x:
        state, memo = rnn_step_forward(x_t, state, w_ih, w_hh, b_ih, b_hh)
        states.append(state)
        memos.append(memo)
    return np.array(states), memos


def rnn_backward(dh, memos):
    grads_x = []
    back = np.zeros_like(dh[0])
    totals = None
    for t in range(len(memos) - 1, -1, -1):
        step = rnn_step_backward(dh[t] + back, memos[t])
        grads_x.insert(0, step[0])
        back = step[1]
        totals = list(step[2:]) if totals is None else [a + b for a, b in zip(totals, step[2:])]
    return (np.array(grads_x), back) + tuple(totals)
'''

RENAMES = {"dh_next": "carry", "dw_ih": "g_in", "dw_hh": "g_rec", "db_ih": "gb1", "db_hh": "gb2", "h_prev": "state",
           "caches": "memo_list", "cache": "memo", "dx": "grad_inputs", "da": "delta", "step_cache": "sc"}


def disguise(source):
    """What a copier does: rename every local, drop comments and docstrings, change the spacing."""
    source = re.sub(r'""".*?"""', "", source, flags=re.S)
    source = re.sub(r"\s*#.*", "", source)
    for old, new in RENAMES.items():
        source = re.sub(rf"\b{old}\b", new, source)
    source = source.replace(", ", ",").replace(" = ", "=").replace(" + ", "+")
    return "\n\n".join(source.split("\n"))       # blank lines everywhere


def test_normalise_ignores_names_comments_docstrings_and_spacing():
    a = 'def f(x, w):\n    """Doc."""\n    y = x @ w.T  # the product\n    return y.sum(axis=0)\n'
    b = "def g(inp,weights):\n\n    out=inp@weights.T\n    return out.sum(axis=0)\n"
    assert normalise(a) == normalise(b) == "def V ( V , V ) : ; { V = V @ V . T ; return V . sum ( V = 0 )"
    assert normalise("x = a * 2") != normalise("x = a * 3") != normalise("x = a + 2")   # numbers, operators stay
    assert fingerprints(a) == fingerprints(b) and similarity(a, b) == 1.0


def test_a_disguised_copy_of_the_reference_is_flagged_and_an_honest_solution_is_not():
    reference = student_version(RNN.reference, solutions=True)
    copy = disguise(reference)
    assert "dh_next" not in copy and "#" not in copy
    compile(copy, "copy.py", "exec")
    flags = reference_flags(copy, RNN)
    assert any("the reference solution of the shipped assignment 'rnn'" in f for f in flags), flags
    assert any("; matching: rnn.py lines " in f for f in flags), flags   # which lines: the evidence
    assert reference_flags(HONEST, RNN) == []
    assert reference_flags(student_version(RNN.reference), "rnn") == []    # the handed-out file alone


def test_importing_minigrad_s_implementation_is_flagged():
    source = "from minigrad.functions.rnn_steps import rnn_step_forward, rnn_step_backward\n" + HONEST
    flags = reference_flags(source, "rnn")
    assert flags == ["imports minigrad.functions.rnn_steps, which the handed-out file does not: minigrad's own "
                     "code may be doing the work"]
    assert any("minigrad.coursework.assignments" in f for f in
               reference_flags("from minigrad.coursework.assignments.rnn.rnn import *\n", "rnn"))


def test_pairwise_ranks_the_copied_pair_first():
    base = student_version(RNN.reference)
    sources = {"ana": HONEST, "ben": disguise(HONEST), "cleo": student_version(RNN.reference, solutions=True)}
    ranking = pairwise(sources, base=base)
    assert [(a, b) for a, b, _ in ranking][0] == ("ana", "ben")
    assert ranking[0][2] > 0.9 and all(score < 0.5 for _, _, score in ranking[1:]), ranking
    assert len(ranking) == 3 and ranking == sorted(ranking, key=lambda r: -r[2])
