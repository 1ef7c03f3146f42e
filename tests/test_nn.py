"""nn layers: gradient checks (float64, on every device) and the Module API."""
import numpy as np
import pytest

import minigrad
from minigrad import functional as F
from minigrad import nn
from minigrad.gradient_check import check_module, gradcheck


def _x(*shape, device, shift=0.0):
    return (minigrad.randn(*shape, dtype="float64", device=device) + shift).requires_grad_()


# ---------------------------------------------------------------------- gradient checks

LAYERS = {
    "linear": (lambda: nn.Linear(4, 3), (2, 4)),
    "linear-3d-no-bias": (lambda: nn.Linear(4, 3, bias=False), (2, 3, 4)),
    "layernorm": (lambda: nn.LayerNorm(5), (3, 5)),
    "layernorm-2d": (lambda: nn.LayerNorm((2, 3)), (2, 2, 3)),
    "layernorm-no-bias": (lambda: nn.LayerNorm(4, bias=False), (3, 4)),
    "layernorm-reference-tier": (lambda: nn.LayerNorm((2, 3), reference=True), (2, 2, 3)),
    "tanh": (nn.Tanh, (3, 4)),
    "sigmoid": (nn.Sigmoid, (3, 4)),
    "softmax": (lambda: nn.Softmax(dim=0), (3, 4)),
    "dropout": (lambda: nn.Dropout(0.3), (4, 5)),
    "mlp": (lambda: nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Dropout(0.2), nn.Linear(4, 2),
                                  nn.LayerNorm(2)), (5, 3)),
}


@pytest.mark.parametrize("name", LAYERS)
def test_layer_gradcheck(name, device):
    make, shape = LAYERS[name]
    layer = make().double().to(device)
    layer(_x(*shape, device=device)).sum().backward()  # a warm-up backward leaves grads around:
    assert check_module(layer, _x(*shape, device=device))   # check_module must not be fooled by them


def test_layernorm_gradcheck_with_random_affine(device):
    layer = nn.LayerNorm(4).double().to(device)
    nn.init.normal_(layer.weight)
    nn.init.normal_(layer.bias)
    assert check_module(layer, _x(3, 4, device=device))


def test_relu_gradcheck_away_from_the_kink(device):
    x = minigrad.tensor(np.array([[-1.3, 0.7, 2.1], [0.4, -0.6, -2.2]]), device=device, requires_grad=True)
    assert check_module(nn.ReLU(), x)


def test_embedding_gradcheck_with_repeats(device):
    layer = nn.Embedding(6, 3).double().to(device)
    assert check_module(layer, minigrad.tensor([[0, 1, 2], [2, 2, 5]], device=device))


@pytest.mark.parametrize("m,n_ids", [(0, 4), (1, 4), (2, 1), (7, 3), (40, 5), (300, 200), (1536, 74)])
def test_embedding_backward_sums_the_rows_of_each_id_as_add_at_does(device, m, n_ids):
    """sum_rows_by_id (sort, then one add.reduceat per run) against the plain xp.add.at, in float64:
    no rows, one row, every row one id, ids unused, ids repeated, lesson 12's batch."""
    from minigrad.functions.embedding import sum_rows_by_id
    rng = np.random.default_rng(m)
    ids = rng.integers(0, n_ids, m)
    if m == 7:
        ids = np.array([2, 0, 2, 2, 0, 2, 2])              # id 1 unused, runs out of order
    rows = rng.standard_normal((m, 3))
    expected = np.zeros((n_ids, 3))
    np.add.at(expected, ids, rows)
    got = sum_rows_by_id(minigrad.tensor(ids, device=device)._data, minigrad.tensor(rows, device=device)._data, n_ids)
    got = minigrad.backend.to_numpy(got)
    assert got.shape == (n_ids, 3) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_embedding_padding_row_gets_no_gradient(device):
    layer = nn.Embedding(6, 3, padding_idx=1).to(device)
    layer(minigrad.tensor([[0, 1, 2], [1, 1, 5]], device=device)).sum().backward()
    grad = layer.weight.grad.numpy()
    np.testing.assert_array_equal(grad[:, 0], [1, 0, 1, 0, 0, 1])


