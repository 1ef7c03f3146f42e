# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 11: A Transformer classifier against an LSTM
#
# **What you will learn**
#
# 1. How to turn a Transformer *encoder* (lesson 10) into a classifier: embed,
#    add positions, encode, *pool* over the sequence, one linear layer.
# 2. Why the padding mask matters twice: inside attention (no query looks at
#    a pad) and in the pooling (a pad never wins the max).
# 3. A fair comparison with the LSTM classifier of lesson 6 on the same data:
#    accuracy, parameter count, training time.
#
# **Task.**  The toy sentiment data (`minigrad.data.sentiment`): short movie
# reviews such as "the plot was not boring" (positive) or "the acting was bad
# but the ending was great" (positive: after "but" decides).  Negation and
# "but" make word order matter, so a bag of words cannot solve it.
#
# **Real reviews: `--data imdb`.**  The experiment of the course's slides:
# the same small Transformer on the IMDB reviews (Maas et al., 2011; 25,000
# training and 25,000 test reviews, half positive), the first 200 words of
# each, the 20,000 most frequent words, 2 epochs.  The slides report about
# **0.82** test accuracy for this model (a Keras version of it); the
# lesson prints its own figure beside that one.  Download the reviews once
# (84 MB, checked against the published SHA-256), then run the lesson:
#
#     python -c "import minigrad.data; minigrad.data.download('imdb')"
#     python lessons/11_transformer_classifier.py --data imdb
#
# *What to expect on a laptop CPU* (full mode: all 25,000 training reviews,
# 2 epochs, both models, the 25,000 test reviews read after each epoch):
# about 6 minutes of CPU time.  That is an estimate from timings on this
# course's 2-core development machine (one BLAS thread), which cannot
# download IMDB: on batches of 32 reviews of 200 words the Transformer
# takes 94 ms per training step and the LSTM 28 ms (CPU time), so two
# epochs (1,563 steps each) plus the test passes take about 3.5 minutes
# for the Transformer and 1.5 for the LSTM; reading and tokenizing the
# 50,000 reviews takes seconds.  The accuracy on the real reviews was not
# measured here: expect about the slides' 0.82, not the toy data's 100%.
# `--quick --data imdb` reads 1,000 training and 500 test reviews once:
# too little to learn from, but it shows the pipeline runs.
#
# **Notation.**  ids (N, T), embeddings E (V, d), positions P (T, d):
#
#     X = E[ids] + P                                  (N, T, d)
#     H = EncoderLayer(X, key_padding_mask = ids == <pad>)
#     z = max_t H[:, t, :]  over the real tokens       (N, d)     max pooling
#     logits = z Wᵀ + b                               (N, 2)
#
# The encoder layer is the post-LN block of Vaswani et al. (2017), PyTorch's
# `norm_first=False`: H = LN(X + MHA(X)), then H = LN(H + FFN(H)).
# The model is deliberately small: 1 layer, d_model = 32, 2 heads,
# feed-forward 128 (the size Géron's and Raschka's books use for this exercise).
#
# The LSTM classifier reads the same embeddings left to right; its state at
# each sentence's *last real token* (`lengths=`, as PyTorch's packed
# sequences) goes to the linear layer.
#
# **Read the code.**  The classifier: `minigrad/models/transformer.py`
# (`TransformerClassifier`); the encoder block: `minigrad/nn/transformer.py`;
# the padding mask: `minigrad/masks.py`; the LSTM: `minigrad/nn/rnn.py`
# (maths: `minigrad/functions/rnn_steps.py`).

# %%
import argparse
import time

import numpy as np

import minigrad
import minigrad.data
import minigrad.models
from minigrad import functional as F
from minigrad import lesson, metrics, nn, optim
from minigrad.text import BucketIterator, Vocab, pad_batch, word_tokenize

