"""Attention: scaled dot-product attention, masks, GELU/erf, score modules, MultiheadAttention, positions."""
import math

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import nn
from minigrad import functional as F
from minigrad.functional import merge_heads, split_heads
from minigrad.masks import attention_bias, causal_mask, combine_masks, key_padding_to_4d, padding_mask
from minigrad.functions import attention_fast
from minigrad.functions.attention import ScaledDotProductAttention
from minigrad.functions.attention_fast import FastScaledDotProductAttention
from minigrad.functions.gelu import erf
from minigrad.gradient_check import GradcheckError, check_module, gradcheck


def randn(*shape, device=None, requires_grad=True):
    return minigrad.randn(*shape, dtype=minigrad.float64, device=device, requires_grad=requires_grad)


def bool_tensor(array, device):
    return minigrad.tensor(numpy.asarray(array, dtype=bool), device=device)


def composed_attention(q, k, v, attn_mask=None):
    """The same attention from primitives: matmul, masked_fill (bool: True = may attend) or + (float), softmax."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if attn_mask is not None and attn_mask.dtype == minigrad.bool_:
        scores = scores.masked_fill(~attn_mask, -1e30)
    elif attn_mask is not None:
        scores = scores + attn_mask
    return scores.softmax(-1) @ v


MASK_KINDS = ["none", "padding", "causal", "padding+causal", "per-head", "float", "float 0/-inf padding+causal"]


def mask_kinds(n, tq, tk, device):
    """Every kind of attn_mask the attention accepts, by name, in F.scaled_dot_product_attention's
    (PyTorch's) meaning: bool True = may attend, or float added to the scores.  The helpers build
    masks with the layers' meaning (True = may NOT attend): ``~`` turns them over."""
    pad = numpy.zeros((n, tk), dtype=bool)
    pad[0, tk - 2:] = True
    rng = numpy.random.default_rng(1)
    heads = rng.random((n, 2, tq, tk)) < 0.3
    heads[..., 0] = False                                       # every query keeps one key
    padding, causal = key_padding_to_4d(bool_tensor(pad, device)), causal_mask(tq, tk, device=device)
    return {
        "none": None,
        "padding": ~padding,
        "causal": ~causal,
        "padding+causal": ~combine_masks(padding, causal),
        "per-head": bool_tensor(~heads, device),
        "float": minigrad.tensor(rng.standard_normal((n, 1, tq, tk)), dtype=minigrad.float64, device=device),
        "float 0/-inf padding+causal": attention_bias(combine_masks(padding, causal), minigrad.float64,
                                                      "may not attend"),
    }


# ----------------------------------------------------------------------------- scaled dot-product attention

@pytest.mark.parametrize("kind", MASK_KINDS)
def test_sdpa_gradcheck_every_mask(device, kind, tier):
    q, k, v = randn(2, 2, 3, 4, device=device), randn(2, 2, 5, 4, device=device), randn(2, 2, 5, 3, device=device)
    mask = mask_kinds(2, 3, 5, device)[kind]
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask, reference=(tier == "reference")),
              (q, k, v))


@pytest.mark.parametrize("shape", [(3, 5), (2, 1, 3, 5), (2, 2, 3, 5)])
def test_sdpa_gradcheck_of_a_learned_bias(device, shape, tier, monkeypatch):
    """dB = dS on both tiers, summed over B's broadcast copies; the fast tier in blocks of query rows too."""
    monkeypatch.setattr(attention_fast, "BLOCK_ELEMENTS", 7)
    q, k, v = randn(2, 2, 3, 4, device=device), randn(2, 2, 5, 4, device=device), randn(2, 2, 5, 3, device=device)
    bias = randn(*shape, device=device)
    gradcheck(lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v, b, 0.0, return_weights=True,
                                                                reference=(tier == "reference")), (q, k, v, bias))
    unbatched_q, unbatched_bias = randn(3, 4, device=device), randn(3, 3, device=device)
    gradcheck(lambda q, b: F.scaled_dot_product_attention(q, q, q, b, reference=(tier == "reference")),
              (unbatched_q, unbatched_bias))


