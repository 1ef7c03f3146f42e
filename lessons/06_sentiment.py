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
# # Lesson 6: Classification, many-to-one: sentiment and names by language
#
# **What you will learn**
#
# 1. Many-to-one: a recurrent network reads a whole sentence (or a name, one
#    character at a time) and one vector, its final state, decides the label.
# 2. The pipeline for variable-length text: a `Vocab`, padding to the longest
#    sentence of a batch, and passing `lengths` so padding never touches the
#    state (the final state is each sentence's state at its own last word).
# 3. Embeddings, learned with the task or loaded from a GloVe-style file
#    (`--glove PATH`), and what "out of vocabulary" means then.
# 4. RNN, GRU and LSTM; bidirectional and deep variants.
# 5. Why word order matters: a bag-of-words model (the mean of the word
#    vectors) cannot represent "not good" and fails on negation.  This part
#    uses generated reviews, built so that negation decides the label: a
#    recurrent model gets them all right, a property of the generator, not
#    of sentiment.
# 6. Real data: 18,018 surnames in 18 languages (PyTorch's name-classification
#    tutorial), read character by character.  Accuracy against the
#    majority-class baseline when one class is half the data, a confusion
#    matrix, and the model's guesses for names you type (`--names`).
#
# **Notation.**  A sentence of T_n tokens, padded to T in a batch of N:
# ids (N, T), lengths (N,), embeddings x (N, T, D).  The recurrent layer gives
# h_n of shape (layers · directions, N, H); the classifier is
#
#     logits = h_last W_outᵀ + b_out      (N, 2),    h_last = h_n[-1]  (or [h_fwd, h_bwd])
#
# and the loss the cross-entropy of the softmax.  PyTorch code does the same by
# packing the batch (`nn.utils.rnn.pack_padded_sequence`, which minigrad has too);
# minigrad's layers also take `lengths=` directly, which is what this lesson uses.
#
# **Options** (besides `--quick` and `--device`): `--glove PATH` adds a GRU
# whose embeddings start from the vectors in PATH (e.g. `glove.6B.50d.txt`);
# `--names "Hinton,Nakamura"` classifies your names; `--imdb` also trains on
# the IMDB reviews (after `minigrad.data.download("imdb")`; or `--imdb FOLDER`
# for an `aclImdb/` folder of your own).
#
# **Read the code.**  `Vocab` and padding: `minigrad/text/vocab.py`,
# `minigrad/text/batching.py`; the recurrent layers with `lengths`,
# bidirectional and deep: `minigrad/nn/rnn.py` (their maths:
# `minigrad/functions/rnn_steps.py`, `minigrad/functions/rnn.py`); embeddings:
# `minigrad/nn/embedding.py`; the names: `minigrad/data/shipped.py`; the
# GloVe loader: `minigrad/data/loaders.py`; the IMDB download:
# `minigrad/data/downloads.py`.

# %%
import argparse
import time

import numpy as np

import minigrad
import minigrad.data
from minigrad import functional as F
from minigrad import lesson, metrics, nn, optim
from minigrad.text import PAD_IDX, BucketIterator, Vocab, pad_batch, word_tokenize

parser = argparse.ArgumentParser(add_help=False)
parser.add_argument("--glove", default=None, help="a GloVe-style text file of word vectors")
parser.add_argument("--imdb", nargs="?", const="download", default=None,
                    help="train on IMDB too: the downloaded copy, or an aclImdb folder (train/pos, ...)")
parser.add_argument("--names", default=None, help="comma-separated surnames to classify by language")
options, lesson_argv = lesson.own_options(parser)   # this lesson's options; the rest are setup's
run = lesson.setup("06_sentiment", argv=lesson_argv)
plt = run.pyplot()

# %% [markdown]
# ## 1. The data: short reviews whose label depends on order and negation
#
# `minigrad.data.sentiment` generates reviews such as "the plot was not
# boring" (positive) and "the acting was great but the ending was bad"
# (negative: after "but" decides).  We tokenize, build the vocabulary from the
# training set only, and turn each review into a list of ids.

# %%
train_pairs = minigrad.data.sentiment(run.size(1000, 4000), seed=0)
test_pairs = minigrad.data.sentiment(1000, seed=1)
vocab = Vocab.build([word_tokenize(text) for text, _ in train_pairs])
train_ids = [vocab.encode(word_tokenize(text)) for text, _ in train_pairs]
train_labels = [label for _, label in train_pairs]
test_tokens = [word_tokenize(text) for text, _ in test_pairs]
print(f"{len(train_pairs)} training and {len(test_pairs)} test reviews; {vocab}")
for text, label in train_pairs[:4]:
    print(f"  {label}  {text}")

