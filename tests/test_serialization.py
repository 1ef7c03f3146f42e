"""minigrad.save / minigrad.load: .npz checkpoints, no pickle, atomic writes, clear errors."""
import os

import numpy as np
import pytest

import minigrad
from minigrad import nn
from minigrad.serialization import CheckpointError


def _state(device):
    model = nn.Sequential(nn.Embedding(5, 3, padding_idx=0), nn.Linear(3, 2)).to(device)
    return model, {
        "model": model.state_dict(),
        "ids": minigrad.tensor([[1, 2], [3, 4]], device=device),
        "mask": minigrad.tensor([True, False], device=device),
        "double": minigrad.tensor(np.array([1.5, -2.0]), device=device),
        "scalar": minigrad.tensor(np.float64(3.25), device=device),
        "vocab": {"<pad>": 0, "the": 1, "émigré": 2},
        "history": [0.5, 0.25, {"best": True}],
        "config": {"lr": 1e-3, "betas": (0.9, 0.999), "name": "rnn", "dropout": None},
        "step": 10,
    }


def test_round_trip(device, tmp_path):
    model, state = _state(device)
    path = tmp_path / "checkpoint.npz"
    minigrad.save(state, path)
    loaded = minigrad.load(path, device=device)
    assert list(loaded) == list(state)
    for name in ("ids", "mask", "double", "scalar"):
        assert isinstance(loaded[name], minigrad.Tensor) and loaded[name].device == device
        assert loaded[name].dtype == state[name].dtype and loaded[name].shape == state[name].shape
        np.testing.assert_array_equal(loaded[name].numpy(), state[name].numpy())
    assert list(loaded["model"]) == ["0.weight", "1.weight", "1.bias"]
    for key, value in state["model"].items():
        np.testing.assert_array_equal(loaded["model"][key].numpy(), value.numpy())
    assert loaded["vocab"] == state["vocab"]
    assert loaded["history"] == [0.5, 0.25, {"best": True}]
    assert loaded["config"] == {"lr": 1e-3, "betas": [0.9, 0.999], "name": "rnn", "dropout": None}
    assert loaded["step"] == 10

    other = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 2)).to(device)
    other.load_state_dict(loaded["model"])
    ids = minigrad.tensor([[0, 4, 2]], device=device)
    np.testing.assert_array_equal(other(ids).numpy(), model(ids).numpy())


def test_load_to_another_device(tmp_path):
    minigrad.save({"w": minigrad.ones(2, device="strict")}, tmp_path / "c.npz")
    assert minigrad.load(tmp_path / "c.npz", device="cpu")["w"].device == "cpu"
    assert minigrad.load(tmp_path / "c.npz")["w"].device == minigrad.backend.default_device()
    assert minigrad.load(tmp_path / "c.npz", device="strict")["w"].device == "strict"


def test_file_is_plain_npz_without_pickles(tmp_path):
    model = nn.Linear(2, 3)
    minigrad.save({"model": model.state_dict(), "opt": {"state": {0: {"step": 1}}}}, tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as archive:
        assert sorted(archive.files) == ["__tree__", "model/bias", "model/weight"]
        np.testing.assert_array_equal(archive["model/weight"], model.weight.numpy())
        assert archive["__tree__"].dtype.kind == "U"


def test_plain_npz_loads_as_a_flat_dict(tmp_path):
    np.savez(tmp_path / "plain.npz", a=np.arange(3), b=np.eye(2))
    loaded = minigrad.load(tmp_path / "plain.npz")
    assert sorted(loaded) == ["a", "b"] and loaded["b"].shape == (2, 2)


def _old_checkpoint(tmp_path):
    path = tmp_path / "model.npz"
    minigrad.save({"w": minigrad.arange(4), "step": 1}, path)
    return path, path.read_bytes()


def test_crash_during_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path, before = _old_checkpoint(tmp_path)

    def half_written(file, **arrays):
        file.write(b"PK\x03\x04 half a zip file")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", half_written)
    with pytest.raises(OSError, match="disk full"):
        minigrad.save({"w": minigrad.zeros(4), "step": 2}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]            # no temporary file left behind
    assert minigrad.load(path)["step"] == 1


def test_crash_before_rename_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path, before = _old_checkpoint(tmp_path)

    def interrupted(source, destination):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        minigrad.save({"w": minigrad.zeros(4), "step": 2}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]


def test_save_replaces_and_fsyncs(tmp_path, monkeypatch):
    path, _ = _old_checkpoint(tmp_path)
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    minigrad.save({"step": 2}, path)
    assert synced and minigrad.load(path) == {"step": 2}


def test_missing_file_names_it(tmp_path):
    path = tmp_path / "nowhere.npz"
    with pytest.raises(FileNotFoundError, match="nowhere.npz"):
        minigrad.load(path)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "pickled", "bad tree"])
def test_corrupt_file_names_it(tmp_path, damage):
    path = tmp_path / "broken.npz"
    if damage == "pickled":   # an object array can only be read by unpickling: refused
        np.save(open(path, "wb"), np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    elif damage == "bad tree":
        np.savez(path, __tree__=np.array("{not json"))
    else:
        minigrad.save({"w": minigrad.randn(50, 50), "vocab": {"a": 1}}, path)
        data = path.read_bytes()
        path.write_bytes({"truncated": data[: len(data) // 2], "garbage": os.urandom(200), "empty": b""}[damage])
    with pytest.raises(CheckpointError, match="broken.npz"):
        minigrad.load(path)


def test_unsavable_values_raise(tmp_path):
    with pytest.raises(CheckpointError, match="object"):
        minigrad.save({"fn": object()}, tmp_path / "x.npz")
    with pytest.raises(CheckpointError, match="contains '/'"):
        minigrad.save({"a/b": 1}, tmp_path / "x.npz")
    assert not os.listdir(tmp_path)


def test_one_atomic_writer_for_checkpoints_and_reports(tmp_path, monkeypatch):
    """The grader's reports use the same atomic_write as checkpoints: a crash leaves the old report."""
    from minigrad.coursework.grading.report import write_atomic
    report = tmp_path / "report.txt"
    write_atomic(report, "old\n")
    assert oct(report.stat().st_mode & 0o777) == "0o644"

    def interrupted(source, destination):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(report, "new\n")
    assert report.read_text() == "old\n" and os.listdir(tmp_path) == ["report.txt"]
