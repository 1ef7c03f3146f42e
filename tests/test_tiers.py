"""The two tiers compute the same numbers: the reference Functions (functions/rnn.py,
functions/attention.py) and the fast ones (rnn_fast.py, attention_fast.py) give the same
outputs, final states and gradients of every input, for every option, T > 1.

Each case runs once per tier (``reference=True`` / ``False``) with the same inputs and
the same upstream gradients, in float64, and compares to 1e-10 (relative to the size
of the values): the tiers order their sums differently, nothing else may differ
(float32 cases: 1e-5).
"""
import itertools

import numpy
import pytest

import minigrad
from minigrad import functional as F
from minigrad import functions as fn
from minigrad import nn
from minigrad.functions import rnn_fast

f64 = minigrad.float64
KINDS = ["rnn_tanh", "rnn_relu", "lstm", "gru", "gru_before"]
GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3, "gru_before": 3}


def _host(value):
    return None if value is None else minigrad.Tensor(value).numpy()


def _same(a, b, what, tolerance=1e-10):
    a, b = _host(a), _host(b)
    assert (a is None) == (b is None), what
    if a is not None:
        assert a.dtype == b.dtype, what
        scale = max(1.0, numpy.abs(b).max(initial=0.0))
        assert numpy.abs(a - b).max(initial=0.0) <= tolerance * scale, what


# each reference Function and its fast twin
TIERS = {fn.RNNFunction: fn.FastRNNFunction, fn.LSTMFunction: fn.FastLSTMFunction,
         fn.GRUFunction: fn.FastGRUFunction, fn.ScaledDotProductAttention: fn.FastScaledDotProductAttention,
         fn.LayerNorm: fn.FastLayerNorm}


def _tiered_functions(results):
    """The two-tier Functions in the graph behind ``results``: which tier actually ran."""
    nodes = [r.grad_fn for r in results if getattr(r, "grad_fn", None) is not None]
    seen = set()
    while nodes:
        node = nodes.pop()
        if node not in seen:
            seen.add(node)
            nodes += [p.grad_fn for p in node.inputs if getattr(p, "grad_fn", None) is not None]
    return {node.function for node in seen} & (set(TIERS) | set(TIERS.values()))


def _on_both_tiers(run):
    """run(reference) -> list of arrays (outputs and gradients), once per tier; returns (reference, fast).

    Also checks that the argument reached the Functions: the reference run's graph holds
    only reference Functions, the fast run's only fast ones (else the comparison would
    compare a tier with itself).
    """
    results = []
    for reference in (True, False):
        minigrad.manual_seed(7)                                # the same inputs (and dropout) both times
        results.append(run(reference))
        ran = _tiered_functions(results[-1])
        assert ran and ran <= (set(TIERS) if reference else set(TIERS.values())), ran
    return results


def _compare(reference, fast, tolerance=1e-10):
    assert len(reference) == len(fast)
    for k, (a, b) in enumerate(zip(reference, fast)):
        _same(a, b, f"result {k}", tolerance)


def test_the_argument_picks_the_tier():
    x = minigrad.randn(3, 2, 2, requires_grad=True)
    w = [minigrad.randn(4, 2, requires_grad=True), minigrad.randn(4, 1, requires_grad=True)]
    out, _, _ = F.lstm(x, None, None, *w, reference=True)
    assert out.grad_fn.function is minigrad.functions.LSTMFunction
    out, _, _ = F.lstm(x, None, None, *w)
    assert out.grad_fn.function is minigrad.functions.FastLSTMFunction
    model = nn.GRU(2, 1, num_layers=2, reference=True)
    assert model.reference and "reference" not in str(list(model.state_dict()))
    assert model(x)[0].grad_fn is not None
    assert nn.reference_tier(nn.Sequential(model), False)[0].reference is False
    assert _tiered_functions([model(x)[0]]) == {fn.FastGRUFunction}
    nn.reference_tier(model)
    assert _tiered_functions([model(x)[0]]) == {fn.GRUFunction}


