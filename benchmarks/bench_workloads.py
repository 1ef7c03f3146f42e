"""Workloads suite: what the lessons actually run, each against the same model written in PyTorch.

Cases (float32; the same weights in both libraries, copied PyTorch -> minigrad,
the same inputs; each row checks before timing that both give the same
first-step loss, or the same decoded tokens):

    char LM training step     lesson 7 and the rnn assignment's train_shakespeare.py:
                              Embedding(69, 32) -> LSTM or GRU -> Linear(H, 69),
                              cross_entropy, backward, clip_grad_norm_(1.0), Adam step;
                              batch 32, hidden 128 and 256, T = 64 and 128
                              (V = 69: Tiny Shakespeare's characters and the 4 specials)
    Transformer LM step       lesson 12's CausalLM (GPT-style): token embedding + learned
                              positions, 2 pre-LN blocks (d_model 64, 4 heads, ff 256, ReLU,
                              causal mask), final LayerNorm, Linear to V = 74; batch 32, T = 48;
                              cross_entropy, backward, clip_grad_norm_(1.0), Adam step
    decoding                  one token at a time at batch 1, through minigrad.decoding as the
                              lessons call it (greedy, beam_search with 5 beams) against the
                              same loop written with torch tensors: the GRU char LM of lesson 7
                              (hidden 256), the same with an LSTM (lesson 7's first exercise)
                              and lesson 12's CausalLM with its KV cache.  At
                              batch 1 every array is tiny: these rows measure per-call
                              overhead end to end (model step, log_softmax, the search's
                              bookkeeping).
    seq2seq                   lesson 8's Seq2Seq (GRU encoder and decoder, dot attention over the
                              encoder states with the padding masked, Linear([s; c]) -> V) on the
                              dates task: a training step (batch 64, embedding 32, hidden 64,
                              teacher forcing, cross_entropy ignoring <pad>, Adam + clip) and
                              greedy / beam decoding of one date, 12 tokens (the lesson's max_len)
    translation decoding      lesson 10's TransformerTranslator (dates -> ISO, characters:
                              d_model 32, 2 heads, ff 64, one encoder and one decoder layer,
                              post-LN), from encoding the source to 12 target tokens (the
                              lesson's max_len): greedy and beam search (5 beams) for one
                              sentence, and greedy for the lesson's 200 test sentences at once,
                              as its evaluate() does.  The torch model caches the self-attention
                              keys and values and the memory's projection, as minigrad's does.

Training steps are timed as loops of consecutive steps (``common.loop_times``), each step
dropping its loss at its end; every row shows the minimum and the median.

The PyTorch models below are written the way a PyTorch user would write the
same thing (torch.nn layers, the KV cache as tensors concatenated per step);
their parameter names match minigrad's, so ``load_state_dict`` copies the weights.
"""
import math
import os
import sys

import numpy

from common import interleaved_times, loop_times, median, paired_ratio, timed_row, torch_or_none

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import minigrad  # noqa: E402
from minigrad import decoding, nn, optim  # noqa: E402
from minigrad import functional as F  # noqa: E402
from minigrad.data.synthetic import dates  # noqa: E402
from minigrad.models import CausalLM, RNNLanguageModel, Seq2Seq, TransformerTranslator  # noqa: E402
from minigrad.text import Vocab, pair_batch  # noqa: E402
from minigrad.text.vocab import BOS_IDX, EOS_IDX, PAD_IDX  # noqa: E402

SHAKESPEARE_V = 69          # lesson 7: the training text's 65 characters + <pad> <unk> <bos> <eos>
CORPUS_V = 74               # lesson 12: the corpus's characters + the 4 specials + <mask>
EMBEDDING = 32              # lesson 7's embedding_dim
GPT = dict(d_model=64, nhead=4, num_layers=2, dim_feedforward=256, max_len=256)   # lesson 12, full mode
TRANSLATOR = dict(d_model=32, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=64,
                  max_len=64)      # lesson 10
