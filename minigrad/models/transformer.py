"""Ready Transformer models for the lessons (all batch-first: ids are (N, T)).

    TransformerClassifier   embedding + positions + encoder + mean/max pooling + linear
    TransformerTranslator   encoder-decoder; embeddings scaled by sqrt(d_model)
    CausalLM                decoder-only (GPT-style) language model

The two generating models implement the decoder protocol of ``minigrad.decoding``:

    state = model.initial_state(...)           translator: (src); language model: (N)
    log_probs, state = model.step(tokens, state)   tokens (N,) -> log_probs (N, V)
    state = model.reorder(state, indices)     pick/duplicate rows, for beam search

The state keeps, for every layer, the keys and values of all positions fed so
far (a "KV cache") and, for the translator, the encoder output and its
projection in each cross-attention, so generating n tokens runs the encoder
once and each new token costs one position, not the whole prefix.
"""
import math

from .. import nn
from ..masks import causal_mask, padding_mask
from ..decoding import select_rows


def _positions(kind, max_len, d_model, dropout, device, dtype):
    if kind == "sinusoidal":
        return nn.SinusoidalPositionalEncoding(d_model, max_len, dropout, batch_first=True, device=device, dtype=dtype)
    if kind == "learned":
        return nn.LearnedPositionalEmbedding(max_len, d_model, dropout, batch_first=True, device=device, dtype=dtype)
    raise ValueError(f'positional must be "sinusoidal" or "learned", got {kind!r}')


def _copy_cache(cache):
    """A new list of new dicts holding the same tensors: step() never changes the state it was given."""
    return [{name: dict(part) if isinstance(part, dict) else part for name, part in layer.items()}
            for layer in cache]


class TransformerClassifier(nn.Module):
    """ids (N, T) -> class logits (N, num_classes).

    h = encoder(embedding(ids) + positions), padding masked out; pooled over
    the non-padding positions by ``pooling`` ("mean" or "max"), then a Linear.
    ``embedding_norm=True`` puts a LayerNorm after embedding + positions, as BERT
    and the Technion tutorial's IMDB classifier do (lesson 11, ``--data imdb``).
    """

    def __init__(self, vocab_size, num_classes, d_model=64, nhead=4, num_layers=2, dim_feedforward=128,
                 dropout=0.1, max_len=512, pad_idx=0, pooling="mean", positional="sinusoidal",
                 activation="relu", norm_first=False, embedding_norm=False, device=None, dtype=None):
        super().__init__()
        if pooling not in ("mean", "max"):
            raise ValueError(f'pooling must be "mean" or "max", got {pooling!r}')
        self.pad_idx, self.pooling = pad_idx, pooling
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx, device=device, dtype=dtype)
        self.positions = _positions(positional, max_len, d_model, dropout, device, dtype)
        self.embedding_norm = nn.LayerNorm(d_model, device=device, dtype=dtype) if embedding_norm else None
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                           batch_first=True, norm_first=norm_first, device=device, dtype=dtype)
        self.encoder = nn.TransformerEncoder(layer, num_layers,
                                             nn.LayerNorm(d_model, device=device, dtype=dtype) if norm_first else None)
        self.classifier = nn.Linear(d_model, num_classes, device=device, dtype=dtype)

    def forward(self, ids):
        pad = padding_mask(ids, self.pad_idx)                                  # (N, T) True at padding
        x = self.positions(self.embedding(ids))                                # (N, T, d)
        if self.embedding_norm is not None:
            x = self.embedding_norm(x)
        h = self.encoder(x, src_key_padding_mask=pad)                          # (N, T, d)
        keep = (~pad).unsqueeze(-1)                                            # (N, T, 1)
        if self.pooling == "mean":
            counts = keep.sum(dim=1).type(h.dtype)                             # (N, 1)
            pooled = (h * keep.type(h.dtype)).sum(dim=1) / counts.masked_fill(counts == 0, 1.0)
        else:
            pooled = h.masked_fill(pad.unsqueeze(-1), -1e30).amax(dim=1)       # padding never wins
        return self.classifier(pooled)


