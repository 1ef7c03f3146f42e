"""save/load with open file objects, as torch.save(obj, buffer) / torch.load(buffer) take them."""
import io

import numpy
import pytest

import minigrad
from minigrad import nn


def test_a_checkpoint_goes_through_bytesio_and_an_open_file(tmp_path):
    model = nn.LSTM(3, 4, batch_first=True)
    optimizer = minigrad.optim.Adam(model.parameters())
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 7}
    buffer = io.BytesIO()
    minigrad.save(state, buffer)
    buffer.seek(0)
    loaded = minigrad.load(buffer)
    assert loaded["epoch"] == 7
    for name, value in model.state_dict().items():
        numpy.testing.assert_array_equal(loaded["model"][name].numpy(), value.numpy())
    with open(tmp_path / "c.npz", "wb") as file:
        minigrad.save(state, file)
    with open(tmp_path / "c.npz", "rb") as file:
        again = minigrad.load(file)
    model.load_state_dict(again["model"])
    assert minigrad.load(tmp_path / "c.npz")["epoch"] == 7          # the same bytes as a path gives


def test_a_file_object_that_is_not_a_checkpoint_is_named():
    with pytest.raises(minigrad.serialization.CheckpointError, match="minigrad.load: 'BytesIO'"):
        minigrad.load(io.BytesIO(b"not a checkpoint"))


def test_the_buffer_is_never_unpickled():
    """A pickle in the buffer is refused, not run."""
    import pickle
    buffer = io.BytesIO(pickle.dumps({"a": 1}))
    with pytest.raises(minigrad.serialization.CheckpointError):
        minigrad.load(buffer)
