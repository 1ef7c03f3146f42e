"""RNN language model and GRU seq2seq: step-by-step decoding equals the full forward, beams score
what teacher forcing scores, the models learn, and a checkpoint with its Vocab decodes on its own."""
import math

import numpy as np
import pytest

import minigrad
from minigrad import functional as F, optim
from minigrad.data import reverse_task
from minigrad.decoding import beam_search, greedy, sequence_log_prob
from minigrad.models.rnn import RNNLanguageModel, Seq2Seq, detach_state
from minigrad.text import BOS_IDX, EOS_IDX, Vocab, pad_batch


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_lm_steps_equal_the_full_forward(device, cell):
    lm = RNNLanguageModel(10, 6, 7, num_layers=2, cell=cell, device=device, dtype=minigrad.float64)
    ids = minigrad.randint(4, 10, (3, 5), device=device)
    logits, _ = lm(ids)
    full = logits.log_softmax(-1).numpy()
    state = lm.initial_state(3)
    for t in range(5):
        log_probs, state = lm.step(ids[:, t], state)
        assert np.allclose(log_probs.numpy(), full[:, t], atol=1e-12)


@pytest.mark.parametrize("attention", [None, "dot", "bilinear", "mlp"])
def test_seq2seq_steps_equal_teacher_forcing(device, attention):
    model = Seq2Seq(9, 11, 6, 7, attention=attention, device=device, dtype=minigrad.float64)
    src = minigrad.tensor([[4, 5, 6, 0], [7, 8, 0, 0]], device=device)
    lengths = minigrad.tensor([3, 2], device=device)
    tgt = minigrad.tensor([[2, 4, 5], [2, 6, 7]], device=device)
    full = model(src, tgt, lengths).log_softmax(-1).numpy()
    state = model.initial_state(src, lengths)
    for t in range(3):
        log_probs, state = model.step(tgt[:, t], state)
        assert np.allclose(log_probs.numpy(), full[:, t], atol=1e-12)
    if attention is not None:    # padding gets no attention
        assert np.all(state["weights"].numpy()[1, 2:] == 0)
    free = model.forward_free_running(src, tgt, teacher_forcing=1.0, src_lengths=lengths)
    assert np.allclose(free.numpy(), full, atol=1e-12)


def test_beam_scores_are_teacher_forced_log_probs_for_seq2seq():
    model = Seq2Seq(9, 11, 6, 7, attention="mlp", dtype=minigrad.float64)
    src = minigrad.tensor([[4, 5, 6, 0], [7, 8, 0, 0]])
    results = beam_search(model, model.initial_state(src), [BOS_IDX] * 2, beam_size=4, max_len=6, eos=EOS_IDX,
                          n_best=3, length_penalty=0.7)
    for row, hyps in enumerate(results):
        state = model.initial_state(src[row:row + 1])
        state = model.reorder(state, [0] * len(hyps))
        forced = sequence_log_prob(model, state, [BOS_IDX] * len(hyps), [h.tokens for h in hyps])
        for h, f in zip(hyps, forced):
            assert math.isclose(h.log_prob, f, abs_tol=1e-9)
            assert math.isclose(h.score, f / len(h.tokens) ** 0.7, abs_tol=1e-9)


def test_lm_learns_a_repeating_text_with_truncated_bptt():
    from minigrad.text import LMBatches
    vocab = Vocab(list("abcd"))
    stream = vocab.encode(list("abcdabcdabcd" * 20))
    lm = RNNLanguageModel(len(vocab), 8, 16)
    opt = optim.Adam(lm.parameters(), lr=0.05)
    losses = []
    for epoch in range(4):
        state = None
        for x, y in LMBatches(stream, batch_size=4, seq_len=10):
            logits, state = lm(x, state)
            state = detach_state(state)
            loss = F.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses[-1] < 0.1 < math.log(len(vocab)) - 0.5 < losses[0]
    tokens, _ = greedy(lm, lm.initial_state(1), [vocab["a"]], max_len=7)
    assert "".join(vocab.decode(tokens[0])) == "bcdabcd"


def test_seq2seq_with_attention_learns_to_reverse():
    sources, targets = reverse_task(200, n_symbols=5, min_len=2, max_len=5, seed=0)
    V = 9
    model = Seq2Seq(V, V, 16, 32, attention="dot")
    opt = optim.Adam(model.parameters(), lr=0.02)
    for epoch in range(8):
        for i in range(0, 200, 25):
            src = pad_batch(sources[i:i + 25])
            tgt = pad_batch([[BOS_IDX] + t + [EOS_IDX] for t in targets[i:i + 25]])
            logits = model(src.ids, tgt.ids[:, :-1], src.lengths)
            loss = F.cross_entropy(logits.reshape(-1, V), tgt.ids[:, 1:].reshape(-1), ignore_index=0)
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    test_src, test_tgt = reverse_task(20, n_symbols=5, min_len=2, max_len=5, seed=1)
    batch = pad_batch(test_src)
    results = beam_search(model, model.initial_state(batch.ids, batch.lengths), [BOS_IDX] * 20, beam_size=3,
                          max_len=7, eos=EOS_IDX)
    correct = sum(r[0].tokens == t + [EOS_IDX] for r, t in zip(results, test_tgt))
    assert correct >= 14


def test_checkpoint_with_vocab_decodes_alone(tmp_path):
    vocab = Vocab(list("helo"))
    lm = RNNLanguageModel(len(vocab), 5, 6, cell="lstm")
    minigrad.save({"model": lm.state_dict(), "vocab": vocab.to_metadata(),
                   "config": {"embedding_dim": 5, "hidden_size": 6, "cell": "lstm"}}, tmp_path / "lm.npz")
    checkpoint = minigrad.load(tmp_path / "lm.npz")
    loaded_vocab = Vocab.from_metadata(checkpoint["vocab"])
    again = RNNLanguageModel(len(loaded_vocab), **checkpoint["config"])
    again.load_state_dict(checkpoint["model"])
    start = [loaded_vocab["h"]]
    expected, _ = greedy(lm, lm.initial_state(1), [vocab["h"]], max_len=6, eos=EOS_IDX)
    got, _ = greedy(again, again.initial_state(1), start, max_len=6, eos=EOS_IDX)
    assert got == expected
    assert loaded_vocab.decode(got[0]) == vocab.decode(expected[0])


def test_bad_options_raise():
    with pytest.raises(ValueError, match="cell"):
        RNNLanguageModel(5, cell="transformer")
    with pytest.raises(ValueError, match="attention"):
        Seq2Seq(5, 5, attention="cosine")
    with pytest.raises(ValueError, match="tie_weights"):
        RNNLanguageModel(5, 4, 6, tie_weights=True)


def test_teacher_forcing_loss_reads_tgt_shifted_right_and_skips_padding():
    minigrad.manual_seed(0)
    model = Seq2Seq(7, 9, embedding_dim=4, hidden_size=5)
    src = minigrad.tensor([[3, 4, 5], [3, 6, 0]])
    tgt = minigrad.tensor([[BOS_IDX, 4, 5, EOS_IDX], [BOS_IDX, 6, EOS_IDX, 0]])
    logits = model(src, tgt[:, :-1])
    targets = tgt[:, 1:].reshape(-1)
    keep = [i for i, t in enumerate(targets.tolist()) if t != 0]
    expected = F.cross_entropy(logits.reshape(-1, 9)[minigrad.tensor(keep)], targets[minigrad.tensor(keep)])
    assert abs(minigrad.models.teacher_forcing_loss(model, src, tgt).item() - expected.item()) < 1e-6
