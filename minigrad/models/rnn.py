"""Recurrent models that generate text, both implementing the decoder protocol of ``minigrad.decoding``.

    RNNLanguageModel   Embedding -> GRU or LSTM -> Linear: next-token logits
    Seq2Seq            a GRU encoder and a GRU decoder, optionally with (Luong) attention

Decoder protocol (see minigrad/decoding.py):

    state = lm.initial_state(N)              # zeros
    state = model.initial_state(src)         # the encoder's summary of a source batch
    log_probs, state = model.step(tokens, state)
    state = model.reorder(state, indices)
"""
from .. import backend, nn
from ..decoding import select_rows
from ..tensor import Tensor
from ..creation import cat, stack, zeros
from ..text.vocab import PAD_IDX

_CELLS = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}


def _recurrent(cell, input_size, hidden_size, num_layers, dropout, device, dtype):
    if cell not in _CELLS:
        raise ValueError(f"cell must be one of {sorted(_CELLS)}, got {cell!r}")
    return _CELLS[cell](input_size, hidden_size, num_layers, batch_first=True,
                        dropout=dropout if num_layers > 1 else 0.0, device=device, dtype=dtype)


def detach_state(state):
    """The state cut from the graph, for truncated BPTT: carry values over, not gradients."""
    if isinstance(state, tuple):
        return tuple(s.detach() for s in state)
    return None if state is None else state.detach()


class RNNLanguageModel(nn.Module):
    """ids (N, T) -> logits (N, T, V), reading left to right.

        x_t = Embedding(ids_t);  h_t = cell(x_t, h_{t-1});  logits_t = Linear(dropout(h_t))

    cell: "gru", "lstm" or "rnn".  tie_weights shares the embedding and output
    matrices (needs embedding_dim == hidden_size).
    """

    def __init__(self, vocab_size, embedding_dim=64, hidden_size=128, num_layers=1, cell="gru", dropout=0.0,
                 tie_weights=False, padding_idx=PAD_IDX, device=None, dtype=None):
        super().__init__()
        self.cell, self.num_layers, self.hidden_size = cell, num_layers, hidden_size
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=padding_idx, device=device, dtype=dtype)
        self.rnn = _recurrent(cell, embedding_dim, hidden_size, num_layers, dropout, device, dtype)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden_size, vocab_size, device=device, dtype=dtype)
        if tie_weights:
            if embedding_dim != hidden_size:
                raise ValueError("tie_weights needs embedding_dim == hidden_size")
            self.head.weight = self.embedding.weight

    def forward(self, ids, state=None):
        """ids (N, T) -> (logits (N, T, V), final state).  state: (layers, N, H), or (h, c) for an LSTM."""
        output, state = self.rnn(self.dropout(self.embedding(ids)), state)
        return self.head(self.dropout(output)), state

    # ------------------------------------------------------------ decoder protocol
    def initial_state(self, batch_size):
        """Zeros: (layers, N, H), or (h, c) for an LSTM."""
        weight = self.head.weight
        h = zeros(self.num_layers, batch_size, self.hidden_size, dtype=weight.dtype, device=weight.device)
        return (h, h) if self.cell == "lstm" else h

    def step(self, tokens, state):
        """tokens (N,) -> (log_probs (N, V), state): one position."""
        logits, state = self(tokens.reshape(-1, 1), state)
        return logits[:, 0].log_softmax(-1), state

    def reorder(self, state, indices):
        return select_rows(state, indices, dim=1)       # the batch is dim 1 of (layers, N, H)


_SCORES = {"dot": lambda H, device, dtype: nn.DotScore(),
           "bilinear": lambda H, device, dtype: nn.BilinearScore(H, H, device=device, dtype=dtype),
           "mlp": lambda H, device, dtype: nn.AdditiveScore(H, H, H, device=device, dtype=dtype)}


