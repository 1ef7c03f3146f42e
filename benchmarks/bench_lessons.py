"""Lessons suite: the lessons that train on the REFERENCE tier, timed on both tiers against PyTorch.

Lessons 3, 4, 9, 10 and 11 build their models on the reference tier (``reference=True`` or
``nn.reference_tier(model)``), so the code a student reads is the code that runs, and the
learner waits for that tier.  Each case times one training step of the lesson's model as
the lesson runs it (the reference tier), the same model on the fast tier, and the same
model written with torch.nn, interleaved in one process.  Two rows per case: the fast
tier against PyTorch, and "[reference tier]" against PyTorch, whose note says how far the
reference tier is from the fast tier (issue 22: within 1.5x).  Training steps are timed as
loops of consecutive steps (``common.loop_times``), each dropping its loss at its end; the
rows show the minimum and the median per step.

Cases (float32, full-mode sizes; the same weights in all three, copied PyTorch -> minigrad;
each case checks that the three first-step losses agree before it times anything):

    truncated BPTT    lesson 3: nn.RNN(1, 32) over chunks of k = 20 steps, batch 16, from a carried
                      (detached) state, Linear(32, 1) on every output, mse_loss, Adam(3e-3) + clip
    adding problem    lesson 4: nn.RNN, LSTM or GRU (input 2, hidden 32) over T = 50 steps,
                      batch 32, Linear(32, 1) on the last output, mse_loss, Adam(0.01) +
                      clip_grad_norm_(1.0)
    neighbours        lesson 9: MultiheadAttention(16, 1 or 2 heads, per-head weights returned) and two
                      Linear(16, 8) read-outs on 64 sequences of 8 one-hot symbols + positions, the
                      sum of two cross_entropy losses, Adam(0.02)
    translator        lesson 10: TransformerTranslator (d_model 32, 2 heads, ff 64, one encoder
                      and one decoder layer, post-LN) on 64 dates, teacher_forcing_loss,
                      Adam(0.02, betas (0.9, 0.98)) + clip; lesson 10's GRU Seq2Seq (embedding
                      32, hidden 48, dot attention) on the same batch; and greedy decoding of
                      the lesson's 200 test dates, as its evaluate() does
    classifiers       lesson 11: its LSTMClassifier (embedding 32, LSTM 64 over each review's
                      real tokens, Linear on the last state) and its TransformerClassifier
                      (d_model 32, 2 heads, one layer, ff 128, max pooling; dropout 0 here, 0.1
                      in the lesson, so the losses can be compared) on a bucketed batch of 32 of
                      the lesson's generated reviews (10 tokens, some 9: its batches have 4 to 11),
                      Adam(5e-3), no clipping
"""
import functools

import numpy

from common import interleaved_times, loop_times, paired_ratio, reference_tier_row, timed_row, torch_or_none

import bench_workloads as workloads                          # puts this checkout's minigrad first on the path
from bench_workloads import PAD_IDX, SEQ2SEQ, TRANSLATOR, update_steps

import minigrad  # noqa: E402
from minigrad import functional as F, nn  # noqa: E402
from minigrad.data.synthetic import adding_problem, sentiment  # noqa: E402
from minigrad.models import Seq2Seq, TransformerClassifier, TransformerTranslator, teacher_forcing_loss  # noqa: E402
from minigrad.text import BucketIterator, Vocab, word_tokenize  # noqa: E402

TRUNCATED = dict(k=20, batch=16, hidden=32)                  # lesson 3
ADDING = dict(T=50, batch=32, hidden=32)                     # lesson 4, full mode
NEIGHBOURS = dict(batch=64, T=8, symbols=8)                  # lesson 9: E = symbols + T
TRANSLATION_BATCH = 64                                       # lesson 10, full mode
LESSON_10_GRU = dict(SEQ2SEQ, hidden_size=48)                # lesson 10's make_gru()
CLASSIFIER_BATCH, CLASSIFIER_TOKENS = 32, 10                 # lesson 11
TRANSFORMER_CLASSIFIER = dict(num_classes=2, d_model=32, nhead=2, num_layers=1, dim_feedforward=128,
                              pooling="max")                 # lesson 11's make_transformer()


# ----------------------------------------------------------------------------- the lessons' models

