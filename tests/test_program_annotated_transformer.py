"""Program pattern: the Annotated Transformer (Harvard NLP), run whole on its copy task.
Its own LayerNorm (mean and std), clones() with copy.deepcopy into a ModuleList, multi-headed
attention with view/transpose/contiguous and masked_fill(mask == 0, -1e9), embeddings scaled by
NumPy's sqrt on the left (``np.sqrt(d_model) * lut(x)``, the issue's silent case), sinusoidal
positions in a buffer; the Batch masks (``(src != pad).unsqueeze(-2)``, ``triu(...).type(uint8) == 0``,
``type_as(tgt_mask.data)``, ``ntokens = (tgt_y != pad).data.sum()``); label smoothing through
``x.data.clone()``, ``fill_``, ``scatter_(1, target.data.unsqueeze(1), confidence)``, index assignment,
``torch.nonzero(target.data == pad)`` and ``index_fill_``, into KLDivLoss(reduction="sum");
SimpleLossCompute's ``sloss.data * norm``; Adam(betas=(0.9, 0.98), eps=1e-9) under LambdaLR with the
"rate" warm-up schedule; and greedy_decode (``torch.zeros(1, 1).fill_(start).type_as(src.data)``,
``torch.max(prob, dim=1)``, ``next_word.data[0]``, ``fill_(next_word)``, ``torch.cat``).

Written here from PyTorch's API (dropout 0, so that neither library draws); the same code runs with
``L`` minigrad and torch, from the same weights, in float64 and float32.  Compared: the loss and the
smoothed target distribution, every gradient (values, dtypes), every parameter after each of 3 steps,
the learning rate, the log-probabilities of a decode, and the greedily decoded tokens."""
import copy
import math

import numpy as np
import pytest

import minigrad
from program_parity import TOLERANCES, close, same_gradients, twins

torch = pytest.importorskip("torch")

V, D_MODEL, D_FF, HEADS, LAYERS, PAD = 9, 16, 32, 2, 1, 0


def annotated_transformer(L):
    nn = L.nn

    def clones(module, N):
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super().__init__()
            self.a_2 = nn.Parameter(L.ones(features))
            self.b_2 = nn.Parameter(L.zeros(features))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class SublayerConnection(nn.Module):
        def __init__(self, size, dropout):
            super().__init__()
            self.norm = LayerNorm(size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    def attention(query, key, value, mask=None, dropout=None):
        d_k = query.size(-1)
        scores = L.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return L.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.0):
            super().__init__()
            self.d_k = d_model // h
            self.h = h
            self.linears = clones(nn.Linear(d_model, d_model), 4)
            self.attn = None
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            if mask is not None:
                mask = mask.unsqueeze(1)
            nbatches = query.size(0)
            query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                                 for lin, x in zip(self.linears, (query, key, value))]
            x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
            x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
            del query, key, value
            return self.linears[-1](x)

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.0):
            super().__init__()
            self.w_1 = nn.Linear(d_model, d_ff)
            self.w_2 = nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.lut = nn.Embedding(vocab, d_model)
            self.d_model = d_model

        def forward(self, x):
            return np.sqrt(self.d_model) * self.lut(x)           # a NumPy float64 on the left

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout, max_len=50):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = L.zeros(max_len, d_model)
            position = L.arange(0, max_len).unsqueeze(1)
            div_term = L.exp(L.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = L.sin(position * div_term)
            pe[:, 1::2] = L.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:, : x.size(1)].requires_grad_(False)
            return self.dropout(x)

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super().__init__()
            self.self_attn = self_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 2)
            self.size = size

        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class DecoderLayer(nn.Module):
        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super().__init__()
            self.size = size
            self.self_attn = self_attn
            self.src_attn = src_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)

        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    class Stack(nn.Module):
        def __init__(self, layer, N):
            super().__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, *masks):
            for layer in self.layers:
                x = layer(x, *masks)
            return self.norm(x)

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return L.nn.functional.log_softmax(self.proj(x), dim=-1)

    class EncoderDecoder(nn.Module):
        def __init__(self):
            super().__init__()
            c = copy.deepcopy
            attn, ff = MultiHeadedAttention(HEADS, D_MODEL), PositionwiseFeedForward(D_MODEL, D_FF)
            position = PositionalEncoding(D_MODEL, 0.0)
            self.encoder = Stack(EncoderLayer(D_MODEL, c(attn), c(ff), 0.0), LAYERS)
            self.decoder = Stack(DecoderLayer(D_MODEL, c(attn), c(attn), c(ff), 0.0), LAYERS)
            self.src_embed = nn.Sequential(Embeddings(D_MODEL, V), c(position))
            self.tgt_embed = nn.Sequential(Embeddings(D_MODEL, V), c(position))
            self.generator = Generator(D_MODEL, V)
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

        def forward(self, src, tgt, src_mask, tgt_mask):
            return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

        def encode(self, src, src_mask):
            return self.encoder(self.src_embed(src), src_mask)

        def decode(self, memory, src_mask, tgt, tgt_mask):
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)

    return EncoderDecoder()