def test_gradcheck_rejects_a_wrong_layer(device):
    class DroppedTerm(nn.Linear):   # the bias counted twice, but its backward sees only one use
        def forward(self, x):
            return F.linear(x, self.weight, self.bias) + self.bias.detach()

    class Transposed(nn.Linear):    # a hand-made matmul whose weight gradient is transposed
        def forward(self, x):
            return _BadMatmul.apply(x, self.weight) + self.bias

    # layers first: x drawn first after manual_seed(0) would equal gradcheck's upstream gradient v
    # (same seed, same generator), and v^T x = x^T x is symmetric, hiding a transposed gradient
    dropped_layer, transposed_layer = DroppedTerm(3, 3), Transposed(3, 3)
    x = _x(2, 3, device=device)
    dropped = check_module(dropped_layer.double().to(device), x, raise_exception=False)
    assert [row["status"] for row in dropped.rows] == ["ok", "ok", "FAIL"]       # input 0, weight, bias
    transposed = check_module(transposed_layer.double().to(device), x, raise_exception=False)
    assert [row["status"] for row in transposed.rows] == ["ok", "FAIL", "ok"]
    assert "weight" in transposed.table() and "FAIL" in transposed.table()


class _BadMatmul(minigrad.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.T

    @staticmethod
    def backward(ctx, dout):
        x, w = ctx.saved_tensors
        return dout @ w, (dout.T @ x).T        # the weight gradient is transposed: wrong


LOSSES = {
    "cross_entropy": lambda z, t, y: F.cross_entropy(z, t),
    "cross_entropy-sum-smoothing": lambda z, t, y: F.cross_entropy(z, t, reduction="sum", label_smoothing=0.2),
    "cross_entropy-none-ignore": lambda z, t, y: F.cross_entropy(z, t, ignore_index=2, reduction="none"),
    "nll_loss": lambda z, t, y: F.nll_loss(F.log_softmax(z, dim=1), t, ignore_index=0),
    "nll_loss-none": lambda z, t, y: F.nll_loss(z, t, reduction="none"),
    "mse_loss": lambda z, t, y: F.mse_loss(z, y),
    "mse_loss-sum": lambda z, t, y: F.mse_loss(z, y, reduction="sum"),
    "bce_with_logits": lambda z, t, y: F.binary_cross_entropy_with_logits(z, y),
    "bce_with_logits-none": lambda z, t, y: F.binary_cross_entropy_with_logits(z, y, reduction="none"),
}


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("shape", [(5, 4), (2, 4, 3)], ids=["NC", "NCd"])
def test_loss_gradcheck(name, shape, device):
    z = _x(*shape, device=device)
    y = minigrad.rand(*shape, dtype="float64", device=device).requires_grad_()
    t = minigrad.randint(0, shape[1], (shape[0],) + shape[2:], device=device)
    assert gradcheck(LOSSES[name], (z, t, y))


# ---------------------------------------------------------------------- the Module API

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(minigrad.ones(3))
        self.inner = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3, bias=False))
        self.norm = nn.LayerNorm(3)
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Dropout(0.5)])
        self.shared = self.inner[0]                        # the same module twice: listed once
        self.register_buffer("count", minigrad.zeros(1))
        self.not_a_parameter = minigrad.ones(2)            # plain tensors are not parameters

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(self.inner(x)) * self.scale


def test_named_parameters_children_and_modules():
    block = Block()
    assert [n for n, _ in block.named_parameters()] == [
        "scale", "inner.0.weight", "inner.0.bias", "inner.2.weight", "norm.weight", "norm.bias",
        "layers.0.weight", "layers.0.bias"]
    assert [n for n, _ in block.named_children()] == ["inner", "norm", "layers", "shared"]
    assert [n for n, _ in block.named_modules()] == [
        "", "inner", "inner.0", "inner.1", "inner.2", "norm", "layers", "layers.0", "layers.1"]
    assert len(list(block.parameters())) == 8 and len(list(block.modules())) == 9
    assert list(block.state_dict()) == [                   # as PyTorch: a shared module under each name
        "scale", "count", "inner.0.weight", "inner.0.bias", "inner.2.weight", "norm.weight", "norm.bias",
        "layers.0.weight", "layers.0.bias", "shared.weight", "shared.bias"]
    assert block.num_parameters() == 3 + 12 + 9 + 6 + 12


def test_train_eval_switches_every_module_and_dropout():
    block = Block()
    assert block.eval() is block and not any(m.training for m in block.modules())
    x = minigrad.randn(4, 3)
    np.testing.assert_array_equal(block(x).numpy(), block(x).numpy())      # no dropout in eval
    block.train()
    assert all(m.training for m in block.modules())
    dropped = nn.Dropout(0.5)(minigrad.ones(1000))
    kept = dropped.numpy()
    assert set(np.unique(kept)) == {0.0, 2.0} and 400 < (kept == 0).sum() < 600


