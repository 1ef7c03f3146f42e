"""The Transformer (Vaswani et al., 2017), layer by layer, with PyTorch's names and arguments.

    TransformerEncoderLayer   self-attention, then a position-wise feed-forward network
    TransformerDecoderLayer   masked self-attention, attention to the encoder output, feed-forward
    TransformerEncoder, TransformerDecoder   stacks of copies of a layer (+ optional final norm)
    Transformer               the encoder-decoder

Each sub-block is wrapped in a residual connection and a LayerNorm, in one of two places:

    post-LN (norm_first=False, the paper):   x = norm(x + sublayer(x))
    pre-LN  (norm_first=True):               x = x + sublayer(norm(x))

Parameter names equal PyTorch's, so ``model.load_state_dict(torch_model.state_dict())`` works.

Masks follow nn.MultiheadAttention's rules (PyTorch's): boolean, True = may not attend, or
float, added to the scores; the layers hand them to their MultiheadAttention as they are.
Shapes: (T, N, E), or (N, T, E) with batch_first.

``reference=True`` (every constructor; stored as ``self.reference`` and given to each
MultiheadAttention and LayerNorm) runs the reference tier of the attention and of the layer norm,
minigrad/functions/attention.py and normalization.py.
The path to its equations: layer.forward -> MultiheadAttention.forward ->
F.scaled_dot_product_attention -> ScaledDotProductAttention.

Decoding and evaluation run the same forward as training: under no_grad the engine records
no graph (autograd.py), which is what PyTorch's encoder layer "fast path" buys there.
"""
import copy

from .. import checks, functional as F
from ..masks import attention_bias, causal_mask
from ..tensor import get_default_dtype
from .activation import Dropout
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Linear
from .module import Module
from .normalization import LayerNorm
from .tiers import reference_tier
from . import init


def _activation(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise ValueError(f'activation must be "relu", "gelu" or a callable, got {activation!r}')


def _residual(x, norm, norm_first, sublayer):
    """One sub-block with its residual connection and LayerNorm, pre-LN or post-LN (module docstring)."""
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


def _decoder_caches(cache):
    """A decoder layer's cache dict -> (its self-attention's, its attention-to-memory's), each made empty
    at the first call; (None, None) without a cache."""
    if cache is None:
        return None, None
    return cache.setdefault("self", {}), cache.setdefault("cross", {})


def _feed_forward(layer, x):
    """FeedForward(x) = linear2(dropout(activation(linear1(x)))): d_model -> dim_feedforward -> d_model."""
    return layer.linear2(layer.dropout(layer.activation(layer.linear1(x))))


class TransformerEncoderLayer(Module):
    """x -> x + SelfAttention(x) -> x + FeedForward(x), each with dropout and LayerNorm.

    FeedForward(x) = linear2(dropout(activation(linear1(x)))),  d_model -> dim_feedforward -> d_model.

    forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False) -> same shape as src
        src_mask (T, T) bool (True = may not attend) or float (added); src_key_padding_mask (N, T), True at padding.
    ``cache`` (a dict, see MultiheadAttention) lets a decoder-only model feed one
    new position at a time; use it with is_causal=True.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None,
                 *, reference=False):
        super().__init__()
        self.reference = reference
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            device=device, dtype=dtype, reference=reference)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype, reference=reference)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype, reference=reference)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False, cache=None):
        checks.tensors("TransformerEncoderLayer", src=src)

        def self_attention(x):
            return self.dropout1(self.self_attn(x, x, x, attn_mask=src_mask, key_padding_mask=src_key_padding_mask,
                                                need_weights=False, is_causal=is_causal, cache=cache)[0])

        x = _residual(src, self.norm1, self.norm_first, self_attention)
        return _residual(x, self.norm2, self.norm_first, lambda x: self.dropout2(_feed_forward(self, x)))


class TransformerDecoderLayer(Module):
    """x -> x + SelfAttention(x, causal) -> x + Attention(x, memory) -> x + FeedForward(x).

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
            memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)
        tgt (T, N, E), memory (S, N, E) (the encoder output); tgt_mask (T, T) bool,
        memory_mask (T, S) bool, *_key_padding_mask (N, T) / (N, S) bool.
    ``cache`` (a dict) holds this layer's past self-attention keys/values and the
    projected memory, for incremental decoding (see models.TransformerTranslator).
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None,
                 *, reference=False):
        super().__init__()
        self.reference = reference
        attention = dict(dropout=dropout, bias=bias, batch_first=batch_first, device=device, dtype=dtype,
                         reference=reference)
        self.self_attn = MultiheadAttention(d_model, nhead, **attention)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **attention)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype, reference=reference)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype, reference=reference)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype, reference=reference)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False, cache=None):
        checks.tensors("TransformerDecoderLayer", tgt=tgt, memory=memory)
        self_cache, cross_cache = _decoder_caches(cache)

        def self_attention(x):
            return self.dropout1(self.self_attn(x, x, x, attn_mask=tgt_mask, key_padding_mask=tgt_key_padding_mask,
                                                need_weights=False, is_causal=tgt_is_causal, cache=self_cache)[0])

        def memory_attention(x):
            return self.dropout2(self.multihead_attn(x, memory, memory, attn_mask=memory_mask,
                                                     key_padding_mask=memory_key_padding_mask, need_weights=False,
                                                     is_causal=memory_is_causal, cache=cross_cache,
                                                     static_kv=True)[0])

        x = _residual(tgt, self.norm1, self.norm_first, self_attention)
        x = _residual(x, self.norm2, self.norm_first, memory_attention)
        return _residual(x, self.norm3, self.norm_first, lambda x: self.dropout3(_feed_forward(self, x)))


