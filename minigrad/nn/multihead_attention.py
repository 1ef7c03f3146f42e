"""Multi-head attention (Vaswani et al., 2017) with PyTorch's parameters, arguments and masks.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,   head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

Parameters, named and laid out as PyTorch's (so state dicts move between the two as they are):

    in_proj_weight (3E, E) = [W^Q; W^K; W^V] and in_proj_bias (3E,)     when kdim = vdim = E
    q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight (E, vdim) and in_proj_bias  otherwise
    out_proj: Linear(E, E)

Masks, PyTorch's rules for this layer (note: the opposite of F.scaled_dot_product_attention's
boolean attn_mask):

    key_padding_mask (N, S):                      bool True = ignore that key; or float, added
    attn_mask (Tq, S) or (N * num_heads, Tq, S):  bool True = may NOT attend; or float, added

``_attention_bias`` turns them (and is_causal) into minigrad's one mask, the bias B added
to the scores (minigrad/masks.py), and hands it to F.scaled_dot_product_attention as a float
attn_mask, which that function adds as it is.

``from_torch_state_dict`` / ``to_torch_state_dict`` stay for checkpoints written
when minigrad kept q_proj/k_proj/v_proj as separate Linear layers.
"""
from collections import OrderedDict

from .. import backend, checks
from ..functional import dropout, linear, merge_heads, scaled_dot_product_attention, split_heads
from ..masks import attention_bias, causal_mask
from ..creation import cat, empty
from . import init
from .linear import Linear
from .module import Module, Parameter, _host_array