def subsequent_mask(L, size):
    attn_shape = (1, size, size)
    subsequent_mask = L.triu(L.ones(attn_shape), diagonal=1).type(L.uint8)
    return subsequent_mask == 0


class Batch:
    def __init__(self, L, src, tgt, pad=PAD):
        self.src = src
        self.src_mask = (src != pad).unsqueeze(-2)
        self.tgt = tgt[:, :-1]
        self.tgt_y = tgt[:, 1:]
        tgt_mask = (self.tgt != pad).unsqueeze(-2)
        self.tgt_mask = tgt_mask & subsequent_mask(L, self.tgt.size(-1)).type_as(tgt_mask.data)
        self.ntokens = (self.tgt_y != pad).data.sum()


def label_smoothing(L):
    class LabelSmoothing(L.nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.0):
            super().__init__()
            self.criterion = L.nn.KLDivLoss(reduction="sum")
            self.padding_idx = padding_idx
            self.confidence = 1.0 - smoothing
            self.smoothing = smoothing
            self.size = size
            self.true_dist = None

        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = L.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    return LabelSmoothing(V, PAD, smoothing=0.1)


def rate(step, model_size, factor, warmup):
    if step == 0:
        step = 1
    return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))


def loss_compute(model, criterion, x, y, norm):
    x = model.generator(x)
    sloss = criterion(x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)) / norm
    return sloss.data * norm, sloss