class TransformerTranslator(nn.Module):
    """Encoder-decoder translation model: (src (N, S), tgt_in (N, T)) -> logits (N, T, tgt_vocab).

    Token embeddings are multiplied by sqrt(d_model) before the sinusoidal
    positions are added (Vaswani et al., section 3.4).  tgt_in is the target
    shifted right (starting with <bos>); the decoder is causal.
    """

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=64, nhead=4, num_encoder_layers=2,
                 num_decoder_layers=2, dim_feedforward=128, dropout=0.1, max_len=512, pad_idx=0,
                 activation="relu", norm_first=False, device=None, dtype=None):
        super().__init__()
        self.pad_idx, self.d_model = pad_idx, d_model
        self.src_embedding = nn.Embedding(src_vocab_size, d_model, padding_idx=pad_idx, device=device, dtype=dtype)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model, padding_idx=pad_idx, device=device, dtype=dtype)
        self.positions = nn.SinusoidalPositionalEncoding(d_model, max_len, dropout, batch_first=True,
                                                         device=device, dtype=dtype)
        self.transformer = nn.Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward,
                                          dropout, activation, batch_first=True, norm_first=norm_first,
                                          device=device, dtype=dtype)
        self.generator = nn.Linear(d_model, tgt_vocab_size, device=device, dtype=dtype)

    def _embed(self, embedding, ids, offset=0):
        return self.positions(embedding(ids) * math.sqrt(self.d_model), offset=offset)

    def encode(self, src):
        """src (N, S) -> (memory (N, S, d), source padding mask (N, S))."""
        src_pad = padding_mask(src, self.pad_idx)
        memory = self.transformer.encoder(self._embed(self.src_embedding, src), src_key_padding_mask=src_pad)
        return memory, src_pad

    def decode(self, tgt_in, memory, src_pad):
        """tgt_in (N, T) -> logits (N, T, V), every position at once (teacher forcing)."""
        t = tgt_in.shape[1]
        h = self.transformer.decoder(self._embed(self.tgt_embedding, tgt_in), memory,
                                     tgt_mask=causal_mask(t, device=tgt_in.device),
                                     tgt_key_padding_mask=padding_mask(tgt_in, self.pad_idx),
                                     memory_key_padding_mask=src_pad)
        return self.generator(h)

    def forward(self, src, tgt_in):
        memory, src_pad = self.encode(src)
        return self.decode(tgt_in, memory, src_pad)

    # ------------------------------------------------------------ decoder protocol
    def initial_state(self, src):
        """Encode ``src`` (N, S) once; the state starts with empty per-layer caches."""
        memory, src_pad = self.encode(src)
        cache = [{} for _ in self.transformer.decoder.layers]
        return {"memory": memory, "src_pad": src_pad, "cache": cache, "position": 0}

    def step(self, tokens, state):
        """tokens (N,) int64 -> (log_probs (N, V), state): feeds one position through the decoder."""
        cache = _copy_cache(state["cache"])
        position = state["position"]
        x = self._embed(self.tgt_embedding, tokens.reshape(-1, 1), offset=position)   # (N, 1, d)
        h = self.transformer.decoder(x, state["memory"], memory_key_padding_mask=state["src_pad"],
                                     tgt_is_causal=True, cache=cache)                  # (N, 1, d)
        log_probs = self.generator(h[:, -1]).log_softmax(-1)
        return log_probs, {"memory": state["memory"], "src_pad": state["src_pad"], "cache": cache,
                           "position": position + 1}

    def reorder(self, state, indices):
        return select_rows(state, indices, dim=0)


class CausalLM(nn.Module):
    """Decoder-only language model: ids (N, T) -> next-token logits (N, T, V).

    Token embedding + learned (or sinusoidal) positions, num_layers pre-LN
    self-attention blocks (TransformerEncoderLayer with a causal mask: position
    t sees positions <= t), a final LayerNorm and a Linear to the vocabulary.
    """

    def __init__(self, vocab_size, d_model=64, nhead=4, num_layers=2, dim_feedforward=256, dropout=0.1,
                 max_len=256, positional="learned", activation="gelu", norm_first=True, device=None, dtype=None):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(vocab_size, d_model, device=device, dtype=dtype)
        self.positions = _positions(positional, max_len, d_model, dropout, device, dtype)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                           batch_first=True, norm_first=norm_first, device=device, dtype=dtype)
        self.layers = nn.TransformerEncoder(layer, num_layers,
                                            nn.LayerNorm(d_model, device=device, dtype=dtype) if norm_first else None)
        self.lm_head = nn.Linear(d_model, vocab_size, device=device, dtype=dtype)

    def forward(self, ids):
        x = self.positions(self.embedding(ids))
        return self.lm_head(self.layers(x, is_causal=True))

    # ------------------------------------------------------------ decoder protocol
    def initial_state(self, batch_size):
        """Empty per-layer caches for ``batch_size`` sequences."""
        return {"cache": [{} for _ in self.layers.layers], "position": 0}

    def step(self, tokens, state):
        """tokens (N,) int64 -> (log_probs (N, V), state): one new position per sequence."""
        cache = _copy_cache(state["cache"])
        position = state["position"]
        x = self.positions(self.embedding(tokens.reshape(-1, 1)), offset=position)    # (N, 1, d)
        h = self.layers(x, is_causal=True, cache=cache)
        log_probs = self.lm_head(h[:, -1]).log_softmax(-1)
        return log_probs, {"cache": cache, "position": position + 1}

    def reorder(self, state, indices):
        return select_rows(state, indices, dim=0)
