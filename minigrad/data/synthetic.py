"""Generated datasets: small, offline, and the same for the same seed.

    sine_waves        sums of two sine waves plus noise, as 50-step forecasting windows
    time_series       Geron's series (Hands-On Machine Learning, ch. 15), the course slides' forecasting data
    adding_problem    the long-range memory test of Hochreiter and Schmidhuber (1997)
    copy_task / reverse_task   symbol sequences and their copies / reversals
    dates             "Wednesday, 3 March 1999" -> "1999-03-03", a translation with clear alignments
    sentiment         short reviews whose label depends on word order and negation
    translation       sentences in English word order and in a made-up verb-final language

Each function draws from its own generator seeded by ``seed``, so a dataset
does not change the model's random stream (``minigrad.manual_seed``) and the
model does not change the dataset.  The numbers are made on the host with
NumPy, like data read from a disk, and become Tensors (on ``device``) once.
"""
import datetime
import random

import numpy

from ..tensor import Tensor, float32

FIRST_SYMBOL = 4   # copy/reverse symbols start after the special ids <pad> <unk> <bos> <eos>


def _tensor(array, device):
    return Tensor(array.astype(float32), device=device)


def sine_waves(n_series, steps=50, horizon=1, noise=0.05, seed=0, device=None):
    """Forecasting windows of x(t) = a1 sin(f1 t + p1) + a2 sin(f2 t + p2) + noise.

    Returns (inputs (n, steps, 1), targets (n, horizon)): the model reads
    ``steps`` values and predicts the next ``horizon`` ones (without noise).
    Each series draws its own amplitudes, frequencies and phases.
    """
    rng = numpy.random.default_rng(seed)
    t = numpy.arange(steps + horizon)[None, :]                        # (1, steps + horizon)
    amplitude = rng.uniform(0.3, 1.0, size=(n_series, 2, 1))
    frequency = rng.uniform(0.1, 0.6, size=(n_series, 2, 1))
    phase = rng.uniform(0, 2 * numpy.pi, size=(n_series, 2, 1))
    clean = (amplitude * numpy.sin(frequency * t[:, None, :] + phase)).sum(axis=1)  # (n, steps + horizon)
    noisy = clean[:, :steps] + noise * rng.standard_normal((n_series, steps))
    return _tensor(noisy[:, :, None], device), _tensor(clean[:, steps:], device)


def time_series(n_series, n_steps=51, seed=0, device=None):
    """The series of Aurelien Geron's *Hands-On Machine Learning*, 2nd ed. (2019), ch. 15
    (``generate_time_series`` in the book's notebook), the data of the course slides:

        x(t) = 0.5 sin((t - o1)(10 f1 + 10)) + 0.2 sin((t - o2)(20 f2 + 20)) + 0.1 (u - 0.5)

    with t = linspace(0, 1, n_steps); f1, f2, o1, o2 uniform in [0, 1) per series
    and u uniform in [0, 1) per step.  Returns (n_series, n_steps, 1).  The book
    draws 10,000 series of 51 steps: the first 50 are the input, the 51st the
    target; 7,000 train, 2,000 validation, 1,000 test.
    """
    rng = numpy.random.default_rng(seed)
    frequency1, frequency2, offset1, offset2 = rng.random((4, n_series, 1))     # each (n, 1)
    t = numpy.linspace(0, 1, n_steps)                                           # (n_steps,)
    series = 0.5 * numpy.sin((t - offset1) * (frequency1 * 10 + 10))            # wave 1
    series += 0.2 * numpy.sin((t - offset2) * (frequency2 * 20 + 20))           # + wave 2
    series += 0.1 * (rng.random((n_series, n_steps)) - 0.5)                     # + noise
    return _tensor(series[:, :, None], device)


def adding_problem(n_examples, length=50, seed=0, device=None):
    """Inputs (n, length, 2): a random value in [0, 1) and a marker, 1 at two positions (one in
    each half); target (n, 1): the sum of the two marked values.  Predicting 1.0 always gives
    mean squared error Var(U1 + U2) = 2/12 ~ 0.167 (remembering neither value); predicting
    0.5 + U2 gives Var(U1) = 1/12 ~ 0.083 (remembering only the second, later one)."""
    rng = numpy.random.default_rng(seed)
    values = rng.uniform(0, 1, size=(n_examples, length))
    markers = numpy.zeros((n_examples, length))
    half = length // 2
    first = rng.integers(0, half, size=n_examples)
    second = rng.integers(half, length, size=n_examples)
    rows = numpy.arange(n_examples)
    markers[rows, first] = markers[rows, second] = 1.0
    inputs = numpy.stack([values, markers], axis=2)
    target = values[rows, first] + values[rows, second]
    return _tensor(inputs, device), _tensor(target[:, None], device)


def _symbol_sequences(n_examples, n_symbols, min_len, max_len, seed):
    rng = random.Random(seed)
    return [[rng.randrange(FIRST_SYMBOL, FIRST_SYMBOL + n_symbols) for _ in range(rng.randint(min_len, max_len))]
            for _ in range(n_examples)]


def copy_task(n_examples, n_symbols=8, min_len=3, max_len=10, seed=0):
    """(sources, targets): lists of id lists, target = source.  Symbols are ids 4 .. 4 + n_symbols - 1,
    so a Vocab-compatible model keeps ids 0-3 for <pad> <unk> <bos> <eos>."""
    sources = _symbol_sequences(n_examples, n_symbols, min_len, max_len, seed)
    return sources, [list(s) for s in sources]