def test_sdpa_gradcheck_weights_dropout_scale_and_broadcast(device, tier):
    q, k, v = randn(2, 3, 4, device=device), randn(1, 4, 4, device=device), randn(4, 2, device=device)
    mask = ~causal_mask(3, 4, device=device)
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask, dropout_p=0.3, scale=0.7,
                                                             return_weights=True, reference=(tier == "reference")),
              (q, k, v))


@pytest.mark.parametrize("kind", ["none", "padding+causal", "per-head", "float"])
def test_sdpa_equals_composition_from_primitives(device, kind, tier):
    q, k, v = randn(2, 2, 3, 4, device=device), randn(2, 2, 5, 4, device=device), randn(2, 2, 5, 3, device=device)
    mask = mask_kinds(2, 3, 5, device)[kind]
    out, weights = F.scaled_dot_product_attention(q, k, v, mask, return_weights=True, reference=(tier == "reference"))
    grad = randn(*out.shape, device=device, requires_grad=False)
    out.backward(grad)
    fused = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    reference = composed_attention(q, k, v, mask)
    reference.backward(grad)
    assert numpy.allclose(out.numpy(), reference.numpy(), atol=1e-12)
    for a, t in zip(fused, (q, k, v)):
        assert numpy.allclose(minigrad.tensor(a).numpy(), minigrad.tensor(t.grad).numpy(), atol=1e-12)
    assert numpy.allclose(weights.numpy().sum(-1), 1.0)


@pytest.mark.parametrize("block", [2 * 3 * 5, 5])   # blocks of rows, and blocks of query rows
def test_sdpa_in_small_blocks_equals_one_block(device, block, monkeypatch):
    q, k, v = randn(3, 2, 3, 4, device=device), randn(3, 2, 5, 4, device=device), randn(3, 2, 5, 3, device=device)
    mask = mask_kinds(3, 3, 5, device)["padding+causal"]
    grad = randn(3, 2, 3, 3, device=device, requires_grad=False)
    results = []
    for size in (10 ** 6, block):
        monkeypatch.setattr(attention_fast, "BLOCK_ELEMENTS", size)
        minigrad.manual_seed(0)                                 # the same dropout mask both times
        out, weights = F.scaled_dot_product_attention(q, k, v, mask, dropout_p=0.2, return_weights=True)
        (out * grad).sum().backward()
        results.append([out.numpy(), weights.numpy()] + [minigrad.tensor(t.grad).numpy() for t in (q, k, v)])
        for t in (q, k, v):
            t.grad = None
    for a, b in zip(*results):
        assert numpy.allclose(a, b, atol=1e-12)
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask, return_weights=True), (q, k, v))


def test_sdpa_fully_masked_row_gives_zeros_not_nan(device, tier):
    q, k, v = randn(2, 3, 4, device=device), randn(2, 5, 4, device=device), randn(2, 5, 3, device=device)
    allowed = numpy.ones((2, 3, 5), dtype=bool)
    allowed[0, 1, :] = False                                    # query 1 of example 0 sees nothing
    options = dict(attn_mask=bool_tensor(allowed, device), reference=(tier == "reference"))
    out, weights = F.scaled_dot_product_attention(q, k, v, return_weights=True, **options)
    (out.sum() + weights.sum()).backward()
    assert numpy.all(out.numpy()[0, 1] == 0) and numpy.all(weights.numpy()[0, 1] == 0)
    assert numpy.all(minigrad.tensor(q.grad).numpy()[0, 1] == 0)
    for t in (q, k, v):
        assert numpy.isfinite(minigrad.tensor(t.grad).numpy()).all()
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **options), (q, k, v))


