"""Scores for sequence models: perplexity, BLEU, a count-based n-gram LM, accuracy, confusion matrix.

Logarithms are natural logs throughout: a perplexity is exp(mean negative
log-likelihood per token, in nats).
"""
import math
import numbers
import sys
from collections import Counter

from . import backend, checks
from .torch_compat.arguments import array_of
from .tensor import Tensor
from .text.vocab import BOS, EOS, PAD_IDX, UNK


# ----------------------------------------------------------------------------- perplexity

def perplexity_from_nll(total_nll, n_tokens):
    """exp(total negative log-likelihood / number of tokens), the log being natural."""
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, numbers.Real) or not n_tokens > 0:
        raise ValueError(f"perplexity_from_nll: n_tokens must be a count > 0, got {n_tokens!r} (no tokens have no "
                         "perplexity)")
    # BEGIN SOLUTION
    # HINT: the log-likelihoods are natural logs (nats): undo the log with the same base
    return math.exp(float(total_nll) / n_tokens)
    # END SOLUTION


_UNSET = object()


def perplexity(log_probs, targets, pad=_UNSET, *, ignore_index=_UNSET):
    """Per-token perplexity of targets under log-probabilities, skipping padding.

    log_probs: Tensor (..., V) of log p(token) (natural log, e.g. log_softmax of logits)
    targets: int Tensor (...,); positions equal to ``ignore_index`` are left out:
        ignore_index=-100 is PyTorch's convention (F.cross_entropy's default),
        the default here is minigrad's PAD_IDX (0), and None keeps every position.
        ``pad`` is the older name of the same argument (give one or the other).
    A model that is uniform over V tokens has perplexity exactly V.
    """
    if pad is not _UNSET and ignore_index is not _UNSET:
        raise TypeError("perplexity: give ignore_index (or its older name pad), not both")
    skip = ignore_index if ignore_index is not _UNSET else (pad if pad is not _UNSET else PAD_IDX)
    lp, ids = array_of(log_probs), array_of(targets)
    xp = backend.array_module(lp, ids)
    V = lp.shape[-1]
    lp, ids = lp.reshape(-1, V), ids.reshape(-1)
    keep = xp.ones(ids.shape, dtype=bool) if skip is None else ids != skip
    bad = keep & ((ids < 0) | (ids >= V))
    if bool(bad.any()):
        raise IndexError(f"perplexity: target {int(ids[bad][0])} is not a token id in 0..{V - 1} "
                         f"(and not ignore_index={skip})")
    n_tokens = int(keep.sum())
    if n_tokens == 0:
        raise ValueError("perplexity: every target is padding")
    # BEGIN SOLUTION
    # HINT: pick log p(target) at every position (row i, column ids[i]), leave out the skipped positions, and sum
    safe_ids = xp.where(keep, ids, 0)                              # never index with a skipped value
    picked = lp[xp.arange(ids.shape[0]), safe_ids]                 # log p(target) per position
    total_nll = -float(xp.where(keep, picked, 0.0).sum())
    # END SOLUTION
    return perplexity_from_nll(total_nll, n_tokens)


# ----------------------------------------------------------------------------- accuracy

def accuracy(predictions, targets, ignore_index=None):
    """Fraction of correct predictions.  predictions: class ids (N,) or scores (N, C) (argmax taken)."""
    p, t = _predicted_classes("accuracy", predictions, targets)
    xp = backend.array_module(p, t)
    keep = xp.ones(t.shape, dtype=bool) if ignore_index is None else t != ignore_index
    if not keep.any():
        raise ValueError(f"accuracy: no target to score ({t.size} targets"
                         + (f", all equal to ignore_index={ignore_index})" if t.size else ")"))
    return float((keep & (p == t)).sum()) / int(keep.sum())


def _predicted_classes(op, predictions, targets):
    """(predicted class ids, targets) of one shape: scores (..., C) become their argmax."""
    p, t = array_of(predictions), array_of(targets)
    if not hasattr(p, "shape") or not hasattr(t, "shape"):
        raise TypeError(f"{op}: predictions and targets must be Tensors or arrays, got {type(p).__name__} and "
                        f"{type(t).__name__}")
    if p.ndim == t.ndim + 1:
        p = backend.array_module(p).argmax(p, axis=-1)
    if p.shape != t.shape:
        raise ValueError(f"{op}: predictions of shape {tuple(array_of(predictions).shape)} do not match targets of "
                         f"shape {tuple(t.shape)}; give class ids of the targets' shape, or scores with one more "
                         "(last) dimension of classes")
    return p, t