def test_the_readers_path_reaches_the_step_equations_in_three_hops():
    """nn.LSTM.forward -> F.lstm -> LSTMFunction -> lstm_step_forward / lstm_step_backward (and RNN, GRU):
    each hop a name written in the body before it (what "go to definition" follows), and the
    functional form's one line that picks the tier names the reference first."""
    import inspect
    from minigrad.functions import rnn as reference_tier
    for layer, functional, function, step in [(nn.RNN, F.rnn, fn.RNNFunction, "rnn_step"),
                                              (nn.LSTM, F.lstm, fn.LSTMFunction, "lstm_step"),
                                              (nn.GRU, F.gru, fn.GRUFunction, "gru_step")]:
        assert f"F.{functional.__name__}," in inspect.getsource(layer.forward)                      # hop 1
        assert f"fn.{function.__name__} if reference else" in inspect.getsource(functional)         # hop 2
        assert f"{step}_forward" in inspect.getsource(function.forward)                            # hop 3
        assert f"{step}_backward" in inspect.getsource(function.backward)
        for name in (step + "_forward", step + "_backward"):
            assert getattr(reference_tier, name).__module__ == "minigrad.functions.rnn_steps"


# ------------------------------------------------------------------ one layer, one direction

def _recurrent(kind, x, h0, c0, weights, **options):
    """The functional form of ``kind`` (KINDS) on x, its initial state(s) and [W_ih, W_hh, b_ih, b_hh]."""
    if kind.startswith("rnn"):
        return F.rnn(x, h0, *weights, nonlinearity=kind[4:], **options)
    if kind == "lstm":
        return F.lstm(x, h0, c0, *weights, **options)
    return F.gru(x, h0, *weights, reset_after=(kind == "gru"), **options)


def _functional(kind, T, N, D, H, bias, initial, lengths, reverse, device, dtype=f64):
    def run(reference):
        x = minigrad.randn(T, N, D, dtype=dtype, device=device, requires_grad=True)
        h0 = minigrad.randn(N, H, dtype=dtype, device=device, requires_grad=True) if initial else None
        c0 = (minigrad.randn(N, H, dtype=dtype, device=device, requires_grad=True)
              if initial and kind == "lstm" else None)
        G = GATES[kind]
        weights = [(minigrad.randn(G * H, D, dtype=dtype, device=device) * 0.6).requires_grad_(),
                   (minigrad.randn(G * H, H, dtype=dtype, device=device) * (0.6 / max(1, H / 4) ** 0.5)).requires_grad_()]
        weights += ([(minigrad.randn(G * H, dtype=dtype, device=device) * 0.5).requires_grad_() for _ in range(2)]
                    if bias else [None, None])
        results = _recurrent(kind, x, h0, c0, weights, lengths=lengths, reverse=reverse, reference=reference)
        upstream = [minigrad.randn(*r.shape, dtype=dtype, device=device) for r in results]
        sum((r * u).sum() for r, u in zip(results, upstream)).backward()
        leaves = [x, h0, c0] + weights
        return list(results) + [None if v is None else v.grad for v in leaves]
    return run


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reverse, lengths, bias, initial",
                         list(itertools.product([False, True], [None, [5, 2, 4, 1]], [True, False], [True, False])))
def test_functions_equal_for_every_option(kind, reverse, lengths, bias, initial):
    _compare(*_on_both_tiers(_functional(kind, 5, 4, 3, 4, bias, initial, lengths, reverse, "cpu")))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("T, N", [(1, 1), (1, 5), (2, 5), (2, 1), (3, 1)])
@pytest.mark.parametrize("H", [4, 33])
@pytest.mark.parametrize("dtype", [f64, minigrad.float32])
def test_functions_equal_on_both_sides_of_the_one_step_rule(kind, T, N, H, dtype):
    """One step (T = 1) makes its input projection as a step's product, W_ih,k x^T (rnn_fast.py
    block 3); T = 2 and 3 make it as one matmul over all steps.  Batch 1 and 5, every option."""
    tolerance = 1e-10 if dtype == f64 else 1e-5
    for reverse, lengths, bias, initial in itertools.product([False, True], [None, "padded"], [True, False],
                                                             [True, False]):
        padded = None if lengths is None or N == 1 else [T] + [1] * (N - 1)
        _compare(*_on_both_tiers(_functional(kind, T, N, 3, H, bias, initial, padded, reverse, "cpu", dtype)),
                 tolerance)


@pytest.mark.parametrize("kind", KINDS)
def test_one_step_on_the_strict_device(kind):
    _compare(*_on_both_tiers(_functional(kind, 1, 33, 5, 32, True, True, [1] * 33, True, "strict")))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("N, H", [(1, 4), (3, 4)])
