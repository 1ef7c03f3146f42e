"""Turning a model's next-token distributions into sequences: greedy, beam search, sampling.

The decoder protocol
--------------------
Every generator in this file talks to the model through one small object, a
*decoder*, with two methods:

    decoder.step(tokens, state) -> (log_probs, state)
        tokens     int64 Tensor (N,): the last token of each of N prefixes
        state      whatever the model needs to remember about each prefix
                   (an RNN's hidden state; a Transformer's encoder memory and
                   the tokens so far), one row per prefix
        log_probs  Tensor (N, V): log p(next token | prefix), natural log,
                   each row a normalised distribution (log_softmax of logits)
        state      the state after reading ``tokens``

    decoder.reorder(state, indices) -> state
        indices    int64 array or Tensor (M,): keep, duplicate or drop rows
                   of the state (row i of the result is row indices[i]).
                   Beam search calls it to follow the surviving beams.

The *initial* state belongs to the model, because only the model knows what
it is: a language model gives ``lm.initial_state(N)`` (zeros), a seq2seq
model gives ``model.initial_state(src)`` (the encoder's summary of a source
batch).  A decode call then starts from that state and a start token per row
(usually ``<bos>``), e.g.

    state = lm.initial_state(N)
    tokens, scores = greedy(lm, state, start=[bos] * N, max_len=20, eos=eos)

``select_rows(state, indices, dim)`` is the usual body of ``reorder``: it
indexes every tensor in a nested tuple/list/dict along the batch dimension
(dim=0 for (N, ...) states, dim=1 for an RNN's (layers, N, H)).

Every function works on the backend's arrays (``xp``), under ``no_grad``,
vectorised over the batch (and over the beams); only the final sequences are
copied to the host as Python lists.
"""
from collections import namedtuple

from . import backend, checks
from .autograd import no_grad
from .tensor import Tensor, int64

Hypothesis = namedtuple("Hypothesis", ["tokens", "log_prob", "score"])
Hypothesis.__doc__ = """One finished beam.

tokens: list of generated ids (without the start token; ends with eos if one was produced)
log_prob: sum of the model's log-probabilities of those tokens (natural log)
score: the ranking score, log_prob / len(tokens) ** length_penalty
"""


class Decoder:
    """Base class documenting the protocol (subclassing it is optional: duck typing is enough).

    Subclasses implement ``step``; ``reorder`` defaults to ``select_rows(state, indices, dim=0)``.
    """

    def step(self, tokens, state):
        """tokens (N,) int64, state -> (log_probs (N, V), new state)."""
        raise NotImplementedError

    def reorder(self, state, indices):
        """The state's rows picked by ``indices`` (M,): row i of the result is row indices[i]."""
        return select_rows(state, indices, dim=0)


def select_rows(state, indices, dim=0):
    """Index every Tensor/array in a nested tuple/list/dict ``state`` along ``dim`` by ``indices``.

    None and Python numbers pass through unchanged.
    """
    if state is None or isinstance(state, (int, float, str)):
        return state
    if isinstance(state, (tuple, list)):
        return type(state)(select_rows(s, indices, dim) for s in state)
    if isinstance(state, dict):
        return {k: select_rows(v, indices, dim) for k, v in state.items()}
    if isinstance(indices, Tensor):
        indices = indices._data
    device = state.device if isinstance(state, Tensor) else backend.device_of(state)
    where = (slice(None),) * dim + (backend.asarray(indices, device=device),)
    return state[where]


# ----------------------------------------------------------------------------- helpers

def _start_tokens(start, like_device):
    """start: an int, a list, an array or a Tensor of N ids -> int64 array on the device."""
    if isinstance(start, Tensor):
        return start._data.astype(int64)
    return backend.asarray(start, dtype=int64, device=like_device)


def _step(decoder, tokens, state):
    """One decoder step on arrays: (N,) ids -> (N, V) log-prob array and the new state."""
    log_probs, state = decoder.step(Tensor._from_array(tokens), state)
    return log_probs._data, state


def _to_lists(tokens, lengths):
    """(N, T) host array and (N,) lengths -> list of N Python lists."""
    return [row[:n].tolist() for row, n in zip(tokens, lengths)]


def _device(state, default):
    """The device of the first array found in ``state`` (the start tokens go there)."""
    if isinstance(state, Tensor):
        return state.device
    if isinstance(state, (tuple, list)):
        for s in state:
            found = _device(s, None)
            if found is not None:
                return found
    if isinstance(state, dict):
        return _device(list(state.values()), default)
    if state is not None and type(state) in backend._array_types:
        return backend.device_of(state)
    return default


# ----------------------------------------------------------------------------- greedy and sampling

