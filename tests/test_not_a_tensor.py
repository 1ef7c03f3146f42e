"""A NumPy array (or a list, or a number) where a layer or an F function takes a Tensor: a TypeError
that says so, names the operation, the argument and the type, and gives the fix (issue 39, item 5).

    nn.LSTM(10, 4)(numpy_array)
    TypeError: LSTM(): argument 'input' must be Tensor, not numpy.ndarray; wrap it with
               minigrad.tensor(x) (a copy) or minigrad.from_numpy(x) (sharing its memory)

Two tables of calls, one row each: every layer of minigrad.nn and every F function, each with a
bad argument in a tensor position (the first, and for some a later one: a target, a weight, a key).
A call is written once, for a library ``L`` (minigrad or torch), so the same call is also made on
PyTorch, which refuses every one of them too: with a TypeError where its argument parser sees the
array, else with an AttributeError from its Python code ("'numpy.ndarray' object has no attribute
'dim'"), the error minigrad's check replaces.  The completeness tests fail for a new public layer
or F function that is in neither a table nor the list of names left out, with the reason.
"""
import inspect

import numpy
import pytest

import minigrad
from minigrad import functional as F
from minigrad import nn
from optional_torch import needs_torch, torch

ARRAY = "numpy.ndarray"
X2 = numpy.zeros((4, 10), "float32")          # (N, features)
X3 = numpy.zeros((7, 4, 10), "float32")       # (T, N, E)
IDS = numpy.zeros((4, 7), "int64")
H = numpy.zeros((4, 3), "float32")            # a cell's state (N, hidden)


def functional(L):
    return L.nn.functional