@pytest.mark.parametrize("wanted", [(0,), (4,), (5, 6), (3, 4, 5, 6)])   # of x, h0, c0, W_ih, W_hh, b_ih, b_hh
def test_functions_equal_when_only_some_inputs_want_gradients(kind, N, H, wanted):
    """A Function computes only the gradients asked for (frozen weights, a frozen input): each tier's
    are the same, and the others stay None."""
    G = GATES[kind]
    shapes = ((4, N, 3), (N, H), (N, H), (G * H, 3), (G * H, H), (G * H,), (G * H,))

    def run(reference):
        rng = numpy.random.default_rng(5)
        tensors = [minigrad.tensor(rng.standard_normal(s) * 0.5, requires_grad=(k in wanted))
                   for k, s in enumerate(shapes)]
        x, h0, c0, *weights = tensors
        results = _recurrent(kind, x, h0, c0, weights, reverse=True, reference=reference)
        sum(r.sum() for r in results).backward()
        used = [k for k in range(7) if k != 2 or kind == "lstm"]            # c0: the LSTM's only
        assert [tensors[k].grad is not None for k in used] == [k in wanted for k in used]
        return list(results) + [tensors[k].grad for k in used]
    _compare(*_on_both_tiers(run))


@pytest.mark.parametrize("kind", KINDS)
def test_functions_equal_on_the_strict_device(kind):
    _compare(*_on_both_tiers(_functional(kind, 4, 3, 2, 3, True, True, [4, 1, 3], True, "strict")))


# ------------------------------------------------------------------ layers: stacks and directions

def _layer(kind, layers, bidirectional, batch_first, lengths, N=3, H=3):
    T, D = 5, 4

    def run(reference):
        options = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, reference=reference)
        if kind.startswith("rnn"):
            model = nn.RNN(D, H, nonlinearity=kind[4:], **options)
        elif kind == "lstm":
            model = nn.LSTM(D, H, **options)
        else:
            model = nn.GRU(D, H, reset_after=(kind == "gru"), **options)
        model = model.to(dtype=f64)
        x = minigrad.randn(*((N, T, D) if batch_first else (T, N, D)), dtype=f64, requires_grad=True)
        out, state = model(x, lengths=lengths)
        finals = state if kind == "lstm" else (state,)
        loss = (out * minigrad.randn(*out.shape, dtype=f64)).sum()
        for final in finals:
            loss = loss + (final * minigrad.randn(*final.shape, dtype=f64)).sum()
        loss.backward()
        return [out, *finals, x.grad] + [p.grad for p in model.parameters()]
    return run


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("layers, bidirectional, batch_first, lengths",
                         list(itertools.product([1, 2], [False, True], [False, True], [None, [3, 5, 1]])))
def test_layers_equal_for_every_option(kind, layers, bidirectional, batch_first, lengths):
    _compare(*_on_both_tiers(_layer(kind, layers, bidirectional, batch_first, lengths)))


# ------------------------------------------------------------------ attention

def _attention(q_shape, k_shape, v_shape, mask, dropout_p, return_weights, device="cpu"):
    def run(reference):
        q, k, v = (minigrad.randn(*s, dtype=f64, device=device, requires_grad=True) for s in (q_shape, k_shape, v_shape))
        learned = mask is not None and mask.dtype.kind == "f"              # a float mask: a bias, learned
        m = None if mask is None else minigrad.tensor(mask, device=device, requires_grad=learned)
        result = F.scaled_dot_product_attention(q, k, v, m, dropout_p, return_weights=return_weights,
                                                reference=reference)
        results = result if return_weights else (result,)
        upstream = [minigrad.randn(*r.shape, dtype=f64, device=device) for r in results]
        sum((r * u).sum() for r, u in zip(results, upstream)).backward()
        return list(results) + [q.grad, k.grad, v.grad] + ([m.grad] if learned else [])
    return run


def _masks():
    """attn_mask values (True = may attend, float = added), as F.scaled_dot_product_attention takes them."""
    rng = numpy.random.default_rng(3)
    random = rng.random((2, 1, 4, 6)) < 0.6
    random[0, 0, 2, :] = False                                # a query that sees no key
    causal = numpy.tril(numpy.ones((4, 6), dtype=bool))
    bias = numpy.where(random, rng.standard_normal((2, 1, 4, 6)), -numpy.inf)
    return {"none": None, "random (N, 1, Tq, Tk)": random, "causal (Tq, Tk)": causal, "float (N, 1, Tq, Tk)": bias}