def test_zero_grad_and_requires_grad():
    block = Block()
    block(minigrad.randn(2, 3)).sum().backward()
    grads = {n: p.grad for n, p in block.named_parameters()}
    assert all(g is not None for g in grads.values())
    block.zero_grad(set_to_none=False)
    assert all(p.grad is grads[n] and not p.grad.abs().sum().item() for n, p in block.named_parameters())  # zero_()
    block.zero_grad()
    assert all(p.grad is None for p in block.parameters())
    block.requires_grad_(False)
    assert not any(p.requires_grad for p in block.parameters())


def test_to_moves_and_casts_everything(device):
    block = Block()
    block(minigrad.randn(2, 3)).sum().backward()
    assert block.to(device) is block
    tensors = list(block.parameters()) + [block.count, block.not_a_parameter]
    assert all(t.device == device for t in tensors)
    assert all(p.grad.device == device for p in block.parameters())
    block.double()
    assert all(t.dtype == np.float64 for t in tensors) and block.parameters().__next__().grad.dtype == np.float64
    y = block(minigrad.randn(2, 3, dtype="float64", device=device))
    assert y.device == device and y.dtype == np.float64
    block.float().to("cpu")
    assert all(t.device == "cpu" and t.dtype == np.float32 for t in tensors)
    ids = nn.Embedding(3, 2).to(device)(minigrad.tensor([0, 2], device=device))
    assert ids.device == device


def test_load_state_dict_round_trip_and_copies():
    source, target = Block(), Block()
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n, p), (_, q) in zip(source.named_parameters(), target.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert p._data is not q._data                            # copied, not shared
    numpy_state = {k: v.numpy() for k, v in source.state_dict().items()}
    target.load_state_dict(numpy_state)
    numpy_state["scale"][:] = 7                                # the caller's arrays stay theirs
    assert np.all(target.scale.numpy() == 1)


def test_load_state_dict_lists_every_problem():
    block = Block()
    state = block.state_dict()
    del state["norm.bias"]
    state["extra.weight"] = minigrad.zeros(2)
    state["inner.0.weight"] = minigrad.zeros(4, 3)
    with pytest.raises(RuntimeError) as error:
        block.load_state_dict(state)
    message = str(error.value)
    assert "missing keys: norm.bias" in message
    assert "unexpected keys: extra.weight" in message
    assert "inner.0.weight: checkpoint (4, 3), model (3, 3)" in message
    del state["inner.0.weight"]
    with pytest.raises(RuntimeError, match="strict=False"):
        block.load_state_dict(state)
    missing, unexpected = block.load_state_dict(state, strict=False)
    assert missing == ["inner.0.weight", "norm.bias"] and unexpected == ["extra.weight"]


def test_load_state_dict_bumps_versions():
    layer = nn.Linear(2, 2)
    loss = layer(minigrad.randn(3, 2)).sum()
    layer.load_state_dict(nn.Linear(2, 2).state_dict())
    with pytest.raises(minigrad.autograd.GraphError, match="modified in place"):
        loss.backward()


def test_repr_is_a_readable_tree():
    model = nn.Sequential(nn.Embedding(10, 4, padding_idx=0), nn.ModuleList([nn.Linear(4, 4), nn.ReLU()]),
                          nn.LayerNorm(4), nn.Dropout(0.1))
    assert repr(model) == "\n".join([
        "Sequential(",
        "  (0): Embedding(10, 4, padding_idx=0)",
        "  (1): ModuleList(",
        "    (0): Linear(in_features=4, out_features=4, bias=True)",
        "    (1): ReLU()",
        "  )",
        "  (2): LayerNorm((4,), eps=1e-05, elementwise_affine=True)",
        "  (3): Dropout(p=0.1)",
        ")",
    ])


def test_containers():
    layers = [nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1)]
    model = nn.Sequential(*layers)
    assert len(model) == 3 and model[-1] is layers[2] and list(model) == layers
    assert isinstance(model[:2], nn.Sequential) and len(model[:2]) == 2
    x = minigrad.randn(5, 2)
    np.testing.assert_array_equal(model(x).numpy(), layers[2](layers[1](layers[0](x))).numpy())
    model.append(nn.Sigmoid())
    assert len(model) == 4
    from collections import OrderedDict
    named = nn.Sequential(OrderedDict([("hidden", nn.Linear(2, 3)), ("out", nn.Linear(3, 1))]))
    assert list(named.state_dict()) == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    stack = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    stack.extend([nn.Tanh()])
    stack[0] = nn.Linear(2, 5)
    assert len(stack) == 4 and stack[0].out_features == 5 and stack[-1] is list(stack)[3]
    with pytest.raises(IndexError, match="out of range"):
        stack[4]
    with pytest.raises(TypeError, match="Modules"):
        stack.append(3)


