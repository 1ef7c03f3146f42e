"""The names PyTorch programs use, with torch's meaning (issue 13): modules and aliases, devices,
dtypes, factories, sampling, containers, losses and activations as layers, and the names
minigrad leaves out on purpose (an AttributeError that says what to use)."""
import importlib
import sys
import types
import warnings

import numpy
import pytest

import minigrad
from minigrad import nn

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------------- modules and aliases

def test_nn_functional_is_the_functional_module():
    import minigrad.nn.functional as F1
    from minigrad.nn import functional as F2
    assert F1 is F2 is minigrad.functional is importlib.import_module("minigrad.nn.functional")


@pytest.mark.parametrize("name", ["float", "double", "half", "long", "int", "short", "bool", "uint8", "int8",
                                  "int16", "int32", "int64", "float16", "float32", "float64"])
def test_dtype_aliases_name_torchs_dtypes(name):
    assert str(getattr(minigrad, name)) == str(getattr(torch, name)).replace("torch.", "")
    assert minigrad.zeros(2, dtype=getattr(minigrad, name)).dtype == getattr(minigrad, name)


def test_builtins_are_not_shadowed_inside_the_package():
    assert minigrad.tensor([1.5]).float().dtype == minigrad.float32 and float(minigrad.tensor(2.5)) == 2.5
    assert int(minigrad.tensor(3)) == 3 and bool(minigrad.tensor(True)) is True


def test_return_types_are_named_tuples():
    x = minigrad.tensor([[1.0, 5.0, 3.0]])
    values, indices = x.max(1)
    assert x.max(dim=1).values.tolist() == values.tolist() == [5.0] and indices.tolist() == [1]
    assert type(x.topk(2)).__name__ == "topk" and x.topk(2).indices.tolist() == [[1, 2]]
    assert x.min(1)._fields == ("values", "indices") and x.sort().values.tolist() == [[1.0, 3.0, 5.0]]


# ---------------------------------------------------------------------------- devices and cuda

def test_device_is_a_name_with_type_and_index():
    cpu, gpu = minigrad.device("cpu"), minigrad.device("cuda", 0)
    assert cpu == "cpu" and cpu.type == "cpu" and cpu.index is None and repr(cpu) == repr(torch.device("cpu"))
    assert gpu == "cuda:0" == minigrad.device("cuda:0") and gpu.type == "cuda" and gpu.index == 0
    assert repr(gpu) == repr(torch.device("cuda", 0)) and str(gpu) == str(torch.device("cuda:0"))
    assert minigrad.device(cpu) == cpu and {cpu: 1}["cpu"] == 1
    for bad in ("tpu", "cuda:x"):
        with pytest.raises(ValueError, match="device"):
            minigrad.device(bad)
    with pytest.raises(ValueError, match="twice"):
        minigrad.device("cuda:0", 1)


def test_device_objects_go_wherever_device_names_do(device):
    where = minigrad.device(device)
    x = minigrad.ones(2, 3, device=where)
    assert x.device == device and x.device.type == device and isinstance(x.device, minigrad.device)
    assert minigrad.tensor([1.0], device=where).device == device
    assert x.to(minigrad.device("cpu")).device == "cpu"
    layer = nn.Linear(3, 2).to(where)
    assert layer(x).device == device
    assert minigrad.arange(3, device=x.device).device == device        # nanoGPT's torch.arange(t, device=idx.device)


def test_cuda_is_available_only_with_cupy_and_a_gpu(monkeypatch):
    def fake_cupy(count):
        runtime = types.SimpleNamespace(getDeviceCount=count)
        return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))

    def no_gpu():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    monkeypatch.setitem(sys.modules, "cupy", None)               # import cupy -> ImportError
    assert minigrad.cuda.is_available() is False and minigrad.cuda.device_count() == 0
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(no_gpu))
    assert minigrad.cuda.is_available() is False
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(lambda: 0))
    assert minigrad.cuda.is_available() is False
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(lambda: 2))
    assert minigrad.cuda.is_available() is True and minigrad.cuda.device_count() == 2


def test_cuda_manual_seed_seeds_every_draw():
    minigrad.cuda.manual_seed(3)
    a = minigrad.randn(4)
    minigrad.cuda.manual_seed_all(3)
    assert minigrad.randn(4).tolist() == a.tolist()


# ---------------------------------------------------------------------------- factories and sampling