@pytest.mark.parametrize("mask_name", list(_masks()))
@pytest.mark.parametrize("dropout_p", [0.0, 0.3])
@pytest.mark.parametrize("return_weights", [False, True])
def test_attention_equal_for_every_option(mask_name, dropout_p, return_weights):
    mask = _masks()[mask_name]
    _compare(*_on_both_tiers(_attention((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2), mask, dropout_p, return_weights)))


@pytest.mark.parametrize("shapes", [
    ((4, 5), (6, 5), (6, 3)),                                 # unbatched
    ((2, 3, 4, 5), (1, 3, 6, 5), (6, 2)),                     # broadcast batch dimensions
])
def test_attention_equal_for_unbatched_and_broadcast_inputs(shapes):
    _compare(*_on_both_tiers(_attention(*shapes, None, 0.0, True)))


def test_attention_equal_on_the_strict_device():
    mask = _masks()["causal (Tq, Tk)"]
    _compare(*_on_both_tiers(_attention((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2), mask, 0.2, True, "strict")))


def test_attention_equal_in_small_blocks(monkeypatch):
    """The fast tier splitting the scores into blocks of query rows still equals the reference."""
    from minigrad.functions import attention_fast
    monkeypatch.setattr(attention_fast, "BLOCK_ELEMENTS", 7)
    mask = _masks()["random (N, 1, Tq, Tk)"]
    _compare(*_on_both_tiers(_attention((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2), mask, 0.2, True)))


@pytest.mark.parametrize("shapes", [
    ((4, 5), (6, 5), (6, 3)),                                 # unbatched: one leading dimension to block over
    ((3, 4, 5), (3, 6, 5), (3, 6, 2)),                        # one batch dimension: examples, then queries
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2)),               # examples, heads, then queries
    ((2, 3, 2, 4, 5), (2, 3, 2, 6, 5), (2, 3, 2, 6, 2)),      # a third batch dimension inside a head's block
])
@pytest.mark.parametrize("block", [24, 25, 48, 49, 144, 7])  # about one head (Tq Tk = 24), two, one example...
@pytest.mark.parametrize("stored_scores", [0, 2 ** 26])      # P recomputed (blocks of queries), P kept
def test_attention_equal_in_blocks_of_examples_heads_and_queries(monkeypatch, shapes, block, stored_scores):
    """attention_fast's blocks 1 and 6 at sizes around each way of splitting, for every batch rank."""
    from minigrad.functions import attention_fast
    monkeypatch.setattr(attention_fast, "BLOCK_ELEMENTS", block)
    monkeypatch.setattr(attention_fast, "STORED_SCORES", stored_scores)
    mask = _masks()["causal (Tq, Tk)"]
    _compare(*_on_both_tiers(_attention(*shapes, mask, 0.0, True)))


def test_attention_blocks_of_a_kept_P_are_whole_heads():
    """A P kept whole (block 2) is split no finer than one head: a block of queries would be a strided
    block of P^T (block 6).  Recomputing P, a head is split along its queries."""
    from minigrad.functions.attention_fast import BLOCK_ELEMENTS, _score_blocks
    big = BLOCK_ELEMENTS // 64 + 1                            # one head: big * 64 > BLOCK_ELEMENTS scores
    kept = _score_blocks((2, 3), big, 64, split_queries=False)
    assert kept == [((slice(r, r + 1), slice(h, h + 1)), slice(0, big)) for r in range(2) for h in range(3)]
    recomputed = _score_blocks((2, 3), big, 64)
    assert len(recomputed) > len(kept) and all(queries.stop - queries.start < big for _, queries in recomputed)
    assert _score_blocks((2, 3), 4, 64) == [((slice(0, 2),), slice(0, 4))]     # small: whole examples


