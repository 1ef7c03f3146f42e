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
# # Lesson 1: Text preprocessing
#
# **What you will learn**
#
# 1. Tokenizing text at three granularities: characters, words, and sub-words
#    learned by byte-pair encoding (BPE), and what each costs in vocabulary size,
#    sequence length and unknown tokens.
# 2. Building a vocabulary with special tokens (`<pad>`, `<unk>`, `<bos>`,
#    `<eos>`), and how its size trades against the rate of `<unk>`.
# 3. Numericalizing (tokens to ids and back).
# 4. Padding a batch to one length, and the mask that says which positions are real.
# 5. Bucketing: batching sequences of similar length to waste less compute on padding.
# 6. Language-model batches: a token stream cut into (B, T) inputs with targets
#    shifted by one, continuing from batch to batch.
#
# **Notation.**  A batch of N sequences padded to length T is an integer array
# of ids of shape (N, T) ("batch-first"); PyTorch's recurrent layers default to
# time-first (T, N), which minigrad offers too (`batch_first=False`).  The
# vocabulary has V entries; the mask `m` of shape (N, T) is True on real
# tokens.  (Careful: attention masks in lesson 9 use the opposite convention,
# True = "may not attend", as PyTorch does.)
#
# **Read the code.**  The tokenizers (characters, words, BPE):
# `minigrad/text/tokenizers.py`; `Vocab`: `minigrad/text/vocab.py`; padding,
# buckets and language-model batches: `minigrad/text/batching.py`; the corpus:
# `minigrad/data/corpus.py`.

# %%
import numpy as np

import minigrad
import minigrad.data
from minigrad import lesson
from minigrad.text import (
    BOS_IDX, EOS_IDX, PAD_IDX, UNK_IDX, BPETokenizer, BucketIterator, CharTokenizer, LMBatches, Vocab,
    WordTokenizer, pad_batch,
)

run = lesson.setup("01_text_preprocessing")
plt = run.pyplot()

# %% [markdown]
# ## 0. The text
#
# This lesson needs no data file at all: it gathers prose that every Python
# installation has, the documentation strings of the standard library
# (`minigrad.data.stdlib_corpus`; the corpora minigrad ships, such as Tiny
# Shakespeare and the English-French pairs, come in lessons 6-8).  We keep 90% of the
# paragraphs for "training" (building vocabularies) and hold out 10% to see how
# each choice copes with text it has not seen.

# %%
paragraphs = minigrad.data.stdlib_corpus().split("\n\n")
split = int(0.9 * len(paragraphs))
train_text, heldout_text = paragraphs[:split], paragraphs[split:]
if run.quick:
    train_text, heldout_text = train_text[:400], heldout_text[:60]
print(f"{len(train_text)} training paragraphs, {sum(map(len, train_text))} characters; "
      f"{len(heldout_text)} held out")
print("first paragraph:", train_text[0][:200])

# %% [markdown]
# ## 1. Three ways to cut text into tokens
#
# * **characters**: a tiny vocabulary and (almost) nothing unknown, but
#   sequences are long and every word must be spelled out (a held-out
#   character can still be new: an accented letter, a symbol);
# * **words** (lowercased, punctuation split off): short sequences, but a large
#   vocabulary with a long tail of rare words, and unseen words are `<unk>`;
# * **BPE sub-words** (Sennrich et al., 2016): start from characters and
#   repeatedly merge the most frequent adjacent pair.  Frequent words become
#   one token, rare words split into known pieces: a vocabulary size we choose,
#   and (almost) nothing unknown.

# %%
num_merges = run.size(150, 600)
bpe = BPETokenizer.train(train_text, num_merges=num_merges)
print("first BPE merges:", bpe.merges[:10])
tokenizers = {"character": CharTokenizer(), "word": WordTokenizer(), f"BPE ({num_merges} merges)": bpe}
sentence = "Return the unpickled representation of the serialized object."
for name, tokenizer in tokenizers.items():
    print(f"{name:>18}: {tokenizer.tokenize(sentence)}")

# %% [markdown]
# For each granularity: how many different tokens the training text has, how
# long the text becomes, and which share of held-out tokens never occurred in
# training (those would become `<unk>`).

