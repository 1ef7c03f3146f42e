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
# # Lesson 12: Pretraining in miniature
#
# **What you will learn**
#
# 1. The two pretraining objectives behind GPT and BERT, on the same text:
#    - *causal* language modelling: predict token t+1 from tokens ≤ t
#      (a causal mask in self-attention), then generate by sampling;
#    - *masked* language modelling: hide 15% of the tokens and predict them
#      from both sides.
# 2. BERT's masking recipe, measured: of the chosen 15%, 80% become `<mask>`,
#    10% a random token, 10% stay unchanged (so the model cannot learn
#    "only `<mask>` positions matter").
# 3. Generation with a KV cache: each new token costs one position, not the
#    whole prefix, and gives the same tokens.
# 4. Fine-tuning: start a classifier from the pretrained encoder, and compare
#    with the same classifier trained from scratch on the same budget.
#
# **Data.**  The default corpus (`minigrad.data.stdlib_corpus()`, about 240 KB
# of English prose from the standard library's docstrings), lower-cased, at
# the *character* level: a small vocabulary keeps the output layer cheap.
#
# **Notation.**  ids x_1..x_T, vocabulary V, model p_θ.
#
#     causal LM   L = -(1/T) Σ_t log p_θ(x_{t+1} | x_1..x_t)       perplexity = exp(L)
#     masked LM   L = -(1/|M|) Σ_{t∈M} log p_θ(x_t | x̃)              x̃: x with the positions M corrupted
#
# A model that knows nothing predicts uniformly: perplexity V.  Both models
# are pre-LN Transformer stacks (`norm_first=True`, as GPT-2); only the mask
# differs: causal for the LM, none for the masked LM (Devlin et al., 2019,
# call it a "bidirectional" encoder).
#
# **Read the code.**  The GPT-style model and its KV cache:
# `minigrad/models/transformer.py` (`CausalLM`); the encoder blocks:
# `minigrad/nn/transformer.py`; decoding: `minigrad/decoding.py`; the corpus:
# `minigrad/data/corpus.py`.

# %%
import time

import numpy as np

import minigrad
import minigrad.data
import minigrad.models
from minigrad import decoding, lesson, metrics, nn, optim
from minigrad import functional as F
from minigrad.text import Vocab, char_tokenize, pad_batch

run = lesson.setup("12_pretraining")
plt = run.pyplot()

# %% [markdown]
# ## 1. The corpus as characters
#
# We add one token to the vocabulary, `<mask>`.  90% of the text trains, the
# last 10% measures.

# %%
text = minigrad.data.stdlib_corpus().lower()[:run.size(60000, 240000)]
vocab = Vocab(sorted(set(char_tokenize(text))) + ["<mask>"])
MASK = vocab["<mask>"]
V = len(vocab)
ids = np.array(vocab.encode(char_tokenize(text)))
split = int(0.9 * len(ids))
train_ids, val_ids = ids[:split], ids[split:]
print(f"{len(ids)} characters; vocabulary V = {V} (with <pad> <unk> <bos> <eos> <mask>)")

d_model, layers, T = run.size(32, 64), 2, run.size(32, 48)
batch_size = run.size(16, 32)
rng = np.random.default_rng(run.seed)


def windows(source, n, length):
    """n random windows of ``length`` ids from ``source`` -> (n, length) int array (host)."""
    starts = rng.integers(0, len(source) - length, n)
    return np.stack([source[s:s + length] for s in starts])


val_windows = np.random.default_rng(1).integers(0, len(val_ids) - T - 1, 128)
val_batch = np.stack([val_ids[s:s + T + 1] for s in val_windows])     # fixed validation windows (128, T+1)


