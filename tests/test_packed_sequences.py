"""Packed sequences: PackedSequence, pack_padded_sequence, pad_packed_sequence, pack_sequence, and
nn.RNN / LSTM / GRU fed a PackedSequence, against torch.nn.utils.rnn (float64 to 1e-10, float32 to 1e-5);
gradients through packing checked by gradcheck."""
import numpy
import pytest

import minigrad
from minigrad import nn
from minigrad.nn.utils.rnn import PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence
from optional_torch import needs_torch, torch

LENGTHS = [3, 5, 3, 2, 5, 1]                     # ties and a length-1 sequence
TOLERANCE = {"float64": 1e-10, "float32": 1e-5}


def padded(T=5, B=6, D=3, seed=0):
    return numpy.random.default_rng(seed).standard_normal((T, B, D))


def as_numpy(value):
    """A Tensor (minigrad's on any device, or torch's) or an array (a minigrad .grad) as a NumPy array."""
    if value is None:
        return None
    if isinstance(value, minigrad.Tensor):
        return value.detach().cpu().numpy()
    return numpy.asarray(value.detach().numpy()) if hasattr(value, "detach") else minigrad.backend.to_numpy(value)


def same_packed(ours, theirs, tolerance=1e-12):
    assert isinstance(ours, PackedSequence)
    numpy.testing.assert_allclose(as_numpy(ours.data), as_numpy(theirs.data), rtol=tolerance, atol=tolerance)
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        mine, torchs = getattr(ours, field), getattr(theirs, field)
        assert (mine is None) == (torchs is None), field
        if mine is not None:
            assert mine.dtype == minigrad.int64, field
            numpy.testing.assert_array_equal(as_numpy(mine), as_numpy(torchs), err_msg=field)


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [(LENGTHS, False), (sorted(LENGTHS, reverse=True), True),
                                                    (sorted(LENGTHS, reverse=True), False)])
def test_pack_and_pad_match_torch(batch_first, lengths, enforce_sorted):
    x = padded()
    x = x.transpose(1, 0, 2).copy() if batch_first else x
    ours = pack_padded_sequence(minigrad.tensor(x), lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), torch.tensor(lengths),
                                                     batch_first=batch_first, enforce_sorted=enforce_sorted)
    same_packed(ours, theirs)
    for options in (dict(), dict(padding_value=-1.5, total_length=7)):
        mine, my_lengths = pad_packed_sequence(ours, batch_first=batch_first, **options)
        torchs, their_lengths = torch.nn.utils.rnn.pad_packed_sequence(theirs, batch_first=batch_first, **options)
        numpy.testing.assert_array_equal(mine.numpy(), torchs.numpy())
        numpy.testing.assert_array_equal(my_lengths.numpy(), their_lengths.numpy())
        assert my_lengths.dtype == minigrad.int64


@needs_torch
def test_pack_sequence_matches_torch():
    rng = numpy.random.default_rng(1)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 1, 4)]
    for enforce_sorted in (False,):
        same_packed(pack_sequence([minigrad.tensor(a) for a in arrays], enforce_sorted=enforce_sorted),
                    torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=enforce_sorted))
    ordered = sorted(arrays, key=len, reverse=True)
    same_packed(pack_sequence([minigrad.tensor(a) for a in ordered]),
                torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in ordered]))


def test_gradients_flow_through_packing_and_unpacking():
    x = minigrad.tensor(padded(4, 3, 2), requires_grad=True)

    def round_trip(x):
        packed = pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        return pad_packed_sequence(packed, total_length=5)[0] * 1.5

    minigrad.gradcheck(round_trip, (x,), raise_exception=True)


@pytest.mark.parametrize("call, error, message", [
    (lambda x: pack_padded_sequence(x, LENGTHS), RuntimeError, "must decrease when enforce_sorted=True"),
    (lambda x: pack_padded_sequence(x, [3, 5, 0, 2, 5, 1], enforce_sorted=False), RuntimeError, "must be >= 1"),
    (lambda x: pack_padded_sequence(x, [6, 5, 3, 2, 1, 1]), ValueError, "longer than the 5 time steps"),
    (lambda x: pack_padded_sequence(x, [5, 3]), ValueError, "2 lengths for a batch of 6"),
    (lambda x: pack_padded_sequence(x.numpy(), LENGTHS), TypeError, "argument 'input' must be Tensor, not numpy.ndarray"),
    (lambda x: pad_packed_sequence(pack_padded_sequence(x, [5, 5, 3, 3, 2, 1]), total_length=3), ValueError,
     "total_length=3 is shorter"),
    (lambda x: nn.GRU(3, 2)(pack_padded_sequence(x, [5, 5, 3, 3, 2, 1]), lengths=[1] * 6), ValueError,
     "carries its lengths"),
])
def test_bad_packing_says_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call(minigrad.tensor(padded()))


def test_a_numpy_array_given_to_a_recurrent_layer_says_it_is_not_a_tensor():
    with pytest.raises(TypeError, match=r"LSTM\(\): argument 'input' must be Tensor, not numpy.ndarray; wrap it "
                                        r"with minigrad.tensor\(x\)"):
        nn.LSTM(10, 4)(numpy.zeros((4, 7, 10)))


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode, batch_first, with_state", [("LSTM", False, False), ("GRU", True, True),
                                                            ("RNN", False, True), ("LSTM", True, True)])
def test_recurrent_layers_take_and_return_packed_sequences_as_torch(dtype, mode, batch_first, with_state):
    """Two layers, bidirectional: output.data, h_n (c_n) in the original batch order, and every gradient."""
    results = {}
    x = padded()
    x = x.transpose(1, 0, 2).copy() if batch_first else x
    h0 = numpy.random.default_rng(5).standard_normal((4, 6, 4))
    torch.manual_seed(0)
    their_layer = getattr(torch.nn, mode)(3, 4, num_layers=2, bidirectional=True, batch_first=batch_first)
    for L in (minigrad, torch):
        layer = getattr(L.nn, mode)(3, 4, num_layers=2, bidirectional=True, batch_first=batch_first)
        layer.load_state_dict(their_layer.state_dict())
        layer = layer.to(dtype=getattr(L, dtype))
        inputs = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
        packed = L.nn.utils.rnn.pack_padded_sequence(inputs, L.tensor(LENGTHS), batch_first=batch_first,
                                                     enforce_sorted=False)
        state = None
        if with_state:
            state = L.tensor(h0, dtype=getattr(L, dtype))
            state = (state, state * 0.5) if mode == "LSTM" else state
        output, final = layer(packed, state)
        finals = final if mode == "LSTM" else (final,)
        loss = (output.data ** 2).sum() + sum((f * f.sum()).sum() for f in finals)
        loss.backward()
        results[L.__name__] = [output.data, *finals, inputs.grad] + [p.grad for p in layer.parameters()]
        assert type(output).__name__ == "PackedSequence"
    for ours, theirs in zip(results["minigrad"], results["torch"]):
        numpy.testing.assert_allclose(as_numpy(ours), as_numpy(theirs), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_lstm_projections_are_refused_with_what_to_do():
    assert nn.LSTM(3, 4, proj_size=0).hidden_size == 4
    with pytest.raises(NotImplementedError, match=r"LSTM: proj_size=2 .* not in minigrad; leave proj_size=0"):
        nn.LSTM(3, 4, proj_size=2)