def test_randint_takes_torchs_two_forms(device):
    minigrad.manual_seed(0)
    a = minigrad.randint(5, (200,), device=device)
    b = minigrad.randint(3, 6, size=(2, 3), dtype=minigrad.int32, device=device)
    assert a.dtype == minigrad.long and 0 <= int(a.data.min()) and int(a.data.max()) == 4
    assert b.dtype == minigrad.int32 and b.shape == (2, 3) and 3 <= int(b.data.min()) and int(b.data.max()) <= 5


def test_new_factories_match_torch(device):
    for ours, theirs in [(minigrad.linspace(-1, 2, 7, device=device), torch.linspace(-1, 2, 7)),
                         (minigrad.eye(3, device=device), torch.eye(3)),
                         (minigrad.eye(2, 4, dtype=minigrad.double, device=device), torch.eye(2, 4, dtype=torch.double))]:
        assert ours.device == device and str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        numpy.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-7)
    x = minigrad.ones(2, 3, dtype=minigrad.float64, device=device)
    for like in (minigrad.zeros_like(x), minigrad.full_like(x, 7), minigrad.empty_like(x), minigrad.rand_like(x),
                 minigrad.randn_like(x), minigrad.randint_like(x, 5)):
        assert like.shape == (2, 3) and like.dtype == minigrad.float64 and like.device == device
    assert minigrad.full_like(x, 7).tolist() == [[7.0] * 3] * 2
    assert minigrad.randn_like(x, dtype=minigrad.float32).dtype == minigrad.float32
    assert minigrad.ones_like(input=x, requires_grad=True).requires_grad          # torch's keyword name


def test_legacy_type_constructors():
    for ours, theirs in [(minigrad.LongTensor([[1, 2]]), torch.LongTensor([[1, 2]])),
                         (minigrad.FloatTensor([1.5, 2]), torch.FloatTensor([1.5, 2])),
                         (minigrad.LongTensor(2, 3), torch.LongTensor(2, 3).zero_())]:
        assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    with pytest.raises(AttributeError, match="dtype=minigrad.double"):
        minigrad.DoubleTensor


def test_randperm_and_from_numpy(device):
    minigrad.manual_seed(1)
    order = minigrad.randperm(10, device=device)
    assert sorted(order.tolist()) == list(range(10)) and order.dtype == minigrad.long and order.device == device
    minigrad.manual_seed(1)
    assert minigrad.randperm(10, device=device).tolist() == order.tolist()
    array = numpy.arange(6, dtype=numpy.int32).reshape(2, 3)
    t = minigrad.from_numpy(array)
    assert t.dtype == minigrad.int32 and t.tolist() == array.tolist()
    array[0, 0] = 99                                   # a copy, not shared memory (see TORCH_DIFFERENCES.md)
    assert t.tolist()[0][0] == 0


def test_new_tensor_methods_keep_dtype_and_device(device):
    x = minigrad.ones(2, dtype=minigrad.float64, device=device)
    for made, shape in [(x.new_zeros((3, 2)), (3, 2)), (x.new_ones(3, 2), (3, 2)), (x.new_full((2,), 5.0), (2,)),
                        (x.new_empty(4), (4,)), (x.new_tensor([1, 2]), (2,))]:
        assert made.shape == shape and made.dtype == minigrad.float64 and made.device == device
        assert not made.requires_grad
    assert x.new_zeros(2, dtype=minigrad.long).dtype == minigrad.long
    assert x.new_tensor([1.5], requires_grad=True).requires_grad
    # torch's word_language_model: weight.new_zeros((nlayers, bsz, nhid))
    assert x.new_zeros((2, 3, 4)).tolist() == torch.zeros(2, 3, 4, dtype=torch.float64).tolist()