def greedy_decode(L, model, src, src_mask, max_len, start_symbol):
    memory = model.encode(src, src_mask)
    ys = L.zeros(1, 1).fill_(start_symbol).type_as(src.data)
    log_probs = []
    for i in range(max_len - 1):
        out = model.decode(memory, src_mask, ys, subsequent_mask(L, ys.size(1)).type_as(src.data))
        prob = model.generator(out[:, -1])
        log_probs.append(prob)
        _, next_word = L.max(prob, dim=1)
        next_word = next_word.data[0]
        ys = L.cat([ys, L.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
    return ys, L.cat(log_probs)


# Adam divides by sqrt(v) + 1e-9, so a gradient that is rounding noise (the keys' biases: softmax
# ignores a shift shared by all keys; in float32 also sums that cancel to ~1e-8) moves its parameter
# by about lr whatever its value.  Those coordinates (|grad| below NOISE x the largest gradient, in
# torch, at any step so far) are compared to Adam's bound (3 lr per step); all others to the tolerance.
KEY_BIASES = sorted(f"{stack}.layers.0.{attn}.linears.1.bias"
                    for stack, attn in (("encoder", "self_attn"), ("decoder", "self_attn"), ("decoder", "src_attn")))
NOISE = {"float64": 1e-10, "float32": 1e-4}


def noise_driven(ours, theirs, dtype, so_far):
    """so_far updated with, per parameter, the coordinates whose gradient was rounding noise at this step
    (not exactly zero in both: a zero gradient moves neither)."""
    scale = max(float(p.grad.abs().max()) for p in theirs.parameters())
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        g, h = p.grad.numpy(), mine[name].grad.numpy()
        flat = (np.maximum(np.abs(g), np.abs(h)) <= NOISE[dtype] * scale) & ((g != 0) | (h != 0))
        so_far[name] = flat if name not in so_far else so_far[name] | flat
    return so_far


def same_parameters_but_noise(ours, theirs, noisy, bound, tolerance, when):
    their_parameters = dict(theirs.named_parameters())
    for name, parameter in ours.named_parameters():
        mine, reference = parameter.detach().numpy(), their_parameters[name].detach().numpy()
        assert mine.dtype == reference.dtype, f"dtype of {name}"
        difference = np.abs(mine - reference)
        assert difference[~noisy[name]].max(initial=0) <= tolerance * max(1.0, np.abs(reference).max()), \
            f"{name} {when}: max abs difference {difference[~noisy[name]].max():.3e}"
        assert difference[noisy[name]].max(initial=0) <= bound, f"{name} {when}: a noise-driven step beyond Adam's"


BATCHES = []
for seed in range(3):                    # the copy task's batches (its torch.randint drawn here with NumPy)
    data = np.random.default_rng(seed).integers(1, V, size=(4, 7))
    data[:, 0] = 1
    data[0, -2:] = PAD                    # padding: one row ends early, one position of another
    data[2, 3] = PAD
    BATCHES.append(data)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_annotated_transformer_trains_and_decodes_as_in_torch(dtype):
    ours, theirs = twins(annotated_transformer, torch, seed=1, dtype=dtype)
    # float32: the first step is compared at 2e-4; after it, the noise-driven coordinates (above) have
    # moved the two runs apart by ~1e-3 of the values, so later steps and the decode are compared at 1e-2
    tolerances = [TOLERANCES[dtype] * 10, 1e-2, 1e-2] if dtype == "float32" else [TOLERANCES[dtype]] * 3
    run = {}
    for L, model in ((minigrad, ours), (torch, theirs)):
        optimizer = L.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
        scheduler = L.optim.lr_scheduler.LambdaLR(optimizer=optimizer,
                                                  lr_lambda=lambda step: rate(step, D_MODEL, factor=1.0, warmup=4))
        run[L] = (model, optimizer, scheduler, label_smoothing(L))
    noisy, bound = {}, 0.0
    for step, data in enumerate(BATCHES):
        tolerance = tolerances[step]
        results = {}
        for L in (minigrad, torch):
            model, optimizer, scheduler, criterion = run[L]
            src = L.tensor(data).requires_grad_(False).clone().detach()
            batch = Batch(L, src, src.clone(), PAD)
            out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
            loss, loss_node = loss_compute(model, criterion, out, batch.tgt_y, batch.ntokens)
            loss_node.backward()
            results[L] = (loss, loss_node, criterion.true_dist, optimizer.param_groups[0]["lr"], batch.ntokens)
        (our_loss, our_node, our_dist, our_lr, our_n), (their_loss, their_node, their_dist, their_lr, their_n) = \
            results[minigrad], results[torch]
        assert int(our_n) == int(their_n) and our_lr == pytest.approx(their_lr, rel=1e-12)
        assert our_node.dtype == getattr(minigrad, dtype) and our_dist.dtype == our_node.dtype
        close(our_dist, their_dist, f"smoothed targets at step {step}", tolerance)
        close(our_loss, their_loss, f"loss at step {step}", tolerance)
        close(our_node, their_node, f"normalised loss at step {step}", tolerance)
        same_gradients(ours, theirs, tolerance)
        noisy = noise_driven(ours, theirs, dtype, noisy)
        our_named, their_named = dict(ours.named_parameters()), dict(theirs.named_parameters())
        for name in KEY_BIASES:     # noise, or exactly 0 in both (a GPU's float32 sums can cancel exactly)
            zero = (their_named[name].grad.numpy() == 0) & (our_named[name].grad.numpy() == 0)
            assert (noisy[name] | zero).all(), name
        assert sum(int(n.sum()) for n in noisy.values()) <= 0.03 * sum(p.numel() for p in theirs.parameters())
        bound += 3 * our_lr
        for L in (minigrad, torch):
            model, optimizer, scheduler, _ = run[L]
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
        same_parameters_but_noise(ours, theirs, noisy, bound, tolerance, f"after step {step + 1}")
    decoded = {}
    for L, model in ((minigrad, ours), (torch, theirs)):
        model.eval()
        src = L.LongTensor([[1, 2, 3, 4, 5, 6, 7]])
        with L.no_grad():
            decoded[L] = greedy_decode(L, model, src, L.ones(1, 1, 7), max_len=7, start_symbol=1)
    (our_ys, our_log_probs), (their_ys, their_log_probs) = decoded[minigrad], decoded[torch]
    assert our_ys.dtype == minigrad.long and our_ys.tolist() == their_ys.tolist()
    assert our_log_probs.dtype == getattr(minigrad, dtype)
    close(our_log_probs, their_log_probs, "log-probabilities while decoding", tolerance)
