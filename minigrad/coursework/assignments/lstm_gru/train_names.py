"""Train it: your GRU step tells the language of a surname from its letters.

    python train_names.py                      # 8 epochs: seconds on a laptop CPU
    python train_names.py --epochs 2           # already far above the baseline
    python train_names.py --names "Hinton,Nakamura,Kowalski"

Run it in the folder of your ``lstm_gru.py`` once ``gru_step_forward`` and
``gru_step_backward`` pass their checks: the recurrence is *your* code, on
plain NumPy arrays.  The model (many-to-one, as in lesson 6):

    x_t = E[c_t]                                    (N, D)   a learned row per character
    h_t = your gru_step_forward(x_t, h_{t-1})       (N, H)
    p(language) = softmax(h_T W_out^T + b_out)      (N, 18)  from the last state only

The loss reaches the GRU only at the last step, so backpropagation through
time walks the steps backwards carrying dh from step t to step t-1.  Names of
the same length are batched together, so no padding is needed.  The data:
18,018 surnames in 18 languages that ship with minigrad
(``minigrad.data.names_by_language``); half are Russian, so the baseline to
beat is always answering "Russian" (about 0.52 of the test names).
"""
import argparse
import math
import os
import sys

import numpy as np

import minigrad.data

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lstm_gru  # noqa: E402  (your lstm_gru.py, next to this file)


def length_batches(examples, size, rng):
    """Batches of (ids (N, T), labels (N,)) whose names all have the same length T, in a shuffled order."""
    by_length = {}
    for ids, label in examples:
        by_length.setdefault(len(ids), []).append((ids, label))
    batches = []
    for group in by_length.values():
        order = rng.permutation(len(group))
        for start in range(0, len(group), size):
            chosen = [group[i] for i in order[start:start + size]]
            batches.append((np.array([ids for ids, _ in chosen]), np.array([label for _, label in chosen])))
    return [batches[i] for i in rng.permutation(len(batches))]


def forward(params, ids):
    """Logits (N, L) from the last GRU state, and what the backward needs."""
    N, T = ids.shape
    h, caches = np.zeros((N, params["w_hh"].shape[1])), []
    for t in range(T):
        h, cache = lstm_gru.gru_step_forward(params["emb"][ids[:, t]], h, params["w_ih"], params["w_hh"],
                                             params["b_ih"], params["b_hh"])
        caches.append(cache)
    return h @ params["w_out"].T + params["b_out"], (h, caches)


def loss_and_grads(params, ids, labels):
    logits, (h, caches) = forward(params, ids)
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    N = len(labels)
    loss = -np.log(p[np.arange(N), labels]).mean()
    dlogits = p
    dlogits[np.arange(N), labels] -= 1                                  # d loss / d logits = p - one_hot
    dlogits /= N
    grads = {"w_out": dlogits.T @ h, "b_out": dlogits.sum(0), "emb": np.zeros_like(params["emb"]),
             "w_ih": 0, "w_hh": 0, "b_ih": 0, "b_hh": 0}
    dh = dlogits @ params["w_out"]                                      # only the last state meets the loss
    for t in reversed(range(ids.shape[1])):                             # BPTT: carry dh back one step at a time
        dx, dh, dw_ih, dw_hh, db_ih, db_hh = lstm_gru.gru_step_backward(dh, caches[t])
        grads["w_ih"], grads["w_hh"] = grads["w_ih"] + dw_ih, grads["w_hh"] + dw_hh
        grads["b_ih"], grads["b_hh"] = grads["b_ih"] + db_ih, grads["b_hh"] + db_hh
        np.add.at(grads["emb"], ids[:, t], dx)                          # a character used twice gets both
    return loss, grads


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--names", default="Hinton,Nakamura,Schmidhuber,Dostoevsky,Kowalski,Papadopoulos")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    languages = minigrad.data.LANGUAGES
    train, test = minigrad.data.names_by_language("train"), minigrad.data.names_by_language("test")
    characters = sorted({c for names in train.values() for name in names for c in name})
    index = {c: i + 1 for i, c in enumerate(characters)}                 # 0: a character never seen in training

    def encode(split):
        return [([index.get(c, 0) for c in name], languages.index(language))
                for language, names in split.items() for name in names]

    train_set, test_set = encode(train), encode(test)
    test_labels = np.array([label for _, label in test_set])
    majority = np.mean(test_labels == languages.index("Russian"))
    print(f"{len(train_set):,} training and {len(test_set):,} test names, 18 languages; always 'Russian' "
          f"is right for {majority:.3f} of the test names")

    rng = np.random.default_rng(args.seed)
    H, D, L = args.hidden, 32, len(languages)
    params = {"emb": rng.normal(0, 0.3, (len(characters) + 1, D)), "w_ih": rng.normal(0, 1 / math.sqrt(D), (3 * H, D)),
              "w_hh": rng.normal(0, 1 / math.sqrt(H), (3 * H, H)), "b_ih": np.zeros(3 * H), "b_hh": np.zeros(3 * H),
              "w_out": rng.normal(0, 1 / math.sqrt(H), (L, H)), "b_out": np.zeros(L)}
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    step = 0
    for epoch in range(args.epochs):
        total = 0.0
        batches = length_batches(train_set, 64, rng)
        for ids, labels in batches:
            loss, grads = loss_and_grads(params, ids, labels)
            total += loss
            step += 1
            for k, g in grads.items():                                    # Adam
                m, v = moments[k]
                m[:] = 0.9 * m + 0.1 * g
                v[:] = 0.999 * v + 0.001 * g ** 2
                params[k] -= args.lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
        print(f"epoch {epoch + 1}/{args.epochs}  mean training loss {total / len(batches):.3f}", flush=True)

    correct = 0
    for ids, labels in length_batches(test_set, 512, rng):
        correct += (forward(params, ids)[0].argmax(1) == labels).sum()
    accuracy = correct / len(test_set)
    print(f"\ntest accuracy {accuracy:.3f} (always 'Russian': {majority:.3f})")
    for name in args.names.split(","):
        name = name.strip()
        logits = forward(params, np.array([[index.get(c, 0) for c in name]]))[0][0]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        top = np.argsort(p)[::-1][:3]
        print(f"  {name:<14} " + ", ".join(f"{languages[i]} {p[i]:.2f}" for i in top))
    return accuracy, majority


if __name__ == "__main__":
    main()
