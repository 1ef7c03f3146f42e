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
# **Real reviews: `--data imdb`.**  The experiment of the Technion's deep
# learning course (ECE 046211, tutorial 07, "Sequential Tasks", a PyTorch
# notebook): the same small Transformer on the IMDB reviews (Maas et al.,
# 2011; 25,000 training and 25,000 test reviews, half positive), set up as
# the tutorial sets it up:
#
# | | the tutorial | `--data imdb` here |
# |---|---|---|
# | data | the training set split 22,500 / 2,500 (training / validation); the 25,000 test reviews once, at the end | the same split (a fixed shuffle) |
# | words | lower case, the first 200 of each review, the 50,000 most frequent of the training split | the same (minigrad's `word_tokenize` also splits punctuation off; the tutorial splits on spaces) |
# | model | embedding (d 32) + sinusoidal positions, then a **LayerNorm**, 1 post-LN encoder layer (2 heads, feed-forward 128, dropout 0.1), max pooling, Linear | the same; padding masked in attention and pooling (the tutorial pads every review to 200 and masks nothing) |
# | training | AdamW, learning rate 1e-3 (weight decay 0.01, PyTorch's default), batches of 128, 10 epochs | the same; the LSTM gets the same budget |
# | result | **0.822** test accuracy (0.841 on its validation split after epoch 10) | printed beside it |
#
# Download the reviews once (84 MB, checked against the published SHA-256),
# then run the lesson:
#
#     python -c "import minigrad.data; minigrad.data.download('imdb')"
#     python lessons/11_transformer_classifier.py --data imdb
#
# *What to expect.*  A test accuracy of about the tutorial's 0.82 (not the toy
# data's 100%), and on a laptop CPU about 20 minutes of CPU time for both
# models (one BLAS thread; 10 epochs of 176 batches each; the Transformer
# about 14-21 of them).  That time is an extrapolation:
# the course's development machine cannot download IMDB, so it was measured
# there per batch, on reviews of the same length (the aclImdb-shaped stand-in
# of the tests), and multiplied out: section 4 gives the figures.
# Without the download the lesson says which command fetches it, in one
# line, and stops.  `--quick --data imdb` reads 1,000 training reviews
# (900 / 100) and 500 test reviews, one epoch: too little to learn from,
# but it runs the whole pipeline.
#
# **Notation.**  ids (N, T), embeddings E (V, d), positions P (T, d):
#
#     X = E[ids] + P                                  (N, T, d)
#     H = EncoderLayer(X, key_padding_mask = ids == <pad>)
#     z = max_t H[:, t, :]  over the real tokens       (N, d)     max pooling
#     logits = z Wᵀ + b                               (N, 2)
#
# (with `--data imdb`, as the tutorial: X = LayerNorm(E[ids] + P), the
# model's `embedding_norm=True`)
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
PUBLISHED_IMDB_ACCURACY = 0.822                          # the Technion tutorial's test accuracy (its 0.8222)

# %% [markdown]
# ## 1. The data
#
# Words, a vocabulary with `<pad>` = 0, a training and a validation split.
# With `--data imdb`, the tutorial's: 22,500 training and 2,500 validation
# reviews from IMDB's training set, the vocabulary of the 50,000 most frequent
# words of the 22,500, each review cut to its first 200 words, and the 25,000
# test reviews read once at the end.

# %%
max_words, test_set = None, None
if options.data == "imdb":
    try:
        texts, labels = minigrad.data.imdb("train", root=options.imdb_root, shuffle=True, seed=0)
        test_texts, test_labels = minigrad.data.imdb("test", root=options.imdb_root, shuffle=True, seed=0)
    except FileNotFoundError as error:
        raise SystemExit(f"lesson 11 --data imdb: {error}; to this lesson, pass that folder as "
                         "--imdb-root FOLDER") from None                     # one line, exit status 1
    n_reviews = min(run.size(1000, 25000), len(texts))
    n_val, n_test = n_reviews // 10, min(run.size(500, 25000), len(test_texts))    # 2,500 of 25,000

    def reviews(texts, labels):
        return [(text.replace("<br />", " "), label) for text, label in zip(texts, labels)]
    val_set = reviews(texts[:n_val], labels[:n_val])
    train_set = reviews(texts[n_val:n_reviews], labels[n_val:n_reviews])
    test_set = reviews(test_texts[:n_test], test_labels[:n_test])
    max_words, max_vocab = 200, 50000
    epochs, batch_size = run.size(1, 10), 128