TRANSLATION_TOKENS = 12     # lessons 8 and 10: max_len of a decoded date
SEQ2SEQ = dict(embedding_dim=32, hidden_size=64, attention="dot")   # lesson 8, full mode
LOSS_TOLERANCE = 1e-4       # relative, float32: the first-step losses must agree this well


# ----------------------------------------------------------------------------- the PyTorch models

def torch_rnn_lm(torch, V, E, H, cell):
    """minigrad.models.RNNLanguageModel written with torch.nn (same parameter names)."""
    tnn = torch.nn

    class TorchRNNLanguageModel(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = tnn.Embedding(V, E, padding_idx=PAD_IDX)
            self.rnn = {"lstm": tnn.LSTM, "gru": tnn.GRU}[cell](E, H, batch_first=True)
            self.head = tnn.Linear(H, V)

        def forward(self, ids, state=None):
            output, state = self.rnn(self.embedding(ids), state)
            return self.head(output), state

        def initial_state(self, N):
            h = torch.zeros(1, N, H)
            return (h, h) if cell == "lstm" else h

        def step(self, tokens, state):
            logits, state = self(tokens[:, None], state)
            return logits[:, 0].log_softmax(-1), state

        def reorder(self, state, indices):
            if isinstance(state, tuple):
                return tuple(s.index_select(1, indices) for s in state)
            return state.index_select(1, indices)

    return TorchRNNLanguageModel()


def torch_causal_lm(torch, V, d_model, nhead, num_layers, dim_feedforward, max_len):
    """minigrad.models.CausalLM (pre-LN, ReLU, dropout 0) written with torch.nn, with a KV-cache step."""
    tnn, functional = torch.nn, torch.nn.functional

    class Positions(tnn.Module):
        def __init__(self):
            super().__init__()
            self.weight = tnn.Parameter(torch.randn(max_len, d_model))

        def forward(self, x, offset=0):
            return x + self.weight[offset:offset + x.shape[1]]

    class TorchCausalLM(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = tnn.Embedding(V, d_model)
            self.positions = Positions()
            layer = tnn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, 0.0, "relu",
                                                batch_first=True, norm_first=True)
            self.layers = tnn.TransformerEncoder(layer, num_layers, tnn.LayerNorm(d_model),
                                                 enable_nested_tensor=False)
            self.lm_head = tnn.Linear(d_model, V)

        def forward(self, ids):
            mask = tnn.Transformer.generate_square_subsequent_mask(ids.shape[1])
            return self.lm_head(self.layers(self.positions(self.embedding(ids)), mask=mask, is_causal=True))

        def initial_state(self, N):
            empty = torch.zeros(N, nhead, 0, d_model // nhead)
            return [(empty, empty)] * num_layers, 0

        def step(self, tokens, state):
            """One new position per sequence; each layer's keys and values (N, heads, t, d/heads) grow by one."""
            caches, position = state
            N = tokens.shape[0]
            x = self.positions(self.embedding(tokens[:, None]), position)            # (N, 1, d)
            grown = []
            for layer, (k_past, v_past) in zip(self.layers.layers, caches):
                attention = layer.self_attn
                q, k, v = functional.linear(layer.norm1(x), attention.in_proj_weight,
                                            attention.in_proj_bias).chunk(3, dim=-1)
                q, k, v = (a.reshape(N, 1, nhead, -1).transpose(1, 2) for a in (q, k, v))
                k, v = torch.cat([k_past, k], dim=2), torch.cat([v_past, v], dim=2)
                grown.append((k, v))
                mixed = functional.scaled_dot_product_attention(q, k, v)               # the last query sees all
                x = x + attention.out_proj(mixed.transpose(1, 2).reshape(N, 1, d_model))
                x = x + layer.linear2(functional.relu(layer.linear1(layer.norm2(x))))
            logits = self.lm_head(self.layers.norm(x)[:, -1])
            return logits.log_softmax(-1), (grown, position + 1)

        def reorder(self, state, indices):
            caches, position = state
            return [(k.index_select(0, indices), v.index_select(0, indices)) for k, v in caches], position

    return TorchCausalLM()


def torch_translator(torch, src_v, tgt_v, positions, d_model, nhead, num_encoder_layers, num_decoder_layers,
                     dim_feedforward, max_len):
    """minigrad.models.TransformerTranslator (post-LN, ReLU, dropout 0) written with torch.nn, with a step
    that caches each decoder layer's self-attention keys and values and its projection of the memory.
    ``positions``: minigrad's sinusoidal table (a buffer outside the state dict in both)."""
    tnn, functional = torch.nn, torch.nn.functional
    heads_dim = d_model // nhead

    def split_heads(x):
        return x.reshape(x.shape[0], x.shape[1], nhead, heads_dim).transpose(1, 2)      # (N, h, T, Dh)

    def merge_heads(x):
        return x.transpose(1, 2).reshape(x.shape[0], x.shape[2], d_model)

    class TorchTranslator(tnn.Module):
        def __init__(self):
            super().__init__()
            self.src_embedding = tnn.Embedding(src_v, d_model, padding_idx=PAD_IDX)
            self.tgt_embedding = tnn.Embedding(tgt_v, d_model, padding_idx=PAD_IDX)
            self.register_buffer("pe", torch.tensor(positions[:max_len]), persistent=False)
            self.transformer = tnn.Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers,
                                               dim_feedforward, 0.0, batch_first=True)
            self.generator = tnn.Linear(d_model, tgt_v)

        def embed(self, embedding, ids, offset=0):
            return embedding(ids) * math.sqrt(d_model) + self.pe[offset:offset + ids.shape[1]]

        def forward(self, src, tgt_in):
            """Teacher forcing, every target position at once: logits (N, T, V)."""
            src_pad, tgt_pad = src == PAD_IDX, tgt_in == PAD_IDX
            causal = torch.ones(tgt_in.shape[1], tgt_in.shape[1], dtype=torch.bool).triu(1)
            h = self.transformer(self.embed(self.src_embedding, src), self.embed(self.tgt_embedding, tgt_in),
                                 tgt_mask=causal, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                                 memory_key_padding_mask=src_pad)
            return self.generator(h)

        def initial_state(self, src):
            padding = src == PAD_IDX
            memory = self.transformer.encoder(self.embed(self.src_embedding, src), src_key_padding_mask=padding)
            cross = []
            for layer in self.transformer.decoder.layers:                      # the memory's keys and values, once
                weight, bias = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
                cross.append(tuple(split_heads(functional.linear(memory, weight[i * d_model:(i + 1) * d_model],
                                                                 bias[i * d_model:(i + 1) * d_model]))
                                   for i in (1, 2)))
            empty = torch.zeros(src.shape[0], nhead, 0, heads_dim)
            return [(empty, empty)] * len(cross), cross, (~padding)[:, None, None, :], 0

        def step(self, tokens, state):
            caches, cross, may_attend, position = state
            x = self.embed(self.tgt_embedding, tokens[:, None], position)      # (N, 1, d)
            grown = []
            for layer, (k_past, v_past), (k_memory, v_memory) in zip(self.transformer.decoder.layers, caches, cross):
                attention = layer.self_attn
                q, k, v = (split_heads(a) for a in functional.linear(x, attention.in_proj_weight,
                                                                     attention.in_proj_bias).chunk(3, dim=-1))
                k, v = torch.cat([k_past, k], dim=2), torch.cat([v_past, v], dim=2)
                grown.append((k, v))
                mixed = functional.scaled_dot_product_attention(q, k, v)       # the last query sees all
                x = layer.norm1(x + attention.out_proj(merge_heads(mixed)))
                attention = layer.multihead_attn
                q = split_heads(functional.linear(x, attention.in_proj_weight[:d_model],
                                                  attention.in_proj_bias[:d_model]))
                mixed = functional.scaled_dot_product_attention(q, k_memory, v_memory, attn_mask=may_attend)
                x = layer.norm2(x + attention.out_proj(merge_heads(mixed)))
                x = layer.norm3(x + layer.linear2(functional.relu(layer.linear1(x))))
            logits = self.generator(self.transformer.decoder.norm(x)[:, -1])
            return logits.log_softmax(-1), (grown, cross, may_attend, position + 1)

        def reorder(self, state, indices):
            caches, cross, may_attend, position = state
            rows = [[(k.index_select(0, indices), v.index_select(0, indices)) for k, v in pairs]
                    for pairs in (caches, cross)]
            return rows[0], rows[1], may_attend.index_select(0, indices), position

    return TorchTranslator()


def torch_seq2seq(torch, src_v, tgt_v, embedding_dim, hidden_size, attention):
    """minigrad.models.Seq2Seq (one GRU layer each side, dot attention) written with torch.nn."""
    tnn = torch.nn
    assert attention == "dot"

    class TorchSeq2Seq(tnn.Module):
        def __init__(self):
            super().__init__()
            self.src_embedding = tnn.Embedding(src_v, embedding_dim, padding_idx=PAD_IDX)
            self.tgt_embedding = tnn.Embedding(tgt_v, embedding_dim, padding_idx=PAD_IDX)
            self.encoder = tnn.GRU(embedding_dim, hidden_size, batch_first=True)
            self.decoder = tnn.GRU(embedding_dim, hidden_size, batch_first=True)
            self.head = tnn.Linear(2 * hidden_size, tgt_v)

        def output(self, s, memory, padding):
            """Decoder states s (N, T, H) -> logits: dot scores, the padding masked, softmax, [s; context]."""
            scores = (s @ memory.transpose(1, 2)).masked_fill(padding[:, None, :], -1e30)
            weights = scores.softmax(-1).masked_fill(padding[:, None, :], 0.0)
            return self.head(torch.cat([s, weights @ memory], dim=2))

        def forward(self, src, tgt_in):
            memory, h = self.encoder(self.src_embedding(src))
            s, _ = self.decoder(self.tgt_embedding(tgt_in), h)
            return self.output(s, memory, src == PAD_IDX)

        def initial_state(self, src):
            memory, h = self.encoder(self.src_embedding(src))
            return h, memory, src == PAD_IDX

        def step(self, tokens, state):
            h, memory, padding = state
            s, h = self.decoder(self.tgt_embedding(tokens[:, None]), h)
            return self.output(s, memory, padding)[:, 0].log_softmax(-1), (h, memory, padding)

        def reorder(self, state, indices):
            h, memory, padding = state
            return h.index_select(1, indices), memory.index_select(0, indices), padding.index_select(0, indices)

    return TorchSeq2Seq()


# ----------------------------------------------------------------------------- decoding loops in torch

def torch_greedy(torch, model, state, start, max_len, eos=None):
    """minigrad.decoding.greedy's loop, on torch tensors: (N lists of ids, N summed log-probs, steps taken)."""
    with torch.no_grad():
        tokens = torch.tensor(start, dtype=torch.int64)
        N = tokens.shape[0]
        out = torch.zeros((N, max_len), dtype=torch.int64)
        total = torch.zeros(N, dtype=torch.float64)
        lengths = torch.zeros(N, dtype=torch.int64)
        finished = torch.zeros(N, dtype=torch.bool)
        rows = torch.arange(N)
        for t in range(max_len):
            log_probs, state = model.step(tokens, state)
            tokens = log_probs.argmax(dim=1)
            alive = ~finished
            out[:, t] = torch.where(alive, tokens, 0)
            total = total + torch.where(alive, log_probs[rows, tokens], 0.0)
            lengths = lengths + alive
            if eos is not None:
                finished = finished | (tokens == eos)
                if bool(finished.all()):
                    break
        return [row[:n].tolist() for row, n in zip(out, lengths.tolist())], total.tolist(), t + 1


def torch_beam_search(torch, model, state, start, beam_size, max_len, eos):
    """minigrad.decoding.beam_search's loop (length_penalty 0, n_best 1) on torch tensors:
    (the best ids of each row, steps taken)."""
    with torch.no_grad():
        tokens = torch.tensor(start, dtype=torch.int64)
        N, K = tokens.shape[0], beam_size
        state = model.reorder(state, torch.arange(N).repeat_interleave(K))
        tokens = tokens.repeat_interleave(K)
        log_prob = torch.full((N, K), -math.inf, dtype=torch.float64)
        log_prob[:, 0] = 0.0
        finished = torch.zeros((N, K), dtype=torch.bool)
        lengths = torch.zeros((N, K), dtype=torch.int64)
        history = torch.zeros((N, K, 0), dtype=torch.int64)
        batch = torch.arange(N)[:, None]
        for t in range(max_len):
            step_lp, state = model.step(tokens, state)                       # (N*K, V)
            V = step_lp.shape[1]
            step_lp = step_lp.reshape(N, K, V).double()
            stay = torch.full((V,), -math.inf, dtype=torch.float64)
            stay[eos] = 0.0
            step_lp = torch.where(finished[:, :, None], stay, step_lp)
            candidate_lp = (log_prob[:, :, None] + step_lp).reshape(N, K * V)
            best = candidate_lp.topk(K, dim=1).indices                        # (N, K), best first
            parent, token = best // V, best % V
            was_finished = finished[batch, parent]
            log_prob = candidate_lp[batch, best]
            lengths = lengths[batch, parent] + ~was_finished
            finished = was_finished | (token == eos) | (log_prob == -math.inf)
            history = torch.cat([history[batch, parent], token[:, :, None]], dim=2)
            state = model.reorder(state, (batch * K + parent).reshape(-1))
            tokens = token.reshape(-1)
            if bool(finished.all()):
                break
        order = torch.argsort(-log_prob, dim=1)
        return [history[n, order[n, 0], :lengths[n, order[n, 0]]].tolist() for n in range(N)], t + 1


# ----------------------------------------------------------------------------- training steps

def _same_parameters(ours, theirs, what):
    mine, torchs = ours.num_parameters(), sum(p.numel() for p in theirs.parameters())
    assert mine == torchs, f"{what}: minigrad has {mine} parameters, the PyTorch model {torchs}"
    return mine


def _training_steps(torch, ours, theirs, batch, V, forward_ours, forward_theirs):
    """(minigrad step, torch step) on random ids (N, T + 1), no specials: x = ids[:, :-1], targets ids[:, 1:]."""
    ids = numpy.random.default_rng(0).integers(4, V, size=batch)            # (N, T + 1), no specials
    x, y = minigrad.tensor(ids[:, :-1]), minigrad.tensor(ids[:, 1:])
    tx, ty = torch.tensor(ids[:, :-1]), torch.tensor(ids[:, 1:])
    return _step_pair(torch, ours, theirs, V, lambda: forward_ours(x), y, lambda: forward_theirs(tx), ty, lr=3e-3)


def _step_pair(torch, ours, theirs, V, logits_ours, y, logits_theirs, ty, lr, ignore_index=-100):
    """(minigrad step, torch step): ``update_steps`` of the cross_entropy of logits() against the targets."""
    return update_steps(
        torch, ours, theirs,
        lambda: F.cross_entropy(logits_ours().reshape(-1, V), y.reshape(-1), ignore_index=ignore_index),
        lambda: torch.nn.functional.cross_entropy(logits_theirs().reshape(-1, V), ty.reshape(-1),
                                                  ignore_index=ignore_index),
        lr)


def update_steps(torch, ours, theirs, loss_ours, loss_theirs, lr, clip=1.0, betas=(0.9, 0.999)):
    """(minigrad step, torch step), each: loss(), zero_grad, backward, clip_grad_norm_(clip) (none when
    clip is None), Adam; returns the loss."""
    opt = optim.Adam(ours.parameters(), lr=lr, betas=betas)
    topt = torch.optim.Adam(theirs.parameters(), lr=lr, betas=betas)

    def mine():
        loss = loss_ours()
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            optim.clip_grad_norm_(ours.parameters(), clip)
        opt.step()
        return loss

    def reference():
        loss = loss_theirs()
        topt.zero_grad()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(theirs.parameters(), clip)
        topt.step()
        return loss

    return mine, reference


def _check_first_loss(mine, reference, what):
    ours = mine().item()
    assert_same_loss(ours, reference().item(), what)
    return ours


def assert_same_loss(ours, theirs, what, tier=""):
    """minigrad's loss equals PyTorch's within LOSS_TOLERANCE (relative), else AssertionError naming both."""
    assert abs(ours - theirs) <= LOSS_TOLERANCE * max(1.0, abs(theirs)), \
        f"{what}: the first-step losses differ: minigrad{tier} {ours:.6f}, PyTorch {theirs:.6f}"


def char_lm_pair(torch, cell, N, T, H):
    """Lesson 7's model and training step, in both libraries, the same weights."""
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    theirs = torch_rnn_lm(torch, SHAKESPEARE_V, EMBEDDING, H, cell)
    ours = RNNLanguageModel(SHAKESPEARE_V, embedding_dim=EMBEDDING, hidden_size=H, cell=cell)
    ours.load_state_dict(theirs.state_dict())
    count = _same_parameters(ours, theirs, f"{cell} char LM")
    mine, reference = _training_steps(torch, ours, theirs, (N, T + 1), SHAKESPEARE_V,
                                      lambda x: ours(x)[0], lambda x: theirs(x)[0])
    return mine, reference, count


def causal_lm_pair(torch, N, T):
    """Lesson 12's CausalLM and training step, in both libraries, the same weights."""
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    theirs = torch_causal_lm(torch, CORPUS_V, **GPT)
    ours = CausalLM(CORPUS_V, dropout=0.0, activation="relu", **GPT)
    ours.load_state_dict(theirs.state_dict())
    count = _same_parameters(ours, theirs, "CausalLM")
    mine, reference = _training_steps(torch, ours, theirs, (N, T + 1), CORPUS_V, ours, theirs)
    return mine, reference, count


# ----------------------------------------------------------------------------- decoding

def decoding_pair(torch, model_name, search, tokens, beam_size=5):
    """(minigrad decode, torch decode), each decoding up to ``tokens`` tokens at batch 1 from <bos>
    (``_decoding_closures``; the language models' initial state takes the batch size)."""
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    if model_name in ("GRU char LM", "LSTM char LM"):
        cell = model_name.split()[0].lower()                           # "gru" or "lstm"
        theirs = torch_rnn_lm(torch, SHAKESPEARE_V, EMBEDDING, 256, cell)
        ours = RNNLanguageModel(SHAKESPEARE_V, embedding_dim=EMBEDDING, hidden_size=256, cell=cell)
    else:
        theirs = torch_causal_lm(torch, CORPUS_V, **GPT)
        ours = CausalLM(CORPUS_V, dropout=0.0, activation="relu", **GPT)
    ours.load_state_dict(theirs.state_dict())
    _same_parameters(ours, theirs, model_name)
    ours.eval()
    theirs.eval()
    return _decoding_closures(torch, ours, theirs, 1, 1, search, beam_size, tokens)

def _dates_batch(batch):
    """Lesson 8's and 10's dates task, quick mode: the vocabularies of 3000 training pairs and a batch
    of ``batch`` test pairs: (src vocab size, tgt vocab size, src ids (N, S), tgt ids (N, T + 2))."""
    train_pairs, test_pairs = dates(3000, seed=0), dates(batch, seed=1)
    src_vocab = Vocab.build(list(s) for s, _ in train_pairs)
    tgt_vocab = Vocab.build(list(t) for _, t in train_pairs)
    src, tgt = pair_batch(test_pairs, src_vocab, tgt_vocab)
    return len(src_vocab), len(tgt_vocab), src, tgt


def _seq2seq_models(torch):
    src_v, tgt_v = _dates_batch(1)[:2]
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    theirs = torch_seq2seq(torch, src_v, tgt_v, **SEQ2SEQ)
    ours = Seq2Seq(src_v, tgt_v, **SEQ2SEQ)
    ours.load_state_dict(theirs.state_dict())
    _same_parameters(ours, theirs, "Seq2Seq")
    return ours, theirs


def seq2seq_training_pair(torch, batch):
    """Lesson 8's training step (teacher forcing, <pad> ignored), both libraries, the same weights."""
    ours, theirs = _seq2seq_models(torch)
    _, V, src, tgt = _dates_batch(batch)
    torch_src, torch_tgt = torch.tensor(src.numpy()), torch.tensor(tgt.numpy())
    mine, reference = _step_pair(torch, ours, theirs, V, lambda: ours(src, tgt[:, :-1]), tgt[:, 1:],
                                 lambda: theirs(torch_src, torch_tgt[:, :-1]), torch_tgt[:, 1:], lr=0.01,
                                 ignore_index=PAD_IDX)
    return mine, reference, ours.num_parameters()


def seq2seq_decoding_pair(torch, search, beam_size=5):
    """(minigrad decode, torch decode) of lesson 8's Seq2Seq: one test date, TRANSLATION_TOKENS tokens."""
    ours, theirs = _seq2seq_models(torch)
    ours.eval()
    theirs.eval()
    src = _dates_batch(1)[2]
    return _decoding_closures(torch, ours, theirs, src, torch.tensor(src.numpy()), search, beam_size,
                              TRANSLATION_TOKENS)


def _decoding_closures(torch, ours, theirs, our_input, their_input, search, beam_size, max_len):
    """(mine, reference) decoding from <bos> after ``initial_state(our_input)`` (a source batch, or
    a batch size): greedy for max_len tokens, or beam search until every beam has <eos> (at most
    max_len).  mine returns the sequences (greedy) or each row's best; reference (the same, steps taken)."""
    batch = our_input if isinstance(our_input, int) else our_input.shape[0]
    start = [BOS_IDX] * batch
    if search == "greedy":
        def mine():
            with minigrad.no_grad():
                return decoding.greedy(ours, ours.initial_state(our_input), start, max_len)[0]

        def reference():
            with torch.no_grad():
                sequences, _, steps = torch_greedy(torch, theirs, theirs.initial_state(their_input), start, max_len)
            return sequences, steps
    else:
        def mine():
            with minigrad.no_grad():
                best = decoding.beam_search(ours, ours.initial_state(our_input), start, beam_size, max_len,
                                            eos=EOS_IDX)
            return [row[0].tokens for row in best]

        def reference():
            with torch.no_grad():
                best, steps = torch_beam_search(torch, theirs, theirs.initial_state(their_input), start,
                                                beam_size, max_len, EOS_IDX)
            return best, steps
    return mine, reference

def translator_pair(torch, search, batch, beam_size=5, reference=False):
    """(minigrad decode, torch decode) of lesson 10's translator: encode ``batch`` test dates, decode
    TRANSLATION_TOKENS tokens (greedy: all of them; beam search: until every beam has <eos>).
    reference=True: minigrad's model on the reference tier, as lesson 10 runs it."""
    src_v, tgt_v, src, _ = _dates_batch(batch)
    minigrad.manual_seed(0)
    torch.manual_seed(0)
    ours = TransformerTranslator(src_v, tgt_v, dropout=0.0, **TRANSLATOR)
    theirs = torch_translator(torch, src_v, tgt_v, ours.positions.pe.numpy(), **TRANSLATOR)
    ours.load_state_dict(theirs.state_dict())
    _same_parameters(ours, theirs, "TransformerTranslator")
    nn.reference_tier(ours, reference)
    ours.eval()
    theirs.eval()
    return _decoding_closures(torch, ours, theirs, src, torch.tensor(src.numpy()), search, beam_size,
                              TRANSLATION_TOKENS)


def _check_same_tokens(mine, reference, what):
    """The steps (decoder calls) taken, once both libraries decoded the same best sequence."""
    ours, (theirs, steps) = mine(), reference()
    assert ours == theirs, f"{what}: minigrad decoded {ours[:20]}..., PyTorch {theirs[:20]}..."
    return steps


# ----------------------------------------------------------------------------- the suite

def _row(case, times, note):
    return timed_row(case, times[0], times[1],
                     f"{note}; median of paired ratios {paired_ratio(times[0], times[1]):.2f}x")


def run(quick):
    torch = torch_or_none()
    if torch is None:
        return [{"case": "workloads (every case needs the PyTorch model)", "minigrad_s": None,
                 "torch_s": None, "note": "torch not installed"}]
    repeat = 3 if quick else 9
    rows = []
    N = 32
    sizes = [(128, 64), (256, 128)] if quick else [(128, 64), (128, 128), (256, 64), (256, 128)]
    for cell in ("lstm", "gru"):
        for H, T in sizes:
            what = f"char LM training step, {cell.upper()}, batch {N}, hidden {H}, T={T}"
            mine, reference, count = char_lm_pair(torch, cell, N, T, H)
            loss = _check_first_loss(mine, reference, what)
            times = loop_times([mine, reference], repeat)
            rows.append(_row(what, times, f"emb {EMBEDDING}, V {SHAKESPEARE_V}, {count} parameters, "
                                          f"Adam + clip; first losses agree ({loss:.4f})"))

    T = 48
    what = f"Transformer LM training step (lesson 12 CausalLM), batch {N}, T={T}, d_model 64, 2 layers"
    mine, reference, count = causal_lm_pair(torch, N, T)
    loss = _check_first_loss(mine, reference, what)
    times = loop_times([mine, reference], repeat)
    rows.append(_row(what, times, f"4 heads, ff 256, causal, V {CORPUS_V}, {count} parameters, Adam + clip; "
                                  f"first losses agree ({loss:.4f})"))

    for model_name, search, tokens in (("GRU char LM", "greedy", 300), ("GRU char LM", "beam", 100),
                                       ("LSTM char LM", "greedy", 300), ("LSTM char LM", "beam", 100),
                                       ("CausalLM", "greedy", 120), ("CausalLM", "beam", 100)):
        label = "greedy" if search == "greedy" else "beam search, 5 beams"
        what = f"decoding, {label}, {model_name} ({'hidden 256' if model_name != 'CausalLM' else 'KV cache'}), " \
               f"batch 1, up to {tokens} tokens"
        mine, reference = decoding_pair(torch, model_name, search, tokens)
        steps = _check_same_tokens(mine, reference, what)
        times = interleaved_times([mine, reference], repeat=repeat)
        rows.append(_row(what, times, f"{steps} steps, the same best sequence in both; "
                                      f"median {median(times[0]) / steps * 1e6:.0f} us per minigrad step, "
                                      f"{median(times[1]) / steps * 1e6:.0f} us per torch step"))

    batch = 64
    what = f"seq2seq training step (lesson 8 Seq2Seq, GRU + dot attention), batch {batch}, hidden 64"
    mine, reference, count = seq2seq_training_pair(torch, batch)
    loss = _check_first_loss(mine, reference, what)
    times = loop_times([mine, reference], repeat)
    rows.append(_row(what, times, f"dates task, embedding 32, {count} parameters, <pad> ignored, Adam + clip; "
                                  f"first losses agree ({loss:.4f})"))
    for search in ("greedy", "beam"):
        label = "greedy" if search == "greedy" else "beam search, 5 beams"
        what = f"seq2seq decoding, {label}, lesson 8 Seq2Seq, batch 1, up to {TRANSLATION_TOKENS} tokens"
        mine, reference = seq2seq_decoding_pair(torch, search)
        steps = _check_same_tokens(mine, reference, what)
        times = interleaved_times([mine, reference], repeat=repeat)
        rows.append(_row(what, times, f"encoder + {steps} decoder steps, the same tokens in both"))

    for search, batch in (("greedy", 1), ("beam", 1), ("greedy", 200)):
        label = "greedy" if search == "greedy" else "beam search, 5 beams"
        what = f"translation decoding, {label}, lesson 10 TransformerTranslator, batch {batch}, " \
               f"up to {TRANSLATION_TOKENS} tokens"
        mine, reference = translator_pair(torch, search, batch)
        steps = _check_same_tokens(mine, reference, what)
        times = interleaved_times([mine, reference], repeat=repeat)
        rows.append(_row(what, times, f"encoder + {steps} decoder steps, the same tokens in both"))
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row['case']:100s} {row['minigrad_median_s']:9.5f} {row['torch_median_s']:9.5f} "
              f"{row['minigrad_median_s'] / row['torch_median_s']:6.2f}x  {row['note']}")