# name (the class, then the argument when it is not the first): (operation, argument, type, call)
LAYER_CALLS = {
    "Linear": ("linear", "input", ARRAY, lambda L: L.nn.Linear(10, 3)(X2)),
    "Embedding": ("embedding", "input", ARRAY, lambda L: L.nn.Embedding(5, 3)(IDS)),
    "LayerNorm": ("layer_norm", "input", ARRAY, lambda L: L.nn.LayerNorm(10)(X2)),
    "Dropout": ("dropout", "input", ARRAY, lambda L: L.nn.Dropout(0.5)(X2)),
    "Dropout in eval()": ("dropout", "input", ARRAY, lambda L: L.nn.Dropout(0.5).eval()(X2)),
    "ReLU": ("relu", "input", ARRAY, lambda L: L.nn.ReLU()(X2)),
    "Tanh": ("tanh", "input", ARRAY, lambda L: L.nn.Tanh()(X2)),
    "Sigmoid": ("sigmoid", "input", ARRAY, lambda L: L.nn.Sigmoid()(X2)),
    "GELU": ("gelu", "input", ARRAY, lambda L: L.nn.GELU()(X2)),
    "Softmax": ("softmax", "input", ARRAY, lambda L: L.nn.Softmax(dim=-1)(X2)),
    "LogSoftmax": ("log_softmax", "input", ARRAY, lambda L: L.nn.LogSoftmax(dim=-1)(X2)),
    "Flatten": ("Flatten", "input", ARRAY, lambda L: L.nn.Flatten()(X3)),
    "Sequential": ("linear", "input", ARRAY, lambda L: L.nn.Sequential(L.nn.Linear(10, 3), L.nn.ReLU())(X2)),
    "RNN": ("RNN", "input", ARRAY, lambda L: L.nn.RNN(10, 3)(X3)),
    "LSTM": ("LSTM", "input", ARRAY, lambda L: L.nn.LSTM(10, 3)(X3)),
    "LSTM hx": ("lstm", "h0", ARRAY, lambda L: L.nn.LSTM(10, 3)(L.zeros(7, 4, 10), (H[None], H[None]))),
    "GRU": ("GRU", "input", ARRAY, lambda L: L.nn.GRU(10, 3)(X3)),
    "RNNCell": ("RNNCell", "input", ARRAY, lambda L: L.nn.RNNCell(10, 3)(X2)),
    "LSTMCell": ("LSTMCell", "input", ARRAY, lambda L: L.nn.LSTMCell(10, 3)(X2)),
    "GRUCell": ("GRUCell", "input", ARRAY, lambda L: L.nn.GRUCell(10, 3)(X2)),
    "GRUCell hx": ("GRUCell", "hx", ARRAY, lambda L: L.nn.GRUCell(10, 3)(L.zeros(4, 10), H)),
    "MultiheadAttention": ("MultiheadAttention", "query", ARRAY, lambda L: L.nn.MultiheadAttention(10, 2)(X3, X3, X3)),
    "MultiheadAttention key": ("MultiheadAttention", "key", ARRAY,
                               lambda L: L.nn.MultiheadAttention(10, 2)(L.zeros(7, 4, 10), X3, X3)),
    "TransformerEncoderLayer": ("TransformerEncoderLayer", "src", ARRAY,
                                lambda L: L.nn.TransformerEncoderLayer(10, 2, 16)(X3)),
    "TransformerDecoderLayer memory": ("TransformerDecoderLayer", "memory", ARRAY,
                                       lambda L: L.nn.TransformerDecoderLayer(10, 2, 16)(L.zeros(7, 4, 10), X3)),
    "TransformerEncoder": ("TransformerEncoder", "src", ARRAY,
                           lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(10, 2, 16), 1)(X3)),
    "TransformerDecoder": ("TransformerDecoder", "tgt", ARRAY,
                           lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(10, 2, 16), 1)(X3, X3)),
    "Transformer": ("Transformer", "src", ARRAY, lambda L: L.nn.Transformer(10, 2, 1, 1, 16)(X3, X3)),
    "CrossEntropyLoss": ("cross_entropy", "input", ARRAY,
                         lambda L: L.nn.CrossEntropyLoss()(X2, L.tensor([0, 1, 2, 0]))),
    "NLLLoss": ("nll_loss", "input", ARRAY, lambda L: L.nn.NLLLoss()(X2, L.tensor([0, 1, 2, 0]))),
    "MSELoss": ("mse_loss", "input", ARRAY, lambda L: L.nn.MSELoss()(X2, X2)),
    "L1Loss": ("l1_loss", "input", ARRAY, lambda L: L.nn.L1Loss()(X2, X2)),
    "SmoothL1Loss": ("smooth_l1_loss", "input", ARRAY, lambda L: L.nn.SmoothL1Loss()(X2, X2)),
    "HuberLoss": ("huber_loss", "input", ARRAY, lambda L: L.nn.HuberLoss()(X2, X2)),
    "BCELoss": ("binary_cross_entropy", "input", ARRAY, lambda L: L.nn.BCELoss()(X2, X2)),
    "BCEWithLogitsLoss": ("binary_cross_entropy_with_logits", "input", ARRAY,
                          lambda L: L.nn.BCEWithLogitsLoss()(X2, X2)),
    "KLDivLoss": ("kl_div", "input", ARRAY, lambda L: L.nn.KLDivLoss()(X2, X2)),
    # minigrad's own layers (not in torch.nn)
    "SinusoidalPositionalEncoding": ("SinusoidalPositionalEncoding", "input", ARRAY,
                                     lambda L: L.nn.SinusoidalPositionalEncoding(10)(X3)),
    "LearnedPositionalEmbedding": ("LearnedPositionalEmbedding", "input", ARRAY,
                                   lambda L: L.nn.LearnedPositionalEmbedding(20, 10)(X3)),
    "DotScore": ("DotScore", "query", ARRAY, lambda L: L.nn.DotScore()(X2, X3)),
    "BilinearScore keys": ("BilinearScore", "keys", ARRAY, lambda L: L.nn.BilinearScore(10, 10)(L.zeros(4, 10), X3)),
    "AdditiveScore": ("AdditiveScore", "query", ARRAY, lambda L: L.nn.AdditiveScore(10, 10, 8)(X2, X3)),
    "HardAttention": ("HardAttention", "query", ARRAY, lambda L: L.nn.HardAttention(L.nn.DotScore())(X2, X3)),
}

# Public classes of minigrad.nn with no row above, and why.
LAYERS_LEFT_OUT = {
    "Module": "the base class: its forward is the subclass's",
    "RNNBase": "the base of RNN, LSTM and GRU (rows above), with no forward of its own",
    "ModuleList": "a container with no forward (as torch's)",
    "ModuleDict": "a container with no forward (as torch's)",
    "ParameterList": "a container with no forward (as torch's)",
    "Identity": "returns any argument as it is, an array too, as torch's nn.Identity does",
}