class NextValue(nn.Module):
    """Lesson 3's model: a tanh RNN reading one value per step; a Linear predicting the next value."""

    def __init__(self, hidden_size):
        super().__init__()
        self.rnn = nn.RNN(1, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x, h=None):
        output, h = self.rnn(x, h)
        return self.head(output), h


class Neighbours(nn.Module):
    """Lesson 9's model: one multi-head self-attention layer and a linear read-out of both neighbours."""

    def __init__(self, embed_dim, num_heads, symbols):
        super().__init__()
        self.attention = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.left = nn.Linear(embed_dim, symbols)
        self.right = nn.Linear(embed_dim, symbols)

    def forward(self, x):
        h, weights = self.attention(x, x, x, average_attn_weights=False)
        return self.left(h), self.right(h), weights


class Regressor(nn.Module):
    """Lesson 4's model: a recurrent layer reading (N, T, 2); a Linear on its last output."""

    def __init__(self, cell, hidden_size):
        super().__init__()
        self.rnn = getattr(nn, cell)(2, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x):
        output, _ = self.rnn(x)
        return self.head(output[:, -1])


class LSTMClassifier(nn.Module):
    """Lesson 11's model: embedding -> LSTM over the real tokens -> Linear on the last state."""

    def __init__(self, vocab_size, embed_size=32, hidden_size=64, num_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_IDX)
        self.lstm = nn.LSTM(embed_size, hidden_size, batch_first=True)
        self.classifier = nn.Linear(hidden_size, num_classes)

    def forward(self, ids, lengths):
        _, (h_n, _) = self.lstm(self.embedding(ids), lengths=lengths)
        return self.classifier(h_n[-1])