example = pad_batch(train_ids[:3])
print("a padded batch of 3: ids\n", example.ids.numpy(), "\nlengths", example.lengths.tolist(),
      "\nmask\n", example.mask.numpy().astype(int))

# Test subsets: the examples that need order or negation to get right.
negated = [i for i, tokens in enumerate(test_tokens) if "but" not in tokens and {"not", "never"} & set(tokens)]
contrast = [i for i, tokens in enumerate(test_tokens) if "but" in tokens]
print(f"test subsets: {len(negated)} single-clause negations, {len(contrast)} with 'but'")

# %% [markdown]
# ## 2. The models
#
# **Bag of words**: average the embeddings of the real (unpadded) tokens and
# apply a linear layer.  The logit is then a weighted count of the words: it
# can learn "good" is positive and "not" slightly negative, but never that
# "not" *flips* "good" and "bad" (an XOR no linear function of counts can express).
#
# **Recurrent**: embeddings, then an RNN, GRU or LSTM reading the sentence
# with `lengths`, then a linear layer on the last state.  A bidirectional
# layer also reads right to left; we concatenate both final states.

# %%
class BagOfWords(nn.Module):
    """ids (N, T), lengths (N,) -> logits (N, 2) from the mean of the word vectors."""

    def __init__(self, embedding, num_classes=2):
        super().__init__()
        self.embedding = embedding
        self.head = nn.Linear(embedding.embedding_dim, num_classes)

    def forward(self, ids, lengths):
        mask = (ids != PAD_IDX).unsqueeze(-1)                     # (N, T, 1): real tokens
        total = (self.embedding(ids) * mask).sum(1)                     # (N, D)
        return self.head(total / lengths.unsqueeze(-1))                 # mean over real tokens only


class RecurrentClassifier(nn.Module):
    """ids (N, T), lengths (N,) -> logits (N, 2) from the last state of an RNN, GRU or LSTM."""

    def __init__(self, embedding, cell, hidden_size, num_layers=1, bidirectional=False, num_classes=2):
        super().__init__()
        self.embedding = embedding
        self.rnn = cell(embedding.embedding_dim, hidden_size, num_layers=num_layers, batch_first=True,
                        bidirectional=bidirectional)
        self.bidirectional = bidirectional
        self.head = nn.Linear(hidden_size * (2 if bidirectional else 1), num_classes)

    def forward(self, ids, lengths):
        _, state = self.rnn(self.embedding(ids), lengths=lengths)
        h_n = state[0] if isinstance(state, tuple) else state           # an LSTM returns (h_n, c_n)
        if self.bidirectional:                                          # last layer: forward, backward
            return self.head(minigrad.cat([h_n[-2], h_n[-1]], dim=1))
        return self.head(h_n[-1])                                       # (N, H) -> (N, 2)


D, H = 32, 32


def embedding():
    return nn.Embedding(len(vocab), D, padding_idx=PAD_IDX)


models = {"bag of words (mean embedding)": lambda: BagOfWords(embedding()),
          "RNN": lambda: RecurrentClassifier(embedding(), nn.RNN, H),
          "GRU": lambda: RecurrentClassifier(embedding(), nn.GRU, H),
          "LSTM": lambda: RecurrentClassifier(embedding(), nn.LSTM, H),
          "GRU, bidirectional": lambda: RecurrentClassifier(embedding(), nn.GRU, H, bidirectional=True),
          "GRU, 2 layers": lambda: RecurrentClassifier(embedding(), nn.GRU, H, num_layers=2)}
if run.quick:                                            # CI: the baseline and the headline model
    models = {name: models[name] for name in ("bag of words (mean embedding)", "GRU")}

# %% [markdown]
# ## 3. Pretrained embeddings (optional)
#
# With `--glove glove.6B.50d.txt` (or any "word v1 v2 ..." text file),
# `minigrad.data.load_embeddings` builds an embedding table whose row i is
# the file's vector for `vocab.itos[i]`.  Words the file lacks (out of
# vocabulary, OOV) start random; `<pad>` is zero.  We fine-tune the vectors
# (`freeze=False`) together with a GRU.

# %%
if options.glove:
    pretrained, report = minigrad.data.load_embeddings(options.glove, vocab, freeze=False, device=run.device)
    print(f"GloVe file {options.glove}: {report['found']} of {len(vocab)} vocabulary words found, "
          f"{report['oov']} OOV: {report['oov_tokens'][:10]}")
    models["GRU, GloVe embeddings"] = lambda: RecurrentClassifier(
        minigrad.data.load_embeddings(options.glove, vocab, freeze=False, device=run.device)[0], nn.GRU, H)
