"""Assignment: a Transformer block from minigrad layers; minigrad differentiates it.

Pre-LayerNorm block, as in GPT-2:

    x = x + SelfAttention(LayerNorm(x))
    x = x + FeedForward(LayerNorm(x)),   FeedForward = Linear(d_model, d_ff) -> ReLU -> Linear(d_ff, d_model)

Shapes: N batch, T positions, d_model features, h heads of d_model / h features each.
Write only forward methods and functions on minigrad Tensors: no ``.data``, no
NumPy, so that autograd can take the gradient of everything.
"""
import math

from minigrad import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    """q, k, v (N, h, T, d_head) Tensors -> (N, h, T, d_head).

    mask (T, T) bool Tensor or None: where it is True, a query may not look at
    that key (its score becomes -inf before the softmax).  True = blocked, as in
    minigrad's and PyTorch's attention (``attn_mask``).
    """
    # BEGIN SOLUTION
    # HINT: compare every query with every key, scaled by 1/sqrt(d_head); k.transpose(-2, -1) swaps its last two dims
    # HINT: Tensor.masked_fill(where, value) replaces the entries where `where` is True
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])     # (N, h, T, T)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return scores.softmax(dim=-1) @ v
    # END SOLUTION


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
        N, T, d_model = x.shape
        h = self.n_heads
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(N, T, h, d_model // h).transpose(1, 2) for t in (q, k, v))
        heads = scaled_dot_product_attention(q, k, v, mask)            # (N, h, T, d_head)
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