def reverse_task(n_examples, n_symbols=8, min_len=3, max_len=10, seed=0):
    """As copy_task, but the target is the source reversed."""
    sources = _symbol_sequences(n_examples, n_symbols, min_len, max_len, seed)
    return sources, [s[::-1] for s in sources]


# ----------------------------------------------------------------------------- dates

# fixed English names (the calendar module's follow the locale)
_MONTHS = ["", "January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_DATE_FORMATS = [
    lambda d: f"{d.day} {_MONTHS[d.month]} {d.year}",           # 3 March 1999
    lambda d: f"{_MONTHS[d.month]} {d.day}, {d.year}",          # March 3, 1999
    lambda d: f"{_MONTHS[d.month][:3]} {d.day} {d.year}",           # Mar 3 1999
    lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",                        # 03.03.1999
    lambda d: f"{_DAYS[d.weekday()]}, {d.day} {_MONTHS[d.month]} {d.year}",
    lambda d: f"{d.day} {_MONTHS[d.month][:3].lower()} {d.year % 100:02d}",   # 3 mar 99
    lambda d: f"{_DAYS[d.weekday()][:3]} {_MONTHS[d.month][:3]} {d.day} {d.year}",
]


def dates(n_examples, seed=0, start_year=1950, end_year=2049):
    """(human, iso) string pairs: ("Wednesday, 3 March 1999", "1999-03-03"), in seven formats.

    Two-digit years ("3 mar 99") only appear for 1950-2049, so they are unambiguous.
    Tokenize both sides by character.
    """
    rng = random.Random(seed)
    first = datetime.date(start_year, 1, 1).toordinal()
    last = datetime.date(end_year, 12, 31).toordinal()
    pairs = []
    for _ in range(n_examples):
        day = datetime.date.fromordinal(rng.randint(first, last))
        pairs.append((rng.choice(_DATE_FORMATS)(day), day.isoformat()))
    return pairs


# ----------------------------------------------------------------------------- sentiment

_POSITIVE = ["good", "great", "fun", "moving", "clever", "funny", "beautiful", "gripping"]
_NEGATIVE = ["bad", "boring", "dull", "awful", "silly", "slow", "predictable", "bland"]
_SUBJECTS = ["the movie", "the film", "the plot", "the acting", "the ending", "the story", "the cast"]
_VERBS = ["was", "is", "felt", "seemed"]
_NEGATIONS = ["not", "never"]


def _clause(rng):
    """A clause and its polarity (+1 / -1): 'the plot was not boring' -> +1."""
    positive = rng.random() < 0.5
    adjective = rng.choice(_POSITIVE if positive else _NEGATIVE)
    negated = rng.random() < 0.4
    words = [rng.choice(_SUBJECTS), rng.choice(_VERBS)] + ([rng.choice(_NEGATIONS)] if negated else []) + [adjective]
    return " ".join(words), (1 if positive else -1) * (-1 if negated else 1)


def sentiment(n_examples, seed=0):
    """(sentence, label) pairs, label 1 positive / 0 negative, e.g.

        "the film was not good"                          -> 0   (negation flips)
        "the plot seemed never boring"                   -> 1
        "the acting was bad but the ending was great"    -> 1   (after "but" decides)
        "the ending was great but the acting was bad"    -> 0   (same words, other order)

    A bag of words cannot tell the last two apart; a sequence model can.
    """
    rng = random.Random(seed)
    examples = []
    for _ in range(n_examples):
        text, polarity = _clause(rng)
        if rng.random() < 0.4:
            second, second_polarity = _clause(rng)
            if second_polarity != polarity:
                text, polarity = f"{text} but {second}", second_polarity
            else:
                text = f"{text} and {second}"
        examples.append((text, 1 if polarity > 0 else 0))
    return examples


# ----------------------------------------------------------------------------- translation

_LEXICON = {   # English -> a made-up language
    "the": "ka", "a": "mu",
    "dog": "wof", "cat": "miro", "bird": "pipi", "child": "tano", "farmer": "gelo", "teacher": "sabi",
    "big": "dala", "small": "piki", "red": "roso", "old": "vek", "happy": "fela", "quiet": "suna",
    "sees": "vidu", "likes": "ama", "follows": "seku", "feeds": "nutri", "finds": "trova", "calls": "voka",
}
_NOUNS = ["dog", "cat", "bird", "child", "farmer", "teacher"]
_ADJECTIVES = ["big", "small", "red", "old", "happy", "quiet"]
_TRANSITIVE = ["sees", "likes", "follows", "feeds", "finds", "calls"]


def _noun_phrase(rng):
    words = [rng.choice(["the", "a"])] + ([rng.choice(_ADJECTIVES)] if rng.random() < 0.5 else [])
    return words + [rng.choice(_NOUNS)]


def _reorder_noun_phrase(phrase):
    """English 'the big dog' -> target order 'dog big the': noun, then adjective, then article."""
    return phrase[::-1]


def translation(n_examples, seed=0):
    """(english, target) sentence pairs between two word orders.

    English is subject-verb-object with adjectives before nouns; the made-up
    target language is subject-object-verb, with each noun phrase reversed:

        "the big dog sees a cat"  ->  "wof dala ka miro mu vidu"

    Every English word has one target word, so the alignment is a permutation.
    """
    rng = random.Random(seed)
    pairs = []
    for _ in range(n_examples):
        subject, verb, obj = _noun_phrase(rng), rng.choice(_TRANSITIVE), _noun_phrase(rng)
        english = subject + [verb] + obj
        target = _reorder_noun_phrase(subject) + _reorder_noun_phrase(obj) + [verb]
        pairs.append((" ".join(english), " ".join(_LEXICON[w] for w in target)))
    return pairs