def train_loop(model, loss_of_batch, steps, lr):
    """Adam with a short linear warm-up; returns the loss curve."""
    optimizer = optim.Adam(model.parameters(), lr=lr)
    warmup = max(1, steps // 10)
    progress = run.progress(steps)
    curve = []
    for step in range(steps):
        optimizer.lr = lr * min(1.0, (step + 1) / warmup)
        loss = loss_of_batch()
        optimizer.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        curve.append(loss.item())
        progress.log(step, loss=curve[-1])
    return curve


# %% [markdown]
# ## 2. GPT-style: a causal language model
#
# `minigrad.models.CausalLM`: token embedding + learned positions, pre-LN
# blocks with a causal mask, a final LayerNorm, a linear layer to V logits.
# Inputs are x_1..x_T, targets x_2..x_{T+1}: every position is a training
# example at once (teacher forcing).

# %%
minigrad.manual_seed(run.seed)
gpt = minigrad.models.CausalLM(V, d_model=d_model, nhead=4, num_layers=layers, dim_feedforward=4 * d_model,
                               dropout=0.0, max_len=256, activation="relu").to(run.device)
nn.reference_tier(gpt)                                           # the reference attention, the one to read


def causal_lm_loss():
    batch = minigrad.tensor(windows(train_ids, batch_size, T + 1), device=run.device)
    logits = gpt(batch[:, :-1])                                           # (N, T, V)
    return F.cross_entropy(logits.reshape(-1, V), batch[:, 1:].reshape(-1))


gpt_steps = run.size(40, 500)
started = time.perf_counter()
gpt_curve = train_loop(gpt, causal_lm_loss, gpt_steps, lr=run.size(1e-2, 3e-3))
gpt_seconds = time.perf_counter() - started

gpt.eval()
with minigrad.no_grad():
    val = minigrad.tensor(val_batch, device=run.device)
    val_nll = F.cross_entropy(gpt(val[:, :-1]).reshape(-1, V), val[:, 1:].reshape(-1)).item()
gpt_perplexity = float(np.exp(val_nll))
unigram = np.bincount(train_ids, minlength=V) + 1.0
unigram_perplexity = float(np.exp(-(np.log(unigram / unigram.sum())[val_ids]).mean()))
print(f"held-out perplexity {gpt_perplexity:.2f}; unigram model {unigram_perplexity:.2f}; uniform {V}")

# %% [markdown]
# ### Generation, with and without the KV cache
#
# `CausalLM` follows the decoder protocol of `minigrad.decoding`: `step(tokens,
# state)` feeds one new position and keeps each layer's keys and values in
# the state (the *KV cache*), so a token costs O(t·d) instead of re-running
# the whole prefix.  We feed a prompt, then decode greedily twice: with the
# cache, and naively (the full forward on the growing prefix every step).
# They must agree.  At these sizes (d_model 64, a prefix of at most ~130
# characters) both take about the same time: each step is a few dozen small
# array operations whose fixed cost dominates.  The cache's O(t) against the
# naive O(t²) shows for long prefixes and wide models (exercise 2).

# %%
prompt = "the default "
prompt_ids = vocab.encode(char_tokenize(prompt))
new_tokens = run.size(30, 120)


def feed_prompt():
    state = gpt.initial_state(1)
    with minigrad.no_grad():
        for token in prompt_ids[:-1]:
            _, state = gpt.step(minigrad.tensor([token], device=run.device), state)
    return state


started = time.perf_counter()
cached, _ = decoding.greedy(gpt, feed_prompt(), start=[prompt_ids[-1]], max_len=new_tokens)
cached_ms = 1000 * (time.perf_counter() - started)

started = time.perf_counter()
naive = list(prompt_ids)
with minigrad.no_grad():
    for _ in range(new_tokens):
        logits = gpt(minigrad.tensor([naive], device=run.device))         # the whole prefix, every step
        naive.append(int(logits[0, -1].argmax().item()))
naive_ms = 1000 * (time.perf_counter() - started)
naive = naive[len(prompt_ids):]

print(f"greedy : {prompt + ''.join(vocab.decode(cached[0]))!r}")
samples = []
for temperature in (0.5, 1.0):
    minigrad.manual_seed(run.seed)
    sampled, _ = decoding.sample(gpt, feed_prompt(), start=[prompt_ids[-1]], max_len=new_tokens,
                                 temperature=temperature)
    samples.append(prompt + "".join(vocab.decode(sampled[0])))
    print(f"T = {temperature}: {samples[-1]!r}")
run.table([{"decoding": "greedy with KV cache", "ms": cached_ms},
           {"decoding": "greedy, full forward each step", "ms": naive_ms}],
          f"Generating {new_tokens} characters")
run.check(cached[0] == naive, "greedy decoding with the KV cache gives the same characters as the full forward")
run.check(gpt_perplexity < V / 3, f"the causal LM's held-out perplexity ({gpt_perplexity:.1f}) is well below "
                                  f"uniform ({V})")

# %% [markdown]
# ## 3. BERT-style: a masked language model
#
# The encoder below has no causal mask: every position sees the whole
# window.  The corruption, for each window:
#
# 1. choose each position with probability 0.15 (the set M);
# 2. of the chosen, 80% → `<mask>`, 10% → a random ordinary character,
#    10% → left unchanged;
# 3. the targets are the original characters at M; every other position has
#    target -100, which `cross_entropy` ignores.

# %%
ORDINARY = np.arange(len(vocab.itos))[[not token.startswith("<") for token in vocab.itos]]   # real characters


def corrupt(batch):
    """(N, T) ids -> (inputs, targets, kind): kind 0 not chosen, 1 <mask>, 2 random, 3 unchanged."""
    chosen = rng.random(batch.shape) < 0.15
    roll = rng.random(batch.shape)
    kind = np.where(chosen, np.where(roll < 0.8, 1, np.where(roll < 0.9, 2, 3)), 0)
    inputs = batch.copy()
    inputs[kind == 1] = MASK
    inputs[kind == 2] = rng.choice(ORDINARY, size=int((kind == 2).sum()))
    targets = np.where(chosen, batch, -100)
    return inputs, targets, kind


class Encoder(nn.Module):
    """ids (N, T) -> contextual vectors (N, T, d): embedding + positions + pre-LN blocks, no causal mask."""

    def __init__(self, vocab_size, d_model, num_layers, max_len=256):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=vocab.pad_idx)
        self.positions = nn.LearnedPositionalEmbedding(max_len, d_model, batch_first=True)
        block = nn.TransformerEncoderLayer(d_model, 4, 4 * d_model, dropout=0.0, activation="relu",
                                           batch_first=True, norm_first=True, reference=True)
        self.blocks = nn.TransformerEncoder(block, num_layers, nn.LayerNorm(d_model))

    def forward(self, ids, padding=None):                    # padding (N, T) True at <pad>
        return self.blocks(self.positions(self.embedding(ids)), src_key_padding_mask=padding)


class MaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(V, d_model, layers)
        self.head = nn.Linear(d_model, V)

    def forward(self, ids):
        return self.head(self.encoder(ids))                  # (N, T, V)


minigrad.manual_seed(run.seed)
bert = MaskedLM().to(run.device)
kinds = []


def masked_lm_loss():
    inputs, targets, kind = corrupt(windows(train_ids, batch_size, T))
    kinds.append(kind)
    logits = bert(minigrad.tensor(inputs, device=run.device))
    return F.cross_entropy(logits.reshape(-1, V), minigrad.tensor(targets.reshape(-1), device=run.device))


bert_steps = run.size(40, 700)
started = time.perf_counter()
bert_curve = train_loop(bert, masked_lm_loss, bert_steps, lr=run.size(1e-2, 3e-3))
bert_seconds = time.perf_counter() - started

kinds = np.concatenate(kinds)
n_chosen = (kinds > 0).sum()
proportions = {"chosen / all": n_chosen / kinds.size, "<mask> / chosen": (kinds == 1).sum() / n_chosen,
               "random / chosen": (kinds == 2).sum() / n_chosen, "unchanged / chosen": (kinds == 3).sum() / n_chosen}
run.table([{"quantity": k, "measured": float(v), "recipe": r}
           for (k, v), r in zip(proportions.items(), (0.15, 0.8, 0.1, 0.1))],
          f"Masking over {kinds.size} training positions")

