"""Writing into tensors: ``t[index] = value`` and the in-place methods (masked_fill_,
index_copy_, copy_, fill_, zero_, add_, mul_, ...).

As in PyTorch, the write is part of the graph: the gradient reaches ``value``, the
overwritten positions of the old tensor get none, a non-leaf's node becomes the
write's node, a leaf that requires grad refuses, and a node that saved the old
values raises at backward.  Gradchecks in float64 on every device; parity with
PyTorch (outputs and every gradient) from the same inputs.
"""
import numpy
import pytest

import minigrad
from minigrad.autograd import GraphError
from minigrad.backend import to_numpy

F64 = minigrad.float64


def leaf(shape, device=None, seed=0):
    data = numpy.random.default_rng(seed).standard_normal(shape)
    return minigrad.tensor(data, dtype=F64, device=device, requires_grad=True)


def written(x, index, value):
    """A copy of x (a non-leaf) with x[index] = value written into it."""
    y = x * 1.0
    y[index] = value
    return y


# ---------------------------------------------------------------------------- index kinds, gradchecked

def index_cases(device):
    """(index, value shape) pairs for a (4, 5, 3) tensor: every kind of index PyTorch takes."""
    ints = lambda values: minigrad.tensor(values, device=device)   # noqa: E731
    return {
        "integer": (1, (5, 3)),
        "integer, broadcast value": (-1, (3,)),
        "slice": (slice(1, 3), (2, 5, 3)),
        "strided slice": ((slice(None), slice(0, None, 2)), (4, 3, 1)),
        "integer array": (ints([3, 0]), (2, 5, 3)),
        "repeated integer array": (ints([1, 1, 2]), (3, 5, 3)),
        "two integer arrays": ((ints([0, 2]), ints([1, 4])), (2, 3)),
        "mixed": ((slice(None), ints([0, 2]), 1), (4, 2)),
        "boolean mask": (ints(numpy.arange(20).reshape(4, 5) % 3 == 0).bool(), (3,)),
        "ellipsis": ((Ellipsis, 2), (4, 1)),
        "scalar value": ((2, slice(None), 0), ()),
        "value with leading 1s": (0, (1, 5, 3)),
    }


@pytest.mark.parametrize("case", [c for c in index_cases(None) if c != "repeated integer array"])
def test_setitem_gradcheck(device, case):
    """(A repeated index keeps one of its values, so finite differences see no effect of the
    others, while PyTorch's rule, kept here, gives each copy dL/dy: checked against torch below.)"""
    index, value_shape = index_cases(device)[case]
    x, value = leaf((4, 5, 3), device, 1), leaf(value_shape, device, 2)
    assert minigrad.gradcheck(lambda x, v: written(x, index, v), (x, value))


def test_setitem_gradient_is_zero_where_overwritten_and_flows_to_value(device):
    x, value = leaf((3, 2), device), leaf((2,), device, 1)
    y = written(x, 1, value * 2)
    (y * 3).sum().backward()
    assert numpy.array_equal(x.grad.numpy(), [[3, 3], [0, 0], [3, 3]])
    assert numpy.array_equal(value.grad.numpy(), [6, 6])
    assert y.grad_fn.name() == "SetItem" and not y.is_leaf


def test_writing_into_a_fresh_buffer_records_the_graph(device):
    """buf = zeros(...); buf[0] = w * 2: buf now requires grad (the issue's silent cut)."""
    w = leaf((2,), device)
    buf = minigrad.zeros(3, 2, dtype=F64, device=device)
    buf[0] = w * 2
    assert buf.requires_grad and buf.grad_fn is not None
    buf.sum().backward()
    assert numpy.array_equal(w.grad.numpy(), [2, 2])