def test_sdpa_keeps_float32(device):
    q = minigrad.randn(2, 3, 4, device=device, requires_grad=True)
    out, weights = F.scaled_dot_product_attention(q, q, q, is_causal=True, dropout_p=0.1, return_weights=True)
    out.sum().backward()
    assert out.dtype == minigrad.float32 and weights.dtype == minigrad.float32 and q.grad.dtype == minigrad.float32


class _ForgetsSoftmaxCentering(FastScaledDotProductAttention):
    """A deliberately broken backward: dS = P * dP, without the - rowsum(dP * P) term."""

    @staticmethod
    def backward(ctx, dout, dweights=None):
        q_scaled, q_t, k, v, bias_t, keep, out, lse, stored = ctx.saved_tensors
        p = stored.swapaxes(-1, -2)                            # P, kept by the forward as P^T (cpu arrays here)
        ds = p * (dout @ v.swapaxes(-1, -2))
        return ds @ k * ctx.scale, ds.swapaxes(-1, -2) @ q_scaled, p.swapaxes(-1, -2) @ dout, None, None, None, None


def test_gradcheck_rejects_a_broken_attention_backward():
    q, k, v = randn(1, 3, 4, device="cpu"), randn(1, 5, 4, device="cpu"), randn(1, 5, 2, device="cpu")
    with pytest.raises(GradcheckError):
        gradcheck(lambda q, k, v: _ForgetsSoftmaxCentering.apply(q, k, v, None, 0.0, 0.5, False), (q, k, v))
    for tier in (ScaledDotProductAttention, FastScaledDotProductAttention):
        gradcheck(lambda q, k, v: tier.apply(q, k, v, None, 0.0, 0.5, False), (q, k, v))


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 2), heads=st.integers(1, 3), tq=st.integers(1, 4), tk=st.integers(1, 4),
       dk=st.integers(1, 4), causal=st.booleans())
def test_sdpa_matches_composition_over_shapes(batch, heads, tq, tk, dk, causal):
    q, k, v = randn(batch, heads, tq, dk), randn(batch, heads, tk, dk), randn(batch, heads, tk, 2)
    mask = ~causal_mask(tq, tk) if causal else None                  # every query sees key 0
    out = F.scaled_dot_product_attention(q, k, v, mask)
    assert numpy.allclose(out.numpy(), composed_attention(q, k, v, mask).numpy(), atol=1e-12)
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask), (q, k, v), fast_mode=True)


def test_sdpa_bad_inputs_name_the_shapes():
    q, k, v = randn(2, 3, 4), randn(2, 5, 4), randn(2, 6, 4)
    with pytest.raises(ValueError, match=r"\(2, 5, 4\).*\(2, 6, 4\)"):
        F.scaled_dot_product_attention(q, k, v)
    with pytest.raises(TypeError, match="boolean"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=minigrad.zeros(3, 5, dtype=minigrad.int64))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2, 3, 5\)"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=minigrad.zeros(3, 4, dtype=minigrad.bool_))
    with pytest.raises(ValueError, match="d_k"):
        F.scaled_dot_product_attention(q, randn(2, 5, 3), k)


# ----------------------------------------------------------------------------- masks and shape helpers

def test_mask_helpers(device):
    ids = minigrad.tensor([[5, 6, 0, 0], [7, 0, 0, 0]], device=device)
    pad = padding_mask(ids, 0)
    assert pad.tolist() == [[False, False, True, True], [False, True, True, True]]
    assert causal_mask(3, device=device).tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    assert causal_mask(1, 3, offset=2, device=device).tolist() == [[False, False, False]]
    both = combine_masks(key_padding_to_4d(pad), causal_mask(4, device=device), None)
    assert both.shape == (2, 1, 4, 4)
    assert both.numpy()[1, 0, 0].tolist() == [False, True, True, True]
    assert both.numpy()[0, 0, 1].tolist() == [False, False, True, True]
    assert combine_masks(None, None) is None
    x = randn(2, 3, 6, device=device)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 3, 2) and numpy.array_equal(merge_heads(heads).numpy(), x.numpy())


