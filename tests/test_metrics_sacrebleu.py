"""BLEU with style="sacrebleu" against sacreBLEU's own published test values, and perplexity's
ignore_index (PyTorch's -100 convention).

The expected numbers are copied from mjpost/sacrebleu's test/test_bleu.py (commit 785d26b) and
test/test_sentence_bleu.py (sacreBLEU prints 100 x our score).  sacreBLEU
tokenizes strings itself; we take tokens, so each case gives the tokens its
tokenizer produces: "none" splits on spaces, "13a" also splits off the final
punctuation of these sentences.  (During development the same code was also
compared with sacrebleu 2.6.0 on 3,000 random corpora, every smoothing, order
and effective_order: largest difference 7e-16; sacrebleu is not a test dependency.)
"""
import math

import pytest

import minigrad
from minigrad import metrics

EPSILON = 1e-8          # sacreBLEU's own tolerance in test_bleu.py (on 0-100 scores: we compare 0-1 scores)


def sacre_corpus(hypotheses, reference_streams, **options):
    """sacreBLEU's argument layout (hypotheses, one stream per reference) -> our score in [0, 1]."""
    references = [[stream[i].split() for stream in reference_streams] for i in range(len(hypotheses))]
    return metrics.corpus_bleu(references, [h.split() for h in hypotheses], style="sacrebleu", **options)


