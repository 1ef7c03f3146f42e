# %% [markdown]
# # Lesson 7: Character-level text generation
#
# **What you will learn**
#
# 1. A character-level language model: a GRU reads Shakespeare one character
#    at a time and predicts the next one (Karpathy's char-rnn experiment).
# 2. Teacher forcing: during training the input at step t is the *true*
#    character t, never the model's own guess, so one forward pass scores a
#    whole chunk of text.
# 3. Held-out bits per character (and perplexity) against two baselines: the
#    uniform model (log2 V bits) and the unigram model (each character's
#    training frequency, no context).
# 4. Generating text by sampling, and the knobs that shape it: temperature
#    (0.5, 1.0, 1.5, 2.0 side by side) and top-k.  In full mode the samples
#    look like a play: speaker names, line breaks, mostly real words.
#
# **Notation.**  Characters c_1 .. c_n with ids in a vocabulary of V; the
# model (`minigrad.models.RNNLanguageModel`) is
#
#     x_t = E[c_t]                        (N, D)   embedding
#     h_t = GRU(x_t, h_{t-1})             (N, H)
#     p(c_{t+1} | c_1..c_t) = softmax(h_t W_outᵀ + b_out)     (N, V)
#
# Training minimises the mean of -log p(c_{t+1} | c_1..c_t) over the text
# (cross-entropy, in nats); bits per character are that mean divided by
# ln 2, and perplexity is 2 to the bits (e to the nats).  Sampling with
# temperature τ draws from softmax(log p / τ): τ < 1 sharpens the
# distribution towards the most likely character, τ > 1 flattens it
# towards uniform.
#
# **Sizes and time.**  Full mode trains a GRU of 256 units for 800 updates of
# 64 rows of 64 characters (3.3 million characters, about 3 passes over the
# plays): about 75 s of CPU time on the course's 2-core development
# machine, so a minute or two on a laptop.  That is enough for play-shaped
# samples at 2.3-2.5 bits per character on the test text; bigger and
# deeper models trained for longer go lower.  Quick mode reads an eighth
# of the text with a smaller model for a few seconds: its samples are
# still gibberish.
#
# **Read the code.**  The language model: `minigrad/models/rnn.py`
# (`RNNLanguageModel`); the GRU step: `minigrad/functions/rnn_steps.py`;
# sampling with temperature and top-k: `minigrad/decoding.py`; the (B, T)
# batches: `minigrad/text/batching.py` (`LMBatches`); the corpus and its
# splits: `minigrad/data/shipped.py`.

# %%
import math
import re
import time
from collections import Counter

import minigrad
import minigrad.data
from minigrad import decoding
from minigrad import functional as F
from minigrad import lesson, optim
from minigrad.models import RNNLanguageModel
from minigrad.models.rnn import detach_state
from minigrad.text import LMBatches, Vocab

run = lesson.setup("07_char_generation")
plt = run.pyplot()

# %% [markdown]
# ## 1. The text, as characters
#
# Tiny Shakespeare (`minigrad.data.shakespeare`, 1.1 million characters, public
# domain): the first 90% of the plays to train on, the next 5% (validation)
# to watch during training, the last 5% (test) for the final score; the
# splits are cut between speeches and are the same on every run.  The
# vocabulary is every character of the training text plus the four
# specials.

# %%
train_text = minigrad.data.shakespeare("train")
validation_text = minigrad.data.shakespeare("validation")
test_text = minigrad.data.shakespeare("test")
if run.quick:                                            # a slice: an eighth of the plays
    train_text, validation_text, test_text = train_text[:125_000], validation_text[:8_000], test_text[:8_000]
vocab = Vocab(sorted(set(train_text)))
V = len(vocab)
train_ids = vocab.encode(train_text)
validation_ids, test_ids = vocab.encode(validation_text), vocab.encode(test_text)
print(f"{len(train_text):,} training, {len(validation_text):,} validation and {len(test_text):,} test characters; "
      f"V = {V}")
print(test_text[:160])

# %% [markdown]
# ## 2. Two baselines, then teacher forcing and truncated BPTT
#
# The uniform model gives every character probability 1/V: log2 V bits per
# character.  The unigram model uses each character's frequency in the
# training text (add-one smoothed), so spaces and "e" are cheap and "Z" is
# dear, but it ignores context.  A language model must beat both.
#
# `LMBatches` cuts the stream into N parallel rows and serves chunks of T
# characters: the input is chunk[t], the target chunk[t + 1].  The model sees
# the true text at every step (teacher forcing), whatever it would have
# predicted.  The hidden state is carried from one chunk to the next but
# detached, so gradients flow back at most T steps (lesson 3).  The learning
# rate decays along half a cosine to a tenth of its start.

# %%
counts = Counter(train_ids)
unigram_bits = -sum(math.log2((counts[i] + 1) / (len(train_ids) + V)) for i in test_ids) / len(test_ids)
uniform_bits = math.log2(V)
print(f"held-out bits per character: uniform {uniform_bits:.3f}, unigram {unigram_bits:.3f}")