class MultiheadAttention(Module):
    """Multi-head attention; embed_dim E is split into num_heads heads of E / num_heads features.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
            average_attn_weights=True, is_causal=False) -> (output, weights)

        query (Tq, N, E), key (S, N, kdim), value (S, N, vdim)   ((N, T, .) if batch_first;
            (T, .) for one unbatched sequence)
        output (Tq, N, E); weights (N, Tq, S) averaged over heads, or (N, num_heads, Tq, S)
        when average_attn_weights=False, or None when need_weights=False.
        is_causal: query t attends to keys <= t.  (PyTorch takes it as a hint and needs the
        causal attn_mask too; minigrad builds the mask itself when attn_mask is None.)

    minigrad's own keyword-only arguments serve incremental decoding: ``cache`` (a
    dict) keeps the projected keys and values, so a later call with only the new
    query positions attends to every earlier position too.  For self-attention the
    new keys/values are appended; with ``static_kv`` (cross-attention to a fixed
    encoder output) they are computed once.  ``reference=True`` runs the reference tier of the
    attention (see F.scaled_dot_product_attention); ``self.reference`` may be changed later.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None, *, reference=False):
        super().__init__()
        self.reference = reference
        if embed_dim % num_heads != 0:
            raise ValueError(f"MultiheadAttention: embed_dim={embed_dim} is not divisible by "
                             f"num_heads={num_heads} (each head gets embed_dim / num_heads features)")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not implemented "
                                      "in minigrad (append a learned key/value to the inputs yourself)")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first = batch_first
        options = dict(dtype=dtype, device=device)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **options))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **options))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **options))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **options))
        self.in_proj_bias = Parameter(empty(3 * embed_dim, **options)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **options)
        self.reset_parameters()

    def reset_parameters(self):
        """As PyTorch: Xavier-uniform input projections (over the packed (3E, E) matrix when
        kdim = vdim = E), zero biases; out_proj keeps Linear's weight init."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    # -------------------------------------------------------------- the three input projections
    def _rows(self, which):
        """Projection 0 (queries), 1 (keys) or 2 (values): its rows of the packed in_proj_weight and
        in_proj_bias (and its columns of their product)."""
        return slice(which * self.embed_dim, (which + 1) * self.embed_dim)

    def _projection(self, which):
        """(weight, bias) of projection 0 (queries), 1 (keys) or 2 (values): rows of the packed ones."""
        rows = self._rows(which)
        if self.in_proj_weight is not None:
            weight = self.in_proj_weight[rows]
        else:
            weight = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[which]
        return weight, (None if self.in_proj_bias is None else self.in_proj_bias[rows])

    def q_proj(self, query):
        """query W^Q + b^Q  (..., E) -> (..., E)"""
        return linear(query, *self._projection(0))

    def k_proj(self, key):
        """key W^K + b^K  (..., kdim) -> (..., E)"""
        return linear(key, *self._projection(1))

    def v_proj(self, value):
        """value W^V + b^V  (..., vdim) -> (..., E)"""
        return linear(value, *self._projection(2))

    def _check(self, query, key, value):
        if query.shape[-1] != self.embed_dim or key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(
                f"MultiheadAttention: expected query (..., {self.embed_dim}), key (..., {self.kdim}), "
                f"value (..., {self.vdim}); got query {query.shape}, key {key.shape}, value {value.shape}"
            )
        if key.shape[:-1] != value.shape[:-1]:
            raise ValueError(f"MultiheadAttention: key {key.shape} and value {value.shape} must have the "
                             "same length and batch size (one value per key)")
        if query.ndim != key.ndim or (query.ndim == 3 and query.shape[0] != key.shape[0]):
            raise ValueError(f"MultiheadAttention: query {query.shape} and key {key.shape} have different "
                             "batch sizes (after batch_first handling)")

    # -------------------------------------------------------------- masks
    def _attention_bias(self, key_padding_mask, attn_mask, is_causal, n, tq, s, past, unbatched, device, dtype):
        """The masks as one bias B added to the scores, broadcastable to (N, heads, Tq, S); None
        without masks.  PyTorch's meaning for this layer: a boolean mask's True = may NOT attend
        (B = -inf); a float mask is added as it is (one that requires grad gets its gradient).
        Every mask is checked against PyTorch's shapes."""
        parts = []
        if key_padding_mask is not None:
            padding = attention_bias(key_padding_mask, dtype, "may not attend", "MultiheadAttention: key_padding_mask")
            if unbatched and tuple(padding.shape) == (s,):
                padding = padding.reshape(1, s)
            if tuple(padding.shape) != (n, s):
                raise ValueError(f"MultiheadAttention: key_padding_mask must have shape (N, S) = {(n, s)}, "
                                 f"got {tuple(padding.shape)}")
            parts.append(padding.reshape(n, 1, 1, s))
        if attn_mask is not None:
            given = attention_bias(attn_mask, dtype, "may not attend", "MultiheadAttention: attn_mask")
            if tuple(given.shape) == (n * self.num_heads, tq, s):
                given = given.reshape(n, self.num_heads, tq, s)
            elif tuple(given.shape) != (tq, s):
                raise ValueError(f"MultiheadAttention: attn_mask must have shape (Tq, S) = {(tq, s)} or "
                                 f"(N * num_heads, Tq, S) = {(n * self.num_heads, tq, s)}, got {tuple(given.shape)}")
            parts.append(given)
        if is_causal and s > past + 1:      # query i sees keys j <= past + i: s <= past + 1 blocks none (decoding)
            parts.append(attention_bias(causal_mask(tq, s, device=device, offset=past), dtype, "may not attend"))
        return sum(parts[1:], parts[0]) if parts else None       # masks combine by adding their biases

    # -------------------------------------------------------------- forward
    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False, *, cache=None, static_kv=False):
        checks.tensors("MultiheadAttention", query=query, key=key, value=value)
        same_input = query is key and key is value
        unbatched = query.ndim == 2
        if unbatched:                       # one sequence (T, E): a batch of one
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        elif not self.batch_first:          # (T, N, E) -> (N, T, E)
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        self._check(query, key, value)
        n, tq = query.shape[0], query.shape[1]
        h = self.num_heads
        past = 0                            # positions already in the cache (self-attention decoding)

        if same_input and self.in_proj_weight is not None and not static_kv:    # one matmul for Q, K and V
            qkv = split_heads(linear(query, self.in_proj_weight, self.in_proj_bias), 3 * h)   # (N, 3h, T, Dh)
            q, k, v = qkv.split(h, dim=1)       # Q's heads first, then K's and V's: each (N, h, T, Dh)
        else:
            q = split_heads(self.q_proj(query), h)               # (N, h, Tq, Dh)
            if cache is not None and static_kv and "k" in cache:
                k, v = cache["k"], cache["v"]                    # the encoder output, projected once
            else:
                k = split_heads(self.k_proj(key), h)             # (N, h, S, Dh)
                v = split_heads(self.v_proj(value), h)
        if cache is not None and not static_kv and "k" in cache:   # self-attention decoding: append
            past = cache["k"].shape[2]
            k = cat([cache["k"], k], dim=2)                      # earlier positions first
            v = cat([cache["v"], v], dim=2)
        if cache is not None:
            cache["k"], cache["v"] = k, v
        s = k.shape[2]
        if key_padding_mask is not None and cache is not None and not static_kv:
            raise ValueError("MultiheadAttention: key_padding_mask with a self-attention cache is not supported")

        bias = self._attention_bias(key_padding_mask, attn_mask, is_causal, n, tq, s, past, unbatched,
                                    query.device, q.dtype)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights and dropout_p > 0.0:        # PyTorch returns the weights after dropout
            weights = dropout(scaled_dot_product_attention(q, k, v, bias, return_weights=True,
                                                           reference=self.reference)[1], dropout_p)
            out = weights @ v
        else:
            result = scaled_dot_product_attention(q, k, v, bias, dropout_p, return_weights=need_weights,
                                                  reference=self.reference)
            out, weights = result if need_weights else (result, None)
        out = self.out_proj(merge_heads(out))                    # (N, Tq, E)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)                        # (N, Tq, S)
        if unbatched:
            return out.squeeze(0), (None if weights is None else weights.squeeze(0))
        if not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _upgrade_state_dict(self, prefix, state_dict):
        """Called by load_state_dict: pack the keys of a checkpoint written when minigrad kept
        q_proj/k_proj/v_proj as Linear layers into PyTorch's (in place, for this layer only)."""
        if f"{prefix}q_proj.weight" not in state_dict:
            return
        old = OrderedDict((k, state_dict.pop(k)) for k in list(state_dict)
                          if k.startswith(prefix) and k[len(prefix):].split(".")[0] in _LEGACY)
        old[f"{prefix}out_proj.weight"] = state_dict[f"{prefix}out_proj.weight"]
        for name, value in from_torch_state_dict(old).items():
            state_dict.setdefault(name, value)

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, " \
               f"batch_first={self.batch_first}"


