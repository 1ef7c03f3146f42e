"""optim.RMSprop and optim.Adagrad against torch.optim step by step, every option; the samplers and
loaders lazy as torch's (an endless loader costs nothing up front); torch's module paths of
torch.utils.data (issue 18)."""
import importlib
import itertools
import tracemalloc

import numpy
import pytest

import minigrad
from minigrad import nn, optim
from minigrad.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler, TensorDataset

from optional_torch import needs_torch, torch  # the comparisons skip without PyTorch

OPTIONS = [
    ("RMSprop", {}), ("RMSprop", dict(lr=0.05, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(momentum=0.8)), ("RMSprop", dict(centered=True, momentum=0.5, lr=0.02)),
    ("Adagrad", {}), ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.2, initial_accumulator_value=0.3, eps=1e-8)),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, options", OPTIONS)
def test_optimizer_steps_match_torch(name, options, dtype):
    rng = numpy.random.default_rng(5)
    w0, x = rng.standard_normal((3, 4)), rng.standard_normal((6, 4))
    tolerance = 1e-12 if dtype == "float64" else 1e-5
    weights = []
    for L in (minigrad, torch):
        w = L.nn.Parameter(L.tensor(w0, dtype=getattr(L, dtype)))
        optimizer = getattr(L.optim, name)([w], **options)
        inputs = L.tensor(x, dtype=getattr(L, dtype))
        history = []
        for _ in range(5):
            optimizer.zero_grad()
            ((inputs @ w.T).tanh() ** 2).sum().backward()
            optimizer.step()
            history.append(w.detach().numpy().copy())
        weights.append(history)
    for step, (ours, theirs) in enumerate(zip(*weights)):
        assert ours.dtype == theirs.dtype
        numpy.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance, err_msg=f"after step {step + 1}")


def test_optimizer_state_survives_a_checkpoint():
    model = nn.Linear(3, 2)
    optimizer = optim.RMSprop(model.parameters(), momentum=0.9, centered=True)
    model(minigrad.ones(1, 3)).sum().backward()
    optimizer.step()
    again = optim.RMSprop(model.parameters(), momentum=0.9, centered=True)
    again.load_state_dict(optimizer.state_dict())
    state = again.state[model.weight]
    assert set(state) == {"step", "square_avg", "momentum_buffer", "grad_avg"} and state["step"] == 1
    with pytest.raises(ValueError, match="RMSprop"):
        optim.RMSprop(model.parameters(), lr=-1)
    with pytest.raises(ValueError, match="Adagrad"):
        optim.Adagrad(model.parameters(), lr_decay=-1)


def test_endless_random_sampler_draws_lazily():
    dataset = TensorDataset(minigrad.arange(10))
    sampler = RandomSampler(dataset, replacement=True, num_samples=int(1e10))     # 80 GB as one index array
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    assert len(sampler) == int(1e10) and len(loader) == int(2.5e9)
    tracemalloc.start()
    try:
        batches = [batch[0] for batch in itertools.islice(loader, 3)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000 and all(b.shape == (4,) and 0 <= int(b.min()) and int(b.max()) < 10 for b in batches)
    endless = RandomSampler(dataset, num_samples=int(1e12))                          # without replacement: pass by pass
    first = list(itertools.islice(iter(endless), 25))
    assert sorted(first[:10]) == list(range(10)) and sorted(first[10:20]) == list(range(10))


def test_samplers_reproducible_and_complete():
    dataset = TensorDataset(minigrad.arange(7))
    minigrad.manual_seed(1)
    a = list(RandomSampler(dataset))
    minigrad.manual_seed(1)
    assert a == list(RandomSampler(dataset)) and sorted(a) == list(range(7))
    assert list(RandomSampler(dataset, num_samples=9))[7:] != [] and len(list(RandomSampler(dataset, num_samples=9))) == 9
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(dataset, num_samples=0)
    assert issubclass(RandomSampler, Sampler)


def test_torch_module_paths_of_utils_data():
    from minigrad.utils.data.dataloader import DataLoader as FromDataloader, default_collate
    from minigrad.utils.data.dataset import Dataset, TensorDataset as FromDataset
    from minigrad.utils.data.sampler import RandomSampler as FromSampler, SequentialSampler  # noqa: F401
    assert FromDataloader is DataLoader and FromDataset is TensorDataset and FromSampler is RandomSampler
    assert callable(default_collate) and issubclass(FromDataset, Dataset)
    if torch is not None:                           # the same paths exist in torch
        for path in ("dataloader", "dataset", "sampler"):
            importlib.import_module(f"torch.utils.data.{path}")
    with pytest.raises(AttributeError, match=r"minigrad\.utils\.data\.IterableDataset is not in minigrad: .*Dataset"):
        minigrad.utils.data.IterableDataset