parser = argparse.ArgumentParser(add_help=False)
parser.add_argument("--data", choices=("toy", "imdb"), default="toy",
                    help="toy: generated sentiment sentences; imdb: the downloaded IMDB reviews")
parser.add_argument("--imdb-root", default=None, help="the folder download('imdb') returned (default: the cache)")
options, lesson_argv = lesson.own_options(parser)   # this lesson's options; the rest are setup's
run = lesson.setup("11_transformer_classifier", argv=lesson_argv)
plt = run.pyplot()
PUBLISHED_IMDB_ACCURACY = 0.82                           # the course slides' Transformer on IMDB

# %% [markdown]
# ## 1. The data
#
# Words, a vocabulary with `<pad>` = 0, a training and a validation split.
# With `--data imdb` the reviews are cut to their first 200 words, the
# vocabulary keeps the 20,000 most frequent, and the held-out split is the
# IMDB test set.

# %%
max_words = None
if options.data == "imdb":
    texts, labels = minigrad.data.imdb("train", root=options.imdb_root, shuffle=True, seed=0)
    test_texts, test_labels = minigrad.data.imdb("test", root=options.imdb_root, shuffle=True, seed=0)
    n_train, n_val = min(run.size(1000, 25000), len(texts)), min(run.size(500, 25000), len(test_texts))
    train_set = [(t.replace("<br />", " "), y) for t, y in zip(texts[:n_train], labels[:n_train])]
    val_set = [(t.replace("<br />", " "), y) for t, y in zip(test_texts[:n_val], test_labels[:n_val])]
    max_words, max_vocab = 200, 20000
else:
    n_train, n_val = run.size(1200, 6000), run.size(500, 1000)
    train_set = minigrad.data.sentiment(n_train, seed=0)
    val_set = minigrad.data.sentiment(n_val, seed=1)
    max_vocab = None
vocab = Vocab.build((word_tokenize(text)[:max_words] for text, _ in train_set), max_size=max_vocab)
train_ids = [vocab.encode(word_tokenize(text)[:max_words]) for text, _ in train_set]
train_labels = [label for _, label in train_set]
val_ids = [vocab.encode(word_tokenize(text)[:max_words]) for text, _ in val_set]
val_labels = np.array([label for _, label in val_set])
has_but = np.array([" but " in text for text, _ in val_set])
majority = max(val_labels.mean(), 1 - val_labels.mean())
print(f"{len(train_set)} training / {len(val_set)} validation examples; vocabulary {len(vocab)} words; "
      f"longest {max(map(len, train_ids))} tokens; majority-class accuracy {majority:.3f}")
print("examples:", *(f"  {label}  {text}" for text, label in train_set[:4]), sep="\n")

# %% [markdown]
# ## 2. The two models

# %%
class LSTMClassifier(nn.Module):
    """Lesson 6's model: embedding -> LSTM over the real tokens -> Linear on the last state."""

    def __init__(self, vocab_size, embed_size=32, hidden_size=64, num_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=vocab.pad_idx)
        self.lstm = nn.LSTM(embed_size, hidden_size, batch_first=True)
        self.classifier = nn.Linear(hidden_size, num_classes)

    def forward(self, ids, lengths):                        # ids (N, T), lengths (N,)
        _, (h_n, _) = self.lstm(self.embedding(ids), lengths=lengths)
        return self.classifier(h_n[-1])                     # (N, 2)


def make_transformer():
    return nn.reference_tier(minigrad.models.TransformerClassifier(    # the reference attention, the one to read
        len(vocab), num_classes=2, d_model=32, nhead=2, num_layers=1, dim_feedforward=128,
        dropout=0.1, pooling="max", pad_idx=vocab.pad_idx))


def make_lstm():
    return nn.reference_tier(LSTMClassifier(len(vocab)))


print(make_transformer())

# %% [markdown]
# ## 3. Training both with the same budget
#
# Same batches (size 32, bucketed by length), same optimizer (Adam,
# learning rate 5e-3), same number of epochs.  We record validation accuracy
# after every epoch, and the wall-clock time spent in training steps.

