"""Assignment: decoding, from a model's next-token scores to text: temperature, top-k, beam search.

The functions you write are minigrad's own (minigrad/decoding.py) with parts
taken out; written right, they are the code ``minigrad.decoding.sample`` and
``minigrad.decoding.beam_search`` run (lessons 7, 8 and 12 decode with them):

    sampling_distribution   temperature and top-k: the distribution a token is drawn from
    _sample_from            one draw per row from it, by inverse-CDF sampling (given a uniform u)
    beam_search             the K best prefixes at every step, ranked by a length-normalised score
    _length_normalise       score = log_prob / len ** alpha

Shapes: N rows (prefixes), V the vocabulary, K the beam size.  Every array is
float64 (log-probabilities) or int64 (token ids).  The grader calls the check
functions at the end of this file on fixed logits it draws at random; they are
written for you.
"""
import zlib

import numpy

import minigrad

# BEGIN LIBRARY
from minigrad.decoding import _sample_from, beam_search, sampling_distribution
# END LIBRARY


# ----------------------------------------------------------------------------- a model with fixed logits

class TableDecoder:
    """A model whose logits are a fixed table: the next token depends on the last one only (a bigram model),

        log p(next = v | prefix ending in u) = log_softmax(table[u])_v          table (V, V)

    It follows minigrad.decoding's decoder protocol (step, reorder) and has no state."""

    def __init__(self, table):
        shifted = table - table.max(axis=1, keepdims=True)
        self.log_probs = shifted - numpy.log(numpy.exp(shifted).sum(axis=1, keepdims=True))   # (V, V)

    def step(self, tokens, state):
        return minigrad.tensor(self.log_probs[tokens.numpy()]), state     # (N, V), None

    def reorder(self, state, indices):
        return state


def draw_seed(array):
    """A seed made from an array's bytes: the same inputs always give the same random draws."""
    return zlib.crc32(numpy.ascontiguousarray(array).tobytes())


# ----------------------------------------------------------------------------- what the grader calls

def sampling_distribution_rows(logits, temperature, top_k):
    """sampling_distribution at the grader's logits (N, V), and two summaries of each row that the grader
    compares first, so that a wrong answer says how it is wrong: kept (N,), the number of tokens with a
    non-zero probability (top-k keeps k), largest (N,), the largest probability (temperature moves it)."""
    probs = numpy.asarray(sampling_distribution(logits, temperature, top_k), dtype=numpy.float64)
    return (probs > 0).sum(axis=1).astype(numpy.float64), probs.max(axis=1), probs


def sample_ids(logits, temperature, top_k, draws):
    """``draws`` tokens drawn for each row of logits (N, V), minigrad seeded from the logits: ids (N, draws),
    as float64 (the grader compares float64 arrays)."""
    minigrad.manual_seed(draw_seed(logits))
    rows = numpy.repeat(logits, draws, axis=0)                          # (N * draws, V)
    ids = _sample_from(rows, temperature, top_k, None)
    return numpy.asarray(ids, dtype=numpy.float64).reshape(len(logits), draws)


def beam_search_table(table, beam_size, max_len, length_penalty):
    """beam_search on TableDecoder(table), from start tokens 0, 2 and 3 (three rows), eos = 1, keeping all K
    hypotheses: scores (3, K), log_probs (3, K), tokens (3, K, max_len) padded with -1, as float64."""
    starts = [0, 2, 3]
    results = beam_search(TableDecoder(table), None, starts, beam_size, max_len, eos=1, n_best=beam_size,
                          length_penalty=length_penalty)
    tokens = numpy.full((len(starts), beam_size, max_len), -1.0)
    log_probs, scores = numpy.zeros((len(starts), beam_size)), numpy.zeros((len(starts), beam_size))
    for n, row in enumerate(results):
        for k, hypothesis in enumerate(row):
            tokens[n, k, :len(hypothesis.tokens)] = hypothesis.tokens
            log_probs[n, k], scores[n, k] = hypothesis.log_prob, hypothesis.score
    return scores, log_probs, tokens