class Seq2Seq(nn.Module):
    """GRU encoder-decoder (Sutskever et al., 2014; Cho et al., 2014), attention optional (Luong et al., 2015).

    encode:  memory, h = GRU_enc(Embedding_src(src))          memory (N, S, H), h (layers, N, H)
    decode:  s_t = GRU_dec(Embedding_tgt(y_{t-1}), s_{t-1}), starting from s_0 = h
             without attention:  logits_t = Linear(s_t)
             with attention:     c_t, a_t = attention(s_t, memory)   (padding masked)
                                 logits_t = Linear([s_t; c_t])

    attention: None, "dot", "bilinear" or "mlp" (the score modules of nn.attention).
    Training uses teacher forcing: ``forward(src, tgt_in)`` feeds the true
    previous tokens (tgt_in = <bos> y_1 ... y_{T-1}) and returns all logits at once.
    """

    def __init__(self, src_vocab_size, tgt_vocab_size, embedding_dim=64, hidden_size=128, num_layers=1,
                 attention=None, dropout=0.0, padding_idx=PAD_IDX, device=None, dtype=None):
        super().__init__()
        self.padding_idx, self.use_attention = padding_idx, attention is not None
        self.src_embedding = nn.Embedding(src_vocab_size, embedding_dim, padding_idx, device=device, dtype=dtype)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, embedding_dim, padding_idx, device=device, dtype=dtype)
        self.encoder = _recurrent("gru", embedding_dim, hidden_size, num_layers, dropout, device, dtype)
        self.decoder = _recurrent("gru", embedding_dim, hidden_size, num_layers, dropout, device, dtype)
        if attention is not None:
            if attention not in _SCORES:
                raise ValueError(f"attention must be None or one of {sorted(_SCORES)}, got {attention!r}")
            self.attention = _SCORES[attention](hidden_size, device, dtype)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden_size * (2 if self.use_attention else 1), tgt_vocab_size,
                              device=device, dtype=dtype)

    def encode(self, src, src_lengths=None):
        """src (N, S) -> (memory (N, S, H), h (layers, N, H), pad mask (N, S), True at padding)."""
        memory, h = self.encoder(self.dropout(self.src_embedding(src)), None, src_lengths)
        return memory, h, src == self.padding_idx

    def _output(self, s, memory, pad_mask):
        """Decoder states s (N, T, H) -> (logits (N, T, V), attention weights (N, T, S) or None)."""
        if not self.use_attention:
            return self.head(self.dropout(s)), None
        context, weights = self.attention(s, memory, mask=pad_mask)     # (N, T, H), (N, T, S)
        return self.head(self.dropout(cat([s, context], dim=2))), weights

    def forward(self, src, tgt_in, src_lengths=None):
        """Teacher forcing: src (N, S), tgt_in (N, T) -> logits (N, T, V)."""
        memory, h, pad_mask = self.encode(src, src_lengths)
        s, _ = self.decoder(self.dropout(self.tgt_embedding(tgt_in)), h)
        return self._output(s, memory, pad_mask)[0]

    # ------------------------------------------------------------ decoder protocol
    def initial_state(self, src, src_lengths=None):
        """Encode a source batch once: {"h": (layers, N, H), "memory": (N, S, H), "pad_mask": (N, S)}."""
        memory, h, pad_mask = self.encode(src, src_lengths)
        return {"h": h, "memory": memory, "pad_mask": pad_mask}

    def step(self, tokens, state):
        """tokens (N,) -> (log_probs (N, V), state); the attention weights of this step are in state["weights"]."""
        s, h = self.decoder(self.tgt_embedding(tokens.reshape(-1, 1)), state["h"])
        logits, weights = self._output(s, state["memory"], state["pad_mask"])
        new_state = dict(state, h=h, weights=None if weights is None else weights[:, 0])
        return logits[:, 0].log_softmax(-1), new_state

    def reorder(self, state, indices):
        return {"h": select_rows(state["h"], indices, dim=1),
                "memory": select_rows(state["memory"], indices, dim=0),
                "pad_mask": select_rows(state["pad_mask"], indices, dim=0),
                "weights": select_rows(state.get("weights"), indices, dim=0)}

    def forward_free_running(self, src, tgt_in, teacher_forcing=0.5, src_lengths=None):
        """Log-probabilities (N, T, V), decoding step by step: the next input is the true token with
        probability ``teacher_forcing``, else the model's own argmax (scheduled sampling; seeded by manual_seed)."""
        state = self.initial_state(src, src_lengths)
        tokens, steps = tgt_in[:, 0], []
        for t in range(tgt_in.shape[1]):
            log_probs, state = self.step(tokens, state)
            steps.append(log_probs)
            if t + 1 < tgt_in.shape[1]:
                own = log_probs.argmax(-1)
                coin = backend.random_uniform((tokens.shape[0],), "float64", tokens.device) < teacher_forcing
                tokens = Tensor._from_array(backend.array_module(coin).where(coin, tgt_in._data[:, t + 1], own._data))
        return stack(steps, dim=1)