F_CALLS = {
    "relu": ("relu", "input", ARRAY, lambda L: functional(L).relu(X2)),
    "relu of a list": ("relu", "input", "list", lambda L: functional(L).relu([1.0, -1.0])),
    "relu of a number": ("relu", "input", "float", lambda L: functional(L).relu(1.0)),
    "tanh": ("tanh", "input", ARRAY, lambda L: functional(L).tanh(X2)),
    "sigmoid": ("sigmoid", "input", ARRAY, lambda L: functional(L).sigmoid(X2)),
    "softmax": ("softmax", "input", ARRAY, lambda L: functional(L).softmax(X2, dim=-1)),
    "log_softmax": ("log_softmax", "input", ARRAY, lambda L: functional(L).log_softmax(X2, dim=-1)),
    "gelu": ("gelu", "input", ARRAY, lambda L: functional(L).gelu(X2)),
    "gelu tanh": ("gelu", "input", ARRAY, lambda L: functional(L).gelu(X2, approximate="tanh")),
    "linear": ("linear", "input", ARRAY, lambda L: functional(L).linear(X2, L.zeros(3, 10))),
    "linear weight": ("linear", "weight", ARRAY, lambda L: functional(L).linear(L.zeros(4, 10), X2[:3])),
    "linear bias": ("linear", "bias", ARRAY,
                    lambda L: functional(L).linear(L.zeros(4, 10), L.zeros(3, 10), X2[0, :3])),
    "embedding": ("embedding", "input", ARRAY, lambda L: functional(L).embedding(IDS, L.zeros(5, 3))),
    "dropout": ("dropout", "input", ARRAY, lambda L: functional(L).dropout(X2)),
    "dropout not training": ("dropout", "input", ARRAY, lambda L: functional(L).dropout(X2, training=False)),
    "layer_norm": ("layer_norm", "input", ARRAY, lambda L: functional(L).layer_norm(X2, (10,))),
    "layer_norm weight": ("layer_norm", "weight", ARRAY,
                          lambda L: functional(L).layer_norm(L.zeros(4, 10), (10,), X2[0])),
    "cross_entropy": ("cross_entropy", "input", ARRAY,
                      lambda L: functional(L).cross_entropy(X2, L.tensor([0, 1, 2, 0]))),
    "cross_entropy target": ("cross_entropy", "target", ARRAY,
                             lambda L: functional(L).cross_entropy(L.zeros(4, 10), IDS[:, 0])),
    "cross_entropy target list": ("cross_entropy", "target", "list",
                                  lambda L: functional(L).cross_entropy(L.zeros(4, 10), [0, 1, 2, 0])),
    "nll_loss target": ("nll_loss", "target", ARRAY, lambda L: functional(L).nll_loss(L.zeros(4, 10), IDS[:, 0])),
    "mse_loss": ("mse_loss", "input", ARRAY, lambda L: functional(L).mse_loss(X2, L.zeros(4, 10))),
    "mse_loss target": ("mse_loss", "target", ARRAY, lambda L: functional(L).mse_loss(L.zeros(4, 10), X2)),
    "mse_loss target number": ("mse_loss", "target", "float", lambda L: functional(L).mse_loss(L.zeros(4, 10), 1.0)),
    "binary_cross_entropy_with_logits target": (
        "binary_cross_entropy_with_logits", "target", ARRAY,
        lambda L: functional(L).binary_cross_entropy_with_logits(L.zeros(4, 10), X2)),
    "one_hot": ("one_hot", "tensor", ARRAY, lambda L: functional(L).one_hot(IDS)),
    "scaled_dot_product_attention": ("scaled_dot_product_attention", "query", ARRAY,
                                     lambda L: functional(L).scaled_dot_product_attention(X3, X3, X3)),
    "scaled_dot_product_attention key": (
        "scaled_dot_product_attention", "key", ARRAY,
        lambda L: functional(L).scaled_dot_product_attention(L.zeros(7, 4, 10), X3, X3)),
    "l1_loss target": ("l1_loss", "target", ARRAY, lambda L: functional(L).l1_loss(L.zeros(4, 10), X2)),
    "smooth_l1_loss target": ("smooth_l1_loss", "target", ARRAY,
                              lambda L: functional(L).smooth_l1_loss(L.zeros(4, 10), X2)),
    "huber_loss target": ("huber_loss", "target", ARRAY, lambda L: functional(L).huber_loss(L.zeros(4, 10), X2)),
    "kl_div target": ("kl_div", "target", ARRAY, lambda L: functional(L).kl_div(L.zeros(4, 10), X2)),
    "binary_cross_entropy target": ("binary_cross_entropy", "target", ARRAY,
                                    lambda L: functional(L).binary_cross_entropy(L.zeros(4, 10), X2)),
    "normalize": ("normalize", "input", ARRAY, lambda L: functional(L).normalize(X2)),
    "cosine_similarity x2": ("cosine_similarity", "x2", ARRAY,
                             lambda L: functional(L).cosine_similarity(L.zeros(4, 10), X2)),
    "pad": ("pad", "input", ARRAY, lambda L: functional(L).pad(X2, (1, 1))),
    # minigrad's own functions (not in torch.nn.functional)
    "rnn": ("rnn", "input", ARRAY, lambda L: functional(L).rnn(X3, None, L.zeros(3, 10), L.zeros(3, 3))),
    "lstm h0": ("lstm", "h0", ARRAY,
                lambda L: functional(L).lstm(L.zeros(7, 4, 10), H, None, L.zeros(12, 10), L.zeros(12, 3))),
    "gru": ("gru", "input", ARRAY, lambda L: functional(L).gru(X3, None, L.zeros(9, 10), L.zeros(9, 3))),
    "split_heads": ("split_heads", "x", ARRAY, lambda L: functional(L).split_heads(X3, 2)),
    "merge_heads": ("merge_heads", "x", ARRAY, lambda L: functional(L).merge_heads(X3[None])),
}

