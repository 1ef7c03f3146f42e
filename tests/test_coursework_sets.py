"""The practice sets teach the library's own code (coursework README, "One policy for the answers").

primitives, rnn, lstm_gru and attention import their answer from the library (a LIBRARY block),
so the set's functions ARE the library's: checked here by identity and by the library's Functions
calling them.  transformer imports its attention (the library's reference tier, the attention
set's answer) and composes the rest from minigrad's public layers: its reference must run that
Function and compute what nn.TransformerEncoderLayer(norm_first=True) and nn.MultiheadAttention
compute, with the same weights, on both tiers.
"""
import importlib
import importlib.util
import warnings

import numpy
import pytest

import minigrad
import minigrad.metrics
from minigrad import functions as fn
from minigrad import nn
from minigrad.coursework import list_assignments, load_assignment

ASSIGNMENTS = {a.name: a for a in list_assignments()}


def reference_module(name):
    """The set's reference solution, imported as it is (its LIBRARY block imports the library's code)."""
    assignment = ASSIGNMENTS[name]
    spec = importlib.util.spec_from_file_location(f"reference_{name}", assignment.reference)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, library", [
    ("primitives", {"Mul": fn.Mul, "MatMul": fn.MatMul, "Tanh": fn.Tanh, "Sigmoid": fn.Sigmoid, "Sum": fn.Sum,
                    "Softmax": fn.Softmax}),
    ("attention", {"softmax_forward": "minigrad.functions.softmax", "softmax_backward": "minigrad.functions.softmax",
                   "layer_norm_forward": "minigrad.functions.normalization",
                   "layer_norm_backward": "minigrad.functions.normalization",
                   "attention_forward": "minigrad.functions.attention",
                   "attention_backward": "minigrad.functions.attention"}),
])
def test_the_answer_is_the_library_object(name, library):
    module = reference_module(name)
    for attribute, owner in library.items():
        expected = owner if not isinstance(owner, str) else getattr(importlib.import_module(owner), attribute)
        assert getattr(module, attribute) is expected, f"{name}.{attribute} is a copy, not the library's"
    answer_modules = load_assignment(name).spec["answer_modules"]
    for attribute in library:
        assert getattr(module, attribute).__module__ in answer_modules   # the grading worker stands in for it