else:
    print("no --glove file given: embeddings are learned from scratch "
          "(try --glove glove.6B.50d.txt from https://nlp.stanford.edu/projects/glove/)")

# %% [markdown]
# ## 4. Training
#
# `BucketIterator` batches reviews of similar length, so a batch is mostly
# words, not padding.  Each model gets the same batches, seed and updates.

# %%
epochs = run.size(2, 6)
test_batch = pad_batch([vocab.encode(t) for t in test_tokens], device=run.device)
test_y = minigrad.tensor([label for _, label in test_pairs], device=run.device)


def evaluate(model):
    """Predicted classes (1000,) for the test set, in one padded batch."""
    with minigrad.no_grad():
        return model(test_batch.ids, test_batch.lengths).numpy().argmax(1)


def fit(model, batches, epochs, lr, report=lambda model: {}):
    """Adam on cross-entropy, gradients clipped to norm 5, ``epochs`` passes over ``batches``;
    ``report(model)`` adds numbers to each epoch's progress line.  Returns the seconds it took."""
    optimizer = optim.Adam(model.parameters(), lr=lr)
    progress = run.progress(epochs, every=max(1, epochs // 4), unit="epoch")
    started = time.perf_counter()
    for epoch in range(epochs):
        for batch, labels in batches:
            loss = F.cross_entropy(model(batch.ids, batch.lengths), labels)
            optimizer.zero_grad()
            loss.backward()
            optim.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        progress.log(epoch, loss=loss.item(), **report(model))
    return time.perf_counter() - started


def train(make_model):
    minigrad.manual_seed(0)
    model = make_model().to(run.device)
    batches = BucketIterator(train_ids, batch_size=32, labels=train_labels, seed=0, device=run.device)
    seconds = fit(model, batches, epochs, lr=0.01,
                  report=lambda model: {"test_accuracy": metrics.accuracy(evaluate(model), test_y.numpy())})
    return model, seconds


truth = test_y.numpy()
rows = []
for name, make_model in models.items():
    print(f"--- {name}")
    model, seconds = train(make_model)
    predicted = evaluate(model)
    rows.append({"model": name, "parameters": model.num_parameters(),
                 "test accuracy": metrics.accuracy(predicted, truth),
                 "negations": metrics.accuracy(predicted[negated], truth[negated]),
                 "'but' contrasts": metrics.accuracy(predicted[contrast], truth[contrast]),
                 "seconds": seconds})
run.table(rows, f"Sentiment accuracy on 1000 test reviews ({epochs} epochs)")

accuracy = {r["model"]: r for r in rows}
bow = accuracy["bag of words (mean embedding)"]
best_recurrent = max((r for r in rows if r is not bow), key=lambda r: r["negations"])
run.check(best_recurrent["negations"] > bow["negations"] + 0.25,
          f"a recurrent model ({best_recurrent['model']}) beats bag-of-words on negations by over 25 points")
run.check(bow["negations"] < 0.75, "bag-of-words fails on negation (under 75% correct)")
if not run.quick:
    run.check(accuracy["GRU"]["test accuracy"] > 0.95, "the GRU classifies over 95% of the test reviews")

if plt:
    fig, ax = plt.subplots(figsize=(7, 4))
    subsets = ("test accuracy", "negations", "'but' contrasts")
    width = 0.8 / len(rows)
    for i, row in enumerate(rows):
        ax.bar(np.arange(3) + i * width, [row[s] for s in subsets], width, label=row["model"])
    ax.set_xticks(np.arange(3) + 0.4 - width / 2, ["all", "negations", "'but' contrasts"])
    ax.axhline(0.5, color="k", linestyle="--", linewidth=1)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.35)
    ax.set_title("Word order matters: bag of words vs recurrent models")
    ax.legend(fontsize=7, loc="upper center", ncol=3)
    run.savefig(fig, "accuracy.png")

# %% [markdown]
# ## 5. Real data: surnames by language
#
# The generated reviews above are built so that negation decides the label,
# which is why every recurrent model gets 100%: a property of the generator.
# Real data is messier.  `minigrad.data.names_by_language()` ships 18,018
# surnames in 18 languages (the data of PyTorch's "classifying names with a
# character-level RNN" tutorial), split 80/10/10 within each language, the
# same on every run.  The input is now characters, the output one of 18
# languages: still many-to-one, with the same `RecurrentClassifier`.
#
# Half the names are Russian, so always answering "Russian" is right half
# the time.  That majority-class baseline is the bar to beat; the mean of the
# per-language accuracies (balanced accuracy) shows whether the small
# languages are learned too (the baseline's is 1/18 = 0.056).

# %%
LANGUAGES = minigrad.data.LANGUAGES
names = {split: minigrad.data.names_by_language(split) for split in ("train", "test")}
name_pairs = {split: [(name, LANGUAGES.index(language)) for language in LANGUAGES for name in names[split][language]]
              for split in names}
if run.quick:                                            # a slice: every 5th training name
    name_pairs["train"] = name_pairs["train"][::5]
char_vocab = Vocab(sorted({c for name, _ in name_pairs["train"] for c in name}))
print(f"{len(name_pairs['train'])} training and {len(name_pairs['test'])} test names; "
      f"{len(char_vocab)} characters (with the 4 specials)")
counts = {language: sum(label == i for _, label in name_pairs["train"]) for i, language in enumerate(LANGUAGES)}
print("training names per language:", ", ".join(f"{language} {n}" for language, n in counts.items()))
name_ids = [char_vocab.encode(list(name)) for name, _ in name_pairs["train"]]
name_labels = [label for _, label in name_pairs["train"]]
name_test = pad_batch([char_vocab.encode(list(name)) for name, _ in name_pairs["test"]], device=run.device)
name_truth = np.array([label for _, label in name_pairs["test"]])
majority_language = max(counts, key=counts.get)
majority_accuracy = float(np.mean(name_truth == LANGUAGES.index(majority_language)))
print(f"majority class: {majority_language}, {majority_accuracy:.3f} of the test names")

# %%
name_epochs, name_hidden = run.size(3, 12), run.size(32, 128)


def train_names():
    minigrad.manual_seed(run.seed)
    model = RecurrentClassifier(nn.Embedding(len(char_vocab), 32, padding_idx=PAD_IDX), nn.GRU, name_hidden,
                                num_classes=len(LANGUAGES)).to(run.device)
    batches = BucketIterator(name_ids, batch_size=64, labels=name_labels, seed=run.seed, device=run.device)
    return model, fit(model, batches, name_epochs, lr=0.005)


name_model, name_seconds = train_names()
with minigrad.no_grad():
    name_predicted = name_model(name_test.ids, name_test.lengths).numpy().argmax(1)
confusion = metrics.confusion_matrix(name_predicted, name_truth, len(LANGUAGES)).numpy()
per_language = confusion.diagonal() / confusion.sum(1)
name_accuracy = float(np.mean(name_predicted == name_truth))
run.table([{"model": f"majority class ({majority_language})", "test accuracy": majority_accuracy,
            "mean per-language accuracy": 1 / len(LANGUAGES), "seconds": 0.0},
           {"model": f"character GRU (H = {name_hidden})", "test accuracy": name_accuracy,
            "mean per-language accuracy": float(per_language.mean()), "seconds": name_seconds}],
          f"Surnames by language: {len(name_truth)} test names, 18 languages, {name_epochs} epochs")
run.table([{"language": language, "test names": int(confusion[i].sum()), "accuracy": float(per_language[i]),
            "most often mistaken for": LANGUAGES[int(np.argmax(np.where(np.arange(len(LANGUAGES)) == i, -1,
                                                                         confusion[i])))]}
           for i, language in enumerate(LANGUAGES)], "Accuracy per language")
name_margin = run.size(0.1, 0.2)
run.check(name_accuracy > majority_accuracy + name_margin,
          f"the GRU ({name_accuracy:.3f}) beats the majority class ({majority_accuracy:.3f}) by over {name_margin}")
if not run.quick:
    run.check(per_language.mean() > 0.35, f"mean per-language accuracy {per_language.mean():.3f} > 0.35: "
              "the small languages are learned too, not only Russian")

if plt:
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    image = ax.imshow(confusion / confusion.sum(1, keepdims=True), cmap="Blues", vmin=0, vmax=1)
    fig.colorbar(image, ax=ax, label="fraction of the row's test names", shrink=0.8)
    ax.set_xticks(range(len(LANGUAGES)), LANGUAGES, rotation=90)
    ax.set_yticks(range(len(LANGUAGES)), LANGUAGES)
    ax.set_xlabel("predicted language")
    ax.set_ylabel("true language")
    ax.set_title(f"Confusion matrix, character GRU (test accuracy {name_accuracy:.2f})")
    run.savefig(fig, "names_confusion.png")

# %% [markdown]
# Read the matrix row by row: a row is one true language, its darkest cell
# where its names go.  The confusions are the ones a person would make:
# Scottish, Irish and English share spelling; Spanish, Portuguese and
# Italian share endings ("-ez", "-es", "-o"); Chinese, Korean and Vietnamese
# share short syllables; and every language leaks into the two big ones,
# English and Russian.  Small languages suffer most: with 57 training
# Vietnamese names against 7,474 Russian ones, the loss barely notices them.
#
# Now type your own names: `--names "Hinton,Nakamura,Schmidhuber"` (in a
# notebook, edit `my_names` below).  The model gives a probability per
# language; names ending in "-ov" or "-ski" are easy, "Lee" is not.

# %%
my_names = options.names.split(",") if options.names else ["Hinton", "Nakamura", "Schmidhuber", "Bengio",
                                                            "Dostoevsky", "Lee", "Kowalski", "Papadopoulos"]
my_batch = pad_batch([char_vocab.encode(list(name.strip())) for name in my_names], device=run.device)
with minigrad.no_grad():
    probabilities = F.softmax(name_model(my_batch.ids, my_batch.lengths), dim=1).numpy()
guesses = []
for name, p in zip(my_names, probabilities):
    top = np.argsort(p)[::-1][:3]
    guesses.append({"name": name.strip(), "guess": LANGUAGES[top[0]],
                    "top 3": ", ".join(f"{LANGUAGES[i]} {p[i]:.2f}" for i in top)})
run.table(guesses, "The model's guesses for a few names")

# %% [markdown]
# ## 6. Real reviews: IMDB
#
# The Large Movie Review Dataset (Maas et al., 2011; 25,000 training and
# 25,000 test reviews) is too big to ship.  One call downloads it (84 MB,
# once, checked against its published SHA-256) into your cache folder:
#
#     python -c "import minigrad.data; minigrad.data.download('imdb')"
#     python lessons/06_sentiment.py --imdb
#
# (`--imdb FOLDER` reads an `aclImdb/` folder you unpacked yourself.)
# Reviews are long, so we keep the first 200 words, the 20,000 most frequent
# words, and a subset of the reviews: a CPU trains a GRU on them in minutes.

# %%
if options.imdb:
    root = None if options.imdb == "download" else options.imdb
    texts, labels = minigrad.data.imdb("train", root=root, shuffle=True, seed=0)
    test_texts, test_labels = minigrad.data.imdb("test", root=root, shuffle=True, seed=0)
    classes = ["neg", "pos"]
    n_train, n_test = min(run.size(500, 5000), len(texts)), min(run.size(500, 5000), len(test_texts))
    tokens = [word_tokenize(t.replace("<br />", " "))[:200] for t in texts[:n_train]]
    imdb_vocab = Vocab.build(tokens, max_size=20000, min_freq=2)
    imdb_ids = [imdb_vocab.encode(t) for t in tokens]
    print(f"IMDB: classes {classes}; {n_train} training reviews, {n_test} test; {imdb_vocab}")
    test_batch = pad_batch([imdb_vocab.encode(word_tokenize(t.replace("<br />", " "))[:200])
                            for t in test_texts[:n_test]], device=run.device)
    test_y = minigrad.tensor(test_labels[:n_test], device=run.device)
    train_ids, train_labels = imdb_ids, labels[:n_train]
    epochs = run.size(1, 3)
    imdb_rows = []
    for name, make_model in (("bag of words (mean embedding)", lambda: BagOfWords(
            nn.Embedding(len(imdb_vocab), 64, padding_idx=PAD_IDX))),
            ("GRU", lambda: RecurrentClassifier(nn.Embedding(len(imdb_vocab), 64, padding_idx=PAD_IDX), nn.GRU, 64))):
        print(f"--- IMDB, {name}")
        model, seconds = train(make_model)
        imdb_rows.append({"model": name, "test accuracy": metrics.accuracy(evaluate(model), test_y.numpy()),
                          "seconds": seconds})
    run.table(imdb_rows, f"IMDB ({n_train} training reviews, first 200 words, {epochs} epochs)")
else:
    print("no --imdb given: skipping the IMDB reviews (see the instructions above)")

# %% [markdown]
# ## Exercises
#
# The coursework (see `minigrad assignment list`) has you write the GRU and
# LSTM step backward these classifiers train through.
#
# 1. Train the GRU without `lengths=` (padding is read as words).  Which
#    test subset suffers, and why do the shortest reviews suffer most?
# 2. Replace the mean in `BagOfWords` by a max over time.  Does it fix negation?
# 3. Add bigram features ("not good" as one token) to the bag of words.  How
#    close does it come to the GRU?  What does that cost in vocabulary size?
# 4. Use the GRU's mean output over real steps instead of its last state.
#    Does bidirectionality matter more then?

# %%
run.done()