def torch_next_value(torch, hidden_size):
    tnn = torch.nn

    class TorchNextValue(tnn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = tnn.RNN(1, hidden_size, batch_first=True)
            self.head = tnn.Linear(hidden_size, 1)

        def forward(self, x, h=None):
            output, h = self.rnn(x, h)
            return self.head(output), h

    return TorchNextValue()


def torch_neighbours(torch, embed_dim, num_heads, symbols):
    tnn = torch.nn

    class TorchNeighbours(tnn.Module):
        def __init__(self):
            super().__init__()
            self.attention = tnn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
            self.left = tnn.Linear(embed_dim, symbols)
            self.right = tnn.Linear(embed_dim, symbols)

        def forward(self, x):
            h, weights = self.attention(x, x, x, average_attn_weights=False)
            return self.left(h), self.right(h), weights

    return TorchNeighbours()


def torch_regressor(torch, cell, hidden_size):
    tnn = torch.nn

    class TorchRegressor(tnn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(tnn, cell)(2, hidden_size, batch_first=True)
            self.head = tnn.Linear(hidden_size, 1)

        def forward(self, x):
            output, _ = self.rnn(x)
            return self.head(output[:, -1])

    return TorchRegressor()


def torch_lstm_classifier(torch, vocab_size, embed_size=32, hidden_size=64, num_classes=2):
    tnn = torch.nn

    class TorchLSTMClassifier(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = tnn.Embedding(vocab_size, embed_size, padding_idx=PAD_IDX)
            self.lstm = tnn.LSTM(embed_size, hidden_size, batch_first=True)
            self.classifier = tnn.Linear(hidden_size, num_classes)

        def forward(self, ids, lengths):
            packed = tnn.utils.rnn.pack_padded_sequence(self.embedding(ids), lengths, batch_first=True,
                                                         enforce_sorted=False)
            _, (h_n, _) = self.lstm(packed)
            return self.classifier(h_n[-1])

    return TorchLSTMClassifier()


def torch_transformer_classifier(torch, vocab_size, positions, num_classes, d_model, nhead, num_layers,
                                 dim_feedforward, pooling):
    """minigrad.models.TransformerClassifier (post-LN, ReLU, dropout 0, max pooling) with torch.nn;
    ``positions``: minigrad's sinusoidal table (a buffer outside the state dict in both)."""
    tnn = torch.nn
    assert pooling == "max"

    class TorchTransformerClassifier(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = tnn.Embedding(vocab_size, d_model, padding_idx=PAD_IDX)
            self.register_buffer("pe", torch.tensor(positions), persistent=False)
            layer = tnn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, 0.0, batch_first=True)
            self.encoder = tnn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
            self.classifier = tnn.Linear(d_model, num_classes)

        def forward(self, ids):
            pad = ids == PAD_IDX
            h = self.encoder(self.embedding(ids) + self.pe[:ids.shape[1]], src_key_padding_mask=pad)
            return self.classifier(h.masked_fill(pad[:, :, None], -1e30).amax(dim=1))

    return TorchTransformerClassifier()


# ----------------------------------------------------------------------------- the cases

def _tiers(make_ours, theirs, what):
    """The lesson's model on the fast tier and on the reference tier, both with ``theirs``'s weights."""
    models = []
    for reference in (False, True):
        ours = nn.reference_tier(make_ours(), reference)
        ours.load_state_dict(theirs.state_dict())
        workloads._same_parameters(ours, theirs, what)
        models.append(ours)
    return models


def _steps(torch, make_ours, theirs, loss_ours, loss_theirs, what, **adam):
    """[fast step, reference step, torch step] of one lesson's model (``update_steps`` each)."""
    fast, reference = _tiers(make_ours, theirs, what)
    fast_step, torch_step = update_steps(torch, fast, theirs, lambda: loss_ours(fast), loss_theirs, **adam)
    reference_step, _ = update_steps(torch, reference, theirs, lambda: loss_ours(reference), loss_theirs, **adam)
    return [fast_step, reference_step, torch_step]


def truncated_bptt_steps(torch, k, N, H):
    """Lesson 3: [fast, reference, torch] training steps on one chunk of k steps of N streams,
    from a carried state (as the lesson's h.detach(): a constant to this step)."""
    rng = numpy.random.default_rng(0)
    stream = numpy.sin(numpy.arange(N * (k + 1)) * 0.1).reshape(N, k + 1, 1).astype(numpy.float32)
    h = rng.standard_normal((1, N, H)).astype(numpy.float32) * 0.5
    x, y, h0 = (minigrad.tensor(a) for a in (stream[:, :-1], stream[:, 1:], h))
    tx, ty, th0 = (torch.tensor(a) for a in (stream[:, :-1], stream[:, 1:], h))
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    theirs = torch_next_value(torch, H)
    return _steps(torch, lambda: NextValue(H), theirs, lambda ours: F.mse_loss(ours(x, h0)[0], y),
                  lambda: torch.nn.functional.mse_loss(theirs(tx, th0)[0], ty), "NextValue", lr=3e-3)


def neighbours_steps(torch, heads, N, T, symbols):
    """Lesson 9: [fast, reference, torch] training steps of its Neighbours model on N sequences."""
    rng = numpy.random.default_rng(0)
    E = symbols + T
    ids = rng.integers(0, symbols, (N, T))
    x = numpy.zeros((N, T, E), dtype=numpy.float32)
    x[numpy.arange(N)[:, None], numpy.arange(T)[None, :], ids] = 1.0           # the symbol's one-hot
    x[:, numpy.arange(T), symbols + numpy.arange(T)] = 1.0                     # the position's one-hot
    targets = [numpy.roll(ids, 1, axis=1), numpy.roll(ids, -1, axis=1)]         # left and right neighbours
    mx, tx = minigrad.tensor(x), torch.tensor(x)
    ours_targets = [minigrad.tensor(t).reshape(-1) for t in targets]
    torch_targets = [torch.tensor(t).reshape(-1) for t in targets]
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    theirs = torch_neighbours(torch, E, heads, symbols)

    def loss_ours(ours):
        left, right, _ = ours(mx)
        return (F.cross_entropy(left.reshape(-1, symbols), ours_targets[0]) +
                F.cross_entropy(right.reshape(-1, symbols), ours_targets[1]))

    def loss_theirs():
        left, right, _ = theirs(tx)
        return (torch.nn.functional.cross_entropy(left.reshape(-1, symbols), torch_targets[0]) +
                torch.nn.functional.cross_entropy(right.reshape(-1, symbols), torch_targets[1]))
    return _steps(torch, lambda: Neighbours(E, heads, symbols), theirs, loss_ours, loss_theirs,
                  f"Neighbours, {heads} heads", lr=0.02, clip=None)


def adding_steps(torch, cell, T, N, H):
    """Lesson 4: [fast, reference, torch] training steps of the adding-problem regressor."""
    x, y = adding_problem(N, length=T, seed=0)
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    theirs = torch_regressor(torch, cell, H)
    return _steps(torch, lambda: Regressor(cell, H), theirs, lambda ours: F.mse_loss(ours(x), y),
                  lambda: torch.nn.functional.mse_loss(theirs(tx), ty), f"{cell} regressor", lr=0.01)


def translation_steps(torch, model_name, batch):
    """Lesson 10: [fast, reference, torch] training steps of its translator or its GRU Seq2Seq."""
    src_v, tgt_v, src, tgt = workloads._dates_batch(batch)
    torch_src, torch_tgt = torch.tensor(src.numpy()), torch.tensor(tgt.numpy())
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    if model_name == "TransformerTranslator":
        def make_ours():
            return TransformerTranslator(src_v, tgt_v, dropout=0.0, **TRANSLATOR)
        theirs = workloads.torch_translator(torch, src_v, tgt_v, make_ours().positions.pe.numpy(), **TRANSLATOR)
    else:
        def make_ours():
            return Seq2Seq(src_v, tgt_v, **LESSON_10_GRU)
        theirs = workloads.torch_seq2seq(torch, src_v, tgt_v, **LESSON_10_GRU)

    def loss_theirs():
        logits = theirs(torch_src, torch_tgt[:, :-1])
        return torch.nn.functional.cross_entropy(logits.reshape(-1, tgt_v), torch_tgt[:, 1:].reshape(-1),
                                                 ignore_index=PAD_IDX)
    return _steps(torch, make_ours, theirs, lambda ours: teacher_forcing_loss(ours, src, tgt), loss_theirs,
                  model_name, lr=0.02, betas=(0.9, 0.98))


@functools.lru_cache(maxsize=1)
def _encoded_reviews():
    """Lesson 11's generated reviews, full mode (6000): (vocabulary size, the ids of each, the labels)."""
    reviews = sentiment(6000, seed=0)
    vocab = Vocab.build(word_tokenize(text) for text, _ in reviews)
    return len(vocab), [vocab.encode(word_tokenize(text)) for text, _ in reviews], [label for _, label in reviews]


def review_batch(N, T):
    """Lesson 11's data: (vocabulary size, ids, lengths, labels) of the first bucketed batch of N reviews
    with T tokens and some padding (reviews of two lengths), so the LSTM's lengths mask has work."""
    V, ids, labels = _encoded_reviews()
    for batch, batch_labels in BucketIterator(ids, batch_size=N, labels=labels, seed=0):
        if batch.ids.shape[1] == T and int(batch.lengths.min()) < T:
            return V, batch.ids, batch.lengths, batch_labels
    raise ValueError(f"no bucketed batch of {N} reviews has {T} tokens and padding")


def classifier_steps(torch, model_name, N, T):
    """Lesson 11: [fast, reference, torch] training steps of its LSTM or Transformer classifier."""
    V, ids, lengths, labels = review_batch(N, T)
    torch_ids, torch_lengths, torch_labels = (torch.tensor(a.numpy()) for a in (ids, lengths, labels))
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    if model_name == "LSTMClassifier":
        def make_ours():
            return LSTMClassifier(V)
        theirs = torch_lstm_classifier(torch, V)
        args, torch_args = (ids, lengths), (torch_ids, torch_lengths)
    else:
        def make_ours():
            return TransformerClassifier(V, dropout=0.0, **TRANSFORMER_CLASSIFIER)
        theirs = torch_transformer_classifier(torch, V, make_ours().positions.pe.numpy(), **TRANSFORMER_CLASSIFIER)
        args, torch_args = (ids,), (torch_ids,)
    return _steps(torch, make_ours, theirs, lambda ours: F.cross_entropy(ours(*args), labels),
                  lambda: torch.nn.functional.cross_entropy(theirs(*torch_args), torch_labels),
                  model_name, lr=5e-3, clip=None)


def check_first_losses(steps, what):
    """Run each step once; the fast and the reference tier's first losses must both equal PyTorch's."""
    fast, reference, theirs = (step().item() for step in steps)
    for tier, ours in (("fast", fast), ("reference", reference)):
        workloads.assert_same_loss(ours, theirs, what, f"'s {tier} tier")
    return theirs


def evaluation_decodes(torch, batch):
    """Lesson 10's evaluate(): [fast, reference, torch] greedy decoding of ``batch`` test dates."""
    fast, theirs = workloads.translator_pair(torch, "greedy", batch)
    reference, _ = workloads.translator_pair(torch, "greedy", batch, reference=True)
    return [fast, reference, theirs]


# ----------------------------------------------------------------------------- the suite

def _rows(what, times, note):
    """The fast tier's row and the "[reference tier]" row (the tier the lesson runs), from interleaved
    [fast, reference, torch] times."""
    fast, _, theirs = times
    return [timed_row(what, fast, theirs, f"{note}; median of paired ratios {paired_ratio(fast, theirs):.2f}x"),
            reference_tier_row(what, times)]


def run(quick):
    torch = torch_or_none()
    if torch is None:
        return [{"case": "lessons (every case needs the PyTorch model)", "minigrad_s": None,
                 "torch_s": None, "note": "torch not installed"}]
    repeat = 3 if quick else 9
    rows = []
    what = (f"lesson 3 truncated BPTT training step, RNN, batch {TRUNCATED['batch']}, hidden {TRUNCATED['hidden']}, "
            f"k={TRUNCATED['k']}")
    steps = truncated_bptt_steps(torch, TRUNCATED["k"], TRUNCATED["batch"], TRUNCATED["hidden"])
    loss = check_first_losses(steps, what)
    rows += _rows(what, loop_times(steps, repeat), f"mse, Adam + clip; first losses agree ({loss:.4f})")

    for cell in ("RNN", "LSTM", "GRU"):
        what = (f"lesson 4 adding problem training step, {cell}, batch {ADDING['batch']}, "
                f"hidden {ADDING['hidden']}, T={ADDING['T']}")
        steps = adding_steps(torch, cell, ADDING["T"], ADDING["batch"], ADDING["hidden"])
        loss = check_first_losses(steps, what)
        rows += _rows(what, loop_times(steps, repeat), f"mse, Adam + clip; first losses agree ({loss:.4f})")

    for heads in (1, 2):
        what = (f"lesson 9 neighbours training step, MultiheadAttention, {heads} head{'s' if heads > 1 else ''}, "
                f"batch {NEIGHBOURS['batch']}, T={NEIGHBOURS['T']}")
        steps = neighbours_steps(torch, heads, NEIGHBOURS["batch"], NEIGHBOURS["T"], NEIGHBOURS["symbols"])
        loss = check_first_losses(steps, what)
        rows += _rows(what, loop_times(steps, repeat),
                      f"E 16, weights per head returned, two cross_entropy, Adam; first losses agree ({loss:.4f})")

    for model_name in ("TransformerTranslator", "Seq2Seq"):
        what = f"lesson 10 {model_name} training step, batch {TRANSLATION_BATCH}"
        steps = translation_steps(torch, model_name, TRANSLATION_BATCH)
        loss = check_first_losses(steps, what)
        rows += _rows(what, loop_times(steps, repeat),
                      f"dates, <pad> ignored, Adam + clip; first losses agree ({loss:.4f})")
    what = "lesson 10 evaluate(): greedy decoding of 200 dates, TransformerTranslator"
    decodes = evaluation_decodes(torch, 200)
    steps = workloads._check_same_tokens(decodes[0], decodes[2], what)
    workloads._check_same_tokens(decodes[1], decodes[2], what + " [reference tier]")
    rows += _rows(what, interleaved_times(decodes, repeat=repeat),
                  f"encoder + {steps} decoder steps, the same tokens on both tiers and in PyTorch")

    for model_name in ("LSTMClassifier", "TransformerClassifier"):
        what = f"lesson 11 {model_name} training step, batch {CLASSIFIER_BATCH}, {CLASSIFIER_TOKENS} tokens"
        steps = classifier_steps(torch, model_name, CLASSIFIER_BATCH, CLASSIFIER_TOKENS)
        loss = check_first_losses(steps, what)
        rows += _rows(what, loop_times(steps, repeat), f"Adam; first losses agree ({loss:.4f})")
    return rows


if __name__ == "__main__":
    for row in run(quick=False):
        print(f"{row['case']:100s} {row['minigrad_median_s'] / row['torch_median_s']:6.2f}x  {row['note']}")
