"""F.scaled_dot_product_attention and nn.MultiheadAttention with PyTorch's arguments and mask
rules (boolean and float masks), against PyTorch; gradchecks of the float-mask path; the
dtype rules PyTorch enforces (no quiet float32/float64 mixing)."""
import math

import numpy
import pytest

import minigrad
from minigrad import functional as F
from minigrad import nn

F64 = minigrad.float64


def randn(*shape, device=None, seed=0):
    data = numpy.random.default_rng(seed).standard_normal(shape)
    return minigrad.tensor(data, dtype=F64, device=device, requires_grad=True)


# ---------------------------------------------------------------------------- gradchecks (every device)

def test_float_mask_path_gradcheck(device):
    q, k, v = randn(2, 3, 4, device=device), randn(2, 5, 4, device=device, seed=1), randn(2, 5, 3, device=device, seed=2)
    bias = minigrad.tensor(numpy.random.default_rng(3).standard_normal((3, 5)), dtype=F64, device=device)
    assert minigrad.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bias), (q, k, v))


def test_a_learned_float_bias_gets_its_gradient(device):
    q = randn(1, 3, 4, device=device)
    bias = randn(3, 3, device=device, seed=4)
    assert minigrad.gradcheck(lambda q, b: F.scaled_dot_product_attention(q, q, q, attn_mask=b), (q, bias))


def test_rows_with_every_key_blocked_give_zeros_and_zero_gradients(device):
    q = randn(1, 2, 4, device=device)
    bias = minigrad.tensor([[0.0, -math.inf], [-math.inf, -math.inf]], dtype=F64, device=device)
    blocked = minigrad.tensor([[True, False], [False, False]], device=device)     # torch's bool: True = attend
    for mask in (bias, blocked):
        out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
        assert numpy.array_equal(out.numpy()[0, 1], numpy.zeros(4))
    assert minigrad.gradcheck(lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=bias * 1.0 + q[0, 0, 0] * 0), (q,))


def test_no_keys_give_zeros(device):
    q, k, v = randn(2, 3, 4, device=device), randn(2, 0, 4, device=device), randn(2, 0, 5, device=device)
    out = F.scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 3, 5) and not out.numpy().any()
    out.sum().backward()
    assert not q.grad.any()


def test_multihead_attention_over_no_keys_gives_zeros():
    mha = nn.MultiheadAttention(4, 2, batch_first=True, bias=False).double()
    x, empty = randn(2, 3, 4), randn(2, 0, 4)
    out, weights = mha(x, empty, empty)
    assert out.shape == (2, 3, 4) and weights.shape == (2, 3, 0) and not out.numpy().any()


def test_argument_errors_are_named():
    q = randn(1, 2, 4)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=minigrad.ones(2, 2).bool(), is_causal=True)
    with pytest.raises(TypeError, match="mask"):             # one boolean meaning: mask= (True = blocked) is gone
        F.scaled_dot_product_attention(q, q, q, mask=minigrad.ones(2, 2).bool())
    with pytest.raises(TypeError, match=r"attn_mask.*may attend.*int64"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=minigrad.ones(2, 2).long())
    with pytest.raises(TypeError, match="float32"):          # a learned bias of another dtype than the queries
        F.scaled_dot_product_attention(q, q, q, attn_mask=minigrad.ones(2, 2, requires_grad=True))
    with pytest.raises(TypeError):                          # scale is keyword-only, as in PyTorch
        F.scaled_dot_product_attention(q, q, q, None, 0.0, False, 0.5)


# ---------------------------------------------------------------------------- parity with PyTorch

from optional_torch import needs_torch, torch  # noqa: E402  (the comparisons skip without PyTorch)


def pair(*shape, seed=0):
    data = numpy.random.default_rng(seed).standard_normal(shape)
    return (minigrad.tensor(data, dtype=F64, requires_grad=True),
            torch.tensor(data, dtype=torch.float64, requires_grad=True))


def close(ours, theirs):
    assert numpy.allclose(ours.numpy() if hasattr(ours, "numpy") else minigrad.backend.to_numpy(ours),
                          theirs.detach().numpy(), atol=1e-12, rtol=0, equal_nan=True)


def masks(library, seed):
    """The same masks for both libraries: bool (PyTorch's True = attend), float, 0/-inf float."""
    rng = numpy.random.default_rng(seed)
    allowed = rng.random((5, 6)) < 0.7
    allowed[:, 0] = True
    return {
        "none": None,
        "bool": library.tensor(allowed),
        "bool broadcast over heads": library.tensor(allowed[None, None]),
        "float": library.tensor(rng.standard_normal((2, 1, 5, 6))),
        "0/-inf float": library.tensor(numpy.where(allowed, 0.0, -numpy.inf)),
    }