minigrad.manual_seed(run.seed)
model = RNNLanguageModel(V, embedding_dim=32, hidden_size=run.size(64, 256), cell="gru").to(run.device)
optimizer = optim.Adam(model.parameters(), lr=run.size(1e-2, 6e-3))
N, T = run.size(32, 64), 64
steps = run.size(80, 800)
schedule = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps, eta_min=run.size(1e-3, 6e-4))
batches = LMBatches(train_ids, batch_size=N, seq_len=T, device=run.device)
print(f"{model.num_parameters()} parameters; {len(batches)} chunks of ({N}, {T}) per pass; {steps} updates")


def held_out_bits(model, ids):
    """Mean -log2 p(next character) over ``ids``, read in 8 rows of 256 with the state carried."""
    total, count, state = 0.0, 0, None
    with minigrad.no_grad():
        for x, y in LMBatches(ids, batch_size=8, seq_len=256, device=run.device):
            logits, state = model(x, state)
            total += F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    return total / count / math.log(2)


progress = run.progress(steps)
curve, step, started = [], 0, time.perf_counter()
watched = validation_ids[:run.size(8_000, 20_000)]        # the curve watches part of the validation text
while step < steps:
    state = None                                          # a new pass starts from zeros
    for x, y in batches:
        logits, state = model(x, state)                   # (N, T, V): every step's prediction at once
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        state = detach_state(state)                       # keep the values, cut the gradient
        if step % run.size(40, 100) == run.size(39, 99) or step == steps - 1:
            curve.append((step + 1, loss.item() / math.log(2), held_out_bits(model, watched)))
            progress.log(step, train_bits=curve[-1][1], validation_bits=curve[-1][2])
        step += 1
        if step == steps:
            break
seconds = time.perf_counter() - started
test_bits = held_out_bits(model, test_ids)
run.table([{"model": f"uniform over V = {V}", "test bits/char": uniform_bits, "perplexity": 2 ** uniform_bits,
            "seconds": 0.0},
           {"model": "unigram (training frequencies)", "test bits/char": unigram_bits,
            "perplexity": 2 ** unigram_bits, "seconds": 0.0},
           {"model": f"GRU language model (H = {model.hidden_size})", "test bits/char": test_bits,
            "perplexity": 2 ** test_bits, "seconds": seconds}],
          f"Held-out Shakespeare ({len(test_text):,} test characters, V = {V})")
margin = run.size(1.0, 1.8)
run.check(test_bits < unigram_bits - margin, f"the GRU's {test_bits:.2f} bits per character beat the unigram's "
          f"{unigram_bits:.2f} by more than {margin}")

# %% [markdown]
# ## 3. Sampling at four temperatures
#
# We feed a prompt, then let `decoding.sample` draw one character at a time,
# each fed back as the next input (no teacher here: the model reads its own
# output).  Before the prompt the model reads one speech of the held-out
# text, to warm up its state: in training the state almost never starts
# from zeros (it is carried from chunk to chunk), and samples from a cold
# state begin with a line of garbage ("SRGLzER").  The same seed for every temperature, so only τ differs.  We
# measure each sample's character entropy (bits per character of its own
# character counts), how many distinct characters it uses, and how much it
# looks like a play: speaker lines ("ROMEO:" alone on a line) per sample,
# and the share of its words that occur somewhere in the training text.

# %%
primer = test_text[:test_text.index("\n\n", 100) + 2]      # one held-out speech, to warm up the state
prompt = "ROMEO:\n"
prompt_ids = minigrad.tensor([vocab.encode(primer + prompt)] * 4, device=run.device)     # 4 samples per setting
length = run.size(120, 300)


def generate(temperature, top_k=None):
    """Four continuations of the prompt, as strings."""
    minigrad.manual_seed(run.seed)
    with minigrad.no_grad():
        _, state = model(prompt_ids[:, :-1])              # read the prompt but its last character
    sequences, _ = decoding.sample(model, state, start=prompt_ids[:, -1], max_len=length,
                                   temperature=temperature, top_k=top_k)
    return ["".join(vocab.decode(s, stop_at_eos=False)) for s in sequences]


def entropy_bits(strings):
    counts = Counter("".join(strings))
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values())


known_words = set(re.findall(r"[a-z']+", train_text.lower()))


def play_shape(strings):
    """(speaker lines per sample, share of the words that occur in the training text)."""
    speakers = sum(len(re.findall(r"^[A-Z][A-Za-z ]+:$", s, flags=re.MULTILINE)) for s in strings)
    words = re.findall(r"[a-z']+", " ".join(strings).lower())
    return speakers / len(strings), sum(w in known_words for w in words) / max(1, len(words))