def test_the_library_functions_run_the_pair_functions():
    """Softmax, LayerNorm and the reference attention run the attention set's answers: a change there
    changes them (the equations are written once)."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    sm = importlib.import_module("minigrad.functions.softmax")
    ln = importlib.import_module("minigrad.functions.normalization")
    at = importlib.import_module("minigrad.functions.attention")
    calls = []

    def spy(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        return original, wrapper

    patched = [(sm, "softmax_forward"), (sm, "softmax_backward"), (ln, "layer_norm_forward"),
               (ln, "layer_norm_backward"), (at, "attention_forward"), (at, "attention_backward")]
    originals = []
    try:
        for module, name in patched:
            original, wrapper = spy(module, name)
            originals.append((module, name, original))
            setattr(module, name, wrapper)
        t = minigrad.tensor(x, requires_grad=True)
        t.softmax(-1).sum().backward()
        nn.LayerNorm(4, reference=True).double()(t).sum().backward()
        q = minigrad.tensor(x, requires_grad=True)
        minigrad.nn.functional.scaled_dot_product_attention(q, q, q, reference=True).sum().backward()
    finally:
        for module, name, original in originals:
            setattr(module, name, original)
    assert calls == [name for _, name in patched]


@pytest.mark.parametrize("reference", [False, True])
def test_the_transformer_set_computes_the_library_layers(reference):
    module = reference_module("transformer")
    d_model, heads, d_ff, N, T = 8, 2, 16, 3, 5
    minigrad.manual_seed(0)
    block = module.TransformerBlock(d_model, heads, d_ff).double().to("cpu")    # NumPy weights below: the host
    layer = nn.TransformerEncoderLayer(d_model, heads, d_ff, dropout=0.0, batch_first=True, norm_first=True,
                                       reference=reference).double().to("cpu")
    same = {"self_attn.in_proj_weight": "attn.qkv.weight", "self_attn.in_proj_bias": "attn.qkv.bias",
            "self_attn.out_proj.weight": "attn.proj.weight", "self_attn.out_proj.bias": "attn.proj.bias",
            "linear1.weight": "ff.0.weight", "linear1.bias": "ff.0.bias",
            "linear2.weight": "ff.2.weight", "linear2.bias": "ff.2.bias",
            "norm1.weight": "ln1.weight", "norm1.bias": "ln1.bias", "norm2.weight": "ln2.weight", "norm2.bias": "ln2.bias"}
    ours, theirs = dict(block.named_parameters()), dict(layer.named_parameters())
    assert sorted(same) == sorted(theirs) and sorted(same.values()) == sorted(ours)
    rng = numpy.random.default_rng(1)
    for name, value in theirs.items():
        value._data = rng.standard_normal(value.shape)
        ours[same[name]]._data = value._data.copy()
    x = rng.standard_normal((N, T, d_model))
    causal = numpy.triu(numpy.ones((T, T), dtype=bool), k=1)     # True = may not attend, in both
    a = minigrad.tensor(x, requires_grad=True, device="cpu")
    b = minigrad.tensor(x, requires_grad=True, device="cpu")
    out_set = block(a, minigrad.tensor(causal, device="cpu"))
    out_library = layer(b, src_mask=minigrad.tensor(causal, device="cpu"))
    assert numpy.allclose(out_set.numpy(), out_library.numpy(), atol=1e-12)
    dout = rng.standard_normal(out_set.shape)
    out_set.backward(minigrad.tensor(dout, device="cpu"))
    out_library.backward(minigrad.tensor(dout, device="cpu"))
    assert numpy.allclose(numpy.asarray(a.grad), numpy.asarray(b.grad), atol=1e-12)
    for name, value in theirs.items():
        assert numpy.allclose(numpy.asarray(ours[same[name]].grad), numpy.asarray(value.grad), atol=1e-12), name


def test_the_transformer_sets_attention_is_the_librarys_reference_function():
    module = reference_module("transformer")
    minigrad.manual_seed(0)
    out = module.SelfAttention(4, 2)(minigrad.randn(2, 3, 4, requires_grad=True),
                                     minigrad.tensor(numpy.triu(numpy.ones((3, 3), dtype=bool), k=1)))
    seen, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.function is fn.ScaledDotProductAttention:
            return
        stack.extend(parent.grad_fn for parent in node.inputs if parent is not None)
    raise AssertionError("the transformer set's SelfAttention does not run functions/attention.py's Function")


# ----------------------------------------------------------------------------- decoding and metrics (issue 42)

@pytest.mark.parametrize("name, library", [
    ("decoding", ("_sample_from", "beam_search", "sampling_distribution")),
    ("metrics", ("brevity_penalty", "clipped_counts", "corpus_bleu", "perplexity")),
])
def test_the_output_sets_answers_are_the_library_objects(name, library):
    module = reference_module(name)
    owner = importlib.import_module("minigrad." + name)
    for attribute in library:
        assert getattr(module, attribute) is getattr(owner, attribute), f"{name}.{attribute} is a copy"
    assert load_assignment(name).spec["answer_modules"] == ["minigrad." + name]
    assert all(check.kind == "output" and check.backward_points == 0 for check in load_assignment(name).checks)


def test_the_metrics_sets_corpora_score_as_nltk_scores_them():
    """The metrics set is graded against minigrad's corpus_bleu; on the set's own corpora that is NLTK's."""
    nltk_bleu = pytest.importorskip("nltk.translate.bleu_score")
    module = reference_module("metrics")
    rng = numpy.random.default_rng(0)
    for change in (2, -2, 0):
        for shape in [(8, 12), (12, 10), (3, 6)]:
            references, hypotheses = module.random_corpus(rng.standard_normal(shape), change)
            if change:
                longer = [len(h) > max(len(r) for r in refs) for refs, h in zip(references, hypotheses)]
                assert all(longer) if change > 0 else not any(longer)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # NLTK warns when a corpus has no 4-gram match
                expected = nltk_bleu.corpus_bleu(references, hypotheses)
            assert minigrad.metrics.corpus_bleu(references, hypotheses) == pytest.approx(expected, rel=1e-12, abs=0)