@needs_torch
@pytest.mark.parametrize("case", ["none", "bool", "bool broadcast over heads", "float", "0/-inf float",
                                  "is_causal", "scale", "enable_gqa"])
def test_sdpa_matches_torch(case, tier):
    (q, tq), (k, tk), (v, tv) = pair(2, 3, 5, 4), pair(2, 3, 6, 4, seed=1), pair(2, 3, 6, 3, seed=2)
    kwargs = {"mine": {}, "torch": {}}
    for name, library in (("mine", minigrad), ("torch", torch)):
        if case in masks(library, 0):
            kwargs[name]["attn_mask"] = masks(library, 0)[case]
    if case == "is_causal":
        for d in kwargs.values():
            d["is_causal"] = True
    if case == "scale":
        for d in kwargs.values():
            d["scale"] = 0.3
    if case == "enable_gqa":
        (k, tk), (v, tv) = pair(2, 1, 6, 4, seed=1), pair(2, 1, 6, 3, seed=2)
        for d in kwargs.values():
            d["enable_gqa"] = True
    out = F.scaled_dot_product_attention(q, k, v, **kwargs["mine"], reference=(tier == "reference"))
    their_out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kwargs["torch"])
    close(out, their_out)
    upstream = numpy.random.default_rng(9).standard_normal(out.shape)
    (out * minigrad.tensor(upstream, dtype=F64)).sum().backward()
    (their_out * torch.tensor(upstream)).sum().backward()
    for ours, theirs in ((q, tq), (k, tk), (v, tv)):
        close(ours.grad, theirs.grad)


@needs_torch
def test_the_issue_s_causal_mask_now_means_what_it_means_in_torch():
    """The 4th positional argument is attn_mask (True = may attend): off by up to 3.0 before."""
    (q, tq) = pair(1, 4, 4)
    allowed = numpy.tril(numpy.ones((4, 4), bool))
    close(F.scaled_dot_product_attention(q, q, q, minigrad.tensor(allowed)),
          torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, torch.tensor(allowed)))
    close(F.scaled_dot_product_attention(q, q, q, is_causal=True),
          torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True))


def mha_pair(batch_first, kdim=None):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(4, 2, kdim=kdim, vdim=kdim, batch_first=batch_first).double()
    ours = nn.MultiheadAttention(4, 2, kdim=kdim, vdim=kdim, batch_first=batch_first).double()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def mha_masks(library, kind):
    """MultiheadAttention's masks (True = may NOT attend), as bool or float, for N=2, heads=2, Tq=3, S=5."""
    rng = numpy.random.default_rng(5)
    blocked_keys = numpy.array([[False, False, False, True, True], [False] * 5])
    blocked = rng.random((3, 5)) < 0.3
    blocked[:, 0] = False
    per_head = rng.random((4, 3, 5)) < 0.3
    per_head[..., 0] = False
    as_float = lambda b: numpy.where(b, -numpy.inf, 0.0)    # noqa: E731
    return {
        "bool": dict(key_padding_mask=library.tensor(blocked_keys), attn_mask=library.tensor(blocked)),
        "float": dict(key_padding_mask=library.tensor(as_float(blocked_keys)),
                      attn_mask=library.tensor(rng.standard_normal((3, 5)))),
        "3-D float": dict(attn_mask=library.tensor(as_float(per_head) + rng.standard_normal((4, 3, 5)))),
        "3-D bool": dict(attn_mask=library.tensor(per_head)),
        "none": {},
    }[kind]