def test_small_tensor_methods(device):
    x = minigrad.arange(6, device=device).reshape(2, 3)
    assert x.contiguous() is x and x.size(1) == 3 and x.size(-2) == 2 and x.size() == (2, 3)
    assert not x.is_floating_point() and x.float().is_floating_point()
    assert x.type_as(minigrad.ones(1, dtype=minigrad.float64)).dtype == minigrad.float64
    assert x.t().shape == (3, 2) and x.half().dtype == minigrad.float16
    assert x.eq(x).all().item() and not x.ne(x).any().item() and x.lt(3).tolist() == (x < 3).tolist()
    assert x.ge(3).tolist() == [[False] * 3, [True] * 3] and x.gt(4).sum().item() == 1 and x.le(0).sum().item() == 1
    assert minigrad.numel(x) == 6 and minigrad.is_tensor(x) and not minigrad.is_tensor(x.numpy())
    with pytest.raises(ValueError, match="transpose"):
        minigrad.zeros(2, 2, 2).t()
    with pytest.raises(ValueError, match=r"bmm: expected \(b, n, m\) and \(b, m, p\)"):
        minigrad.bmm(minigrad.zeros(2, 3, 4), minigrad.zeros(3, 4, 5))
    with pytest.raises(ValueError, match="tril: needs at least 2 dimensions"):
        minigrad.tril(minigrad.zeros(3))
    with pytest.raises(ValueError, match="topk: k=4 is out of range"):
        minigrad.zeros(3).topk(4)


def test_tril_of_ones_is_the_causal_buffer_of_mingpt(device):
    mask = minigrad.tril(minigrad.ones(4, 4, device=device)).view(1, 1, 4, 4)
    scores = minigrad.zeros(1, 1, 4, 4, device=device).masked_fill(mask[:, :, :4, :4] == 0, float("-inf"))
    reference = torch.zeros(1, 1, 4, 4).masked_fill(torch.tril(torch.ones(4, 4)).view(1, 1, 4, 4) == 0, float("-inf"))
    assert scores.softmax(-1).tolist() == reference.softmax(-1).tolist()
    assert minigrad.triu(minigrad.ones(3, 3, dtype=minigrad.uint8), diagonal=1).tolist() == \
        torch.triu(torch.ones(3, 3, dtype=torch.uint8), diagonal=1).tolist()


def test_multinomial_draws_follow_the_weights_and_the_seed(device):
    weights = minigrad.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 2.0, 0.0]], dtype=minigrad.float64, device=device)
    minigrad.manual_seed(5)
    draws = minigrad.multinomial(weights, 20000, replacement=True)
    assert draws.shape == (2, 20000) and draws.dtype == minigrad.long and draws.device == device
    counts = numpy.stack([numpy.bincount(row, minlength=4) for row in draws.numpy()]) / 20000
    numpy.testing.assert_allclose(counts, [[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.5, 0.0]], atol=0.015)
    minigrad.manual_seed(5)
    assert weights.multinomial(20000, replacement=True).tolist() == draws.tolist()     # same seed, same draws
    one = minigrad.tensor([0.2, 0.5, 0.3], device=device).multinomial(1)                # nanoGPT: multinomial(probs, 1)
    assert one.shape == (1,)
    distinct = minigrad.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=device).multinomial(5)
    assert sorted(distinct.tolist()) == [0, 1, 2, 3, 4]                                  # without replacement
    with pytest.raises(ValueError, match="without replacement"):
        weights.multinomial(4)                                   # only 3 non-zero weights per row
    with pytest.raises(ValueError, match="non-negative"):
        minigrad.tensor([0.5, -0.1]).multinomial(1)


# ---------------------------------------------------------------------------- functional

def test_one_hot_is_int64_and_infers_the_class_count():
    ids = minigrad.tensor([0, 2, 1])
    assert minigrad.functional.one_hot(ids).tolist() == torch.nn.functional.one_hot(torch.tensor([0, 2, 1])).tolist()
    assert minigrad.functional.one_hot(ids, 4).dtype == minigrad.long
    with pytest.raises(ValueError, match="0..1"):
        minigrad.functional.one_hot(ids, 2)


def test_softmax_without_dim_uses_torchs_legacy_choice_and_warns():
    x = numpy.random.default_rng(0).standard_normal((2, 3, 4))
    for F, T in ((minigrad.functional.softmax, torch.nn.functional.softmax),
                 (minigrad.functional.log_softmax, torch.nn.functional.log_softmax)):
        for array in (x, x[0], x[0, 0]):
            with pytest.warns(UserWarning, match="implicit dimension"):
                ours = F(minigrad.tensor(array))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = T(torch.tensor(array))
            numpy.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    for layer in (minigrad.nn.Softmax(), minigrad.nn.LogSoftmax(), minigrad.functional.softmax):
        with pytest.warns(UserWarning, match="implicit dimension") as record:
            layer(minigrad.tensor(x))
        assert record[0].filename == __file__      # the warning names the caller's line, as torch's does