# (set, what is wrong): (edits to the reference as handed in, the check that fails, words its report has).
# The report is what `minigrad check` shows the student who fixes the bug: a failed check's message and hint
# levels 1-2 (spec/hints.py; a graded run shows level 1 only, issue 38 item 8).
PLANTED = {
    ("decoding", "temperature multiplies"): (
        [("logits = log_probs / temperature", "logits = log_probs * temperature")],
        {"temperature", "sample"}, ["largest[", "Multiplying by T turns the knob the wrong way"]),
    ("decoding", "top-k keeps k + 1"): (
        [("[:, V - top_k][:, None]", "[:, V - top_k - 1][:, None]")],
        {"top_k", "sample"}, ["kept[0] is 4, expected 3", "exactly 3 tokens"]),
    ("decoding", "top-k keeps k - 1"): (
        [("[:, V - top_k][:, None]", "[:, V - top_k + 1][:, None]")],
        {"top_k", "sample"}, ["kept[0] is 2, expected 3", "V - k, not V - k - 1 or V - k + 1"]),
    ("decoding", "no length normalisation"): (
        [("    if alpha == 0:\n        return log_prob\n    return log_prob / xp.maximum(lengths, 1) ** alpha",
          "    return log_prob")],
        {"beam_search_normalised"}, ["scores[", "the length normalisation is not"]),
    ("metrics", "perplexity in base 2"): (
        [("return math.exp(float(total_nll) / n_tokens)", "return 2 ** (float(total_nll) / n_tokens)")],
        {"perplexity"}, ["perplexity is", "natural logs"]),
    ("metrics", "padding counted"): (
        [("keep = xp.ones(ids.shape, dtype=bool) if skip is None else ids != skip",
          "keep = xp.ones(ids.shape, dtype=bool)")],
        {"perplexity"}, ["perplexity is", "padding (id 0)"]),
    ("metrics", "BLEU without the brevity penalty"): (
        [("    return bp * math.exp(log_sum)", "    return math.exp(log_sum)")],
        {"corpus_bleu_shorter_hypotheses"}, ["bleu is", "look at the brevity penalty"]),
    ("metrics", "no clipping"): (
        [("matches = sum(min(count, max_ref[gram]) for", "matches = sum(count * (max_ref[gram] > 0) for")],
        {"clipped_counts", "corpus_bleu_longer_hypotheses", "corpus_bleu_shorter_hypotheses"},
        ["counts[", "at most as many times"]),
}


@pytest.fixture(scope="module")
def graders():
    from minigrad.coursework import Grader
    made = {name: Grader(name, seed=7, graded=False) for name in ("decoding", "metrics")}   # as `minigrad check`
    yield made
    for grader in made.values():
        grader.close()


@pytest.mark.parametrize("name, bug", list(PLANTED), ids=lambda v: v.replace(" ", "-"))
def test_a_planted_bug_fails_its_check_with_a_useful_message(graders, tmp_path, name, bug):
    from minigrad.coursework.authoring.make import student_version
    edits, failing, words = PLANTED[(name, bug)]
    text = student_version(load_assignment(name).reference, solutions=True)
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (tmp_path / f"{name}.py").write_text(text)
    results = {r["name"]: r for r in graders[name].grade(str(tmp_path))}
    assert {n for n, r in results.items() if not r["passed"]} == failing, {n: r["message"] for n, r in results.items()}
    report = "\n".join(results[n]["message"] + "\n" + results[n]["hint"] for n in failing)
    for word in words:
        assert word in report, (word, report)
    assert all(results[n]["score"] == 0 and results[n]["backward"] is None for n in failing)