def greedy(decoder, state, start, max_len, eos=None):
    """Pick the most probable next token at every step.

    start: N start ids (usually <bos>); stops a row after it emits ``eos``.
    Returns (sequences, log_probs): N lists of generated ids (eos included,
    start excluded) and N floats, each the sum of the chosen tokens' log-probabilities.
    """
    checks.non_negative_int("greedy", "max_len", max_len)
    return _generate(decoder, state, start, max_len, eos, pick=None)


def sample(decoder, state, start, max_len, eos=None, temperature=1.0, top_k=None, top_p=None):
    """Draw each next token from the model's distribution, reshaped by three knobs:

    temperature  divide the log-probabilities by T before the softmax
                 (T < 1 sharpens, T > 1 flattens; T = 0 is greedy)
    top_k        keep only the k most probable tokens
    top_p        keep the smallest set of most probable tokens whose total
                 probability reaches p (nucleus sampling)

    The distribution drawn from is ``sampling_distribution``'s; the draw is
    inverse-CDF sampling with one uniform number per row.  Random numbers
    come from ``minigrad.manual_seed``'s generator, so a seed repeats the
    samples.  Returns (sequences, log_probs) as ``greedy``; the
    log-probabilities are the model's own (before temperature/top-k/top-p).
    """
    checks.non_negative_int("sample", "max_len", max_len)
    if not temperature >= 0:
        raise ValueError(f"sample: temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"sample: top_k must be >= 1, got {top_k}")
    if top_p is not None and not 0.0 < top_p <= 1.0:
        raise ValueError(f"sample: top_p must be in (0, 1], got {top_p}")

    def pick(log_probs):
        return _sample_from(log_probs, temperature, top_k, top_p)
    return _generate(decoder, state, start, max_len, eos, pick=pick)


def sampling_distribution(log_probs, temperature=1.0, top_k=None, top_p=None):
    """The distribution ``sample`` draws from: (N, V) log-probabilities (or logits) -> (N, V) probabilities.

        p_i = exp(l_i / T) / sum_j exp(l_j / T)      over the tokens kept, 0 for the others

    temperature  T > 0: T < 1 sharpens (T -> 0 puts all the mass on the argmax), T > 1 flattens
                 (T -> inf tends to uniform over the tokens kept)
    top_k        keep the k largest logits of each row (a tie at the k-th value keeps every tied token)
    top_p        then keep the fewest most probable tokens whose total reaches p, renormalised
    """
    xp = backend.array_module(log_probs)
    N, V = log_probs.shape
    # BEGIN SOLUTION
    # HINT: divide by the temperature: a small T must make large logits larger relative to the rest
    logits = log_probs / temperature
    # END SOLUTION
    if top_k is not None and top_k < V:
        # BEGIN SOLUTION
        # HINT: find each row's k-th largest logit (xp.sort sorts ascending) and set the logits below it to -inf
        kth = xp.sort(logits, axis=1)[:, V - top_k][:, None]    # the k-th largest value, (N, 1)
        logits = xp.where(logits < kth, -xp.inf, logits)
        # END SOLUTION
    # BEGIN SOLUTION
    # HINT: a softmax over each row; subtract the row's maximum first so exp cannot overflow
    probs = xp.exp(logits - logits.max(axis=1, keepdims=True))
    probs = probs / probs.sum(axis=1, keepdims=True)
    # END SOLUTION
    if top_p is not None and top_p < 1.0:
        sorted_probs = -xp.sort(-probs, axis=1)                  # (N, V), largest first
        before = xp.cumsum(sorted_probs, axis=1) - sorted_probs  # mass of the tokens ranked above
        kept = (before < top_p).sum(axis=1)                      # always >= 1
        threshold = xp.take_along_axis(sorted_probs, (kept - 1)[:, None], axis=1)
        probs = xp.where(probs >= threshold, probs, 0.0)
        probs = probs / probs.sum(axis=1, keepdims=True)
    return probs


def _sample_from(log_probs, temperature, top_k, top_p):
    """One id per row of (N, V) log-probabilities, drawn from ``sampling_distribution``."""
    xp = backend.array_module(log_probs)
    if temperature == 0:
        return xp.argmax(log_probs, axis=1)
    probs = sampling_distribution(log_probs, temperature, top_k, top_p)
    N, V = probs.shape
    u = backend.random_uniform((N, 1), probs.dtype, backend.device_of(probs))   # one uniform draw per row
    # BEGIN SOLUTION
    # HINT: inverse-CDF sampling: pick the first token whose cumulative probability exceeds u
    chosen = (xp.cumsum(probs, axis=1) < u).sum(axis=1)
    # END SOLUTION
    return xp.minimum(chosen, V - 1)                             # rounding can leave the total a hair below u


def _generate(decoder, state, start, max_len, eos, pick):
    """The loop shared by greedy and sample: one token per row per step, rows stop at eos."""
    with no_grad():
        tokens = _start_tokens(start, _device(state, None))
        xp = backend.array_module(tokens)
        N = tokens.shape[0]
        out = xp.zeros((N, max_len), dtype=int64)
        total = xp.zeros(N, dtype="float64")
        lengths = xp.zeros(N, dtype=int64)
        finished = xp.zeros(N, dtype=bool)
        rows = xp.arange(N)
        for t in range(max_len):
            log_probs, state = _step(decoder, tokens, state)
            tokens = xp.argmax(log_probs, axis=1) if pick is None else pick(log_probs)
            tokens = tokens.astype(int64)
            alive = ~finished
            out[:, t] = xp.where(alive, tokens, 0)
            total = total + xp.where(alive, log_probs[rows, tokens], 0.0)
            lengths = lengths + alive
            if eos is not None:
                finished = finished | (tokens == eos)
                if bool(finished.all()):
                    break
        return (_to_lists(backend.to_numpy(out), backend.to_numpy(lengths).tolist()),
                backend.to_numpy(total).tolist())


# ----------------------------------------------------------------------------- beam search

def beam_search(decoder, state, start, beam_size, max_len, eos, n_best=1, length_penalty=0.0,
                return_trace=False):
    """Keep the ``beam_size`` best prefixes of every batch row at each step.

    All N * beam_size prefixes go through ``decoder.step`` together (one call
    per step): the state holds rows (n, k) at index n * beam_size + k.

    A prefix that emitted ``eos`` is finished: it stays in the beam with a
    fixed score and competes with the growing prefixes by its ranking score

        score = log_prob / len(tokens) ** length_penalty

    (length_penalty 0: raw log-probability, which prefers short outputs;
    1: average log-probability per token).  The search stops when every beam
    is finished or after ``max_len`` tokens.

    Returns, for each of the N rows, a list of the ``n_best`` Hypothesis
    (tokens, log_prob, score), best first.  With ``return_trace=True`` also a
    trace for ``plot_beam_tree``: one dict per step with (N, K) arrays
    "parent" (beam it extends), "token", "log_prob" and "finished".
    """
    checks.positive_int("beam_search", "beam_size", beam_size)
    checks.positive_int("beam_search", "n_best", n_best)
    checks.non_negative_int("beam_search", "max_len", max_len)
    if n_best > beam_size:
        raise ValueError(f"beam_search: n_best={n_best} must be <= beam_size={beam_size}")
    with no_grad():
        tokens = _start_tokens(start, _device(state, None))
        xp = backend.array_module(tokens)
        N, K = tokens.shape[0], beam_size
        # every row's state copied K times: row n*K + k is beam k of batch row n
        state = decoder.reorder(state, xp.repeat(xp.arange(N), K))
        tokens = xp.repeat(tokens, K)
        # only beam 0 starts alive, so the first step does not pick K copies of one token
        log_prob = xp.full((N, K), -xp.inf)
        log_prob[:, 0] = 0.0
        finished = xp.zeros((N, K), dtype=bool)
        lengths = xp.zeros((N, K), dtype=int64)
        history = xp.zeros((N, K, 0), dtype=int64)
        batch = xp.arange(N)[:, None]
        trace = []
        for t in range(max_len):
            step_lp, state = _step(decoder, tokens, state)          # (N*K, V)
            V = step_lp.shape[1]
            step_lp = step_lp.reshape(N, K, V).astype("float64")
            # a finished beam has one continuation, "stay finished", that adds nothing
            stay = xp.full((V,), -xp.inf)
            stay[eos] = 0.0
            step_lp = xp.where(finished[:, :, None], stay, step_lp)
            # BEGIN SOLUTION
            # HINT: each beam k and next token v is a candidate (K * V per row), log-probability the beam's + the step's
            # HINT: rank candidates by their length-normalised score, keep the K best; j extends beam j // V by j % V
            candidate_lp = (log_prob[:, :, None] + step_lp).reshape(N, K * V)
            candidate_len = xp.repeat(lengths + ~finished, V, axis=1).reshape(N, K * V)
            rank = _length_normalise(xp, candidate_lp, candidate_len, length_penalty)
            best = _top_k(xp, rank, K)                               # (N, K) candidate ids, best first
            parent, token = best // V, best % V
            # END SOLUTION
            was_finished = finished[batch, parent]
            log_prob = candidate_lp[batch, best]
            lengths = lengths[batch, parent] + ~was_finished
            finished = was_finished | (token == eos) | (log_prob == -xp.inf)
            history = xp.concatenate([history[batch, parent], token[:, :, None]], axis=2)
            if return_trace:
                trace.append({name: backend.to_numpy(a) for name, a in (
                    ("parent", parent), ("token", token), ("log_prob", log_prob), ("finished", finished))})
            state = decoder.reorder(state, (batch * K + parent).reshape(-1))
            tokens = token.reshape(-1)
            if bool(finished.all()):
                break
        # BEGIN SOLUTION
        # HINT: the final ranking uses the same length-normalised score as the search
        score = _length_normalise(xp, log_prob, lengths, length_penalty)
        order = xp.argsort(-score, axis=1)
        # END SOLUTION
        results = _hypotheses(*(backend.to_numpy(a) for a in (
            history[batch, order], log_prob[batch, order], score[batch, order], lengths[batch, order])), n_best)
    return (results, trace) if return_trace else results


def _top_k(xp, values, k):
    """Column indices of the k largest values of each row of (N, M), largest first.

    argpartition finds the k largest in linear time; only those k are then sorted.
    """
    top = xp.argpartition(-values, k - 1, axis=1)[:, :k]
    order = xp.argsort(-xp.take_along_axis(values, top, axis=1), axis=1)
    return xp.take_along_axis(top, order, axis=1)


def _length_normalise(xp, log_prob, lengths, alpha):
    """score = log_prob / len ** alpha (alpha 0: the raw log-probability; a length of 0 counts as 1)."""
    # BEGIN SOLUTION
    # HINT: without it a sum of log-probabilities (each < 0) always prefers the shortest sequence
    if alpha == 0:
        return log_prob
    return log_prob / xp.maximum(lengths, 1) ** alpha
    # END SOLUTION


def _hypotheses(history, log_prob, score, lengths, n_best):
    """Host arrays sorted best first -> N lists of Hypothesis (beams that died at -inf are dropped)."""
    results = []
    for n in range(history.shape[0]):
        row = []
        for k in range(history.shape[1]):
            if len(row) == n_best or log_prob[n, k] == float("-inf"):
                break
            row.append(Hypothesis(history[n, k, :lengths[n, k]].tolist(), float(log_prob[n, k]),
                                  float(score[n, k])))
        results.append(row)
    return results


def sequence_log_prob(decoder, state, start, sequences):
    """Teacher-forced log-probability of each of N given sequences (lists of ids).

    Feeds the true previous token at every step; returns N floats, each the sum
    of log p(token_t | start, token_<t) over the sequence.
    """
    with no_grad():
        tokens = _start_tokens(start, _device(state, None))
        xp = backend.array_module(tokens)
        N = len(sequences)
        T = max(len(s) for s in sequences)
        device = backend.device_of(tokens)
        padded = backend.asarray([list(s) + [0] * (T - len(s)) for s in sequences], int64, device)
        mask = backend.asarray([[t < len(s) for t in range(T)] for s in sequences], device=device)
        total = xp.zeros(N, dtype="float64")
        rows = xp.arange(N)
        for t in range(T):
            log_probs, state = _step(decoder, tokens, state)
            total = total + xp.where(mask[:, t], log_probs[rows, padded[:, t]], 0.0)
            tokens = padded[:, t]
        return backend.to_numpy(total).tolist()


# ----------------------------------------------------------------------------- the beam tree

def plot_beam_tree(trace, path, itos=None, row=0, title="beam search"):
    """Draw the beams of batch ``row`` from ``beam_search(..., return_trace=True)`` and save a PNG.

    Each node is a kept prefix (x = step, y = its beam slot), labelled with its
    last token and cumulative log-probability; an edge joins it to the prefix
    it extends.  itos: a list (or Vocab) turning ids into strings.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def name(token):
        if itos is None:
            return str(token)
        return itos[token] if isinstance(itos, (list, tuple)) else itos.itos[token]

    K = trace[0]["token"].shape[1]
    figure, axes = plt.subplots(figsize=(1.6 * (len(trace) + 1), 0.7 * K + 1.2))
    axes.scatter([0], [0], color="black")
    axes.annotate("<start>", (0, 0), textcoords="offset points", xytext=(4, 4), fontsize=8)
    for t, step in enumerate(trace, start=1):
        previous_finished = trace[t - 2]["finished"][row] if t > 1 else [False] * K
        for k in range(K):
            log_prob = float(step["log_prob"][row, k])
            if log_prob == float("-inf"):
                continue
            parent = int(step["parent"][row, k])
            if previous_finished[parent]:
                continue  # a finished beam carried over: already drawn
            color = "tab:red" if step["finished"][row, k] else "tab:blue"
            axes.plot([t - 1, t], [parent if t > 1 else 0, k], color="gray", linewidth=0.8)
            axes.scatter([t], [k], color=color, zorder=3)
            axes.annotate(f"{name(int(step['token'][row, k]))}\n{log_prob:.2f}", (t, k),
                          textcoords="offset points", xytext=(4, 2), fontsize=7)
    axes.set_xlabel("step")
    axes.set_ylabel("beam slot")
    axes.set_title(title + " (red: finished)")
    axes.invert_yaxis()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