def test_losses_take_torchs_argument_order_and_refuse_what_they_lack():
    F = minigrad.functional
    z, t = minigrad.randn(4, 3, dtype=minigrad.float64), minigrad.tensor([0, 2, 1, 2])
    assert F.cross_entropy(z, t, None, None, 2).item() == pytest.approx(F.cross_entropy(z, t, ignore_index=2).item())
    with pytest.raises(NotImplementedError, match="weight= is not implemented"):
        F.cross_entropy(z, t, minigrad.ones(3))
    with pytest.raises(NotImplementedError, match="weight= is not implemented"):
        nn.NLLLoss(weight=minigrad.ones(3))
    with pytest.raises(TypeError, match="size_average= .*deprecated in torch too"):
        nn.MSELoss(size_average=True)
    with pytest.raises(NotImplementedError, match="pos_weight"):
        F.binary_cross_entropy_with_logits(z, z.sigmoid(), pos_weight=minigrad.ones(3))
    with pytest.raises(ValueError, match="reduction"):
        nn.CrossEntropyLoss(reduction="average")
    assert repr(nn.CrossEntropyLoss(reduction="sum")) == "CrossEntropyLoss(reduction='sum')"


def test_functional_takes_torchs_argument_names():
    F, TF = minigrad.functional, torch.nn.functional
    x = numpy.random.default_rng(0).standard_normal((2, 3))
    ours, theirs = minigrad.tensor(x), torch.tensor(x)
    for name, kwargs in [("relu", {}), ("tanh", {}), ("sigmoid", {}), ("gelu", {"approximate": "tanh"}),
                         ("softmax", {"dim": 0}), ("log_softmax", {"dim": -1, "dtype": minigrad.float32}),
                         ("dropout", {"p": 0.3, "training": False}), ("layer_norm", {"normalized_shape": (3,)})]:
        their_kwargs = {k: (torch.float32 if v is minigrad.float32 else v) for k, v in kwargs.items()}
        got, expected = getattr(F, name)(input=ours, **kwargs), getattr(TF, name)(input=theirs, **their_kwargs)
        assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
        numpy.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    weight = minigrad.tensor(x)
    assert F.embedding(input=minigrad.tensor([1, 0]), weight=weight).tolist() == [x[1].tolist(), x[0].tolist()]
    with pytest.raises(NotImplementedError, match="max_norm= is not implemented"):
        F.embedding(minigrad.tensor([1]), weight, None, 1.0)
    for call in (lambda: F.relu(ours, inplace=True), lambda: F.dropout(ours, 0.1, True, True)):
        with pytest.raises(NotImplementedError, match="inplace= is not implemented"):
            call()


def test_inplace_options_are_refused_not_ignored():
    for make in (lambda: nn.ReLU(inplace=True), lambda: nn.Dropout(0.1, inplace=True)):
        with pytest.raises(NotImplementedError, match="inplace=True"):
            make()
    assert isinstance(nn.ReLU(False), nn.ReLU)


def test_clip_grad_utilities_match_torch():
    values = numpy.random.default_rng(0).standard_normal((3, 4)) * 3
    ours, theirs = minigrad.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    ours.grad, theirs.grad = minigrad.tensor(values), torch.tensor(values)
    kept, their_kept = ours.grad, theirs.grad
    nn.utils.clip_grad_value_([ours], 1.5)
    torch.nn.utils.clip_grad_value_([theirs], 1.5)
    numpy.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    assert ours.grad is kept and theirs.grad is their_kept         # clamped in place, as PyTorch's
    assert nn.utils.clip_grad_norm_ is minigrad.optim.clip_grad_norm_


# ---------------------------------------------------------------------------- grad modes

def test_grad_modes():
    w = minigrad.ones(2, requires_grad=True)

    @minigrad.no_grad()
    def decorated():
        return w * 2

    assert not decorated().requires_grad
    with minigrad.inference_mode():
        assert not (w * 2).requires_grad
    with minigrad.inference_mode(False):
        assert (w * 2).requires_grad
    with minigrad.set_grad_enabled(False):
        assert not minigrad.is_grad_enabled()
    assert minigrad.is_grad_enabled()
    minigrad.set_grad_enabled(False)               # the function form switches at once
    try:
        assert not (w * 2).requires_grad
    finally:
        minigrad.set_grad_enabled(True)
    assert (w * 2).requires_grad