# Public functions of minigrad.functional with no row above, and why.
F_LEFT_OUT = {
    "cat": "minigrad.cat, re-exported (torch's is torch.cat, not in torch.nn.functional): a creation function",
    "stack": "minigrad.stack, re-exported (torch.stack): a creation function",
    "where": "minigrad.where, re-exported (torch.where): a creation function, whose x and y may be numbers",
    "attention_bias": "imported from minigrad.masks, which takes a boolean or float mask as an array or Tensor",
    "causal_mask": "imported from minigrad.masks: takes sizes, no tensor",
    "array_of": "imported helper (torch_compat.arguments): turns any value into an array, by design",
    "same_dtype": "imported helper (torch_compat.promotion): compares dtypes of what it is given",
    "layer_norm_function": "picks the LayerNorm Function of a tier from a flag: no tensor",
    "attention_function": "picks the attention Function of a tier from sizes and a flag: no tensor",
    "lengths_mask": "takes lengths, which may be a list of ints by design (nn.RNN's lengths=)",
}


def _first_word(name):
    return name.split()[0]


def _expect_the_fix(message, op, argument, kind):
    assert message.startswith(f"{op}(): argument '{argument}' must be Tensor, not {kind}; "), message
    assert "minigrad.tensor(x)" in message, message
    if kind == ARRAY:
        assert "minigrad.from_numpy(x)" in message, message


@pytest.mark.parametrize("name", LAYER_CALLS)
def test_a_layer_given_an_array_says_it_is_not_a_tensor(device, name):
    op, argument, kind, call = LAYER_CALLS[name]
    with pytest.raises(TypeError) as error:
        call(minigrad)
    _expect_the_fix(str(error.value), op, argument, kind)


@pytest.mark.parametrize("name", F_CALLS)
def test_an_f_function_given_an_array_says_it_is_not_a_tensor(device, name):
    op, argument, kind, call = F_CALLS[name]
    with pytest.raises(TypeError) as error:
        call(minigrad)
    _expect_the_fix(str(error.value), op, argument, kind)


def _in_torch(name, namespace):
    return torch is not None and hasattr(namespace(torch), _first_word(name))


@needs_torch
@pytest.mark.parametrize("name", [name for name in LAYER_CALLS if _in_torch(name, lambda torch: torch.nn)])
def test_torch_refuses_the_same_layer_call(name):
    with pytest.raises((TypeError, AttributeError)):
        LAYER_CALLS[name][3](torch)


@needs_torch
@pytest.mark.parametrize("name", [name for name in F_CALLS if _in_torch(name, functional)])
def test_torch_refuses_the_same_f_call(name):
    with pytest.raises((TypeError, AttributeError)):
        F_CALLS[name][3](torch)


def test_every_public_layer_has_a_row_or_a_reason():
    public = {name for name, value in vars(nn).items()
              if not name.startswith("_") and isinstance(value, type) and issubclass(value, nn.Module)}
    covered = {_first_word(name) for name in LAYER_CALLS}
    assert public - covered - set(LAYERS_LEFT_OUT) == set(), "add a row to LAYER_CALLS (and the check to forward)"
    assert (covered | set(LAYERS_LEFT_OUT)) - public == set(), "a row or a reason for a layer that is gone"
    assert covered & set(LAYERS_LEFT_OUT) == set()


def test_every_public_f_function_has_a_row_or_a_reason():
    public = {name for name, value in vars(F).items() if not name.startswith("_") and inspect.isfunction(value)}
    covered = {_first_word(name) for name in F_CALLS}
    assert public - covered - set(F_LEFT_OUT) == set(), "add a row to F_CALLS (and checks.tensors to the function)"
    assert (covered | set(F_LEFT_OUT)) - public == set(), "a row or a reason for a function that is gone"
    assert covered & set(F_LEFT_OUT) == set()


def test_a_tensor_and_an_absent_optional_argument_pass(device):
    """The check lets Tensors (Parameters too) and None (a bias left out) through, and the layer runs."""
    layer = nn.Linear(10, 3, bias=False)
    assert layer(minigrad.zeros(4, 10)).shape == (4, 3)
    assert F.linear(minigrad.zeros(4, 10), layer.weight, None).shape == (4, 3)
