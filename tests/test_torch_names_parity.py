"""Parity with PyTorch for the names added for PyTorch programs (issue 13): the same expression,
written once as ``fn(L, *inputs)`` with ``L`` the ``minigrad`` module or the ``torch`` module
itself (so ``L.exp``, ``L.topk``, ``L.nn.functional.pad`` are each library's own), gives the
same outputs and input gradients within 1e-10 in float64 and 1e-5 in float32."""
import numpy
import pytest

import minigrad

torch = pytest.importorskip("torch")

TOLERANCE = {"float64": 1e-10, "float32": 1e-5}


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.3, 2.0, shape)


def distinct(*shape):
    return lambda rng: rng.permutation(int(numpy.prod(shape))).reshape(shape) * 0.1 + rng.uniform(0, 0.01, shape)


def ints(low, high, *shape):
    return lambda rng: rng.integers(low, high, shape)


def probabilities(*shape):
    return lambda rng: rng.dirichlet(numpy.ones(shape[-1]), size=shape[:-1])


def ties(rng):
    return numpy.array([[1.0, 3.0, 3.0, 0.5], [2.0, 2.0, -1.0, 2.0]])


# name: (float inputs that get gradients, other inputs (ints), fn(L, *floats, *others))
CASES = {
    "elementwise_functions": ([positive(2, 3)], [], lambda L, a: L.exp(a) + L.log(a) + L.sqrt(a) + L.rsqrt(a)
                              + L.sin(a) * L.cos(a) + L.tanh(a) + L.sigmoid(a) + L.abs(a) + L.square(a)),
    "relu_neg_pow": ([normal(2, 3)], [], lambda L, a: L.relu(a) + L.neg(a) + L.pow(a, 2) + L.pow(2.0, a)),
    "arithmetic_functions": ([normal(2, 3), positive(3)], [],
                             lambda L, a, b: L.add(a, b, alpha=2) + L.sub(a, b) + L.mul(a, b) + L.div(a, b)),
    "clamp": ([normal(3, 4)], [], lambda L, a: L.clamp(a, -0.5, 0.7) + a.clamp(min=0.1) + a.clip(max=-0.2)),
    "sum_mean_var_std": ([normal(3, 4)], [], lambda L, a: (L.sum(a, 1), L.mean(a, 0, keepdim=True), L.var(a, 1),
                                                           L.std(a), a.var(0, unbiased=False), a.std(1, keepdim=True))),
    "softmax_functions": ([normal(2, 3, 4)], [], lambda L, a: (L.softmax(a, 1), L.log_softmax(a, -1))),
    "max_min_dim": ([distinct(3, 4)], [], lambda L, a: (L.max(a, 1)[0], L.min(a, dim=0).values, L.max(a),
                                                        L.min(a), L.amax(a, 1), L.amin(a, (0, 1)))),
    "max_dim_ties_go_to_first_index": ([ties], [], lambda L, a: (a.max(1).values, a.min(dim=1, keepdim=True)[0])),
    "max_full_ties_share": ([ties], [], lambda L, a: (a.max(), a.min())),
    "maximum_minimum_with_ties": ([lambda rng: numpy.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]]),
                                   lambda rng: numpy.array([1.0, 5.0, 0.0])], [],
                                  lambda L, a, b: (L.maximum(a, b), L.minimum(b, a), L.max(a, b), a.min(b))),
    "topk": ([distinct(3, 5)], [], lambda L, a: (L.topk(a, 2).values, a.topk(3, dim=0, largest=False)[0])),
    "sort": ([distinct(3, 5)], [], lambda L, a: (L.sort(a, 1)[0], a.sort(dim=0, descending=True).values)),
    "gather": ([normal(3, 4)], [ints(0, 4, 3, 6)], lambda L, a, i: L.gather(a, 1, i) * 2 + a.gather(1, i)),
    "scatter": ([normal(3, 5), normal(3, 2)], [lambda rng: numpy.array([[0, 4], [1, 2], [3, 0]])],
                lambda L, a, s, i: (L.scatter(a, 1, i, s), a.scatter(0, i[:2, :1], s[1:, :1] * 2),
                                    a.scatter(1, i, value=-1.5))),
    "index_select_masked_select_unbind": ([normal(3, 4)], [ints(0, 3, 5), ints(0, 2, 4)], lambda L, a, i, m: (
        L.index_select(a, 0, i), a.index_select(1, i[:3]), L.masked_select(a, m == 1), a.masked_select(m[:1] == 1),
        L.select(a, 1, 2), *L.unbind(a, 1), *a.unbind())),
    "scatter_index_fill_in_place": ([normal(3, 5), normal(3, 2)], [lambda rng: numpy.array([[0, 4], [1, 2], [3, 0]])],
                                    lambda L, a, s, i: ((a * 1).scatter_(1, i, s), (a * 2).scatter_(1, i, value=0.5),
                                                        (a + 0).index_fill_(0, i[:2, 0], -1.0))),
    "tril_triu": ([normal(2, 3, 4)], [], lambda L, a: (L.tril(a), L.triu(a, 1), a.tril(-1), a.triu(diagonal=2))),
    "matmul_mm_bmm": ([normal(2, 3, 4), normal(2, 4, 5)], [],
                      lambda L, a, b: (L.bmm(a, b), L.matmul(a, b), L.mm(a[0], b[1]), a[0].mm(b[0]))),
    "shape_functions": ([normal(2, 3, 4)], [], lambda L, a: (
        L.reshape(a, (4, 6)), L.flatten(a, 1), L.permute(a, (2, 0, 1)), L.transpose(a, 0, 2), L.t(a[0]),
        L.squeeze(L.unsqueeze(a, 1), 1), L.chunk(a, 2, 2)[1], a[1].t(), a[:1, :, :1].squeeze((0, 2)),
        a[:1].squeeze((0, 1)), a[:, :1].squeeze(-2))),
    "norm": ([normal(3, 4)], [], lambda L, a: (L.norm(a), a.norm(2, dim=-1, keepdim=True), a.norm(1, dim=0),
                                               a.norm(3, dim=(0, 1)), a.norm(float("inf"), dim=1))),
    "norm_of_zeros_and_ties": ([lambda rng: numpy.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])], [],
                               lambda L, a: (a.norm(dim=1), a.norm(1, dim=1), a.norm(float("inf"), dim=1))),
    "repeat": ([normal(2, 3)], [], lambda L, a: (a.repeat(2, 1, 3), a.repeat(1, 2))),
    "repeat_interleave": ([normal(2, 3)], [], lambda L, a: (L.repeat_interleave(a, 2), a.repeat_interleave(3, dim=1))),
    "views": ([normal(2, 3), normal(3, 2)], [],
              lambda L, a, b: (a.view_as(b) + b, a.reshape_as(b), a[:1].expand_as(a), a.contiguous())),
    "masked_fill_function": ([normal(2, 3)], [ints(0, 2, 2, 3)], lambda L, a, m: L.masked_fill(a, m == 1, -2.0)),
    "pad": ([normal(2, 3, 4)], [], lambda L, a: (L.nn.functional.pad(a, (1, 2)), L.nn.functional.pad(a, (0, 1, 2, 0), value=-1.5),
                                               L.nn.functional.pad(a, (-1, 1, 1, -2)))),
    "l1_loss": ([normal(3, 4), normal(3, 4)], [], lambda L, a, b: (L.nn.functional.l1_loss(a, b),
                                                                 L.nn.functional.l1_loss(a, b, reduction="none"))),
    "kl_div": ([normal(3, 4), probabilities(3, 4)], [], lambda L, a, t: (
        L.nn.functional.kl_div(a.log_softmax(-1), t, reduction="batchmean"),
        L.nn.functional.kl_div(a, t, reduction="sum"), L.nn.functional.kl_div(a, t, reduction="none"),
        L.nn.functional.kl_div(a, t.log(), reduction="mean", log_target=True))),
    "loss_modules": ([normal(6, 4), normal(6, 4)], [ints(0, 4, 6)], lambda L, z, y, t: (
        L.nn.CrossEntropyLoss()(z, t), L.nn.CrossEntropyLoss(ignore_index=2, label_smoothing=0.1, reduction="sum")(z, t),
        L.nn.NLLLoss(reduction="none")(z.log_softmax(1), t), L.nn.MSELoss()(z, y), L.nn.L1Loss(reduction="sum")(z, y),
        L.nn.BCEWithLogitsLoss()(z, y.sigmoid()), L.nn.KLDivLoss(reduction="batchmean")(z.log_softmax(1), y.softmax(1)))),
    "bce_normalize_cosine": ([lambda rng: rng.uniform(0.05, 0.95, (3, 4)), lambda rng: rng.uniform(0, 1, (3, 4)),
                              normal(3, 4)], [], lambda L, p, t, x: (
        L.nn.functional.binary_cross_entropy(p, t), L.nn.BCELoss(reduction="none")(p, t),
        L.nn.functional.normalize(x), L.nn.functional.normalize(x, p=1.0, dim=0),
        L.nn.functional.cosine_similarity(x, p), L.nn.functional.cosine_similarity(x, t, dim=0))),
    "bce_at_zero_and_one": ([lambda rng: numpy.array([0.0, 1.0, 0.5, 1.0]), lambda rng: numpy.array([0.5, 0.2, 1.0, 1.0])],
                            [], lambda L, p, t: L.nn.functional.binary_cross_entropy(p, t, reduction="none")),
    "cumsum_flip": ([normal(3, 4)], [], lambda L, a: (L.cumsum(a, 1), a.cumsum(dim=0), L.flip(a, (0, 1)), a.flip(1))),
    "activation_modules": ([normal(2, 3, 4)], [], lambda L, a: (
        L.nn.GELU()(a), L.nn.GELU(approximate="tanh")(a), L.nn.functional.gelu(a, approximate="tanh"), L.nn.Tanh()(a), L.nn.Sigmoid()(a), L.nn.ReLU()(a), L.nn.Softmax(dim=1)(a),
        L.nn.LogSoftmax(dim=-1)(a), L.nn.Identity(3, unused=True)(a), L.nn.Flatten()(a), L.nn.Flatten(0, 1)(a))),
}