# Masked-token accuracy on held-out windows, against always guessing the most frequent character.
bert.eval()
with minigrad.no_grad():
    inputs, targets, _ = corrupt(val_batch[:, :T])
    predicted = bert(minigrad.tensor(inputs, device=run.device)).argmax(-1).numpy()
chosen = targets != -100
masked_accuracy = float((predicted[chosen] == targets[chosen]).mean())
most_frequent = int(np.argmax(np.bincount(train_ids)))
unigram_accuracy = float((targets[chosen] == most_frequent).mean())
example = val_batch[0, :T]
example_in, _, _ = corrupt(example[None])
with minigrad.no_grad():
    example_out = bert(minigrad.tensor(example_in, device=run.device)).argmax(-1).numpy()[0]
show = [vocab.itos[i] if i != MASK else "_" for i in example_in[0]]
filled = [vocab.itos[p] if i == MASK else vocab.itos[i] for i, p in zip(example_in[0], example_out)]
print("original :", repr("".join(vocab.itos[i] for i in example)))
print("corrupted:", repr("".join(show)), " (_ = <mask>)")
print("filled in:", repr("".join(filled)))

run.table([{"model": "causal LM (GPT-style)", "steps": gpt_steps, "seconds": gpt_seconds,
            "held-out perplexity": gpt_perplexity, "masked-token accuracy": "",
            "final train loss": float(np.mean(gpt_curve[-10:]))},
           {"model": "masked LM (BERT-style)", "steps": bert_steps, "seconds": bert_seconds,
            "held-out perplexity": "", "masked-token accuracy": masked_accuracy,
            "final train loss": float(np.mean(bert_curve[-10:]))},
           {"model": "unigram (most frequent character)", "steps": 0, "seconds": 0.0,
            "held-out perplexity": unigram_perplexity, "masked-token accuracy": unigram_accuracy,
            "final train loss": ""},
           {"model": "uniform", "steps": 0, "seconds": 0.0, "held-out perplexity": float(V),
            "masked-token accuracy": 1 / V, "final train loss": float(np.log(V))}],
          f"Pretraining, d_model {d_model}, {layers} layers, windows of {T} characters, batches of {batch_size}")

run.check(abs(proportions["chosen / all"] - 0.15) < 0.01, "about 15% of positions are chosen")
run.check(abs(proportions["<mask> / chosen"] - 0.8) < 0.03 and abs(proportions["random / chosen"] - 0.1) < 0.03
          and abs(proportions["unchanged / chosen"] - 0.1) < 0.03, "of those, about 80% <mask>, 10% random, 10% kept")
run.check(np.mean(bert_curve[-10:]) < 0.8 * np.log(V), "the masked LM's loss falls well below uniform (log V)")
if not run.quick:   # a masked LM first learns the character frequencies, then the context: it needs the steps
    run.check(masked_accuracy > unigram_accuracy + 0.05,
              f"masked-token accuracy ({masked_accuracy:.3f}) beats the unigram guess ({unigram_accuracy:.3f})")

if plt:
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(gpt_curve, label="causal LM")
    ax.plot(bert_curve, label="masked LM (on the 15%)")
    ax.axhline(np.log(V), color="k", linestyle="--", label="uniform, log V")
    ax.set_xlabel("update")
    ax.set_ylabel("training cross-entropy (nats)")
    ax.set_title("Pretraining on the default corpus, characters")
    ax.legend()
    run.savefig(fig, "pretraining_loss.png")

# %% [markdown]
# ## 4. Fine-tuning the pretrained encoder
#
# The task: the toy sentiment sentences of lesson 6 (`minigrad.data.sentiment`),
# read character by character with the same vocabulary.  The classifier is
# the masked LM's `Encoder`, mean-pooled over the real characters, and a new
# linear layer.  Two runs with the same budget: the encoder starting from
# the pretrained weights (`load_state_dict`), and from a fresh initialisation.

# %%
train_sentences = minigrad.data.sentiment(run.size(200, 1000), seed=0)
val_sentences = minigrad.data.sentiment(run.size(200, 500), seed=1)


