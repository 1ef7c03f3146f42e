"""Bad input gets a clear error: the message names the op, the shapes or values, and the fix."""
import re

import pytest

import minigrad
from minigrad import functional as F, nn
from minigrad.autograd import GraphError


def raises(exception, *fragments):
    """pytest.raises that also checks that every fragment appears in the message (literally)."""
    return pytest.raises(exception, match="(?s)" + ".*".join(re.escape(f) for f in fragments))


def test_matmul_inner_dimensions(device):
    a = minigrad.randn(4, 16, device=device)
    with raises(RuntimeError, "matmul: (4, 16) @ (4, 16): inner dimensions 16 and 4 differ — "
                            "did you mean to transpose the second?"):
        a @ a
    with raises(RuntimeError, "matmul: (3, 4) @ (3, 5)", "transpose the first"):
        minigrad.randn(3, 4, device=device) @ minigrad.randn(3, 5, device=device)
    with raises(RuntimeError, "matmul", "at least 1 dimension"):
        minigrad.tensor(2.0, device=device) @ a


def test_linear_with_wrong_in_features(device):
    layer = nn.Linear(8, 4).to(device)
    with raises(ValueError, "linear", "(2, 5)", "in_features=8"):
        layer(minigrad.randn(2, 5, device=device))


def test_integer_tensor_where_floats_are_needed(device):
    ids = minigrad.tensor([1, 2], device=device)
    for op in ("exp", "log", "tanh", "sigmoid"):
        with raises(TypeError, op, "int64", ".float()"):
            getattr(ids, op)()
    with raises(TypeError, "floating-point", "int64", ".float()"):
        minigrad.tensor([1, 2], device=device, requires_grad=True)
    with raises(TypeError, "floating-point", ".float()"):
        ids.requires_grad_()


def test_token_id_outside_the_embedding_table(device):
    table = nn.Embedding(10, 3).to(device)
    with raises(IndexError, "embedding", "token id 10", "10 rows", "0..9", "num_embeddings"):
        table(minigrad.tensor([[1, 10]], device=device))
    with raises(IndexError, "token id -1"):
        table(minigrad.tensor([-1], device=device))
    with raises(TypeError, "embedding", "integers", "float32", ".long()"):
        table(minigrad.tensor([1.0], device=device))


def test_backward_through_a_freed_graph(device):
    x = minigrad.randn(3, device=device, requires_grad=True)
    loss = (x.tanh() * 2).sum()
    loss.backward()
    with raises(GraphError, "a second time", "freed", "retain_graph=True"):
        loss.backward()


def test_cross_entropy_target_shape_and_dtype(device):
    logits = minigrad.randn(4, 5, device=device, requires_grad=True)
    with raises(RuntimeError, "cross_entropy", "(4, 5)", "(4,)", "(4, 1)"):
        F.cross_entropy(logits, minigrad.zeros(4, 1, dtype=minigrad.int64, device=device))
    with raises(TypeError, "cross_entropy", "integer class indices", "float32", "target.long()"):
        F.cross_entropy(logits, minigrad.zeros(4, device=device))
    with raises(IndexError, "cross_entropy", "target 5", "0..4"):
        F.cross_entropy(logits, minigrad.tensor([0, 1, 5, 2], device=device))
    with raises(ValueError, "cross_entropy", "(N, C)", "(4,)"):
        F.cross_entropy(minigrad.randn(4, device=device), minigrad.tensor([0, 1, 0, 1], device=device))
    with raises(ValueError, "reduction", "'mean'", "'avg'"):
        F.cross_entropy(logits, minigrad.tensor([0, 1, 2, 3], device=device), reduction="avg")
    with raises(ValueError, "label_smoothing", "[0, 1]"):
        F.cross_entropy(logits, minigrad.tensor([0, 1, 2, 3], device=device), label_smoothing=1.5)


def test_other_losses_check_shapes(device):
    a, b = minigrad.randn(2, 3, device=device), minigrad.randn(3, 2, device=device)
    with raises(ValueError, "mse_loss", "(2, 3)", "(3, 2)"):
        F.mse_loss(a, b)
    with raises(ValueError, "binary_cross_entropy_with_logits", "(2, 3)", "(3, 2)"):
        F.binary_cross_entropy_with_logits(a, b)
    with raises(ValueError, "nll_loss", "(2, 3)", "(2,)", "(3,)"):
        F.nll_loss(a, minigrad.tensor([0, 1, 2], device=device))


def test_shape_errors_name_the_op_and_shapes(device):
    x = minigrad.randn(2, 3, device=device)
    with raises(ValueError, "Add", "(2, 3)", "(4,)", "broadcast"):
        x + minigrad.randn(4, device=device)
    with raises(RuntimeError, "reshape", "(2, 3)", "6 elements", "(4, 2)"):       # PyTorch's type
        x.reshape(4, 2)
    with raises(ValueError, "cat", "(2, 3)", "(3, 2)", "match"):
        minigrad.cat([x, minigrad.randn(3, 2, device=device)], dim=0)
    with raises(ValueError, "stack", "same shape", "(2, 3)", "(3, 2)"):
        minigrad.stack([x, minigrad.randn(3, 2, device=device)])
    with raises(ValueError, "split", "[1, 1]", "size 3"):
        x.split([1, 1], dim=1)
    with raises(RuntimeError, "permute", "(0, 0)", "2 dimensions"):               # PyTorch's type
        x.permute(0, 0)
    with raises(IndexError, "dim 2", "2 dimensions"):
        x.sum(2)
    with raises(ValueError, "layer_norm", "(2, 3)", "(4,)"):
        F.layer_norm(x, 4)
    with raises(RuntimeError, "max", "empty", "(0, 3)"):                         # PyTorch's type
        minigrad.zeros(0, 3, device=device).max()
    with raises(IndexError, "shape (2, 3)"):
        x[5]


def test_masks_dropout_and_scalars(device):
    x = minigrad.randn(2, 3, device=device)
    with raises(TypeError, "masked_fill", "boolean", "float32"):
        x.masked_fill(minigrad.ones(2, 3, device=device), 0.0)
    with raises(ValueError, "masked_fill", "(4,)", "(2, 3)"):
        x.masked_fill(minigrad.ones(4, dtype=minigrad.bool_, device=device), 0.0)
    with raises(ValueError, "masked_fill", "mask of shape (4, 2, 3) does not broadcast", "shape (2, 3)"):
        x.masked_fill(minigrad.ones(4, 2, 3, dtype=minigrad.bool_, device=device), 0.0)   # x would broadcast
    with raises(ValueError, "masked_fill", "mask of shape (4, 2, 3) does not broadcast", "shape (2, 3)"):
        x.masked_fill_(minigrad.ones(4, 2, 3, dtype=minigrad.bool_, device=device), 0.0)
    with raises(TypeError, "where", "boolean"):
        minigrad.where(x, x, x)
    with raises(ValueError, "dropout", "[0, 1)", "1.5"):
        F.dropout(x, 1.5)
    with raises(ValueError, "item()", "6 elements"):
        x.item()
    with raises(ValueError, "(2, 3)", "ambiguous", ".any()"):
        bool(x)
    with raises(ValueError, "backward()", "grad has shape (3,)", "(2, 3)"):
        x.requires_grad_().exp().backward(minigrad.ones(3, device=device).numpy())