# ---------------------------------------------------------------------- layers

def test_initialisation_as_pytorch():
    layer = nn.Linear(64, 32)
    bound = 1 / np.sqrt(64)
    assert layer.weight.shape == (32, 64) and layer.bias.shape == (32,)
    assert np.abs(layer.weight.numpy()).max() <= bound and np.abs(layer.bias.numpy()).max() <= bound
    assert np.abs(layer.weight.numpy()).max() > 0.9 * bound
    table = nn.Embedding(200, 50, padding_idx=3).weight.numpy()
    assert abs(table.std() - 1) < 0.05 and np.all(table[3] == 0)
    norm = nn.LayerNorm(6)
    assert np.all(norm.weight.numpy() == 1) and np.all(norm.bias.numpy() == 0)
    assert layer.weight.dtype == np.float32 and nn.Linear(2, 2, dtype="float64").weight.dtype == np.float64


def test_manual_seed_reproduces_initialisation_and_dropout():
    def run():
        minigrad.manual_seed(42)
        model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5))
        return model(minigrad.ones(2, 3)).numpy()

    np.testing.assert_array_equal(run(), run())


def test_init_functions():
    w = minigrad.empty(30, 20)
    nn.init.xavier_uniform_(w)
    assert np.abs(w.numpy()).max() <= np.sqrt(6 / 50)
    nn.init.kaiming_uniform_(w)
    assert np.abs(w.numpy()).max() <= np.sqrt(6 / 20)
    nn.init.zeros_(w)
    assert np.all(w.numpy() == 0)
    nn.init.constant_(w, 0.25)
    assert np.all(w.numpy() == 0.25) and w.dtype == np.float32
    with pytest.raises(ValueError, match="2 or more dimensions"):
        nn.init.xavier_uniform_(minigrad.empty(3))


def test_embedding_from_pretrained():
    table = np.arange(12.0).reshape(4, 3)
    frozen = nn.Embedding.from_pretrained(table, padding_idx=0)
    assert not frozen.weight.requires_grad and frozen.padding_idx == 0
    np.testing.assert_array_equal(frozen(minigrad.tensor([0, 3])).numpy(), table[[0, 3]])   # row 0 kept
    table[1] = -1
    assert frozen.weight.numpy()[1, 0] == 3.0                  # a copy of the table
    trained = nn.Embedding.from_pretrained(minigrad.tensor(table), freeze=False)
    trained(minigrad.tensor([1, 1])).sum().backward()
    np.testing.assert_array_equal(trained.weight.grad[1].numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="num_embeddings, dim"):
        nn.Embedding.from_pretrained(np.zeros(3))


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="in_features=4"):
        nn.Linear(4, 2)(minigrad.randn(3, 5))
    with pytest.raises(IndexError, match="outside the table of 5 rows"):
        nn.Embedding(5, 2)(minigrad.tensor([1, 5]))
    with pytest.raises(TypeError, match="integers"):
        nn.Embedding(5, 2)(minigrad.tensor([1.0]))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(4)(minigrad.randn(2, 3))
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_a_module_that_forgets_super_init_still_works():
    class Forgetful(nn.Module):
        def __init__(self):
            self.linear = nn.Linear(2, 2)

        def forward(self, x):
            return self.linear(x)

    model = Forgetful()
    assert model.training and [n for n, _ in model.named_parameters()] == ["linear.weight", "linear.bias"]
    model.register_buffer("steps", minigrad.zeros(1))
    assert list(model.state_dict()) == ["steps", "linear.weight", "linear.bias"]   # own tensors first, as torch
    assert Forgetful()._buffer_names == ()          # the class default is not shared and grown
    assert model.eval()(minigrad.ones(1, 2)).shape == (1, 2)


def test_xavier_normal_std_matches_glorot():
    minigrad.manual_seed(0)
    w = minigrad.empty(400, 300, dtype=minigrad.float64)
    nn.init.xavier_normal_(w, gain=2.0)
    expected = 2.0 * (2.0 / (400 + 300)) ** 0.5
    assert abs(w.numpy().std() / expected - 1) < 0.02
    assert abs(w.numpy().mean()) < 0.1 * expected