# %%
rows = []
streams = {}
progress = run.progress(len(tokenizers), every=1, unit="tokenizer")
for step, (name, tokenizer) in enumerate(tokenizers.items()):
    train_tokens = [t for text in train_text for t in tokenizer.tokenize(text)]
    heldout_tokens = [t for text in heldout_text for t in tokenizer.tokenize(text)]
    seen = set(train_tokens)
    unseen = sum(t not in seen for t in heldout_tokens) / len(heldout_tokens)
    streams[name] = train_tokens
    rows.append({"tokens": name, "types (V)": len(seen), "train tokens": len(train_tokens),
                 "tokens per char": len(train_tokens) / sum(map(len, train_text)),
                 "held-out unseen": unseen})
    progress.log(step, types=len(seen))
run.table(rows, "Granularity: vocabulary size, length, and unseen tokens")
char_row, word_row, bpe_row = rows
run.check(max(char_row["held-out unseen"], bpe_row["held-out unseen"]) < word_row["held-out unseen"] / 5,
          "held-out tokens unseen in training: characters and BPE (almost) none, words many")
run.check(char_row["types (V)"] < bpe_row["types (V)"] < word_row["types (V)"],
          "vocabulary size: characters < BPE < words")

# %% [markdown]
# ## 2. The vocabulary
#
# A `Vocab` maps tokens to integer ids.  Four special tokens always sit at the
# same ids: `<pad>` = 0 (filler in batches), `<unk>` = 1 (any unknown token),
# `<bos>` = 2 and `<eos>` = 3 (beginning and end of a sequence).  Ordinary
# tokens follow, most frequent first.
#
# Word frequencies follow **Zipf's law**: the r-th most frequent word occurs
# about C / r times.  So a few hundred words cover most running text, and each
# further word we add to the vocabulary covers less.  `max_size` and
# `min_freq` cut the tail; whatever is cut becomes `<unk>`.

# %%
word = WordTokenizer()
train_words = [word.tokenize(text) for text in train_text]
heldout_words = [t for text in heldout_text for t in word.tokenize(text)]
full_vocab = Vocab.build(train_words)
print(full_vocab)
print("specials:", full_vocab.itos[:4], "at ids", [PAD_IDX, UNK_IDX, BOS_IDX, EOS_IDX])

rows = []
for max_size in (100, 300, 1000, 3000, None):
    vocab = Vocab.build(train_words, max_size=max_size)
    unk_rate = np.mean([vocab[t] == UNK_IDX for t in heldout_words])
    rows.append({"max_size": max_size or "all", "V (with specials)": len(vocab), "held-out <unk> rate": unk_rate})
run.table(rows, "Vocabulary size against the <unk> rate on held-out text")
rates = [r["held-out <unk> rate"] for r in rows]
run.check(all(a >= b for a, b in zip(rates, rates[1:])), "a larger vocabulary never has more <unk>")

if plt:
    counts = np.array(sorted(full_vocab.counts.values(), reverse=True))
    ranks = np.arange(1, len(counts) + 1)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.loglog(ranks, counts, label="word counts")
    ax.loglog(ranks, counts[0] / ranks, "--", label="C / rank (Zipf)")
    ax.set_xlabel("rank")
    ax.set_ylabel("count in training text")
    ax.legend()
    ax.set_title("Zipf's law in the standard library's docstrings")
    run.savefig(fig, "zipf.png")

# %% [markdown]
# ## 3. Numericalizing
#
# `encode` turns tokens into ids (unknown ones into `<unk>`), optionally framed
# by `<bos>` and `<eos>`; `decode` turns ids back, stopping at `<eos>`.

# %%
vocab = Vocab.build(train_words, min_freq=2)
tokens = word.tokenize("Return a new dictionary, flibbertigibbet!")
ids = vocab.encode(tokens, add_bos=True, add_eos=True)
print(tokens, "->", ids, "->", vocab.decode(ids))
known = [t for t in train_words[0] if t in vocab]
run.check(vocab.decode(vocab.encode(known, add_eos=True)) == known,
          "decode(encode(tokens)) gives back every in-vocabulary token")
run.check("flibbertigibbet" not in vocab and vocab["flibbertigibbet"] == UNK_IDX, "an unknown word maps to <unk>")

# %% [markdown]
# ## 4. Padding and masks
#
# Sequences in a batch differ in length, but an array needs one length T.  We
# pad short sequences with `<pad>` and keep a mask of the real positions, so
# that later computations can ignore the padding.  For example, the average
# of a sequence's vectors must divide by its own length, not by T:
#
#     mean_i = sum_t m[i, t] x[i, t] / sum_t m[i, t]