@pytest.mark.parametrize("op", ["masked_fill_", "masked_fill tensor value", "index_copy_", "index_copy",
                                "copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "+=", "*="])
def test_in_place_methods_gradcheck(device, op):
    x, other = leaf((4, 3), device, 1), leaf((4, 3), device, 2)
    source, scalar = leaf((2, 3), device, 3), leaf((), device, 4)
    mask = minigrad.tensor([True, False, True], device=device)
    index = minigrad.tensor([3, 1], device=device)

    def run(x, other, source, scalar):
        y = x * 1.0
        if op == "masked_fill_":
            y.masked_fill_(mask, -2.0)
        elif op == "masked_fill tensor value":
            y = y.masked_fill(mask, scalar * 3)
        elif op == "index_copy_":
            y.index_copy_(0, index, source)
        elif op == "index_copy":
            y = x.index_copy(0, index, source)
        elif op == "copy_":
            y.copy_(source[0])                       # broadcast over the rows
        elif op == "fill_":
            y.fill_(scalar)
        elif op == "zero_":
            y[1:].zero_()                           # a view: the zeros reach y, as in PyTorch
            y = y * other
        elif op == "add_":
            y.add_(other, alpha=0.5)
        elif op == "sub_":
            y.sub_(other)
        elif op == "mul_":
            y.mul_(other)
        elif op == "div_":
            y.div_(other * other + 1.0)
        elif op == "+=":
            y[1:] += other[1:]
        elif op == "*=":
            y *= other
        return y * other

    assert minigrad.gradcheck(run, (x, other, source, scalar))


# ---------------------------------------------------------------------------- the rules PyTorch keeps

def test_a_leaf_that_requires_grad_refuses_in_place_changes():
    w = leaf((3,))
    for change in (lambda: w.__setitem__(0, 1.0), lambda: w.fill_(1.0), lambda: w.add_(1.0),
                   lambda: w.masked_fill_(minigrad.tensor([True, False, True]), 0.0)):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            change()
    with minigrad.no_grad():                       # as optimizers and nn.init do
        w[0] = 1.0
    assert to_numpy(w._data)[0] == 1.0 and w.is_leaf


def test_a_saved_input_changed_in_place_raises_at_backward():
    x = leaf((3,))
    h = x * 1.0
    y = (h * h).sum()                               # Mul saved h
    h[0] = 5.0
    with pytest.raises(GraphError, match="modified in place"):
        y.backward()


def test_a_saved_output_changed_in_place_raises_at_backward():
    x = leaf((3,))
    y = x.exp()                                     # Exp saved its output y
    y[0] = 0.0
    with pytest.raises(GraphError, match="modified in place"):
        y.sum().backward()
    z = x.tanh()
    with minigrad.no_grad():
        z.fill_(0.0)
    with pytest.raises(GraphError, match="modified in place"):
        z.sum().backward()


def test_an_output_no_node_saved_can_be_overwritten_and_written_again():
    x, a, b = leaf((3,)), leaf(()), leaf((2,), seed=1)
    y = x * 2                                       # Mul saves its inputs, not y
    y[0] = a
    y[1:] = b
    y.sum().backward()
    assert numpy.array_equal(x.grad.numpy(), [0, 0, 0])
    assert a.grad.numpy() == 1 and numpy.array_equal(b.grad.numpy(), [1, 1])


def test_no_grad_writes_in_place_and_views_see_it():
    buf = minigrad.zeros(2, 3)
    row = buf[1]
    with minigrad.no_grad():
        buf[1] = minigrad.ones(3)
    assert numpy.array_equal(to_numpy(row._data), [1, 1, 1])


def test_index_assignment_errors_name_the_shapes():
    buf = minigrad.zeros(3, 4)
    with pytest.raises(ValueError, match=r"value of shape \(5,\) does not broadcast to the \(4,\) positions"):
        buf[0] = minigrad.ones(5)
    with pytest.raises(IndexError, match=r"tensor of shape \(3, 4\)"):
        buf[7] = 1.0
    with pytest.raises(TypeError, match="1-D integer"):
        buf.index_copy_(0, minigrad.tensor([[0]]), minigrad.ones(1, 4))


def test_an_integer_tensor_takes_a_float_value_without_a_graph():
    ids = minigrad.zeros(3, dtype=minigrad.int64)
    ids[1] = leaf(())
    assert not ids.requires_grad and ids.dtype == minigrad.int64


# ---------------------------------------------------------------------------- parity with PyTorch

from optional_torch import needs_torch, torch  # noqa: E402  (the comparisons skip without PyTorch)


def as_index(library, index):
    """The same index for minigrad or torch: integer and boolean tensors converted."""
    if isinstance(index, tuple):
        return tuple(as_index(library, i) for i in index)
    if isinstance(index, minigrad.Tensor):
        return index if library is minigrad else torch.from_numpy(index.numpy())
    return index


def pair(shape, seed):
    data = numpy.random.default_rng(seed).standard_normal(shape)
    return (minigrad.tensor(data, dtype=F64, requires_grad=True),
            torch.tensor(data, dtype=torch.float64, requires_grad=True))


def same(ours, theirs):
    assert numpy.allclose(to_numpy(ours._data if isinstance(ours, minigrad.Tensor) else ours),
                          theirs.detach().numpy(), atol=1e-12, rtol=0)


@needs_torch
@pytest.mark.parametrize("case", list(index_cases(None)))
def test_setitem_matches_torch(case):
    index, value_shape = index_cases(None)[case]
    (x, tx), (v, tv) = pair((4, 5, 3), 1), pair(value_shape, 2)
    (wx, twx) = pair((4, 5, 3), 3)
    y, ty = written(x, index, v), written(tx, as_index(torch, index), tv)
    either_write = case == "repeated integer array" and minigrad.backend.default_device() == "cuda"
    if either_write:
        # rows 1, 1, 2 written: which write lands in row 1 is undefined on a GPU (CuPy; element by
        # element, so a row can mix both), as PyTorch documents for index_put_ with repeated indices
        row_1, (first, second) = to_numpy(y._data[1]), to_numpy(v._data[:2])
        assert ((row_1 == first) | (row_1 == second)).all()
        same(y[[0, 2, 3]], ty[[0, 2, 3]])
    else:
        same(y, ty)
    (y * wx).sum().backward()
    (ty * twx).sum().backward()
    for ours, theirs in ((x, tx), (v, tv)):
        same(ours.grad, theirs.grad)
    if either_write:           # d/dwx sum(y * wx) = y, our y, whose row 1 is either write
        assert numpy.array_equal(wx.grad.numpy(), to_numpy(y._data))
        same(wx.grad[[0, 2, 3]], twx.grad[[0, 2, 3]])
    else:
        same(wx.grad, twx.grad)


def in_place_program(library, x, other, source, scalar):
    """A chain of in-place changes on one non-leaf, written once for both libraries."""
    index = library.tensor([3, 1])
    mask = library.tensor([True, False, True])
    y = x * 1.0
    y[0] = other[1] * 2
    y.masked_fill_(mask, -1.5)
    y.index_copy_(0, index, source)
    y.mul_(other)
    y[1:] += other[:3].tanh()
    y.add_(scalar, alpha=2.0)
    z = y.masked_fill(~mask, scalar)
    z.div_(other * other + 1.0)
    w = library.zeros(4, 3, dtype=library.float64)
    w.copy_(z[2])
    w[:, 1].fill_(3.0)
    return z * 3 + w.index_copy(0, index, source * 2)


@needs_torch
def test_a_chain_of_in_place_changes_matches_torch():
    (x, tx), (o, to) = pair((4, 3), 1), pair((4, 3), 2)
    (s, ts), (c, tc) = pair((2, 3), 3), pair((), 4)
    (u, tu) = pair((4, 3), 5)
    out, tout = in_place_program(minigrad, x, o, s, c), in_place_program(torch, tx, to, ts, tc)
    same(out, tout)
    (out * u).sum().backward()
    (tout * tu).sum().backward()
    for ours, theirs in ((x, tx), (o, to), (s, ts), (c, tc)):
        same(ours.grad, theirs.grad)


@needs_torch
def test_seq2seq_tutorial_encoder_outputs_buffer_matches_torch():
    """encoder_outputs = zeros(L, H); for ei: encoder_outputs[ei] = output[0, 0] (the PyTorch tutorial)."""
    hidden, vocab, max_length, words = 4, 7, 6, [3, 1, 5, 2]
    ours, theirs = {}, {}
    for library, model in ((minigrad, ours), (torch, theirs)):
        library.manual_seed(0)
        model["embedding"] = library.nn.Embedding(vocab, hidden).double()
        model["gru"] = library.nn.GRU(hidden, hidden).double()
        model["attn"] = library.nn.Linear(hidden, max_length).double()
    state = {name: m.state_dict() for name, m in theirs.items()}
    for name, module in ours.items():
        module.load_state_dict(state[name])

    def encode(library, model):
        encoder_hidden = library.zeros(1, 1, hidden, dtype=library.float64)
        encoder_outputs = library.zeros(max_length, hidden, dtype=library.float64)
        for ei, word in enumerate(words):
            embedded = model["embedding"](library.tensor([word])).view(1, 1, -1)
            encoder_output, encoder_hidden = model["gru"](embedded, encoder_hidden)
            encoder_outputs[ei] = encoder_output[0, 0]
        weights = library.softmax(model["attn"](encoder_hidden[0]), dim=1)      # (1, max_length)
        return (weights @ encoder_outputs).sum()

    loss, their_loss = encode(minigrad, ours), encode(torch, theirs)
    same(loss, their_loss)
    loss.backward()
    their_loss.backward()
    for name, module in ours.items():
        their_params = dict(theirs[name].named_parameters())
        for pname, p in module.named_parameters():
            same(p.grad, their_params[pname].grad)
    assert numpy.abs(ours["embedding"].weight.grad.numpy()).sum() > 0     # the gradient reached the encoder


@needs_torch
def test_nodes_recorded_before_a_write_keep_the_old_graph():
    """b = h[[0, 1]] used h before h[0] = v: b's gradient still reaches x through the old h."""
    (x, tx), (v, tv) = pair((3,), 1), pair((), 2)
    results = []
    for library, x_, v_ in ((minigrad, x, v), (torch, tx, tv)):
        h = x_ * 2
        picked = h[library.tensor([0, 1])]     # a copy made before the write
        h[0] = v_ * 3
        out = (picked * 5).sum() + (h * 11).sum()
        out.backward()
        results.append(out)
    same(results[0], results[1])
    same(x.grad, tx.grad)
    same(v.grad, tv.grad)


@pytest.mark.parametrize("view, node", [(lambda h: h[0:2], "GetItem"), (lambda h: h.reshape(3, 1), "Reshape"),
                                        (lambda h: h.expand(2, 3), "Expand"), (lambda h: h.flip(0), "Flip"),
                                        (lambda h: h.split(2)[0], "Split")])
def test_a_view_used_after_its_base_was_written_raises(view, node):
    """PyTorch remakes such a view's node on its next use; minigrad names the problem instead."""
    x, v = leaf((3,)), leaf(())
    h = x * 2
    window = view(h)                           # shares h's memory
    h[0] = v * 3                               # window's values change with h's
    with pytest.raises(GraphError, match=f"backward of {node}: one of its inputs"):
        (window * 7).sum().backward()


@needs_torch
def test_a_node_that_reads_no_input_values_allows_a_later_in_place_change():
    # x + w, x - w, mean, sum, cat, neg, clone, cumsum need only shapes in backward and make new arrays:
    # changing x afterwards is fine (as in torch, whose nodes for them save no values); x * w saved x, so it
    # raises in both libraries
    (a, ta), (w, tw) = pair((3, 4), 1), pair((3, 4), 2)
    results = []
    for L, leaf_a, leaf_w in ((minigrad, a, w), (torch, ta, tw)):
        x = leaf_a * 2.0
        total = ((x + leaf_w) - leaf_w * 3.0).sum() + x.mean() + L.cat([-x, x.clone()]).cumsum(0).sum() * 0.5
        product = (x * leaf_w).sum()
        x.add_(1.0)
        total.backward()
        results.append((leaf_a.grad, leaf_w.grad))
        with pytest.raises((GraphError, RuntimeError), match="modified"):
            product.backward()
    (ours_a, ours_w), (theirs_a, theirs_w) = results
    same(ours_a, theirs_a)
    same(ours_w, theirs_w)