@pytest.mark.parametrize("t", [1, 2, 3])
def test_split_and_merge_heads_at_every_length(device, t):
    """split_heads puts feature h*Dh + d of position t at [n, h, t, d], merge_heads undoes it, and the
    gradients come back in place; one position (t = 1, decoding) takes a shorter path: same numbers."""
    x = randn(2, t, 6, device=device)
    heads = split_heads(x, 3)
    expected = x.numpy().reshape(2, t, 3, 2).transpose(0, 2, 1, 3)
    assert heads.shape == (2, 3, t, 2) and numpy.array_equal(heads.numpy(), expected)
    weights = randn(2, 3, t, 2, device=device, requires_grad=False)
    merged = merge_heads(heads * weights)
    assert numpy.array_equal(merged.numpy(), (expected * weights.numpy()).transpose(0, 2, 1, 3).reshape(2, t, 6))
    merged.sum().backward()
    assert numpy.array_equal(minigrad.tensor(x.grad).numpy(), weights.numpy().transpose(0, 2, 1, 3).reshape(2, t, 6))


# ----------------------------------------------------------------------------- GELU and erf

def test_erf_matches_math_erf_to_1e_15():
    rng = numpy.random.default_rng(0)
    x = numpy.concatenate([numpy.linspace(-7, 7, 14001), rng.standard_normal(5000) * 3,
                           [0.0, 1e-300, -1e-12, 0.84375, -1.25, 1 / 0.35, 6.0, 30.0, -numpy.inf, numpy.inf]])
    ours = erf(x)
    reference = numpy.array([math.erf(value) for value in x])
    assert numpy.all(numpy.abs(ours - reference) <= 1e-15 * numpy.abs(reference) + 1e-300)
    assert numpy.isnan(erf(numpy.array([numpy.nan]))).all()


def test_gelu_gradcheck_and_values(device):
    x = randn(3, 4, device=device)
    gradcheck(F.gelu, (x,))
    expected = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.numpy().ravel()]
    assert numpy.allclose(F.gelu(x).numpy().ravel(), expected, rtol=1e-15, atol=1e-300)
    assert F.gelu(minigrad.randn(3, device=device)).dtype == minigrad.float32


# ----------------------------------------------------------------------------- score modules

def score_modules():
    return {
        "dot": nn.DotScore(),
        "scaled dot": nn.DotScore(scaled=True),
        "bilinear": nn.BilinearScore(3, 3),
        "additive": nn.AdditiveScore(3, 3, 4),
    }


@pytest.mark.parametrize("name", ["dot", "scaled dot", "bilinear", "additive"])
def test_score_module_gradcheck_with_mask(device, name):
    module = score_modules()[name].double().to(device)
    query, keys, values = randn(2, 3, device=device), randn(2, 4, 3, device=device), randn(2, 4, 2, device=device)
    mask = bool_tensor([[False, False, True, True], [False, False, False, False]], device)
    context, weights = module(query, keys, values, mask=mask)
    assert context.shape == (2, 2) and weights.shape == (2, 4)
    assert numpy.allclose(weights.numpy()[0, 2:], 0) and numpy.allclose(weights.numpy().sum(-1), 1)
    check_module(module, query, keys, values, mask)
    many = randn(2, 5, 3, device=device)                        # several decoder steps at once
    context, weights = module(many, keys, mask=mask)
    assert context.shape == (2, 5, 3) and weights.shape == (2, 5, 4)


def test_hard_attention_picks_one_key_and_blocks_score_gradients(device):
    score = nn.BilinearScore(3, 3).double().to(device)
    hard = nn.HardAttention(score)
    query, keys = randn(2, 3, device=device), randn(2, 4, 3, device=device)
    context, weights = hard(query, keys)
    best = numpy.argmax(score.score(query.unsqueeze(1), keys).numpy()[:, 0], axis=-1)
    assert numpy.array_equal(weights.numpy(), numpy.eye(4)[best])
    assert numpy.allclose(context.numpy(), keys.numpy()[[0, 1], best])
    context.sum().backward()
    assert score.weight.grad is None and query.grad is None and keys.grad is not None


