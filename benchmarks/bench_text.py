"""Text suite: the text pipeline's throughput, and beam search's cost per generated token.

tokenise + vocab  word-level tokenising, building a Vocab and numericalising
                  10 MB of standard-library prose (1 MB with --quick); the
                  issue's goal is under 5 s on one core.  Character level too.
beam search       a GRU language model (Embedding 64, hidden 128, V = 1000),
                  batch 8 x beam 5, 20 steps: seconds per generated token
                  (total time / (steps x batch rows)).
No PyTorch column: torch has no tokenizer or beam search to compare with.
"""
import minigrad
from minigrad.data import stdlib_corpus
from minigrad.decoding import beam_search
from minigrad.text import Vocab, char_tokenize, word_tokenize

from common import call_times, timed_row


def _text(megabytes):
    corpus = stdlib_corpus()
    size = int(megabytes * 1_000_000)
    return (corpus * (size // len(corpus) + 1))[:size]


def _pipeline(text, tokenize):
    def run():
        tokens = tokenize(text)
        vocab = Vocab.build([tokens])
        return vocab.encode(tokens)
    return run


def _beam_case(quick):
    from minigrad.models.rnn import RNNLanguageModel
    minigrad.manual_seed(0)
    model = RNNLanguageModel(1000, embedding_dim=64, hidden_size=128, cell="gru").eval()
    N, K, steps = 8, 5, (10 if quick else 20)

    def run():
        beam_search(model, model.initial_state(N), [2] * N, beam_size=K, max_len=steps, eos=3)
    per_token = [seconds / (steps * N) for seconds in call_times(run, repeat=2 if quick else 5)]
    return timed_row(f"beam search, GRU LM V=1000 H=128, batch {N} x beam {K}, {steps} steps", per_token,
                     note="per generated token (batch row x step)")


def run(quick):
    megabytes = 1 if quick else 10
    text = _text(megabytes)
    repeat = 1 if quick else 3
    rows = [
        timed_row(f"word tokenise + Vocab.build + encode, {megabytes} MB",
                  call_times(_pipeline(text, word_tokenize), repeat=repeat, warmup=0),
                  note="goal: < 5 s for 10 MB on one core"),
        timed_row(f"char tokenise + Vocab.build + encode, {megabytes} MB",
                  call_times(_pipeline(text, char_tokenize), repeat=repeat, warmup=0)),
    ]
    try:
        rows.append(_beam_case(quick))
    except ImportError as error:   # minigrad.models.rnn not there yet
        rows.append({"case": "beam search", "minigrad_s": None, "torch_s": None, "note": f"skipped: {error}"})
    return rows


if __name__ == "__main__":
    import sys
    for row in run("--quick" in sys.argv):
        print(row)