settings = [(0.5, None), (1.0, None), (1.5, None), (2.0, None), (1.0, 5)]
samples, rows = {}, []
for temperature, top_k in settings:
    name = f"T = {temperature}" + (f", top-{top_k}" if top_k else "")
    samples[name] = generate(temperature, top_k)
    speakers, real_words = play_shape(samples[name])
    rows.append({"sampling": name, "distinct characters": len(set("".join(samples[name]))),
                 "entropy (bits/char)": entropy_bits(samples[name]), "speaker lines": speakers,
                 "real words": real_words, "sample": samples[name][0][:40].replace("\n", " / ") + "..."})
held_out = [test_text[i * length:(i + 1) * length] for i in range(4)]          # 4 pieces as long as a sample
speakers, real_words = play_shape(held_out)
held_out_entropy = entropy_bits([test_text])
rows.append({"sampling": "held-out text", "distinct characters": len(set(test_text)),
             "entropy (bits/char)": held_out_entropy, "speaker lines": speakers, "real words": real_words,
             "sample": test_text[:40].replace("\n", " / ") + "..."})

print()
for name, texts in samples.items():
    print(f"--- {name}\n{prompt}{texts[0]}\n")
with open(run.path("samples.md"), "w") as file:
    for name, texts in samples.items():
        file.write(f"## {name}\n\n" + "\n\n".join(prompt + t for t in texts) + "\n\n")
print(f"all samples: {run.path('samples.md')}")
run.table(rows, f"Samples of {length} characters (4 per setting, seed {run.seed})")

entropies = [r["entropy (bits/char)"] for r in rows[:4]]
run.check(entropies == sorted(entropies), "sample entropy rises with temperature (0.5 < 1.0 < 1.5 < 2.0)")
run.check(rows[3]["distinct characters"] > rows[0]["distinct characters"],
          "temperature 2.0 uses more distinct characters than 0.5")
if not run.quick:
    cool = rows[0]
    run.check(cool["speaker lines"] >= 1 and cool["real words"] > 0.85,
              f"at T = 0.5 the samples look like a play: {cool['speaker lines']:.2f} speaker lines per sample, "
              f"{cool['real words']:.0%} of the words real")

if plt:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.plot([s for s, _, _ in curve], [b for _, b, _ in curve], label="training chunk")
    left.plot([s for s, _, _ in curve], [b for _, _, b in curve], label="validation text")
    left.axhline(uniform_bits, color="k", linestyle="--", label=f"uniform (V = {V})")
    left.axhline(unigram_bits, color="C2", linestyle=":", label="unigram")
    left.set_xlabel("update")
    left.set_ylabel("bits per character")
    left.set_title("Character-level GRU on Shakespeare")
    left.legend()
    temperatures = [t for t, k in settings if k is None]
    right.plot(temperatures, entropies, marker="o", label="samples")
    right.axhline(held_out_entropy, color="C1", linestyle=":", label="held-out text")
    right.axhline(math.log2(V), color="k", linestyle="--", label=f"uniform: log2 V = {math.log2(V):.2f}")
    right.set_xlabel("temperature τ")
    right.set_ylabel("character entropy (bits)")
    right.set_title("Temperature flattens the distribution")
    right.legend()
    run.savefig(fig, "char_lm.png")

# %% [markdown]
# In full mode, at τ = 0.5 the model keeps to its most likely words and phrases ("the
# king", "I will"): low entropy, few distinct characters, and the shape of
# a play (a name in capitals, a colon, a few lines of verse, a blank line).
# Around τ = 1 the samples have the training text's statistics (entropy
# near the held-out text's) but more invented words.  At τ = 2 rare
# characters get real probability and the words fall apart.  Top-k cuts
# the tail instead: only the k most likely characters can be drawn, so
# τ = 1 with top-5 avoids the garbage without the repetition of low τ.
# The model never learned what a play *is*: it learned which character
# tends to follow the last 64 or so, and the speaker names fall out of that.
#
# ## Exercises
#
# The coursework (see `minigrad assignment list`) has you write the GRU step
# and its backward (the **lstm_gru** set: the reference tier's step, whose
# numbers this model's default fast tier computes too), and the sampling with
# temperature and top-k that `decoding.sample` runs (the **decoding** set:
# `decoding.sampling_distribution` and the inverse-CDF draw; then beam search).
#
# 1. Replace the GRU by an LSTM (`cell="lstm"`) and by a vanilla RNN.  Compare
#    held-out bits per character after the same number of updates.  (The
#    **rnn** assignment's `train_shakespeare.py` trains the RNN you write
#    yourself on this corpus.)
# 2. Train with T = 16 instead of 64.  What happens to long-range structure
#    (matching quotes and parentheses) in the samples?
# 3. Nucleus sampling: `decoding.sample` already takes `top_p`.  Sample with
#    `top_p=0.9` and compare with top-5 (entropy, real words); then write the
#    top-p filter yourself on one row of log-probabilities and check it keeps
#    the same tokens as `decoding.sample`'s.
# 4. Free running: feed the model its own greedy predictions during training
#    instead of the true characters.  Why does it learn so much slower?

# %%
run.done()
