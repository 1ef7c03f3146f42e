"""Assignment: scoring models: perplexity from a model's log-probabilities, and corpus BLEU.

The functions you write are minigrad's own (minigrad/metrics.py) with parts
taken out; written right, they are the code ``minigrad.metrics`` runs (lessons
2, 7, 8 and 10 score their models with them), and ``corpus_bleu`` computes
exactly what NLTK's ``nltk.translate.bleu_score.corpus_bleu`` computes:

    perplexity_from_nll   exp(total negative log-likelihood / number of tokens), natural logs
    perplexity            log p(target) at every position that is not padding, summed
    clipped_counts        an n-gram's matches, clipped at its count in the reference that has it most often
    brevity_penalty       1, or exp(1 - r / c) for a hypothesis of c tokens no longer than the reference's r
    _corpus_counts        the counts and lengths of the whole corpus, added up before any division
    corpus_bleu           BP * exp(sum_n w_n log p_n)

You write the parts marked in these functions; the rest of the library's
code around them (NLTK's smoothing methods, sacreBLEU's variant) is there to
read.  The grader calls the check functions at the end of this file on
inputs it draws at random; they are written for you.
"""
import zlib

import numpy

# BEGIN LIBRARY
from minigrad.metrics import brevity_penalty, clipped_counts, corpus_bleu, perplexity
# END LIBRARY

WORDS = ("the", "a", "cat", "dog", "sat", "ran", "on", "mat")


def log_softmax(logits):
    """A model's log-probabilities from its logits, over the last axis (natural log)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))


def random_corpus(draws, length_change):
    """A small corpus made from the grader's random draws (S, L): the same draws always give the same corpus.

    Sentence s has two references: the first, 6 to L words of WORDS; the second, the first with about one
    word in three replaced and one word added or removed, or not.  Its hypothesis is the first reference with
    about one word in eight replaced, and ``length_change`` words inserted (> 0: longer than both references)
    or deleted (< 0: shorter than both)."""
    rng = numpy.random.default_rng(zlib.crc32(numpy.ascontiguousarray(draws).tobytes()))

    def edit(sentence, p_replace, change):
        out = [str(rng.choice(WORDS)) if rng.random() < p_replace else word for word in sentence]
        for _ in range(abs(change)):
            if change > 0:
                out.insert(int(rng.integers(len(out) + 1)), str(rng.choice(WORDS)))
            elif len(out) > 1:
                del out[int(rng.integers(len(out)))]
        return out

    S, L = draws.shape
    references, hypotheses = [], []
    for _ in range(S):
        first = [str(w) for w in rng.choice(WORDS, size=int(rng.integers(6, L + 1)))]
        references.append([first, edit(first, 1 / 3, int(rng.integers(-1, 2)))])
        hypotheses.append(edit(first, 1 / 8, length_change))
    return references, hypotheses


# ----------------------------------------------------------------------------- what the grader calls

def perplexity_of_model(logits, draws):
    """Perplexity of targets made from ``draws`` (N, T) under log_softmax(logits) (N, T, V).

    Row n has T - n % T tokens (ids 1 .. V-1), then padding (id 0, <pad>): perplexity leaves it out."""
    N, T, V = logits.shape
    targets = 1 + (numpy.abs(draws) * 1000).astype(numpy.int64) % (V - 1)       # (N, T)
    lengths = T - numpy.arange(N) % T
    targets[numpy.arange(T)[None, :] >= lengths[:, None]] = 0
    return perplexity(log_softmax(logits), targets)


def clipped_counts_per_sentence(draws, length_change):
    """clipped_counts of every sentence of random_corpus(draws) and n = 1..4: (S, 4, 2) of (matches, total)."""
    references, hypotheses = random_corpus(draws, length_change)
    return numpy.array([[clipped_counts(refs, hyp, n) for n in range(1, 5)]
                        for refs, hyp in zip(references, hypotheses)], dtype=numpy.float64)


def brevity_penalties(draws):
    """brevity_penalty for pairs of lengths made from draws (M, 2): reference 1..8 tokens, hypothesis 0..8."""
    lengths = (numpy.abs(draws) * 1000).astype(numpy.int64) % 9
    return numpy.array([brevity_penalty(max(r, 1), c) for r, c in lengths], dtype=numpy.float64)


def corpus_bleu_of(draws, length_change):
    """corpus_bleu (BLEU-4, NLTK's: no smoothing) of random_corpus(draws, length_change)."""
    references, hypotheses = random_corpus(draws, length_change)
    return corpus_bleu(references, hypotheses)