@needs_torch
@pytest.mark.parametrize("kind", ["bool", "float", "3-D float", "3-D bool", "none"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention_matches_torch(kind, batch_first, average, tier):
    ours, theirs = mha_pair(batch_first, kdim=None if kind != "none" else 3)
    ours.reference = tier == "reference"
    shape_q, shape_kv = ((2, 3, 4), (2, 5, ours.kdim)) if batch_first else ((3, 2, 4), (5, 2, ours.kdim))
    (q, tq), (k, tk), (v, tv) = pair(*shape_q), pair(*shape_kv, seed=1), pair(*shape_kv, seed=2)
    out, weights = ours(q, k, v, average_attn_weights=average, **mha_masks(minigrad, kind))
    their_out, their_weights = theirs(tq, tk, tv, average_attn_weights=average, **mha_masks(torch, kind))
    close(out, their_out)
    close(weights, their_weights)
    (out.sum() + (weights * weights).sum()).backward()
    (their_out.sum() + (their_weights * their_weights).sum()).backward()
    their_grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad, their_grads[name].grad)
    for ours_x, theirs_x in ((q, tq), (k, tk), (v, tv)):
        close(ours_x.grad, theirs_x.grad)


@needs_torch
def test_multihead_attention_positional_arguments_are_torch_s():
    ours, theirs = mha_pair(True)
    (x, tx) = pair(2, 3, 4)
    out, weights = ours(x, x, x, None, False)               # key_padding_mask, need_weights
    their_out, their_weights = theirs(tx, tx, tx, None, False)
    close(out, their_out)
    assert weights is None and their_weights is None


@needs_torch
def test_word_language_model_float_square_subsequent_mask_matches_torch():
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2,
                                         enable_nested_tensor=False).double()
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2).double()
    ours.load_state_dict(theirs.state_dict())
    (x, tx) = pair(5, 2, 4)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=F64)
    their_mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    close(mask, their_mask)
    close(ours(x, mask=mask), theirs(tx, mask=their_mask))


# ---------------------------------------------------------------------------- dtypes, as PyTorch

@needs_torch
@pytest.mark.parametrize("case", ["linear", "nn.Linear", "matmul", "bmm", "layer_norm", "GRU", "LSTM", "sdpa", "MHA"])
def test_mixing_float32_and_float64_raises_as_in_torch(case):
    def run(library):
        x64 = library.ones(2, 3, 4, dtype=library.float64)
        w32 = library.ones(5, 4, dtype=library.float32)
        return {
            "linear": lambda: library.nn.functional.linear(x64, w32),
            "nn.Linear": lambda: library.nn.Linear(4, 5)(x64),
            "matmul": lambda: x64 @ w32.T,
            "bmm": lambda: library.bmm(x64, library.ones(2, 4, 1)),
            "layer_norm": lambda: library.nn.LayerNorm(4)(x64),
            "GRU": lambda: library.nn.GRU(4, 3)(x64),
            "LSTM": lambda: library.nn.LSTM(4, 3)(x64),
            "sdpa": lambda: library.nn.functional.scaled_dot_product_attention(x64, x64.float(), x64.float()),
            "MHA": lambda: library.nn.MultiheadAttention(4, 2)(x64, x64, x64),
        }[case]()

    with pytest.raises((RuntimeError, ValueError)) as theirs:
        run(torch)
    with pytest.raises(theirs.type, match="dtype"):
        run(minigrad)


@needs_torch
@pytest.mark.parametrize("case", ["float32 * int64", "int64 / int64", "int64 * 2.5", "float32 + float64",
                                  "int64 ** 0.5", "float32 * 2.5"])
def test_type_promotion_matches_torch(case):
    def run(library):
        f32, f64, i64 = library.ones(2), library.ones(2, dtype=library.float64), library.tensor([3, 4])
        return {"float32 * int64": lambda: f32 * i64, "int64 / int64": lambda: i64 / i64,
                "int64 * 2.5": lambda: i64 * 2.5, "float32 + float64": lambda: f32 + f64,
                "int64 ** 0.5": lambda: i64 ** 0.5, "float32 * 2.5": lambda: f32 * 2.5}[case]()

    assert str(run(minigrad).dtype) == str(run(torch).dtype).replace("torch.", "")


@needs_torch
def test_a_learned_float_attn_mask_of_multihead_attention_gets_torch_s_gradient(tier):
    ours, theirs = mha_pair(True)
    ours.reference = tier == "reference"
    (x, tx), (bias, their_bias) = pair(2, 3, 4), pair(3, 3, seed=7)
    out, weights = ours(x, x, x, attn_mask=bias)
    their_out, their_weights = theirs(tx, tx, tx, attn_mask=their_bias)
    (out.sum() + (weights * weights).sum()).backward()
    (their_out.sum() + (their_weights * their_weights).sum()).backward()
    close(bias.grad, their_bias.grad)


def test_multihead_attention_returns_the_weights_after_dropout_as_torch():
    """In training the returned weights are the ones the output was made from (after dropout)."""
    mha = nn.MultiheadAttention(4, 2, dropout=0.5, batch_first=True).double().train()
    x = randn(2, 5, 4)
    out, weights = mha(x, x, x, average_attn_weights=False)
    v = F.split_heads(mha.v_proj(x), 2)
    assert (weights.numpy() == 0).any()
    assert numpy.allclose(mha.out_proj(F.merge_heads(weights @ v)).numpy(), out.numpy(), atol=1e-12)