# ---------------------------------------------------------------------------- containers and layers

class Block(nn.Module):
    def __init__(self, L):
        super().__init__()
        self.ln = L.nn.LayerNorm(3)
        self.mlp = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.GELU(), L.nn.Linear(4, 3))


class TinyGPT:
    """minGPT's layout: a ModuleDict of embeddings, a ModuleList of blocks and a final LayerNorm."""

    @staticmethod
    def build(L, block):
        model = L.nn.Module()
        model.transformer = L.nn.ModuleDict(dict(
            wte=L.nn.Embedding(5, 3), wpe=L.nn.Embedding(4, 3), drop=L.nn.Dropout(0.1),
            h=L.nn.ModuleList([block(L) for _ in range(2)]), ln_f=L.nn.LayerNorm(3)))
        model.lm_head = L.nn.Linear(3, 5, bias=False)
        return model


class TorchBlock(torch.nn.Module):
    def __init__(self, L):
        super().__init__()
        self.ln = L.nn.LayerNorm(3)
        self.mlp = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.GELU(), L.nn.Linear(4, 3))


def test_module_dict_names_parameters_as_torch():
    ours, theirs = TinyGPT.build(minigrad, Block), TinyGPT.build(torch, TorchBlock)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    blocks = ours.transformer
    assert list(blocks.keys()) == ["wte", "wpe", "drop", "h", "ln_f"] and "h" in blocks and len(blocks) == 5
    assert blocks["wte"] is blocks.wte and [k for k, _ in blocks.items()] == list(blocks)
    assert blocks.pop("drop").p == 0.1 and "drop" not in blocks and not hasattr(blocks, "drop")
    with pytest.raises(KeyError):
        blocks["drop"]
    with pytest.raises(TypeError, match="ModuleDict holds Modules"):
        blocks["x"] = 3
    for key in ("keys", "forward", "training", "bad key"):
        with pytest.raises(KeyError):
            blocks[key] = nn.ReLU()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def test_module_apply_visits_children_first_as_torch():
    ours, theirs = TinyGPT.build(minigrad, Block), TinyGPT.build(torch, TorchBlock)
    seen = {"ours": [], "theirs": []}
    ours.apply(lambda m: seen["ours"].append(type(m).__name__))
    theirs.apply(lambda m: seen["theirs"].append(type(m).__name__))
    assert seen["ours"] == [name.replace("TorchBlock", "Block") for name in seen["theirs"]]

    def init_weights(module):                  # minGPT's _init_weights
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
    assert ours.apply(init_weights) is ours
    assert all(abs(b).sum().item() == 0 for n, b in ours.named_parameters() if n.endswith("mlp.0.bias"))


# ---------------------------------------------------------------------------- what is left out, said so

@pytest.mark.parametrize("module, name, advice", [
    (minigrad, "compile", "call the model directly"), (minigrad, "einsum", "matmul"),
    (minigrad, "bfloat16", "float16"), (minigrad, "autocast", "float32"), (minigrad, "onnx", "state_dict"),
    (nn, "Conv2d", "sequence models"), (nn, "BatchNorm1d", "nn.LayerNorm"), (nn, "LazyLinear", "in_features"),
    (minigrad.functional, "conv1d", "convolutions"), (minigrad.functional, "batch_norm", "layer_norm"),
])
def test_deliberate_absences_explain_themselves(module, name, advice):
    with pytest.raises(AttributeError, match=f"{name} is not in minigrad: .*{advice}"):
        getattr(module, name)
    assert not hasattr(module, name)


def test_unknown_names_still_raise_the_plain_attribute_error():
    for module in (minigrad, nn, minigrad.functional):
        with pytest.raises(AttributeError, match=r"module '.*' has no attribute 'no_such_name'"):
            module.no_such_name
    from minigrad import optim  # noqa: F401  (submodules still import through the package __getattr__)



# ---------------------------------------------------------------------------- beyond the list