else:
    n_train, n_val = run.size(1200, 6000), run.size(500, 1000)
    train_set = minigrad.data.sentiment(n_train, seed=0)
    val_set = minigrad.data.sentiment(n_val, seed=1)
    max_vocab = None
    epochs, batch_size = run.size(3, 10), 32
vocab = Vocab.build((word_tokenize(text) for text, _ in train_set), max_size=max_vocab)
train_ids = [vocab.encode(word_tokenize(text)[:max_words]) for text, _ in train_set]
train_labels = [label for _, label in train_set]
val_ids = [vocab.encode(word_tokenize(text)[:max_words]) for text, _ in val_set]
val_labels = np.array([label for _, label in val_set])
if test_set is not None:
    test_ids = [vocab.encode(word_tokenize(text)[:max_words]) for text, _ in test_set]
    test_labels = np.array([label for _, label in test_set])
has_but = np.array([" but " in text for text, _ in val_set])
majority = max(val_labels.mean(), 1 - val_labels.mean())
print(f"{len(train_set)} training / {len(val_set)} validation" + ("" if test_set is None else
      f" / {len(test_set)} test") + f" examples; vocabulary {len(vocab)} words; "
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
        dropout=0.1, pooling="max", pad_idx=vocab.pad_idx,
        embedding_norm=options.data == "imdb"))                          # the tutorial's LayerNorm after the embedding


def make_lstm():
    return nn.reference_tier(LSTMClassifier(len(vocab)))


print(make_transformer())

# %% [markdown]
# ## 3. Training both with the same budget
#
# Same batches (bucketed by length), same optimizer, same number of epochs:
# on the toy data batches of 32 and Adam with learning rate 5e-3; on IMDB the
# tutorial's batches of 128 and AdamW with 1e-3.  We record validation
# accuracy after every epoch, and the wall-clock time spent in training steps.

# %%
def evaluate(model, uses_lengths, ids, chunk=500):
    """Predicted classes for the examples ``ids``, in padded chunks of ``chunk`` examples."""
    model.eval()
    predicted = []
    with minigrad.no_grad():
        for start in range(0, len(ids), chunk):
            batch = pad_batch(ids[start:start + chunk], device=run.device)
            args = (batch.ids, batch.lengths) if uses_lengths else (batch.ids,)
            predicted.append(model(*args).argmax(-1).numpy())
    model.train()
    return np.concatenate(predicted)


def train(name, make, uses_lengths):
    minigrad.manual_seed(0)
    model = make().to(run.device)
    if options.data == "imdb":
        optimizer = optim.AdamW(model.parameters(), lr=1e-3)             # weight decay 0.01, as PyTorch's
    else:
        optimizer = optim.Adam(model.parameters(), lr=5e-3)
    batches = BucketIterator(train_ids, batch_size=batch_size, labels=train_labels, seed=0, device=run.device)
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
        predicted = evaluate(model, uses_lengths, val_ids)
        curve.append(metrics.accuracy(predicted, val_labels))
        progress.log(epoch, loss=loss.item(), val_accuracy=curve[-1])
    return model, curve, predicted, seconds


n_batches = len(BucketIterator(train_ids, batch_size=batch_size))
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
    if test_set is not None:
        results[-1]["test accuracy"] = metrics.accuracy(evaluate(model, uses_lengths, test_ids), test_labels)