def encode(sentences):
    batch = pad_batch([vocab.encode(char_tokenize(s)) for s, _ in sentences], device=run.device)
    return batch, np.array([label for _, label in sentences])


val_chars, val_labels = encode(val_sentences)
majority = float(max(val_labels.mean(), 1 - val_labels.mean()))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(V, d_model, layers)
        self.classifier = nn.Linear(d_model, 2)

    def forward(self, batch):
        padding = ~batch.mask                                            # (N, T) True at <pad>
        h = self.encoder(batch.ids, padding)                             # (N, T, d)
        keep = batch.mask.unsqueeze(-1).type(h.dtype)                    # (N, T, 1)
        return self.classifier((h * keep).sum(dim=1) / keep.sum(dim=1))  # mean over the real characters


finetune_steps = run.size(15, 250)
rows, curves = [], {}
for start in ("pretrained", "from scratch"):
    minigrad.manual_seed(run.seed)
    model = Classifier().to(run.device)
    if start == "pretrained":
        model.encoder.load_state_dict(bert.encoder.state_dict())
        loaded = np.array_equal(model.encoder.embedding.weight.numpy(), bert.encoder.embedding.weight.numpy())
    order = np.random.default_rng(0)

    def classification_loss():
        picked = [train_sentences[i] for i in order.integers(0, len(train_sentences), batch_size)]
        batch, labels = encode(picked)
        return F.cross_entropy(model(batch), minigrad.tensor(labels, device=run.device))

    print(f"--- {start}")
    started = time.perf_counter()
    curves[start] = train_loop(model, classification_loss, finetune_steps, lr=1e-3)
    seconds = time.perf_counter() - started
    model.eval()
    with minigrad.no_grad():
        accuracy = metrics.accuracy(model(val_chars).argmax(-1).numpy(), val_labels)
    rows.append({"encoder": start, "steps": finetune_steps, "validation accuracy": float(accuracy),
                 "final train loss": float(np.mean(curves[start][-10:])), "seconds": seconds})
rows.append({"encoder": "majority class", "steps": 0, "validation accuracy": majority,
             "final train loss": "", "seconds": 0.0})
run.table(rows, f"Sentiment by characters: {len(train_sentences)} sentences, {finetune_steps} updates of "
                f"{batch_size}, same learning rate")
pretrained, scratch = rows[0], rows[1]
gain = pretrained["validation accuracy"] - scratch["validation accuracy"]
verdict = ("no clear difference at this budget" if abs(gain) < 0.02 else
           "the pretrained encoder helps here" if gain > 0 else "training from scratch does better here")
print(f"fine-tuned {pretrained['validation accuracy']:.3f} vs from scratch {scratch['validation accuracy']:.3f}: {verdict}")
run.check(loaded, "the fine-tuned classifier started from the pretrained encoder's weights")

# %% [markdown]
# ## What to take away
#
# Both objectives learn real structure from raw text: the causal LM's
# perplexity falls far below V, and the masked LM fills in hidden characters
# far better than guessing the commonest one.  Whether pretraining helps the
# downstream task depends on how much the two share and on the budget: read
# the last table honestly, and see exercise 3.

# %% [markdown]
# ## Exercises
#
# The coursework (see `minigrad assignment list`) has a **Transformer**
# assignment: write the pre-LN block's self-attention and feed-forward, which
# is exactly the block these models stack.
#
# 1. Change the recipe to 100% `<mask>` (no random, no unchanged).  Then
#    measure the masked LM's accuracy on corrupted windows where the chosen
#    positions are left *unchanged*.  What did the model fail to learn?
# 2. Time `decoding.greedy` with the cache and the naive loop for 50, 100,
#    200 new characters.  Fit the growth of each: linear or quadratic?
# 3. Shrink the fine-tuning set to 50 sentences, then grow it to 5000.  When
#    does the pretrained encoder beat the one trained from scratch?
# 4. Fine-tune the causal LM instead (classify from the last position).
#    Which pretrained model is the better starting point for this task?

# %%
run.done()