@pytest.mark.parametrize("make", [
    lambda L, opt: L.optim.lr_scheduler.LambdaLR(opt, lambda step: 0.5 ** step + step / 10),
    lambda L, opt: L.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8),
    lambda L, opt: L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.01),
    lambda L, opt: L.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=6),
    lambda L, opt: L.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
])
def test_lr_schedulers_match_torch(make):
    rates = {}
    for L in (minigrad, torch):
        groups = [{"params": [L.zeros(2, requires_grad=True)]}, {"params": [L.zeros(1, requires_grad=True)], "lr": 0.3}]
        optimizer = L.optim.SGD(groups, lr=0.1)
        scheduler = make(L, optimizer)
        rates[L.__name__] = []
        for _ in range(25):
            optimizer.step()
            scheduler.step()
            rates[L.__name__].append(scheduler.get_last_lr())
    numpy.testing.assert_allclose(rates["minigrad"], rates["torch"], rtol=1e-12)


def test_lambda_lr_state_dict_saves_without_the_function(tmp_path):
    optimizer = minigrad.optim.SGD([minigrad.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = minigrad.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 / (step + 1))
    scheduler.step()
    minigrad.save({"scheduler": scheduler.state_dict()}, tmp_path / "s.npz")
    assert minigrad.load(tmp_path / "s.npz")["scheduler"]["last_epoch"] == 1


def test_pad_sequence_matches_torch():
    lengths = [3, 1, 4]
    arrays = [numpy.random.default_rng(n).standard_normal((n, 2)) for n in lengths]
    ours = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    for batch_first in (False, True):
        for side in ("right", "left"):
            got = nn.utils.rnn.pad_sequence(ours, batch_first, -1.0, side)
            expected = torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in arrays], batch_first, -1.0, side)
            numpy.testing.assert_array_equal(got.numpy(), expected.numpy())
    nn.utils.rnn.pad_sequence(ours).sum().backward()
    assert [o.grad.tolist() for o in ours] == [numpy.ones((n, 2)).tolist() for n in lengths]


def test_narrow_nonzero_pin_memory_and_to_another_tensor(device):
    data = minigrad.arange(12, device=device)
    assert minigrad.narrow(data, 0, 2, 5).tolist() == torch.arange(12).narrow(0, 2, 5).tolist()  # word LM batchify
    x = minigrad.tensor([[0.0, 1.5], [2.0, 0.0]], device=device)
    assert x.nonzero().tolist() == torch.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero().tolist()
    assert x.nonzero().dtype == minigrad.long and x.pin_memory() is x
    assert x.to(device, non_blocking=True) is x                       # nanoGPT: x.pin_memory().to(device, non_blocking=True)
    other = minigrad.zeros(1, dtype=minigrad.float64, device="cpu")
    assert x.to(other).dtype == minigrad.float64 and x.to(other).device == "cpu"
    copied = x.to(device, copy=True)
    assert copied is not x and copied.tolist() == x.tolist()


def test_modules_deep_copy_as_the_annotated_transformer_clones_layers():
    import copy
    layer = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    layers = nn.ModuleList([copy.deepcopy(layer) for _ in range(2)])
    assert layers[0][0].weight is not layers[1][0].weight
    assert layers[0][0].weight.tolist() == layer[0].weight.tolist()
    assert len(list(layers.parameters())) == 4


@pytest.mark.parametrize("name, param", [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                                         ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)])
def test_calculate_gain_matches_torch(name, param):
    assert nn.init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param), rel=1e-15)


def test_more_initialisations(device):
    minigrad.manual_seed(0)
    w = minigrad.empty(400, 300, dtype=minigrad.float64, device=device)
    nn.init.kaiming_uniform_(w, a=0.0, mode="fan_out", nonlinearity="relu")
    bound = numpy.sqrt(3.0) * numpy.sqrt(2.0) / numpy.sqrt(400)
    assert abs(w.numpy()).max() <= bound and abs(w.numpy()).max() > 0.99 * bound
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert w.numpy().std() == pytest.approx(numpy.sqrt(2.0 / 300), rel=0.02)
    nn.init.trunc_normal_(w, std=0.02, a=-0.03, b=0.03)
    assert abs(w.numpy()).max() <= 0.03 and w.device == device
    for shape in [(5, 3), (3, 5), (4, 2, 3)]:
        q = nn.init.orthogonal_(minigrad.empty(*shape, dtype=minigrad.float64, device=device), gain=2.0)
        flat = q.numpy().reshape(shape[0], -1) / 2.0
        small = flat.T @ flat if shape[0] >= flat.shape[1] else flat @ flat.T
        numpy.testing.assert_allclose(small, numpy.eye(small.shape[0]), atol=1e-12)
    with pytest.raises(ValueError, match="mode"):
        nn.init.kaiming_normal_(w, mode="fan_avg")