def confusion_matrix(predictions, targets, num_classes):
    """int64 Tensor (C, C): entry [i, j] counts examples of true class i predicted as j."""
    checks.positive_int("confusion_matrix", "num_classes", num_classes)
    p, t = _predicted_classes("confusion_matrix", predictions, targets)
    xp = backend.array_module(p, t)
    for name, ids in (("target", t), ("prediction", p)):
        bad = (ids < 0) | (ids >= num_classes)
        if bool(bad.any()):
            raise ValueError(f"confusion_matrix: {name} class {ids[bad].reshape(-1)[0]} is not in 0..{num_classes - 1} "
                             f"(num_classes={num_classes}); pass the number of classes")
    cells = t.reshape(-1).astype("int64") * num_classes + p.reshape(-1).astype("int64")
    counts = xp.bincount(cells, minlength=num_classes * num_classes)
    return Tensor._from_array(counts.reshape(num_classes, num_classes).astype("int64"))


# ----------------------------------------------------------------------------- BLEU

def ngrams(tokens, n):
    """Counter of the n-grams (tuples) in a token list."""
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def clipped_counts(references, hypothesis, n):
    """(matches, total): hypothesis n-grams, each counted at most as often as it appears in any
    single reference (clipping), and the number of hypothesis n-grams (0 for a short hypothesis)."""
    counts = ngrams(hypothesis, n)
    # BEGIN SOLUTION
    # HINT: an n-gram matches at most as many times as it appears in the one reference that has it most often
    max_ref = Counter()
    for reference in references:
        for gram, count in ngrams(reference, n).items():
            if gram in counts:
                max_ref[gram] = max(max_ref[gram], count)
    matches = sum(min(count, max_ref[gram]) for gram, count in counts.items())
    # END SOLUTION
    return matches, sum(counts.values())


def modified_precision(references, hypothesis, n):
    """(matches, total) as NLTK counts them: clipped matches over the n-gram count floored at 1."""
    matches, total = clipped_counts(references, hypothesis, n)
    return matches, max(1, total)


def closest_ref_length(references, hyp_len):
    """The reference length closest to the hypothesis length (the shorter one on a tie)."""
    return min((len(r) for r in references), key=lambda r: (abs(r - hyp_len), r))


def brevity_penalty(ref_len, hyp_len):
    """1 if the hypothesis is longer than the reference, else exp(1 - r / c) (0 for an empty hypothesis)."""
    # BEGIN SOLUTION
    # HINT: only a hypothesis no longer than the reference is penalised, and the shorter it is, the more
    if hyp_len > ref_len:
        return 1.0
    if hyp_len == 0:
        return 0.0
    return math.exp(1 - ref_len / hyp_len)
    # END SOLUTION