# %%
epochs = run.size(1, 2) if options.data == "imdb" else run.size(3, 10)


def evaluate(model, uses_lengths, chunk=500):
    """Predicted classes for the held-out split, in padded chunks of ``chunk`` examples."""
    model.eval()
    predicted = []
    with minigrad.no_grad():
        for start in range(0, len(val_ids), chunk):
            batch = pad_batch(val_ids[start:start + chunk], device=run.device)
            args = (batch.ids, batch.lengths) if uses_lengths else (batch.ids,)
            predicted.append(model(*args).argmax(-1).numpy())
    model.train()
    return np.concatenate(predicted)


def train(name, make, uses_lengths):
    minigrad.manual_seed(0)
    model = make().to(run.device)
    optimizer = optim.Adam(model.parameters(), lr=5e-3)
    batches = BucketIterator(train_ids, batch_size=32, labels=train_labels, seed=0, device=run.device)
    curve, seconds = [], 0.0
    progress = run.progress(epochs, every=1, unit="epoch")
    for epoch in range(epochs):
        started = time.perf_counter()
        for batch, labels in batches:
            args = (batch.ids, batch.lengths) if uses_lengths else (batch.ids,)
            loss = F.cross_entropy(model(*args), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        seconds += time.perf_counter() - started
        predicted = evaluate(model, uses_lengths)
        curve.append(metrics.accuracy(predicted, val_labels))
        progress.log(epoch, loss=loss.item(), val_accuracy=curve[-1])
    return model, curve, predicted, seconds


n_batches = len(BucketIterator(train_ids, batch_size=32))
results, curves = [], {}
for name, make, uses_lengths in (("Transformer (1 layer, d 32, 2 heads, max pool)", make_transformer, False),
                                 ("LSTM (embed 32, hidden 64)", make_lstm, True)):
    print(f"--- {name}")
    model, curves[name], predicted, seconds = train(name, make, uses_lengths)
    correct = predicted == val_labels
    results.append({"model": name, "parameters": model.num_parameters(),
                    "val accuracy": float(correct.mean()), "best val accuracy": max(curves[name]),
                    "accuracy on 'but' sentences": float(correct[has_but].mean()),
                    "train seconds": seconds, "ms per batch": 1000 * seconds / (epochs * n_batches)})
results.append({"model": "majority class (baseline)", "parameters": 0, "val accuracy": majority,
                "best val accuracy": majority, "accuracy on 'but' sentences": float(
                    max(val_labels[has_but].mean(), 1 - val_labels[has_but].mean())),
                "train seconds": 0.0, "ms per batch": 0.0})
data_name = "IMDB reviews (first 200 words)" if options.data == "imdb" else "Sentiment"
if options.data == "imdb":
    results.append({"model": "Transformer, the course slides (published)", "val accuracy": PUBLISHED_IMDB_ACCURACY})
run.table(results, f"{data_name}, {len(train_set)} training examples, {len(val_set)} held out, {epochs} epochs "
          "of batches of 32", columns=list(results[0]))

if plt:
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, curve in curves.items():
        ax.plot(range(1, epochs + 1), curve, marker="o", label=name)
    if options.data == "imdb":
        ax.axhline(PUBLISHED_IMDB_ACCURACY, color="C2", linestyle=":", label="the slides' Transformer")
    ax.axhline(majority, color="k", linestyle="--", label="majority class")
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation accuracy")
    ax.set_title(f"Transformer encoder vs LSTM on {'IMDB' if options.data == 'imdb' else 'toy sentiment'}")
    ax.legend()
    run.savefig(fig, "accuracy.png")

# %% [markdown]
# ## 4. What the numbers say
#
# In full mode both models learn negation and "but", well above the majority
# class (on "but" sentences 0.99 and 1.0 against 0.51).  In quick mode the
# Transformer is not there yet: on "but" sentences it can stay at the
# majority's level (0.5165 against 0.5275 in one run), and the lesson checks
# the "but" sentences in full mode only.  Read the table for who wins *on this
# data, at this budget*.  On the full run
# (6000 sentences, 10 epochs) both reach 100% validation accuracy: a tie.
# In quick mode (1200 sentences, 3 epochs) the LSTM is already perfect while
# the Transformer is still learning: on sentences of ten words the LSTM's
# left-to-right reading is exactly the inductive bias the task needs, while
# the Transformer must learn word order from its positional encodings.
# The Transformer has half the parameters but, on a CPU at this size, costs
# more per batch: attention costs O(T²·d) and several small matmuls, the
# LSTM O(T·d²) in T sequential steps that minigrad runs as one fused loop.
#
# On IMDB (`--data imdb`) the picture changes: reviews of 200 words, a
# vocabulary of 20,000, and a sentiment spread over many sentences.  There
# the Transformer costs about 3.4x the LSTM per batch on a CPU (attention
# over 200 positions), and what matters is which model gets further in two
# epochs: compare your figure with the slides' 0.82.

# %%
transformer, lstm = results[0], results[1]
gap = transformer["val accuracy"] - lstm["val accuracy"]
verdict = "a tie" if abs(gap) < 0.005 else "the Transformer wins" if gap > 0 else "the LSTM wins"
print(f"validation accuracy {transformer['val accuracy']:.3f} Transformer vs {lstm['val accuracy']:.3f} LSTM: "
      f"{verdict}; the Transformer's training took {transformer['train seconds'] / lstm['train seconds']:.1f}x "
      f"the LSTM's time")
if options.data == "imdb":
    print(f"IMDB test accuracy {transformer['val accuracy']:.3f} (Transformer) against the slides' "
          f"{PUBLISHED_IMDB_ACCURACY}")
if options.data == "imdb" and run.quick:
    print("(quick mode on IMDB reads 1,000 reviews once: too little to learn from, so the accuracy checks "
          "run in full mode only)")
elif options.data == "imdb":                              # expectations, not measured here (see the top)
    run.check(transformer["val accuracy"] > majority + 0.15,
              f"on IMDB the Transformer ({transformer['val accuracy']:.3f}) beats the majority class by over 0.15")
    run.check(lstm["val accuracy"] > majority,
              f"on IMDB the LSTM ({lstm['val accuracy']:.3f}) beats the majority class")
else:
    margin = run.size(0.1, 0.2)
    run.check(transformer["val accuracy"] > majority + margin,
              f"the Transformer classifier beats the majority class by more than {margin}")
    run.check(lstm["val accuracy"] > majority + margin,
              f"the LSTM classifier beats the majority class by more than {margin}")
    if not run.quick:                                     # quick mode: the Transformer may not be there yet
        but_majority = results[2]["accuracy on 'but' sentences"]
        run.check(min(transformer["accuracy on 'but' sentences"], lstm["accuracy on 'but' sentences"])
                  > but_majority + 0.3, "both models learn 'but' sentences, well above the majority class")

# %% [markdown]
# ## Exercises
#
# The coursework (see `minigrad assignment list`) has an assignment on
# **attention**: write scaled dot-product attention and its backward, then
# `minigrad check` grades them.
#
# 1. Switch to `pooling="mean"`.  Which pooling handles "but" sentences better,
#    and why might max pooling suit a sentence whose verdict sits in one word?
# 2. Remove the positional encoding (replace `model.positions` by a module
#    that returns its input).  What happens to "the plot was not bad but the
#    ending was dull" vs the same clauses swapped?
# 3. Give both models the same parameter count (shrink the LSTM's hidden
#    size) and compare again.
# 4. Time one training step for T = 10, 100, 1000 (pad the sentences).  Where
#    does the Transformer become slower than the LSTM on your CPU?

# %%
run.done()