def test_saving_a_whole_module_says_to_save_its_state_dict(tmp_path):
    with pytest.raises(minigrad.serialization.CheckpointError, match=r"save its Linear.state_dict\(\) instead"):
        minigrad.save(nn.Linear(2, 3), tmp_path / "model.npz")         # torch.save(model, f) pickles; minigrad never does
    optimizer = minigrad.optim.SGD(nn.Linear(2, 3).parameters(), lr=0.1)
    with pytest.raises(minigrad.serialization.CheckpointError, match=r"SGD.state_dict\(\)"):
        minigrad.save({"opt": optimizer}, tmp_path / "opt.npz")


def test_embedding_takes_torchs_arguments_in_torchs_order():
    layer = nn.Embedding(5, 3, 0, None, 2.0, False, False, None, False, "cpu", minigrad.float64)
    assert layer.weight.dtype == minigrad.float64 and layer.weight.numpy()[0].tolist() == [0.0] * 3
    with pytest.raises(NotImplementedError, match="max_norm= is not implemented"):
        nn.Embedding(5, 3, None, 1.0)
    with pytest.raises(NotImplementedError, match="sparse= is not implemented"):
        nn.Embedding(5, 3, sparse=True)
    assert not nn.Embedding(2, 2, _weight=minigrad.ones(2, 2), _freeze=True).weight.requires_grad


# ---------------------------------------------------------------------------- utils.data

def test_tensor_dataset_and_loader_batch_as_torch():
    from minigrad.utils.data import DataLoader, TensorDataset
    x, y = numpy.arange(14.0).reshape(7, 2), numpy.arange(7)
    ours = list(DataLoader(TensorDataset(minigrad.tensor(x), minigrad.tensor(y)), batch_size=3))
    theirs = list(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                              batch_size=3))
    assert len(ours) == len(theirs) == 3
    for (xb, yb), (txb, tyb) in zip(ours, theirs):
        assert xb.tolist() == txb.tolist() and yb.tolist() == tyb.tolist() and yb.dtype == minigrad.long
    dropped = DataLoader(TensorDataset(minigrad.tensor(x)), batch_size=3, drop_last=True)
    assert len(dropped) == 2 and [b[0].shape for b in dropped] == [(3, 2), (3, 2)]
    assert [s[0].tolist() for s in DataLoader(TensorDataset(minigrad.tensor(x)), batch_size=None)][:2] == \
        [[0.0, 1.0], [2.0, 3.0]]


def test_shuffled_epochs_cover_every_sample_and_follow_the_seed():
    from minigrad.utils.data import DataLoader, RandomSampler, TensorDataset
    dataset = TensorDataset(minigrad.arange(10))
    minigrad.manual_seed(4)
    first = [int(i) for (batch,) in DataLoader(dataset, batch_size=4, shuffle=True) for i in batch.tolist()]
    second = [int(i) for (batch,) in DataLoader(dataset, batch_size=4, shuffle=True) for i in batch.tolist()]
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    minigrad.manual_seed(4)
    assert [int(i) for (b,) in DataLoader(dataset, batch_size=4, shuffle=True) for i in b.tolist()] == first
    loader = DataLoader(dataset, sampler=RandomSampler(dataset, replacement=True, num_samples=25), batch_size=5)
    assert len(loader) == 5 and all(0 <= i < 10 for (b,) in loader for i in b.tolist())
    with pytest.raises(ValueError, match="sampler and shuffle"):
        DataLoader(dataset, sampler=RandomSampler(dataset), shuffle=True)


def test_default_collate_matches_torchs_types():
    from minigrad.utils.data import default_collate
    samples = [(1, 2.5, True, numpy.ones(2, dtype=numpy.float32), {"a": 3}, "w"),
               (4, 0.5, False, numpy.zeros(2, dtype=numpy.float32), {"a": 5}, "v")]
    ours = default_collate(samples)
    theirs = torch.utils.data.default_collate(samples)
    for mine, reference in zip(ours[:4], theirs[:4]):
        assert mine.tolist() == reference.tolist() and str(mine.dtype) == str(reference.dtype).replace("torch.", "")
    assert ours[4]["a"].tolist() == theirs[4]["a"].tolist() and ours[5] == theirs[5] == ("w", "v")


