"""Program pattern: a word-level language model as in pytorch/examples' word_language_model
(an RNN model with LSTM / GRU / RNN_TANH and optional tied weights; a Transformer model with
sinusoidal positional encoding and the float square subsequent mask).  Written here from
PyTorch's API, run in minigrad and in torch from the same weights: outputs, every gradient and
3 SGD steps (with gradient clipping) agree in float64."""
import math

import pytest

from program_parity import close, train_side_by_side, twins

torch = pytest.importorskip("torch")

VOCAB, EMBED, HIDDEN, LAYERS, T, BATCH = 11, 6, 6, 2, 5, 3


def recurrent_lm(L, cell, tied):
    """Embedding -> RNN stack -> Linear decoder -> log-probabilities; the hidden state goes in and out."""
    class RecurrentLM(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = L.nn.Dropout(0.0)
            self.encoder = L.nn.Embedding(VOCAB, EMBED)
            if cell == "RNN_TANH":
                self.rnn = L.nn.RNN(EMBED, HIDDEN, LAYERS, nonlinearity="tanh", dropout=0.0)
            else:
                self.rnn = getattr(L.nn, cell)(EMBED, HIDDEN, LAYERS, dropout=0.0)
            self.decoder = L.nn.Linear(HIDDEN, VOCAB)
            if tied:
                self.decoder.weight = self.encoder.weight
            L.nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            L.nn.init.zeros_(self.decoder.bias)

        def forward(self, ids, hidden):
            embedded = self.drop(self.encoder(ids))                  # (T, N, E)
            output, hidden = self.rnn(embedded, hidden)
            logits = self.decoder(self.drop(output)).view(-1, VOCAB)
            return L.nn.functional.log_softmax(logits, dim=1), hidden

        def init_hidden(self, batch):
            weight = next(self.parameters())
            zeros = weight.new_zeros(LAYERS, batch, HIDDEN)
            return (zeros, weight.new_zeros(LAYERS, batch, HIDDEN)) if cell == "LSTM" else zeros

    return RecurrentLM()


def transformer_lm(L):
    """Embedding * sqrt(E) -> positional encoding -> TransformerEncoder with a causal float mask."""
    class PositionalEncoding(L.nn.Module):
        def __init__(self, d_model, max_len=32):
            super().__init__()
            table = L.zeros(max_len, d_model)
            position = L.arange(0, max_len, dtype=L.float).unsqueeze(1)
            frequencies = L.exp(L.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            table[:, 0::2] = L.sin(position * frequencies)              # index assignment into a buffer
            table[:, 1::2] = L.cos(position * frequencies)
            self.register_buffer("pe", table.unsqueeze(0).transpose(0, 1))   # (max_len, 1, d_model)

        def forward(self, x):
            return x + self.pe[:x.size(0), :]

    class TransformerLM(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.input_emb = L.nn.Embedding(VOCAB, EMBED)
            self.pos_encoder = PositionalEncoding(EMBED)
            layer = L.nn.TransformerEncoderLayer(EMBED, 2, 8, dropout=0.0)
            self.encoder = L.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.decoder = L.nn.Linear(EMBED, VOCAB)

        def forward(self, ids):
            mask = L.triu(L.full((len(ids), len(ids)), float("-inf"), dtype=L.float64), diagonal=1)
            x = self.pos_encoder(self.input_emb(ids) * math.sqrt(EMBED))
            output = self.encoder(x, mask=mask)
            return L.nn.functional.log_softmax(self.decoder(output), dim=-1)

    return TransformerLM()


def batches(library, step):
    generator = torch.Generator().manual_seed(step)
    ids = torch.randint(0, VOCAB, (T + 1, BATCH), generator=generator)
    return library.tensor(ids[:-1].numpy()), library.tensor(ids[1:].numpy())


@pytest.mark.parametrize("cell, tied", [("LSTM", False), ("LSTM", True), ("GRU", True), ("RNN_TANH", False)])
def test_recurrent_language_model_matches_torch(cell, tied):
    ours, theirs = twins(lambda L: recurrent_lm(L, cell, tied), torch)
    assert (ours.decoder.weight is ours.encoder.weight) == tied
    criterion = {id(ours): __import__("minigrad").nn.NLLLoss(), id(theirs): torch.nn.NLLLoss()}
    hidden = {id(ours): ours.init_hidden(BATCH), id(theirs): theirs.init_hidden(BATCH)}

    def loss_of(L, model, step):
        ids, targets = batches(L, step)
        state = hidden[id(model)]
        state = tuple(h.detach() for h in state) if isinstance(state, tuple) else state.detach()
        log_probs, hidden[id(model)] = model(ids, state)
        return criterion[id(model)](log_probs, targets.view(-1))

    import minigrad
    optimizers = (minigrad.optim.SGD(ours.parameters(), lr=0.5), torch.optim.SGD(theirs.parameters(), lr=0.5))
    train_side_by_side(ours, theirs, optimizers, loss_of, clip=0.25)
    ours_h, theirs_h = hidden[id(ours)], hidden[id(theirs)]
    for mine, their in zip(ours_h if isinstance(ours_h, tuple) else (ours_h,),
                           theirs_h if isinstance(theirs_h, tuple) else (theirs_h,)):
        close(mine, their, "final hidden state")


def test_transformer_language_model_matches_torch():
    ours, theirs = twins(transformer_lm, torch)
    close(ours.pos_encoder.pe, theirs.pos_encoder.pe, "positional encoding table")

    def loss_of(L, model, step):
        ids, targets = batches(L, step)
        return L.nn.functional.nll_loss(model(ids).view(-1, VOCAB), targets.reshape(-1))

    import minigrad
    optimizers = (minigrad.optim.SGD(ours.parameters(), lr=0.5), torch.optim.SGD(theirs.parameters(), lr=0.5))
    train_side_by_side(ours, theirs, optimizers, loss_of, clip=0.25)
