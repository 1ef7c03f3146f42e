"""Assignment: a Transformer block from minigrad layers; minigrad differentiates it.

Pre-LayerNorm block, as in GPT-2:

    x = x + SelfAttention(LayerNorm(x))
    x = x + FeedForward(LayerNorm(x)),   FeedForward = Linear(d_model, d_ff) -> ReLU -> Linear(d_ff, d_model)

Shapes: N batch, T positions, d_model features, h heads of d_model / h features each.
Write only forward methods on minigrad Tensors: no ``.data``, no NumPy, so that
autograd can take the gradient of everything.

The attention inside is the library's reference tier,
``F.scaled_dot_product_attention(..., reference=True)``: the attention set's answer
(minigrad/functions/attention.py), imported, not written again.  What you write here,
the heads and the block around it, is a composition of minigrad's public layers;
nn.MultiheadAttention and nn.TransformerEncoderLayer(norm_first=True) compute the same.
"""
from minigrad import functional as F
from minigrad import nn


class SelfAttention(nn.Module):
    """Multi-head self-attention: one Linear makes q, k, v; another mixes the heads' outputs."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)      # [q | k | v] along the last dim
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        """x (N, T, d_model) -> (N, T, d_model)."""
        # BEGIN SOLUTION
        # HINT: split qkv(x) into q, k, v with .chunk(3, dim=-1), then each (N, T, d_model) into heads:
        # HINT: .reshape(N, T, h, d_head).transpose(1, 2) gives (N, h, T, d_head); undo it after attention
        # HINT: attention is F.scaled_dot_product_attention(..., reference=True), the attention set's answer;
        # HINT: its boolean attn_mask is PyTorch's, True = MAY attend: pass ~mask
        N, T, d_model = x.shape
        h = self.n_heads
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(N, T, h, d_model // h).transpose(1, 2) for t in (q, k, v))
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else ~mask,
                                               reference=True)           # (N, h, T, d_head)
        return self.proj(heads.transpose(1, 2).reshape(N, T, d_model))
        # END SOLUTION


class TransformerBlock(nn.Module):
    """x + attn(ln1(x)), then + ff(ln2(x)).   x (N, T, d_model) -> (N, T, d_model)."""

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask=None):
        # BEGIN SOLUTION
        # HINT: two residual connections, each around a LayerNorm followed by a sublayer
        x = x + self.attn(self.ln1(x), mask)
        return x + self.ff(self.ln2(x))
        # END SOLUTION
