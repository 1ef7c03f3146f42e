"""State dicts move between PyTorch and minigrad as they are: tied weights (listed under each
name, as PyTorch does), MultiheadAttention's packed in_proj_weight, and the way back."""
import numpy
import pytest

import minigrad
from minigrad import nn

from optional_torch import needs_torch, torch  # noqa: E402  (the comparisons skip without PyTorch)


def tied_model(library):
    """A tiny language model with nanoGPT's weight tying: wte.weight is lm_head.weight."""
    class Tied(library.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = library.nn.Embedding(7, 4)
            self.attn = library.nn.MultiheadAttention(4, 2, batch_first=True)
            self.lm_head = library.nn.Linear(4, 7, bias=False)
            self.wte.weight = self.lm_head.weight
            self.register_buffer("mask", library.ones(3, 3))

        def forward(self, ids):
            x = self.wte(ids)
            x = self.attn(x, x, x, need_weights=False)[0]
            return self.lm_head(x)

    return Tied()


def as_torch(state):
    return {name: torch.from_numpy(value.numpy().copy()) for name, value in state.items()}


@needs_torch
def test_a_torch_state_dict_with_tied_weights_and_packed_attention_loads_as_it_is():
    torch.manual_seed(0)
    theirs = tied_model(torch).double()
    ours = tied_model(minigrad).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())        # same keys, same order
    ours.load_state_dict(theirs.state_dict())                          # strict, no helper
    assert ours.wte.weight is ours.lm_head.weight                      # still tied
    ids = [[1, 2, 3], [4, 5, 6]]
    out, their_out = ours(minigrad.tensor(ids)), theirs(torch.tensor(ids))
    assert numpy.allclose(out.numpy(), their_out.detach().numpy(), atol=1e-12, rtol=0)
    out.sum().backward()
    their_out.sum().backward()
    their_grads = {name: p.grad.numpy() for name, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():                            # one entry per tied weight, as torch
        assert numpy.allclose(p.grad.numpy(), their_grads[name], atol=1e-12, rtol=0), name
    assert [n for n, _ in ours.named_parameters()] == list(their_grads)


@needs_torch
def test_state_dict_round_trips_to_torch():
    ours = tied_model(minigrad)
    theirs = tied_model(torch)
    theirs.load_state_dict(as_torch(ours.state_dict()))                # strict on torch's side
    for name, value in theirs.state_dict().items():
        assert numpy.array_equal(value.numpy(), ours.state_dict()[name].numpy()), name


def test_a_tied_weight_missing_under_one_of_its_names_is_reported_as_torch_does():
    ours = tied_model(minigrad)
    state = tied_model(minigrad).state_dict()
    del state["wte.weight"]
    with pytest.raises(RuntimeError, match="missing keys: wte.weight"):
        ours.load_state_dict(state)
    missing, _ = ours.load_state_dict(state, strict=False)
    assert missing == ["wte.weight"]
    assert numpy.array_equal(ours.wte.weight.numpy(), state["lm_head.weight"].numpy())


@needs_torch
@pytest.mark.parametrize("kdim", [None, 3])
def test_multihead_attention_parameters_are_torch_s(kdim):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(4, 2, kdim=kdim, vdim=kdim)
    ours = nn.MultiheadAttention(4, 2, kdim=kdim, vdim=kdim)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    ours.load_state_dict(theirs.state_dict())
    theirs.load_state_dict(as_torch(ours.state_dict()))


def test_an_older_minigrad_checkpoint_with_q_k_v_proj_still_loads():
    mha = nn.MultiheadAttention(4, 2)
    e = 4
    old = {"q_proj.weight": mha.in_proj_weight.numpy()[:e], "k_proj.weight": mha.in_proj_weight.numpy()[e:2 * e],
           "v_proj.weight": mha.in_proj_weight.numpy()[2 * e:], "q_proj.bias": numpy.ones(e, "float32"),
           "k_proj.bias": numpy.zeros(e, "float32"), "v_proj.bias": numpy.zeros(e, "float32"),
           "out_proj.weight": mha.out_proj.weight.numpy(), "out_proj.bias": mha.out_proj.bias.numpy()}
    fresh = nn.MultiheadAttention(4, 2)
    fresh.load_state_dict(old)
    assert numpy.array_equal(fresh.in_proj_weight.numpy(), mha.in_proj_weight.numpy())
    assert numpy.array_equal(fresh.in_proj_bias.numpy()[:e], numpy.ones(e))


def test_a_module_of_its_own_named_q_proj_is_left_alone():
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj, self.k_proj = nn.Linear(4, 4), nn.Linear(4, 4)
            self.v_proj, self.out_proj = nn.Linear(4, 4), nn.Linear(4, 4)

    model = Attention()
    state = Attention().state_dict()
    model.load_state_dict(state)
    assert numpy.array_equal(model.q_proj.weight.numpy(), state["q_proj.weight"].numpy())