# ----------------------------------------------------------------------------- MultiheadAttention

def test_mha_self_attention_gradcheck_with_masks(device):
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double().to(device)
    x = randn(2, 3, 4, device=device)
    pad = bool_tensor([[False, False, True], [False, False, False]], device)
    out, weights = mha(x, x, x, key_padding_mask=pad, is_causal=True, average_attn_weights=False)
    assert out.shape == (2, 3, 4) and weights.shape == (2, 2, 3, 3)
    assert numpy.allclose(weights.numpy()[0, :, :, 2], 0) and numpy.allclose(numpy.triu(weights.numpy()[1, 0], 1), 0)
    check_module(mha, x, x, x, pad, True, causal_mask(3, device=device))   # PyTorch's argument order


def test_mha_cross_attention_kdim_vdim_gradcheck(device):
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=5).double().to(device)     # time-first
    query, key, value = randn(2, 2, 4, device=device), randn(3, 2, 3, device=device), randn(3, 2, 5, device=device)
    attn_mask = bool_tensor(numpy.random.default_rng(0).random((2 * 2, 2, 3)) < 0.3, device)  # (N*heads, Tq, S)
    out, weights = mha(query, key, value, attn_mask=attn_mask, average_attn_weights=True)
    assert out.shape == (2, 2, 4) and weights.shape == (2, 2, 3)
    check_module(mha, query, key, value, None, True, attn_mask)


def test_mha_unbatched_and_no_weights(device):
    mha = nn.MultiheadAttention(4, 2).double().to(device)
    x = randn(3, 4, device=device)
    out, weights = mha(x, x, x, need_weights=False)
    batched, _ = mha(x.unsqueeze(1), x.unsqueeze(1), x.unsqueeze(1))
    assert weights is None and numpy.allclose(out.numpy(), batched.numpy()[:, 0])


@settings(max_examples=8, deadline=None)
@given(heads=st.sampled_from([1, 2, 3, 6]), n=st.integers(1, 2), t=st.integers(1, 4), s=st.integers(1, 4))
def test_mha_shapes_and_gradients_over_head_counts(heads, n, t, s):
    mha = nn.MultiheadAttention(6, heads, batch_first=True).double()
    query, memory = randn(n, t, 6), randn(n, s, 6)
    out, weights = mha(query, memory, memory)
    assert out.shape == (n, t, 6) and weights.shape == (n, t, s)           # averaged over heads, as PyTorch
    assert mha(query, memory, memory, average_attn_weights=False)[1].shape == (n, heads, t, s)
    check_module(mha, query, memory, memory, fast_mode=True)


def test_self_attention_is_permutation_equivariant(device):
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double().to(device)
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).double().to(device)
    x = randn(2, 5, 4, device=device, requires_grad=False)
    order = numpy.array([3, 0, 4, 1, 2])
    shuffled = x[:, minigrad.tensor(order, device=device)]
    assert numpy.allclose(mha(shuffled, shuffled, shuffled)[0].numpy(), mha(x, x, x)[0].numpy()[:, order])
    assert numpy.allclose(layer(shuffled).numpy(), layer(x).numpy()[:, order])


def test_causal_output_ignores_later_tokens(device):
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).double().to(device)
    x = randn(1, 6, 4, device=device, requires_grad=False)
    changed = x.numpy().copy()
    changed[:, 4:] += 10.0
    changed = minigrad.tensor(changed, device=device)
    before, after = layer(x, is_causal=True).numpy(), layer(changed, is_causal=True).numpy()
    assert numpy.allclose(before[:, :4], after[:, :4]) and not numpy.allclose(before[:, 4:], after[:, 4:])