def corpus_bleu(list_of_references, hypotheses, weights=(0.25, 0.25, 0.25, 0.25), smoothing=None,
                epsilon=0.1, alpha=5, k=5, auto_reweigh=False, *, style="nltk", smooth_value=None,
                effective_order=False):
    """Corpus BLEU (Papineni et al., 2002) on token lists, as NLTK (default) or as sacreBLEU computes it.

    list_of_references: for each hypothesis, a list of reference token lists
    hypotheses: token lists.  weights: one weight per n-gram order (n = 1..len(weights)).
    Returns a score in [0, 1] (sacreBLEU prints 100 times it).

    BLEU = BP * exp(sum_n w_n log p_n), where p_n sums clipped n-gram matches
    and n-gram counts over the whole corpus before dividing, and BP is the
    brevity penalty of the total hypothesis length against the total closest
    reference length.

    style="nltk" is exactly NLTK's ``corpus_bleu``: ``smoothing`` 0-7 (default 0)
    is Chen and Cherry's (2014) method numbered as NLTK's SmoothingFunction
    (epsilon, alpha, k are its parameters); like NLTK, methods that need a
    sentence use the last hypothesis, and each sentence counts at least one
    n-gram of every order.

    style="sacrebleu" is sacreBLEU's formula on these tokens (tokenize them as
    sacreBLEU would, e.g. its "13a", for its numbers): ``smoothing`` one of
    "exp" (default), "floor", "add-k", "none" with ``smooth_value`` (floor
    0.1, add-k 1 by default; any k); no one-n-gram floor for short sentences;
    ``effective_order=True`` averages only the orders the hypotheses have; a
    precision still 0 after smoothing makes the score 0.  Weights must be uniform.
    """
    _check_bleu_inputs(list_of_references, hypotheses, weights)
    if style == "sacrebleu":
        return _sacrebleu(list_of_references, hypotheses, weights, "exp" if smoothing is None else smoothing,
                          smooth_value, effective_order)
    if style != "nltk":
        raise ValueError(f"corpus_bleu: style must be 'nltk' or 'sacrebleu', got {style!r}")
    smoothing = 0 if smoothing is None else smoothing
    matches, totals, hyp_len, ref_len = _corpus_counts(list_of_references, hypotheses, len(weights),
                                                       modified_precision)
    if matches[0] == 0:
        return 0.0
    bp = brevity_penalty(ref_len, hyp_len)
    # smoothing methods 5 to 7 read the last sentence pair, as nltk.corpus_bleu does
    p_n = _smooth(smoothing, matches, totals, list_of_references[-1], hypotheses[-1], hyp_len, epsilon, alpha, k)
    if auto_reweigh and hyp_len < 4 and tuple(weights) == (0.25, 0.25, 0.25, 0.25):
        weights = (1 / hyp_len,) * hyp_len
    # BEGIN SOLUTION
    # HINT: a weighted geometric mean of the precisions p_n, times the brevity penalty bp
    log_sum = math.fsum(w * math.log(p) for w, p in zip(weights, p_n) if p > 0)
    return bp * math.exp(log_sum)
    # END SOLUTION


def sentence_bleu(references, hypothesis, weights=(0.25, 0.25, 0.25, 0.25), smoothing=None, *,
                  style="nltk", effective_order=None, **options):
    """BLEU of one hypothesis against its references (corpus_bleu of a corpus of one).

    With style="sacrebleu", effective_order defaults to True, as sacreBLEU's sentence_bleu.
    """
    if effective_order is None:
        effective_order = style == "sacrebleu"
    return corpus_bleu([references], [hypothesis], weights, smoothing, style=style,
                       effective_order=effective_order, **options)


def _check_bleu_inputs(list_of_references, hypotheses, weights):
    """Refuse what BLEU cannot score: no sentences, a str where a token list belongs (it would be read one
    character per token), a hypothesis without references, weights that are not numbers >= 0."""
    if len(list_of_references) != len(hypotheses):
        raise ValueError(f"corpus_bleu: {len(hypotheses)} hypotheses but {len(list_of_references)} reference lists")
    if not hypotheses:
        raise ValueError("corpus_bleu: no hypotheses to score (an empty corpus has no BLEU)")
    for number, (references, hypothesis) in enumerate(zip(list_of_references, hypotheses)):
        if isinstance(hypothesis, str) or isinstance(references, str) or not len(references) \
                or any(isinstance(reference, str) for reference in references):
            raise TypeError(f"corpus_bleu: sentence {number} must be a token list with a non-empty list of "
                            f"reference token lists, got {hypothesis!r:.40} and {references!r:.60}; split strings "
                            "into tokens first")
    if not len(weights) or not all(isinstance(w, numbers.Real) and w >= 0 for w in weights) or not sum(weights) > 0:
        raise ValueError(f"BLEU: weights must be one number >= 0 per n-gram order, not all 0, got {tuple(weights)}")


def _corpus_counts(list_of_references, hypotheses, N, count):
    """Matches and totals of each n-gram order 1..N summed over the corpus (``count(references,
    hypothesis, n)`` gives one sentence's), and the hypothesis and closest reference lengths."""
    matches, totals = [0] * N, [0] * N
    hyp_len = ref_len = 0
    for references, hypothesis in zip(list_of_references, hypotheses):
        # BEGIN SOLUTION
        # HINT: corpus BLEU adds every sentence's counts and lengths up before dividing (not a mean of sentence BLEUs)
        for n in range(1, N + 1):
            m, t = count(references, hypothesis, n)
            matches[n - 1] += m
            totals[n - 1] += t
        hyp_len += len(hypothesis)
        ref_len += closest_ref_length(references, len(hypothesis))
        # END SOLUTION
    return matches, totals, hyp_len, ref_len