@pytest.mark.parametrize("stored_scores", [143, 144])    # P has 2 * 3 * 4 * 6 = 144 scores: recomputed, kept
@pytest.mark.parametrize("mask_name", ["none", "random (N, 1, Tq, Tk)", "float (N, 1, Tq, Tk)"])
@pytest.mark.parametrize("dropout_p", [0.0, 0.3])
@pytest.mark.parametrize("block", [7, 2 ** 21])                  # blocks of query rows, one block
def test_attention_equal_whether_the_fast_tier_keeps_P_or_recomputes_it(monkeypatch, stored_scores, mask_name,
                                                                        dropout_p, block):
    """attention_fast's block 2: P kept up to STORED_SCORES scores, recomputed beyond; both equal the reference."""
    from minigrad.functions import attention_fast
    monkeypatch.setattr(attention_fast, "STORED_SCORES", stored_scores)
    monkeypatch.setattr(attention_fast, "BLOCK_ELEMENTS", block)
    mask = _masks()[mask_name]
    for return_weights in (False, True):
        _compare(*_on_both_tiers(_attention((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2), mask, dropout_p, return_weights)))
    q, k, v = (minigrad.randn(*s, dtype=f64, requires_grad=True) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2)))
    out = F.scaled_dot_product_attention(q, k, v, None if mask is None else minigrad.tensor(mask), dropout_p)
    assert (out.grad_fn.saved_tensors[-1] is not None) == (stored_scores >= 144)      # the path this case takes
    upstream = minigrad.randn(*out.shape, dtype=f64)
    out.backward(upstream, retain_graph=True)                   # a second backward reads the same P
    first = [t.grad.clone() for t in (q, k, v)]
    out.backward(upstream)
    for a, t in zip(first, (q, k, v)):
        _same(2 * a, t.grad, "gradient after two backwards", 1e-12)


def test_transformer_encoder_layer_equal():
    def run(reference):
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True,
                                           reference=reference).to(dtype=f64)
        x = minigrad.randn(2, 5, 8, dtype=f64, requires_grad=True)
        out = layer(x, src_mask=minigrad.masks.causal_mask(5))
        (out * minigrad.randn(*out.shape, dtype=f64)).sum().backward()
        return [out, x.grad] + [p.grad for p in layer.parameters()]
    _compare(*_on_both_tiers(run))


# ---------------------------------------------------------------------- layer norm

@pytest.mark.parametrize("shape, normalized", [((3, 5), (5,)), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)), ((1, 1, 64), (64,)),
                                               ((0, 4), (4,)), ((4,), (4,)), ((6, 2, 5), (2, 5)), ((3, 0), (0,))])
@pytest.mark.parametrize("affine", ["weight and bias", "weight", "none"])
@pytest.mark.parametrize("dtype", [f64, minigrad.float32])
def test_layer_norm_equal_for_every_option(shape, normalized, affine, dtype):
    """Outputs and the gradients of x, weight and bias, rows of any count (none included), one or
    two normalized dimensions, with and without the affine part."""
    def run(reference):
        x = minigrad.randn(*shape, dtype=dtype).requires_grad_()
        weight = bias = None
        if affine != "none":
            weight = minigrad.randn(*normalized, dtype=dtype).requires_grad_()
        if affine == "weight and bias":
            bias = minigrad.randn(*normalized, dtype=dtype).requires_grad_()
        y = F.layer_norm(x, normalized, weight, bias, eps=1e-4, reference=reference)
        y.backward(minigrad.randn(*shape, dtype=dtype))
        return [y, x.grad] + [None if p is None else p.grad for p in (weight, bias)]
    _compare(*_on_both_tiers(run), 1e-10 if dtype == f64 else 1e-5)


def test_layer_norm_equal_on_a_non_contiguous_input_and_the_strict_device():
    def run(reference):
        layer = nn.LayerNorm(4, reference=reference).double()
        layer.weight.data.copy_(minigrad.randn(4, dtype=f64))
        x = minigrad.randn(4, 3, dtype=f64, device="strict").requires_grad_()
        y = layer.to("strict")(x.t())                    # (3, 4), rows strided
        y.backward(minigrad.randn(3, 4, dtype=f64, device="strict"))
        return [y, x.grad, layer.weight.grad, layer.bias.grad]
    _compare(*_on_both_tiers(run))


def test_layer_norm_tier_follows_the_module_and_reference_tier():
    layer = nn.LayerNorm(3)
    x = minigrad.randn(2, 3, requires_grad=True)
    assert not layer.reference and layer(x).grad_fn.function is fn.FastLayerNorm
    assert nn.reference_tier(nn.Sequential(layer))[0](x).grad_fn.function is fn.LayerNorm
    encoder = nn.TransformerEncoderLayer(4, 2, 8, reference=True)
    assert encoder.norm1.reference and encoder.norm2.reference