# %%
sentences = [vocab.encode(words) for words in train_words[:4]]
sentences = [s[:n] for s, n in zip(sentences, (7, 3, 5, 2))]
batch = pad_batch(sentences)
print("ids (N, T):\n", batch.ids.numpy())
print("lengths:", batch.lengths.tolist())
print("mask (N, T):\n", batch.mask.numpy().astype(int))

features = minigrad.randn(*batch.ids.shape, 3)                      # one vector per position: (N, T, 3)
mask = batch.mask.float().unsqueeze(-1)                              # (N, T, 1)
masked_mean = (features * mask).sum(1) / mask.sum(1)                 # (N, 3)
expected = np.stack([features.numpy()[i, :n].mean(0) for i, n in enumerate(batch.lengths.tolist())])
run.check(np.allclose(masked_mean.numpy(), expected, atol=1e-6),
          "a masked mean over the padded batch equals the mean over each sequence's own tokens")

# %% [markdown]
# ## 5. Bucketing
#
# With random batches, one long sentence forces a whole batch to be padded to
# its length.  A **bucket iterator** shuffles, then sorts pools of examples by
# length and cuts them into batches, so each batch holds similar lengths (the
# batches are shuffled again, so training still sees them in random order).
# `pool=1` sorts only within a batch, which is the same as random batching.

# %%
sequences = [vocab.encode(w) for w in train_words if w]
lengths = np.array([len(s) for s in sequences])
rows = []
for name, pool in (("random batches", 1), ("buckets (pool of 50 batches)", 50)):
    iterator = BucketIterator(sequences, batch_size=16, pool=pool, seed=0)
    real = padded = 0
    for b in iterator:
        real += int(b.mask.numpy().sum())
        padded += b.mask.numel()
    rows.append({"batching": name, "batches": len(iterator), "positions computed": padded,
                 "padding share": 1 - real / padded})
run.table(rows, "Padding wasted by random batches and by buckets (batch size 16)")
run.check(rows[1]["padding share"] < rows[0]["padding share"] / 2, "bucketing at least halves the padding")

if plt:
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    ax.hist(lengths, bins=40)
    ax.set_xlabel("paragraph length (words)")
    ax.set_ylabel("paragraphs")
    ax.set_title("Lengths vary a lot, so padding costs")
    run.savefig(fig, "lengths.png")

# %% [markdown]
# ## 6. Batches for a language model
#
# A language model reads one long stream and predicts each next token.
# `LMBatches` cuts the stream into B rows; batch i holds columns
# [iT, (i+1)T) of every row as inputs x, and the same columns shifted by one
# as targets y, so `y[:, t] = x[:, t+1]`.  Row b of batch i+1 continues row b
# of batch i: a recurrent model can carry its state over (lesson 3,
# truncated BPTT).

# %%
stream = [i for s in sequences for i in s + [EOS_IDX]]
batches = list(LMBatches(stream, batch_size=4, seq_len=8))
(x0, y0), (x1, _) = batches[0], batches[1]
print("x:", vocab.decode(x0[0], stop_at_eos=False))
print("y:", vocab.decode(y0[0], stop_at_eos=False))
run.check(bool((y0.numpy()[:, :-1] == x0.numpy()[:, 1:]).all()) and bool((y0.numpy()[:, -1] == x1.numpy()[:, 0]).all()),
          "targets are the inputs shifted by one, and the next batch continues each row")

# %% [markdown]
# ## Exercises
#
# 1. Train BPE with 50, 500 and 2000 merges.  Plot held-out sequence length and
#    vocabulary size against the number of merges.  Where would you stop?
# 2. Build a vocabulary with `min_freq=3` instead of `max_size`.  Which is the
#    better knob when the corpus grows?
# 3. Batch-first (N, T) or time-first (T, N)?  Rebuild section 4's batch with
#    `batch_first=False` and explain which one makes `x[t]` the t-th step of
#    every sequence.
# 4. The masked mean of section 4 is the pooling of the bag-of-words baseline
#    in lesson 6.  Write the masked *max* (hint: `masked_fill` with -inf).
#
# The coursework (`minigrad assignment list`) starts from the autograd
# primitives; this lesson's tools are what every later assignment feeds its
# models with.

# %%
run.done()