# ----------------------------------------------------------------------------- old checkpoints

_LEGACY = ("q_proj", "k_proj", "v_proj")


def from_torch_state_dict(state_dict):
    """A state dict in PyTorch's MultiheadAttention layout, as an OrderedDict of NumPy arrays.

    minigrad's MultiheadAttention now has PyTorch's parameters, so a PyTorch state dict
    loads as it is (``model.load_state_dict(torch_model.state_dict())``).  This function
    also packs the keys of older minigrad checkpoints (``attn.q_proj.weight``, ...) into
    ``attn.in_proj_weight`` / ``attn.in_proj_bias`` (or ``q_proj_weight`` ... when the
    shapes differ); every other key passes through.
    """
    xp = backend.get_module("cpu")
    arrays = OrderedDict((name, _host_array(value)) for name, value in state_dict.items())
    out = OrderedDict()
    for name, value in arrays.items():
        prefix, _, leaf = name.rpartition(".")          # leaf: weight / bias
        owner, _, proj = prefix.rpartition(".")         # proj: q_proj / k_proj / v_proj
        base = owner + "." if owner else ""
        if proj not in _LEGACY or f"{base}out_proj.weight" not in arrays:
            out[name] = value                           # not an old MultiheadAttention key
            continue
        if proj != "q_proj":
            continue                                    # written together with q_proj
        parts = [arrays[f"{base}{p}_proj.{leaf}"] for p in "qkv"]
        if leaf == "bias" or all(p.shape == parts[0].shape for p in parts):
            out[f"{base}in_proj_{leaf}"] = xp.concatenate(parts, axis=0)
        else:
            for p, array in zip("qkv", parts):
                out[f"{base}{p}_proj_weight"] = array
    return out


to_torch_state_dict = from_torch_state_dict