def _copies(layer, num_layers, reference):
    """num_layers deep copies of ``layer`` (separate weights), on the tier ``reference`` names (None: the layer's)."""
    layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
    return layers if reference is None else reference_tier(layers, reference)


class TransformerEncoder(Module):
    """num_layers copies of ``encoder_layer`` (deep copies: separate weights), then ``norm`` if given.

    reference: True or False puts every copy on that tier of the attention; None keeps the layer's."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True, *,
                 reference=None):
        super().__init__()      # (enable_nested_tensor and mask_check are PyTorch speed options: no effect here)
        self.reference = encoder_layer.reference if reference is None else reference
        self.layers = _copies(encoder_layer, num_layers, reference)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=False, cache=None):
        """cache: None, or a list with one dict per layer (incremental decoding)."""
        checks.tensors("TransformerEncoder", src=src)
        x = src
        for i, layer in enumerate(self.layers):
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal,
                      cache=None if cache is None else cache[i])
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """num_layers copies of ``decoder_layer``, each attending to the same ``memory``, then ``norm`` if given.

    reference: True or False puts every copy on that tier of the attention; None keeps the layer's."""

    def __init__(self, decoder_layer, num_layers, norm=None, *, reference=None):
        super().__init__()
        self.reference = decoder_layer.reference if reference is None else reference
        self.layers = _copies(decoder_layer, num_layers, reference)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False, cache=None):
        """cache: None, or a list with one dict per layer (incremental decoding)."""
        checks.tensors("TransformerDecoder", tgt=tgt, memory=memory)
        x = tgt
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal,
                      cache=None if cache is None else cache[i])
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """Encoder-decoder Transformer: memory = encoder(src); output = decoder(tgt, memory).

    Both stacks end with a LayerNorm (``encoder.norm``, ``decoder.norm``), as in
    PyTorch; every weight matrix starts Xavier-uniform.

    forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
            tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=False,
            tgt_is_causal=False, memory_is_causal=False)
        src (S, N, E), tgt (T, N, E) -> (T, N, E)   ((N, ., E) with batch_first)
    reference: the tier of the attention in the layers it builds (custom_encoder and custom_decoder keep theirs).
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None, *, reference=False):
        super().__init__()
        self.reference = reference
        options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first,
                       bias=bias, device=device, dtype=dtype, reference=reference)
        norm = dict(eps=layer_norm_eps, bias=bias, device=device, dtype=dtype, reference=reference)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **options), num_encoder_layers, LayerNorm(d_model, **norm))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **options), num_decoder_layers, LayerNorm(d_model, **norm))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=False,
                tgt_is_causal=False, memory_is_causal=False):
        checks.tensors("Transformer", src=src, tgt=tgt)
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise ValueError(f"Transformer: src {src.shape} and tgt {tgt.shape} have different batch sizes")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: src {src.shape} and tgt {tgt.shape} must end in d_model={self.d_model}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """(sz, sz) float, -inf above the diagonal and 0 elsewhere, as PyTorch's (added to the scores).

        minigrad's boolean form (True above the diagonal) is ``minigrad.masks.causal_mask(sz)``.
        """
        dtype = get_default_dtype() if dtype is None else dtype
        return attention_bias(causal_mask(sz, device=device), dtype, "may not attend")
