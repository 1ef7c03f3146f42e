"""Attention against PyTorch (float64, dropout 0): outputs, weights and every gradient to 1e-10,
on both tiers of the attention Function (the ``tier`` fixture)."""
import numpy
import pytest

import minigrad
from minigrad import nn
from minigrad import functional as F

torch = pytest.importorskip("torch")

TOL = 1e-10


def pair(array, device=None):
    """The same float64 values as a torch leaf and a minigrad leaf."""
    return (torch.tensor(array, requires_grad=True),
            minigrad.tensor(array, dtype=minigrad.float64, device=device, requires_grad=True))


def close(ours, theirs):
    ours = ours.numpy() if isinstance(ours, minigrad.Tensor) else minigrad.backend.to_numpy(ours)
    return numpy.max(numpy.abs(ours - theirs.detach().numpy()), initial=0.0) <= TOL


def test_gelu_matches_torch(device):
    x = numpy.concatenate([numpy.linspace(-9, 9, 2001), [0.0, 1e-8, -1e-8]])
    tx, mx = pair(x, device)
    ty, my = torch.nn.functional.gelu(tx), F.gelu(mx)
    g = numpy.random.default_rng(0).standard_normal(x.shape)
    ty.backward(torch.tensor(g))
    my.backward(minigrad.tensor(g, device=device))
    assert close(my, ty) and close(mx.grad, tx.grad)


def test_sdpa_matches_torch_with_a_bool_mask(device, tier):
    rng = numpy.random.default_rng(0)
    (tq, mq), (tk, mk), (tv, mv) = (pair(rng.standard_normal(s), device) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2)))
    mask = rng.random((2, 1, 4, 6)) < 0.4
    mask[..., 0] = False
    # PyTorch's F.scaled_dot_product_attention takes True = DOES attend; its MultiheadAttention, True = does not
    theirs = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(~mask), scale=0.3)
    ours = F.scaled_dot_product_attention(mq, mk, mv, attn_mask=minigrad.tensor(~mask, device=device), scale=0.3,
                                          reference=(tier == "reference"))
    g = rng.standard_normal(theirs.shape)
    theirs.backward(torch.tensor(g))
    ours.backward(minigrad.tensor(g, device=device))
    assert close(ours, theirs)
    for m, t in ((mq, tq), (mk, tk), (mv, tv)):
        assert close(m.grad, t.grad)


def run_mha(tier, kdim=None, batch_first=False, masks=True, average=False, cross=True, seed=0):
    rng = numpy.random.default_rng(seed)
    e, heads, n, t, s = 6, 3, 3, 4, 5
    torch.manual_seed(seed)
    theirs = torch.nn.MultiheadAttention(e, heads, kdim=kdim, vdim=kdim, batch_first=batch_first).double()
    ours = nn.MultiheadAttention(e, heads, kdim=kdim, vdim=kdim, batch_first=batch_first,
                                 reference=(tier == "reference")).double()
    ours.load_state_dict(nn.from_torch_state_dict(theirs.state_dict()))
    shape = (lambda length, d: (n, length, d)) if batch_first else (lambda length, d: (length, n, d))
    s = s if cross else t
    kd = kdim or e
    (tq, mq) = pair(rng.standard_normal(shape(t, e)))
    if cross:
        (tk, mk), (tv, mv) = pair(rng.standard_normal(shape(s, kd))), pair(rng.standard_normal(shape(s, kd)))
    else:
        tk, tv, mk, mv = tq, tq, mq, mq
    kwargs_t, kwargs_m = {}, {}
    if masks:
        pad = numpy.zeros((n, s), dtype=bool)
        pad[0, s - 2:] = True
        attn = rng.random((t, s)) < 0.3
        attn[:, 0] = False
        kwargs_t = dict(key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(attn))
        kwargs_m = dict(key_padding_mask=minigrad.tensor(pad), attn_mask=minigrad.tensor(attn))
    out_t, w_t = theirs(tq, tk, tv, average_attn_weights=average, **kwargs_t)
    out_m, w_m = ours(mq, mk, mv, average_attn_weights=average, **kwargs_m)
    g = rng.standard_normal(out_t.shape)
    (out_t * torch.tensor(g)).sum().backward()
    (out_m * minigrad.tensor(g)).sum().backward()
    assert close(out_m, out_t) and close(w_m, w_t)
    for m, t_ in ((mq, tq), (mk, tk), (mv, tv)):
        assert close(m.grad, t_.grad)
    their_grads = nn.from_torch_state_dict({name: p.grad for name, p in theirs.named_parameters()})
    for name, parameter in ours.named_parameters():
        assert numpy.max(numpy.abs(minigrad.tensor(parameter.grad).numpy() - their_grads[name])) <= TOL, name


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("cross", [False, True])
def test_mha_matches_torch_per_head_weights(batch_first, cross, tier):
    run_mha(tier, batch_first=batch_first, cross=cross)


def test_mha_matches_torch_averaged_weights_no_masks(tier):
    run_mha(tier, masks=False, average=True)


def test_mha_matches_torch_with_kdim_vdim(tier):
    run_mha(tier, kdim=4, batch_first=True)


def test_weights_convert_back_to_torch():
    ours = nn.MultiheadAttention(6, 2, batch_first=True).double()
    theirs = torch.nn.MultiheadAttention(6, 2, batch_first=True).double()
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in nn.to_torch_state_dict(ours.state_dict()).items()})
    x = numpy.random.default_rng(0).standard_normal((2, 3, 6))
    (tx, mx) = pair(x)
    assert close(ours(mx, mx, mx)[0], theirs(tx, tx, tx)[0])