SACREBLEU_SMOOTHING = {"exp": None, "floor": 0.1, "add-k": 1, "none": None}   # method: default smooth_value


def _sacrebleu(list_of_references, hypotheses, weights, smoothing, smooth_value, effective_order):
    if len(set(weights)) != 1:
        raise ValueError(f"BLEU style='sacrebleu' averages the orders uniformly; got weights {tuple(weights)}")
    matches, totals, hyp_len, ref_len = _corpus_counts(list_of_references, hypotheses, len(weights),
                                                       clipped_counts)
    return sacrebleu_from_counts(matches, totals, hyp_len, ref_len, smoothing, smooth_value, effective_order)


def sacrebleu_from_counts(matches, totals, hyp_len, ref_len, smoothing="exp", smooth_value=None,
                          effective_order=False):
    """BLEU in [0, 1] from its statistics, as sacreBLEU's ``compute_bleu`` (matches, totals per order).

        exp:    the k-th order with no match gets p = 1 / (2^k total)
        floor:  an order with no match gets p = smooth_value / total
        add-k:  orders n >= 2 add smooth_value to matches and total
        none:   no smoothing
    No match at all gives 0; an order with no n-grams ends the orders used
    (with effective_order) or gives 0 (without); a precision still 0 gives 0.
    """
    if smoothing not in SACREBLEU_SMOOTHING:
        raise ValueError(f"sacreBLEU smoothing must be one of {sorted(SACREBLEU_SMOOTHING)}, got {smoothing!r}")
    if smooth_value is None:
        smooth_value = SACREBLEU_SMOOTHING[smoothing]
    if not any(matches):
        return 0.0
    bp = 1.0 if hyp_len >= ref_len else brevity_penalty(ref_len, hyp_len)
    precisions = []
    halvings = 1
    order = len(matches)
    for n, (m, t) in enumerate(zip(matches, totals), start=1):
        if smoothing == "add-k" and n > 1:
            m, t = m + smooth_value, t + smooth_value
        if t == 0:
            break
        if effective_order:
            order = n
        if m:
            precisions.append(m / t)
        elif smoothing == "exp":
            halvings *= 2
            precisions.append(1 / (halvings * t))
        elif smoothing == "floor":
            precisions.append(smooth_value / t)
        else:
            precisions.append(0.0)
    used = precisions[:order]
    if len(used) < order or min(used) <= 0:
        return 0.0
    return bp * math.exp(math.fsum(math.log(p) for p in used) / order)


def _smooth(method, matches, totals, references, hypothesis, hyp_len, epsilon, alpha, k):
    """The precisions p_n after smoothing ``method`` (Chen and Cherry, 2014; NLTK's numbering)."""
    p_n = [m / t for m, t in zip(matches, totals)]
    if method == 0:     # none: a zero precision becomes the smallest float, so BLEU is ~0
        return [p if m else sys.float_info.min for p, m in zip(p_n, matches)]
    if method == 1:     # add epsilon to zero match counts
        return [p if m else epsilon / t for p, m, t in zip(p_n, matches, totals)]
    if method == 2:     # add 1 to matches and totals for n > 1
        return [p_n[0]] + [(m + 1) / (t + 1) for m, t in zip(matches[1:], totals[1:])]
    if method == 3:     # NIST: the k-th zero precision becomes 1 / (2^k * total)
        return _geometric(p_n, matches, totals, lambda j: 2 ** j)
    if method == 4:     # as 3, scaled by k / ln(hypothesis length): shorter outputs get less
        return _method4(p_n, matches, totals, hyp_len, k)
    if method == 5:     # average each precision with its neighbours n - 1 and n + 1
        return _method5(p_n, references, hypothesis)
    if method == 6:     # interpolate with a prior extrapolated from the two lower orders
        if not matches[2]:
            raise ValueError("BLEU smoothing method 6 needs a non-zero trigram precision")
        for i in range(2, len(p_n)):
            prior = 0 if p_n[i - 2] == 0 else p_n[i - 1] ** 2 / p_n[i - 2]
            n_grams = max(len(hypothesis) - i, 0)       # (i+1)-grams in the last hypothesis
            p_n[i] = (matches[i] + alpha * prior) / (n_grams + alpha)
        return p_n
    if method == 7:     # 4 then 5
        return _method5(_method4(p_n, matches, totals, hyp_len, k), references, hypothesis)
    raise ValueError(f"BLEU smoothing must be 0-7, got {method!r}")


