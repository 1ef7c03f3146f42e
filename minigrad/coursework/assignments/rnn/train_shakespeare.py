"""Train it: your RNN learns to write Shakespeare, one character at a time.

    python train_shakespeare.py                        # 2,000 updates: under a minute on a laptop CPU
    python train_shakespeare.py --steps 300 --hidden 64    # a few seconds

Run it in the folder of your ``rnn.py``, once ``rnn_forward`` and ``rnn_backward``
pass their checks: the recurrence here is *your* code, on plain NumPy arrays.
The model (Karpathy's min-char-rnn, batched):

    x_t = one_hot(c_t)                                   (N, V)
    h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)     your rnn_forward
    p(c_{t+1}) = softmax(h_t W_out^T + b_out)            (N, V)

trained by truncated BPTT (chunks of T characters, the state carried over but
not its gradient) with Adam on Tiny Shakespeare, which ships with minigrad
(``minigrad.data.shakespeare``).  It prints held-out bits per character beside
the unigram baseline (character frequencies, no context), then a sample.
"""
import argparse
import math
import os
import sys

import numpy as np

import minigrad.data

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnn  # noqa: E402  (your rnn.py, next to this file)


def batches(ids, N, T):
    """Chunks (x (T, N), y (T, N)) from N parallel rows of the text, in order, so a state can carry over."""
    rows = len(ids) // N
    stream = np.array(ids[:rows * N]).reshape(N, rows).T              # (rows, N)
    for start in range(0, rows - T - 1, T):
        yield stream[start:start + T], stream[start + 1:start + T + 1]


def forward_loss(params, x, y, h0, V):
    """Mean cross-entropy (nats) of a chunk, the last state, and the gradients of every parameter."""
    T, N = x.shape
    inputs = np.eye(V)[x]                                              # (T, N, V) one-hot
    h, cache = rnn.rnn_forward(inputs, h0, params["w_ih"], params["w_hh"], params["b_ih"], params["b_hh"])
    logits = h @ params["w_out"].T + params["b_out"]                   # (T, N, V)
    logits -= logits.max(axis=2, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=2, keepdims=True)
    loss = -np.log(p[np.arange(T)[:, None], np.arange(N)[None, :], y]).mean()
    dlogits = p                                                        # d loss / d logits = p - one_hot(y), / (T N)
    dlogits[np.arange(T)[:, None], np.arange(N)[None, :], y] -= 1
    dlogits /= T * N
    grads = {"w_out": dlogits.reshape(T * N, V).T @ h.reshape(T * N, -1), "b_out": dlogits.sum(axis=(0, 1))}
    dh = dlogits @ params["w_out"]                                     # (T, N, H)
    _, _, grads["w_ih"], grads["w_hh"], grads["b_ih"], grads["b_hh"] = rnn.rnn_backward(dh, cache)
    return loss, h[-1], grads


def bits_per_character(params, ids, V, H):
    """Held-out bits per character, reading ``ids`` in 8 rows with the state carried."""
    total, count, h = 0.0, 0, np.zeros((8, H))
    for x, y in batches(ids, 8, 100):
        loss, h, _ = forward_loss(params, x, y, h, V)
        total, count = total + loss * y.size, count + y.size
    return total / count / math.log(2)


def sample(params, vocab, start, length, temperature, rng):
    """``length`` characters drawn one at a time from your rnn_step_forward, after reading ``start``."""
    index = {c: i for i, c in enumerate(vocab)}
    h, out = np.zeros((1, params["w_hh"].shape[0])), []
    text = list(start)
    for t in range(len(start) + length):
        x = np.eye(len(vocab))[[index[text[t]]]]                      # (1, V)
        h, _ = rnn.rnn_step_forward(x, h, params["w_ih"], params["w_hh"], params["b_ih"], params["b_hh"])
        if t >= len(start) - 1:
            logits = (h @ params["w_out"].T + params["b_out"])[0] / temperature
            p = np.exp(logits - logits.max())
            text.append(vocab[rng.choice(len(vocab), p=p / p.sum())])
            out.append(text[-1])
    return start + "".join(out[:length])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    train_text, held_out = minigrad.data.shakespeare("train"), minigrad.data.shakespeare("validation")[:20000]
    vocab = sorted(set(train_text))
    index = {c: i for i, c in enumerate(vocab)}
    train_ids, held_ids = [index[c] for c in train_text], [index[c] for c in held_out if c in index]
    V, H = len(vocab), args.hidden
    counts = np.bincount(train_ids, minlength=V) + 1
    unigram = -np.log2(counts[held_ids] / counts.sum()).mean()
    print(f"Tiny Shakespeare: {len(train_ids):,} training characters, V = {V}; unigram baseline {unigram:.2f} "
          f"bits per character, uniform {math.log2(V):.2f}")

    rng = np.random.default_rng(args.seed)
    params = {"w_ih": rng.normal(0, 0.1, (H, V)), "w_hh": np.linalg.qr(rng.normal(size=(H, H)))[0] * 0.9,
              "b_ih": np.zeros(H), "b_hh": np.zeros(H),
              "w_out": rng.normal(0, 1 / math.sqrt(H), (V, H)), "b_out": np.log(counts / counts.sum())}
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    step, h = 0, None
    while step < args.steps:
        h = np.zeros((args.batch, H))                                  # each pass starts from zeros
        for x, y in batches(train_ids, args.batch, args.seq_len):
            loss, h, grads = forward_loss(params, x, y, h, V)
            norm = math.sqrt(sum((g ** 2).sum() for g in grads.values()))
            for k, g in grads.items():                                 # Adam, gradients clipped at norm 1
                g = g * min(1.0, 1.0 / (norm + 1e-12))
                m, v = moments[k]
                m[:] = 0.9 * m + 0.1 * g
                v[:] = 0.999 * v + 0.001 * g ** 2
                params[k] -= args.lr * (m / (1 - 0.9 ** (step + 1))) / (np.sqrt(v / (1 - 0.999 ** (step + 1))) + 1e-8)
            step += 1
            if step % max(1, args.steps // 10) == 0 or step == args.steps:
                print(f"step {step:>5}/{args.steps}  training loss {loss / math.log(2):.3f} bits/char", flush=True)
            if step == args.steps:
                break
    held = bits_per_character(params, held_ids, V, H)
    print(f"\nheld-out: {held:.3f} bits per character (unigram {unigram:.2f}, uniform {math.log2(V):.2f})")
    print("\nyour RNN writes, at temperature 0.6:\n")
    print(sample(params, vocab, "ROMEO:\n", 400, 0.6, rng))
    return held, unigram


if __name__ == "__main__":
    main()