results.append({"model": "majority class (baseline)", "parameters": 0, "val accuracy": majority,
                "best val accuracy": majority, "accuracy on 'but' sentences": float(
                    max(val_labels[has_but].mean(), 1 - val_labels[has_but].mean())),
                "train seconds": 0.0, "ms per batch": 0.0})
data_name = "IMDB reviews (first 200 words)" if options.data == "imdb" else "Sentiment"
if test_set is not None:
    results[-1]["test accuracy"] = max(test_labels.mean(), 1 - test_labels.mean())
    results.append({"model": "Transformer, the Technion tutorial (published)", "val accuracy": 0.841,
                    "test accuracy": PUBLISHED_IMDB_ACCURACY})
run.table(results, f"{data_name}, {len(train_set)} training examples, {len(val_set)} held out"
          + ("" if test_set is None else f", {len(test_set)} test") + f", {epochs} epochs of batches of {batch_size}",
          columns=list(results[0]))

if plt:
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, curve in curves.items():
        ax.plot(range(1, epochs + 1), curve, marker="o", label=name)
    if options.data == "imdb":
        ax.axhline(0.841, color="C2", linestyle=":", label="the tutorial's Transformer (validation)")
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
# vocabulary of 50,000, and a sentiment spread over many sentences.  There
# the Transformer costs more than the LSTM per batch on a CPU (attention over
# 200 positions; see the table's "ms per batch"), and what matters is the
# test accuracy after the tutorial's ten epochs: compare yours with its 0.822.
#
# *Where the 20 minutes come from* (the estimate at the top): on the course's
# development machine (2 cores, AMD EPYC, one BLAS thread, load 13-15 from
# other work), a training step on a batch of 128 reviews of 200 words with the
# vocabulary of 50,004 took 475 ms of CPU time for the Transformer (its
# reference tier, as this lesson runs it; median 709 ms under that load) and
# 101 ms for the LSTM (median 112), on the aclImdb-shaped stand-in of the
# tests (the real reviews could not be downloaded there).  Ten epochs of 176
# batches are 1,760 steps: 14 minutes (21 at the median) and 3 minutes; the
# validation passes and the 25,000 test reviews (50,000 reviews read per
# model, 70 and 43 ms per 128) add under a minute, and reading and tokenizing
# the 50,000 reviews a few seconds.  A quiet laptop should be near the lower
# figures; the accuracy was not measured here.

# %%
transformer, lstm = results[0], results[1]
gap = transformer["val accuracy"] - lstm["val accuracy"]
verdict = "a tie" if abs(gap) < 0.005 else "the Transformer wins" if gap > 0 else "the LSTM wins"
print(f"validation accuracy {transformer['val accuracy']:.3f} Transformer vs {lstm['val accuracy']:.3f} LSTM: "
      f"{verdict}; the Transformer's training took {transformer['train seconds'] / lstm['train seconds']:.1f}x "
      f"the LSTM's time")
if options.data == "imdb":
    print(f"IMDB test accuracy {transformer['test accuracy']:.3f} (Transformer) against the Technion tutorial's "
          f"{PUBLISHED_IMDB_ACCURACY}")
if options.data == "imdb" and run.quick:
    print("(quick mode on IMDB reads 1,000 reviews once: too little to learn from, so the accuracy checks "
          "run in full mode only)")
elif options.data == "imdb" and len(texts) < 25000:
    print(f"({len(texts)} training reviews, not IMDB's 25,000: the accuracy checks need the real reviews)")
elif options.data == "imdb":                              # expectations, not measured here (see the top)
    test_majority = results[2]["test accuracy"]
    run.check(transformer["test accuracy"] > test_majority + 0.15,
              f"on IMDB the Transformer ({transformer['test accuracy']:.3f}) beats the majority class by over 0.15")
    run.check(lstm["test accuracy"] > test_majority,
              f"on IMDB the LSTM ({lstm['test accuracy']:.3f}) beats the majority class")
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