def test_random_split_lengths_and_gradients_through_a_loader():
    from minigrad.utils.data import DataLoader, TensorDataset, random_split
    dataset = TensorDataset(minigrad.arange(10))
    parts = random_split(dataset, [0.34, 0.33, 0.33])
    assert [len(p) for p in parts] == [len(p) for p in torch.utils.data.random_split(range(10), [0.34, 0.33, 0.33])]
    assert sorted(int(p[i][0].item()) for p in parts for i in range(len(p))) == list(range(10))
    with pytest.raises(ValueError, match="add up"):
        random_split(dataset, [3, 3])
    w = minigrad.ones(4, 2, dtype=minigrad.float64, requires_grad=True)
    total = sum((xb * 2).sum() for (xb,) in DataLoader(TensorDataset(w), batch_size=3))
    total.backward()
    assert w.grad.tolist() == [[2.0, 2.0]] * 4


def test_backward_takes_torchs_gradient_keyword():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).backward(gradient=minigrad.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [3.0, 1.5]
    with pytest.raises(NotImplementedError, match="create_graph"):
        (x * 3).sum().backward(create_graph=True)


def test_index_select_errors_and_small_properties(device):
    x = minigrad.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="index_select: index must be a 1-D integer tensor"):
        x.index_select(0, minigrad.tensor([[0]], device=device))
    assert x.is_cuda == (device == "cuda") and x.nelement() == 6 and len(x.unbind(1)) == 3
    assert minigrad.zeros(0, 3).unbind(0) == () and [p.shape for p in x.unbind(-1)] == [x.shape[:-1]] * x.shape[-1]


def test_unsigned_and_boolean_values_sort_and_reduce_as_torch():
    values = numpy.array([[3, 0, 255, 7], [1, 1, 0, 9]], dtype=numpy.uint8)
    ours, theirs = minigrad.tensor(values), torch.tensor(values)
    assert ours.sort(dim=1, descending=True)[0].tolist() == theirs.sort(dim=1, descending=True)[0].tolist()
    assert ours.argmin(1).tolist() == theirs.argmin(1).tolist() and ours.amin(1).tolist() == theirs.amin(1).tolist()
    assert ours.min().item() == 0 and ours.topk(2).values.tolist() == theirs.topk(2).values.tolist()
    flags = minigrad.tensor([True, False, True])
    assert flags.argmin().item() == 1 and flags.sort(descending=True)[1].tolist() == [0, 2, 1]


def test_gather_scatter_and_clamp_refuse_what_torch_refuses():
    x = minigrad.zeros(2, 3)
    with pytest.raises(IndexError, match=r"gather: index values must be in 0\.\.2"):
        x.gather(1, minigrad.tensor([[-1], [0]]))
    with pytest.raises(IndexError, match=r"scatter: index values must be in 0\.\.2"):
        x.scatter(1, minigrad.tensor([[3], [0]]), 1.0)
    with pytest.raises(TypeError, match="maximum"):
        x.clamp(minigrad.zeros(3))


def test_binary_cross_entropy_refuses_mixed_float_dtypes():
    # torch raises for binary_cross_entropy (Found dtype Float but expected Double); silently computing
    # in float64 would hide a model/target mismatch, so minigrad raises for both forms
    p64 = minigrad.tensor([0.2, 0.7], dtype=minigrad.float64)
    t32 = minigrad.tensor([0.0, 1.0], dtype=minigrad.float32)
    F = minigrad.functional
    for loss in (F.binary_cross_entropy, F.binary_cross_entropy_with_logits):
        with pytest.raises(RuntimeError, match="expected the same dtype"):
            loss(p64, t32)
    assert F.binary_cross_entropy(p64, t32.double()).dtype == minigrad.float64


def test_mixed_float_dtypes_are_refused_naming_each_tensor():
    """same_dtype names every floating tensor given and its dtype; an absent bias or integer target is skipped."""
    x64, w32 = minigrad.zeros(2, 3, dtype=minigrad.float64), minigrad.zeros(4, 3, dtype=minigrad.float32)
    with pytest.raises(RuntimeError, match=r"linear: expected the same dtype, got input float64, weight float32\. "
                                           r"Cast one side"):
        minigrad.functional.linear(x64, w32)
    with pytest.raises(RuntimeError, match=r"got input float64, weight float32, bias float32"):
        minigrad.functional.linear(x64, w32, minigrad.zeros(4))
    assert minigrad.functional.linear(x64, w32.double()).dtype == minigrad.float64