def test_lesson_7s_claim_the_decoding_set_is_the_sampling_decoding_sample_runs(monkeypatch, tmp_path):
    """Lesson 7: the coursework has students write the temperature and top-k that decoding.sample runs."""
    import os
    from minigrad import decoding
    from minigrad.coursework import make_assignment
    lesson = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lessons",
                          "07_char_generation.py")
    assert "the **decoding** set" in open(lesson, encoding="utf-8").read()
    seen = []
    original = decoding.sampling_distribution
    monkeypatch.setattr(decoding, "sampling_distribution",
                        lambda *args: seen.append(args[1:]) or original(*args))
    table = reference_module("decoding").TableDecoder(numpy.random.default_rng(0).standard_normal((5, 5)))
    minigrad.manual_seed(0)
    decoding.sample(table, None, [0, 2], max_len=3, temperature=0.7, top_k=2)
    assert seen and all(args[:2] == (0.7, 2) for args in seen)
    make_assignment(ASSIGNMENTS["decoding"].path, tmp_path / "student")
    spec = importlib.util.spec_from_file_location("student_decoding", tmp_path / "student" / "decoding.py")
    student = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(student)
    with pytest.raises(NotImplementedError, match="sampling_distribution: not implemented yet"):
        student.sampling_distribution(numpy.zeros((1, 3)), 0.7, 2)


@pytest.mark.parametrize("name, library_import", [("decoding", "from minigrad.decoding import beam_search\n"),
                                                  ("metrics", "from minigrad.metrics import corpus_bleu\n")])
def test_the_output_sets_have_the_same_copy_flags(name, library_import):
    """Importing the answer (the library's own module) is flagged; the handed-out file is not.

    A copy of the reference is not flagged by its tokens: its solution blocks are the code the hints dictate,
    and similarity.py counts only what the handout and its hints do not already say (issue 38 item 1), which
    here is too little to judge (under MIN_OWN tokens)."""
    from minigrad.coursework.authoring.make import student_version
    from minigrad.coursework.grading.copies import reference_flags
    assignment = load_assignment(name)
    handed_out = student_version(assignment.reference)
    assert reference_flags(student_version(assignment.reference, solutions=True), assignment) == []
    assert reference_flags(handed_out, assignment) == []
    imported = reference_flags(library_import + handed_out, assignment)
    assert imported and imported[0].startswith(f"imports minigrad.{name}, which the handed-out file does not")


def test_a_check_of_kind_output_is_graded_on_its_outputs_alone(tmp_path):
    """A private assignment with one "output" check: no gradient, all points forward's, no timing case."""
    import json
    from minigrad.coursework import grade
    from minigrad.coursework.spec.assignment import Assignment, SpecError
    folder = tmp_path / "scaled"
    folder.mkdir()
    (folder / "scaled.py").write_text("def scaled(x, factor):\n    return x * factor, float(x.sum())\n")
    check = {"name": "scaled", "kind": "output", "function": "scaled", "outputs": ["y", "total"], "points": 3,
             "inputs": [{"name": "x", "shape": ["N", 2]}, {"name": "factor", "value": 2.5}], "cases": [{"N": 3}],
             "hints": ["Multiply by the factor.", "y = x * factor; total = x.sum()."]}
    spec = {"name": "scaled", "module": "scaled.py", "checks": [check]}
    (folder / "checks.json").write_text(json.dumps(spec))
    loaded = Assignment(str(folder)).check("scaled")
    assert (loaded.differentiable, loaded.forward_points, loaded.backward_points) == ((), 3, 0)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "scaled.py").write_text("def scaled(x, factor):\n    return x / factor, float(x.sum())\n")
    right, = grade(str(folder / "scaled.py"), str(folder), seed=1, time_limit=60)
    wrong, = grade(str(tmp_path / "mine"), str(folder), seed=1, time_limit=60)
    assert (right["passed"], right["score"], right["forward"], right["backward"]) == (True, 3, True, None)
    assert (wrong["passed"], wrong["score"], wrong["forward"], wrong["backward"]) == (False, 0, False, None)
    assert wrong["message"].startswith("y[") and "backward was not judged" not in wrong["message"]
    (folder / "checks.json").write_text(json.dumps(dict(spec, checks=[dict(check, timing={"case": {"N": 9}})])))
    with pytest.raises(SpecError, match="for a check of kind pair or function"):
        Assignment(str(folder))