def _geometric(p_n, matches, totals, scale):
    zeros = 1
    for i, (m, t) in enumerate(zip(matches, totals)):
        if m == 0:
            p_n[i] = 1 / (scale(zeros) * t)
            zeros += 1
    return p_n


def _method4(p_n, matches, totals, hyp_len, k):
    if hyp_len <= 1:
        return p_n
    return _geometric(p_n, matches, totals, lambda j: 2 ** j * k / math.log(hyp_len))


def _method5(p_n, references, hypothesis):
    m5, t5 = modified_precision(references, hypothesis, 5)
    following = p_n[1:] + [m5 / t5]
    previous = p_n[0] + 1
    for i in range(len(p_n)):
        p_n[i] = (previous + p_n[i] + following[i]) / 3
        previous = p_n[i]
    return p_n


# ----------------------------------------------------------------------------- n-gram language model

class NGramLM:
    """A count-based n-gram language model with add-k smoothing and back-off.

        p(w | context) = (count(context, w) + k) / (count(context) + k * V)

    where context is the previous ``order - 1`` tokens and V the vocabulary
    size (training tokens plus <unk> and <eos>).  Back-off: a context never
    seen in training has no counts to smooth, so the model uses the next
    shorter context instead (down to the unigram distribution).  Each
    sentence starts with ``order - 1`` <bos> tokens and ends with <eos>, which
    is predicted and counted in the perplexity.
    """

    def __init__(self, order=3, k=1.0):
        if order < 1:
            raise ValueError(f"NGramLM: order must be >= 1, got {order}")
        self.order, self.k = order, k
        self.counts = [Counter() for _ in range(order)]          # counts[n][(context..., w)], n = context length
        self.context_counts = [Counter() for _ in range(order)]  # counts[n][context]
        self.vocab = set()

    def _pad(self, sentence):
        return [BOS] * (self.order - 1) + [w if w in self.vocab else UNK for w in sentence] + [EOS]

    def fit(self, sentences):
        """Count n-grams of every order in an iterable of token lists; returns self."""
        sentences = [list(s) for s in sentences]
        self.vocab = {w for s in sentences for w in s} | {UNK, EOS}
        for sentence in sentences:
            tokens = self._pad(sentence)
            for i in range(self.order - 1, len(tokens)):
                for n in range(self.order):
                    context = tuple(tokens[i - n:i])
                    self.counts[n][context + (tokens[i],)] += 1
                    self.context_counts[n][context] += 1
        return self

    def prob(self, word, context=()):
        """p(word | the last order-1 tokens of context), backing off to shorter seen contexts."""
        word = word if word in self.vocab else UNK
        context = tuple(w if w in self.vocab or w == BOS else UNK for w in context)
        context = context[len(context) - (self.order - 1):] if self.order > 1 else ()
        while context and self.context_counts[len(context)][context] == 0:
            context = context[1:]                                 # back off: drop the oldest token
        n = len(context)
        denominator = self.context_counts[n][context] + self.k * len(self.vocab)
        return (self.counts[n][context + (word,)] + self.k) / denominator

    def log_prob(self, sentence):
        """Natural log-probability of a sentence (its <eos> included); returns (log_prob, n_tokens)."""
        tokens = [BOS] * (self.order - 1) + list(sentence) + [EOS]
        total = 0.0
        for i in range(self.order - 1, len(tokens)):
            p = self.prob(tokens[i], tokens[i - self.order + 1:i] if self.order > 1 else ())
            total += math.log(p) if p > 0 else -math.inf
        return total, len(tokens) - (self.order - 1)

    def perplexity(self, sentences):
        """exp(-total log-probability / number of predicted tokens) over token lists."""
        total, count = 0.0, 0
        for sentence in sentences:
            lp, n = self.log_prob(sentence)
            total, count = total + lp, count + n
        return math.exp(-total / count)
