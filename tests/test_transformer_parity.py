"""Transformer layers and nn.Transformer against PyTorch (float64, dropout 0), weights loaded
through nn.from_torch_state_dict: outputs, input gradients and every parameter gradient to 1e-10,
on both tiers of the attention Function (the ``tier`` fixture)."""
import numpy
import pytest

import minigrad
from minigrad import nn

torch = pytest.importorskip("torch")

TOL = 1e-10
D, HEADS, FF, N, T, S = 8, 2, 16, 3, 4, 5


def pair(array):
    return torch.tensor(array, requires_grad=True), minigrad.tensor(array, dtype=minigrad.float64, requires_grad=True)


def masks(kind="bool"):
    """Source padding (N, S), target padding (N, T) and a causal target mask (T, T), in the layers'
    (PyTorch's) meaning: bool True = may NOT attend; or ``kind="float"``: -inf there, 0 elsewhere,
    plus a float bias on the causal mask (added to the scores)."""
    pad = numpy.zeros((N, S), dtype=bool)
    pad[1, 3:] = True
    tgt_pad = numpy.zeros((N, T), dtype=bool)
    tgt_pad[2, 3:] = True
    causal = numpy.triu(numpy.ones((T, T), dtype=bool), 1)
    if kind == "float":
        pad, tgt_pad, causal = (numpy.where(m, -numpy.inf, 0.0) for m in (pad, tgt_pad, causal))
        causal = causal + numpy.random.default_rng(7).standard_normal((T, T))
    return pad, tgt_pad, causal


def causal_mask(size, kind):
    """A causal (size, size) mask of ``kind``, as in ``masks``."""
    blocked = numpy.triu(numpy.ones((size, size), dtype=bool), 1)
    return blocked if kind == "bool" else numpy.where(blocked, -numpy.inf, 0.0)


def compare(theirs, ours, their_inputs, our_inputs, their_kwargs, our_kwargs, seed=0):
    ours.load_state_dict(nn.from_torch_state_dict(theirs.state_dict()))
    out_t, out_m = theirs(*their_inputs, **their_kwargs), ours(*our_inputs, **our_kwargs)
    g = numpy.random.default_rng(seed).standard_normal(out_t.shape)
    out_t.backward(torch.tensor(g))
    out_m.backward(minigrad.tensor(g))
    assert numpy.max(numpy.abs(out_m.numpy() - out_t.detach().numpy())) <= TOL
    for m, t in zip(our_inputs, their_inputs):
        assert numpy.max(numpy.abs(m.grad.numpy() - t.grad.numpy())) <= TOL
    their_grads = nn.from_torch_state_dict({name: p.grad for name, p in theirs.named_parameters()})
    ours_named = dict(ours.named_parameters())
    assert set(ours_named) == set(their_grads)
    for name, parameter in ours_named.items():
        assert numpy.max(numpy.abs(parameter.grad.numpy() - their_grads[name])) <= TOL, name


def layer_options(norm_first, activation, batch_first):
    return dict(dim_feedforward=FF, dropout=0.0, activation=activation, batch_first=batch_first, norm_first=norm_first)


GRID = [(nf, act, bf) for nf in (False, True) for act in ("relu", "gelu") for bf in (False, True)]


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("norm_first, activation, batch_first", GRID)
def test_encoder_layer_matches_torch(norm_first, activation, batch_first, kind, tier):
    options = layer_options(norm_first, activation, batch_first)
    theirs = torch.nn.TransformerEncoderLayer(D, HEADS, **options).double()
    ours = nn.TransformerEncoderLayer(D, HEADS, **options, reference=(tier == "reference")).double()
    pad, _, _ = masks(kind)
    causal = causal_mask(S, kind)
    x = numpy.random.default_rng(1).standard_normal((N, S, D) if batch_first else (S, N, D))
    tx, mx = pair(x)
    compare(theirs, ours, (tx,), (mx,),
            dict(src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(pad)),
            dict(src_mask=minigrad.tensor(causal), src_key_padding_mask=minigrad.tensor(pad)))


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("norm_first, activation, batch_first", GRID)
def test_decoder_layer_matches_torch(norm_first, activation, batch_first, kind, tier):
    options = layer_options(norm_first, activation, batch_first)
    theirs = torch.nn.TransformerDecoderLayer(D, HEADS, **options).double()
    ours = nn.TransformerDecoderLayer(D, HEADS, **options, reference=(tier == "reference")).double()
    pad, tgt_pad, causal = masks(kind)
    rng = numpy.random.default_rng(2)
    tgt = rng.standard_normal((N, T, D) if batch_first else (T, N, D))
    memory = rng.standard_normal((N, S, D) if batch_first else (S, N, D))
    (tt, mt), (tm, mm) = pair(tgt), pair(memory)
    compare(theirs, ours, (tt, tm), (mt, mm),
            dict(tgt_mask=torch.tensor(causal), tgt_key_padding_mask=torch.tensor(tgt_pad),
                 memory_key_padding_mask=torch.tensor(pad)),
            dict(tgt_mask=minigrad.tensor(causal), tgt_key_padding_mask=minigrad.tensor(tgt_pad),
                 memory_key_padding_mask=minigrad.tensor(pad)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(norm_first, tier):
    options = dict(d_model=D, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                   dropout=0.0, activation="gelu", norm_first=norm_first)
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(**options).double()
    ours = nn.Transformer(**options, reference=(tier == "reference")).double()
    pad, tgt_pad, causal = masks()
    rng = numpy.random.default_rng(3)
    (ts, ms), (tt, mt) = pair(rng.standard_normal((S, N, D))), pair(rng.standard_normal((T, N, D)))
    compare(theirs, ours, (ts, tt), (ms, mt),
            dict(tgt_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(pad),
                 tgt_key_padding_mask=torch.tensor(tgt_pad), memory_key_padding_mask=torch.tensor(pad)),
            dict(tgt_mask=minigrad.tensor(causal), src_key_padding_mask=minigrad.tensor(pad),
                 tgt_key_padding_mask=minigrad.tensor(tgt_pad), memory_key_padding_mask=minigrad.tensor(pad)))


def test_encoder_stack_with_final_norm_matches_torch(tier):
    options = layer_options(True, "relu", True)
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, HEADS, **options), 3,
                                         norm=torch.nn.LayerNorm(D), enable_nested_tensor=False).double()
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, HEADS, **options), 3, norm=nn.LayerNorm(D),
                                 reference=(tier == "reference")).double()
    pad, _, _ = masks()
    tx, mx = pair(numpy.random.default_rng(4).standard_normal((N, S, D)))
    compare(theirs, ours, (tx,), (mx,), dict(src_key_padding_mask=torch.tensor(pad)),
            dict(src_key_padding_mask=minigrad.tensor(pad)))