# test_bleu.py: the README example, three sentences, two reference streams
REFS = [["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
        ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."]]
HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]


def tok13a(text):
    return text[:-1] + " ." if text.endswith(".") else text


@pytest.mark.parametrize("tokenizer, smoothing, expected", [
    (str, "exp", 49.1919566),           # tokenize='none'
    (tok13a, "exp", 48.530827),         # the default: tokenize='13a', smooth_method='exp'
    (tok13a, "none", 48.530827),
])
def test_corpus_bleu_published_values(tokenizer, smoothing, expected):
    hyps = [tokenizer(h) for h in HYPS]
    refs = [[tokenizer(r) for r in stream] for stream in REFS]
    assert abs(sacre_corpus(hyps, refs, smoothing=smoothing) - expected / 100) < EPSILON


@pytest.mark.parametrize("order, expected", [(1, "77.65"), (2, "60.50"), (3, "53.93"), (4, "48.53"),
                                             (5, "46.14"), (6, "43.28")])
def test_max_ngram_order_published_values(order, expected):
    hyps = [tok13a(h) for h in HYPS]
    refs = [[tok13a(r) for r in stream] for stream in REFS]
    assert f"{100 * sacre_corpus(hyps, refs, weights=(1 / order,) * order):.2f}" == expected


def test_empty_hypotheses_score_zero():
    assert sacre_corpus(["", "", ""], REFS) == 0.0


# test_bleu.py uses raw_corpus_bleu(..., smooth_value): floor smoothing, effective order, no tokenization
@pytest.mark.parametrize("hypotheses, references, expected", [
    (["this is a test", "another test"], ["ref1", "ref2"], 0.0),   # no match at all: 0 (sacrebleu #141)
    (["this is a test"], ["this is a test"], 1.0),
    (["this is a fest"], ["this is a test"], 0.223606797749979),
    (["test"], ["a test"], 0.3678794411714425),              # test_case_effective_order
    (["a test"], ["a test"], 1.0),
    (["a little test"], ["a test"], 0.03218297948685433),
])
def test_raw_corpus_bleu_published_values(hypotheses, references, expected):
    got = sacre_corpus(hypotheses, [references], smoothing="floor", smooth_value=0.01, effective_order=True)
    assert abs(got - expected) < EPSILON


def test_statistics_and_offset_published_values():
    hypothesis, reference = "am I am a character sequence".split(), "I am a symbol string sequence a a".split()
    assert [metrics.clipped_counts([reference], hypothesis, n) for n in range(1, 5)] == [(4, 6), (2, 5), (1, 4), (0, 3)]
    floor = lambda value: metrics.corpus_bleu([[reference]], [hypothesis], style="sacrebleu", smoothing="floor",
                                              smooth_value=value, effective_order=True)
    assert abs(floor(None) - 0.1555722182) < EPSILON          # the default floor, 0.1
    assert floor(0.0) == 0.0                                  # a precision still 0 after smoothing gives 0


def test_scoring_from_statistics_published_value():
    assert abs(metrics.sacrebleu_from_counts([9, 7, 5, 3], [10, 8, 6, 4], 11, 11) - 0.8375922397) < EPSILON


@pytest.mark.parametrize("matches, totals, hyp_len, ref_len, value", [
    ([0, 0, 0, 0], [4, 4, 2, 1], 0, 1, 0.0),
    ([0, 0, 0, 0], [10, 11, 12, 0], 14, 10, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, 0.0),
    ([6, 5, 4, 0], [6, 5, 4, 3], 6, 6, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, 0.1),
    ([0, 0, 0, 0], [0, 0, 0, 0], 1, 5, 0.01),
])
def test_degenerate_statistics_score_zero(matches, totals, hyp_len, ref_len, value):
    assert metrics.sacrebleu_from_counts(matches, totals, hyp_len, ref_len, "floor", value) == 0.0


# test_sentence_bleu.py: sacrebleu issue #98, effective_order=True, each smoothing
REF = "producţia de zahăr brut se exprimă în zahăr alb;"
SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"


@pytest.mark.parametrize("tokenize, smoothing, value, expected", [
    ("13a", "exp", None, 8.493), ("13a", "none", None, 0.0),
    ("13a", "floor", None, 4.51688), ("13a", "floor", 0.1, 4.51688), ("13a", "floor", 0.5, 10.10),
    ("13a", "add-k", None, 14.882), ("13a", "add-k", 1, 14.882), ("13a", "add-k", 2, 21.389),
    ("none", "exp", None, 7.347),
])
def test_sentence_bleu_published_values(tokenize, smoothing, value, expected):
    split = (lambda s: s.replace(";", " ;").split()) if tokenize == "13a" else str.split
    got = metrics.sentence_bleu([split(REF)], split(SYS), smoothing=smoothing, style="sacrebleu", smooth_value=value)
    assert abs(100 * got - expected) < 1e-3                     # that file's tolerance (scores rounded there)


@pytest.mark.parametrize("smoothing, value", [("exp", None), ("none", None), ("floor", None), ("floor", 0.1),
                                              ("add-k", None), ("add-k", 1)])
def test_sentence_bleu_no_overlap_is_zero(smoothing, value):
    got = metrics.sentence_bleu(["okay thanks".split()], "this is a cat".split(), smoothing=smoothing,
                                style="sacrebleu", smooth_value=value)
    assert got == 0.0


def test_the_two_styles_differ_where_documented():
    reference, hypothesis = "a b c d e".split(), "a b".split()
    # NLTK floors each sentence's n-gram count at 1, so a 2-token hypothesis has "3-grams" that all miss
    assert metrics.sentence_bleu([reference], hypothesis) < 1e-100
    # sacreBLEU with effective order scores the orders that exist: BP * (1 * 1) ^ (1/2)
    expected = math.exp(1 - 5 / 2)
    assert metrics.sentence_bleu([reference], hypothesis, style="sacrebleu") == pytest.approx(expected, rel=1e-14)
    # add-k takes any k, and only n >= 2 is smoothed
    got = metrics.sentence_bleu([reference], "a x".split(), weights=(0.5, 0.5), smoothing="add-k",
                                style="sacrebleu", smooth_value=0.5)
    assert got == pytest.approx(math.exp(1 - 5 / 2) * math.sqrt(0.5 * 0.5 / 1.5), rel=1e-14)


def test_bleu_style_errors():
    with pytest.raises(ValueError, match="style"):
        metrics.corpus_bleu([[["a"]]], [["a"]], style="moses")
    with pytest.raises(ValueError, match="smoothing"):
        metrics.corpus_bleu([[["a"]]], [["a"]], style="sacrebleu", smoothing=3)
    with pytest.raises(ValueError, match="uniform"):
        metrics.corpus_bleu([[["a"]]], [["a"]], weights=(0.1, 0.9), style="sacrebleu")


# ----------------------------------------------------------------------------- perplexity and ignore_index

def test_perplexity_accepts_pytorchs_ignore_index(device):
    log_probs = minigrad.tensor([[[math.log(0.5), math.log(0.25), math.log(0.25)]] * 4], dtype=minigrad.float64,
                                device=device)
    targets = minigrad.tensor([[1, 2, -100, 0]], device=device)     # -100 would be an invalid index
    expected = math.exp(-(2 * math.log(0.25) + math.log(0.5)) / 3)
    assert metrics.perplexity(log_probs, targets, ignore_index=-100) == pytest.approx(expected, rel=1e-12)
    assert metrics.perplexity(log_probs, targets, pad=-100) == pytest.approx(expected, rel=1e-12)   # the older name
    with pytest.raises(IndexError, match=r"target -100 is not a token id in 0\.\.2 \(and not ignore_index=0\)"):
        metrics.perplexity(log_probs, targets)                      # the default skips PAD_IDX = 0, not -100
    with pytest.raises(TypeError, match="not both"):
        metrics.perplexity(log_probs, targets, pad=0, ignore_index=-100)


def test_perplexity_equals_exp_of_cross_entropy_with_ignore_index(device):
    logits = minigrad.randn(2, 5, 7, dtype=minigrad.float64, device=device)
    targets = minigrad.tensor([[1, 6, -100, 0, 3], [-100, -100, 2, 5, 4]], device=device)
    loss = minigrad.functional.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), ignore_index=-100)
    got = metrics.perplexity(logits.log_softmax(-1), targets, ignore_index=-100)
    assert got == pytest.approx(math.exp(loss.item()), rel=1e-12)