def _as_list(outputs):
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_pytorch(device, name, dtype):
    make_floats, make_others, fn = CASES[name]
    rng = numpy.random.default_rng(sorted(CASES).index(name))
    floats = [make(rng) for make in make_floats]
    others = [make(rng) for make in make_others]

    ours = [minigrad.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in floats]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in floats]
    our_out = _as_list(fn(minigrad, *ours, *(minigrad.tensor(o, device=device) for o in others)))
    their_out = _as_list(fn(torch, *theirs, *(torch.tensor(o) for o in others)))

    tol = TOLERANCE[dtype]
    upstream = [rng.standard_normal(tuple(o.shape)) for o in their_out]
    assert len(our_out) == len(their_out)
    for mine, reference in zip(our_out, their_out):
        assert mine.shape == tuple(reference.shape) and mine.device == device
        assert str(mine.dtype) == str(reference.dtype).replace("torch.", "")
        numpy.testing.assert_allclose(mine.numpy(), reference.detach().numpy(), rtol=tol, atol=tol)

    for out, v in zip(our_out, upstream):
        out.backward(minigrad.tensor(v, dtype=dtype, device=device), retain_graph=True)
    torch.autograd.backward(their_out, [torch.tensor(v, dtype=getattr(torch, dtype)) for v in upstream])
    for position, (mine, reference) in enumerate(zip(ours, theirs)):
        expected = numpy.zeros(mine.shape) if reference.grad is None else reference.grad.numpy()
        assert mine.grad is not None, f"input {position} got no gradient"
        numpy.testing.assert_allclose(minigrad.backend.to_numpy(mine.grad), expected, rtol=tol, atol=tol,
                                      err_msg=f"gradient of input {position}")


def _indices(L, t, with_ties):
    """Indices torch defines at ties too (max/min: the first; a stable sort), and topk's when values are distinct."""
    defined = [L.max(t, 1).indices, t.min(dim=1).indices, L.argmax(t, 1), L.argmin(t, 0),
               L.sort(t, dim=1, descending=True, stable=True)[1], L.argsort(t, dim=0, stable=True)]
    if with_ties:
        return defined
    return defined + [t.topk(2).indices, t.topk(2, dim=0, largest=False).indices, L.sort(t, 1)[1]]


@pytest.mark.parametrize("with_ties", [False, True])
def test_indices_equal_pytorchs(with_ties):
    rng = numpy.random.default_rng(1)
    values = ties(rng) if with_ties else distinct(3, 5)(rng)
    ours, theirs = _indices(minigrad, minigrad.tensor(values), with_ties), _indices(torch, torch.tensor(values), with_ties)
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == minigrad.long
        assert mine.tolist() == reference.tolist()