@pytest.mark.parametrize("chunks", [(1, 1, 1, 1, 1, 1), (3, 1, 2), (2, 4), (1, 5)])
def test_mha_cache_fed_in_chunks_equals_one_causal_pass(device, chunks):
    """Positions fed to a self-attention cache a chunk at a time give the causal pass over all of them:
    a one-position chunk needs no mask (its query sees every cached key: MultiheadAttention skips it),
    a longer one does (its first query must not see the chunk's later keys)."""
    layer = nn.MultiheadAttention(4, 2, batch_first=True).double().to(device).eval()
    x = randn(2, sum(chunks), 4, device=device, requires_grad=False)
    whole, _ = layer(x, x, x, need_weights=False, is_causal=True)
    cache, parts, start = {}, [], 0
    for size in chunks:
        piece = x[:, start:start + size]
        parts.append(layer(piece, piece, piece, need_weights=False, is_causal=True, cache=cache)[0].numpy())
        start += size
    assert numpy.allclose(numpy.concatenate(parts, axis=1), whole.numpy(), atol=1e-12)


def test_mha_bad_inputs_name_the_shapes():
    with pytest.raises(ValueError, match="embed_dim=6.*num_heads=4"):
        nn.MultiheadAttention(6, 4)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    x = minigrad.randn(2, 3, 4)
    with pytest.raises(ValueError, match=r"key \(2, 5, 4\) and value \(2, 6, 4\)"):
        mha(x, minigrad.randn(2, 5, 4), minigrad.randn(2, 6, 4))
    with pytest.raises(ValueError, match=r"\(N, S\) = \(2, 3\).*\(2, 4\)"):
        mha(x, x, x, key_padding_mask=minigrad.zeros(2, 4, dtype=minigrad.bool_))
    with pytest.raises(ValueError, match=r"\(Tq, S\) = \(3, 3\)"):
        mha(x, x, x, attn_mask=minigrad.zeros(3, 4, dtype=minigrad.bool_))
    with pytest.raises(TypeError, match="boolean.*or floating.*int64"):
        mha(x, x, x, attn_mask=minigrad.zeros(3, 3, dtype=minigrad.int64))
    with pytest.raises(ValueError, match=r"query \(\.\.\., 4\)"):
        mha(minigrad.randn(2, 3, 5), x, x)


def test_state_dict_conversion_round_trip():
    mha = nn.MultiheadAttention(4, 2)
    packed = nn.to_torch_state_dict(mha.state_dict())
    assert sorted(packed) == ["in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]
    assert packed["in_proj_weight"].shape == (12, 4)
    back = nn.from_torch_state_dict(packed)
    for name, value in mha.state_dict().items():
        assert numpy.array_equal(back[name], value.numpy())
    separate = nn.to_torch_state_dict(nn.MultiheadAttention(4, 2, kdim=3).state_dict())
    assert {"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias"} <= set(separate)


# ----------------------------------------------------------------------------- positional encodings

@pytest.mark.parametrize("d", [6, 7])
def test_sinusoidal_encoding_matches_the_paper(d):
    table = nn.sinusoidal_encoding(9, d, dtype="float64").numpy()
    for pos in range(9):
        for i in range(d):
            angle = pos / 10000 ** (2 * (i // 2) / d)
            assert table[pos, i] == pytest.approx(math.sin(angle) if i % 2 == 0 else math.cos(angle), abs=1e-14)


def test_positional_modules(device):
    sinus = nn.SinusoidalPositionalEncoding(5, max_len=10, batch_first=True).double().to(device)
    x = randn(2, 4, 5, device=device)
    assert numpy.allclose((sinus(x, offset=3) - x).numpy()[1], nn.sinusoidal_encoding(10, 5, "float64").numpy()[3:7])
    gradcheck(lambda x: sinus(x), (x,))
    learned = nn.LearnedPositionalEmbedding(10, 5).double().to(device)          # time-first
    check_module(learned, randn(4, 2, 5, device=device))
    with pytest.raises(ValueError, match="max_len=10"):
        learned(randn(11, 2, 5, device=device))
