"""Program pattern: a nanoGPT-style GPT (causal self-attention through
F.scaled_dot_product_attention(is_causal=True) or by hand with a torch.tril buffer and
masked_fill, LayerNorm with an optional bias, a GELU MLP, weight tying, AdamW with two
parameter groups, clip_grad_norm_).  Written here from PyTorch's API, run in minigrad and in
torch from the same weights: logits, every gradient and 3 AdamW steps agree in float64."""
import math

import pytest

from program_parity import close, train_side_by_side, twins

torch = pytest.importorskip("torch")

VOCAB, BLOCK, EMBED, HEADS, LAYERS = 13, 8, 8, 2, 2


def gpt(L, fused_attention, bias):
    F = L.nn.functional

    class LayerNorm(L.nn.Module):
        """LayerNorm whose bias can be switched off."""

        def __init__(self, size):
            super().__init__()
            self.weight = L.nn.Parameter(L.ones(size))
            self.bias = L.nn.Parameter(L.zeros(size)) if bias else None

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class SelfAttention(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = L.nn.Linear(EMBED, 3 * EMBED, bias=bias)
            self.proj = L.nn.Linear(EMBED, EMBED, bias=bias)
            if not fused_attention:
                causal = L.tril(L.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK)
                self.register_buffer("causal", causal)

        def forward(self, x):
            n, t, c = x.size()
            q, k, v = self.qkv(x).split(EMBED, dim=2)
            q, k, v = (z.view(n, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))   # (N, h, T, d)
            if fused_attention:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                scores = scores.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
                y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(n, t, c))

    class Block(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = LayerNorm(EMBED), SelfAttention(), LayerNorm(EMBED)
            self.mlp = L.nn.Sequential(L.nn.Linear(EMBED, 4 * EMBED, bias=bias), L.nn.GELU(),
                                       L.nn.Linear(4 * EMBED, EMBED, bias=bias), L.nn.Dropout(0.0))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = L.nn.ModuleDict(dict(
                wte=L.nn.Embedding(VOCAB, EMBED), wpe=L.nn.Embedding(BLOCK, EMBED),
                h=L.nn.ModuleList([Block() for _ in range(LAYERS)]), ln_f=LayerNorm(EMBED)))
            self.lm_head = L.nn.Linear(EMBED, VOCAB, bias=False)
            self.transformer.wte.weight = self.lm_head.weight                # weight tying
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, L.nn.Linear):
                L.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    L.nn.init.zeros_(module.bias)

        def forward(self, ids, targets=None):
            t = ids.size(1)
            position = L.arange(0, t, dtype=L.long, device=ids.device)
            x = self.transformer.wte(ids) + self.transformer.wpe(position)
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            if targets is None:
                return logits, None
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss

        def optimizer(self, optim):
            decay = [p for _, p in self.named_parameters() if p.dim() >= 2]
            no_decay = [p for _, p in self.named_parameters() if p.dim() < 2]
            groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
            return optim.AdamW(groups, lr=1e-2, betas=(0.9, 0.95))

    return GPT()


def batch(library, step):
    generator = torch.Generator().manual_seed(step)
    ids = torch.randint(0, VOCAB, (3, BLOCK + 1), generator=generator)
    targets = ids[:, 1:].clone()
    targets[0, :2] = -1                                                   # ignored positions
    return library.tensor(ids[:, :-1].numpy()), library.tensor(targets.numpy())


@pytest.mark.parametrize("fused_attention", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_gpt_matches_torch(fused_attention, bias):
    ours, theirs = twins(lambda L: gpt(L, fused_attention, bias), torch)
    assert ours.transformer.wte.weight is ours.lm_head.weight
    ids, _ = batch(torch, 0)
    import minigrad
    logits, _ = ours(minigrad.tensor(ids.numpy()))
    their_logits, _ = theirs(ids)
    close(logits, their_logits, "logits")

    def loss_of(L, model, step):
        return model(*batch(L, step))[1]

    optimizers = (ours.optimizer(minigrad.optim), theirs.optimizer(torch.optim))
    train_side_by_side(ours, theirs, optimizers, loss_of, clip=1.0)


def test_fused_and_manual_attention_agree():
    import minigrad
    fused, _ = twins(lambda L: gpt(L, True, True), torch)
    manual, _ = twins(lambda L: gpt(L, False, True), torch)
    ids, targets = batch(minigrad, 0)
    close(fused(ids)[0], manual(ids)[0].numpy(), "fused vs manual attention")
