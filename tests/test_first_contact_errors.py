"""The messages a new user meets first (issue 40): each says what happened in minigrad's terms and the fix,
with PyTorch's exception type where PyTorch raises, and one prefix (the operation's name) per message."""
import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import minigrad
from minigrad import cli, nn
from minigrad import functional as F
from minigrad.backend import DeviceError
from minigrad.serialization import CheckpointError
from optional_torch import torch


def _one_prefix(message, name):
    """The message starts with ``name: `` and no other op's prefix follows it ("MatMul: ...: matmul: ...")."""
    assert message.startswith(f"{name}: "), message
    rest = message[len(name) + 2:].removeprefix("inputs of shapes ")
    assert not re.match(r"[\w.]+: |[(), \d]+: [a-z_]+: ", rest), f"two prefixes: {message}"
    assert message.count(f"{name}:") == 1, message


def test_load_of_a_text_file_says_it_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is text\n")
    with pytest.raises(CheckpointError) as error:
        minigrad.load(path)
    message = str(error.value)
    _one_prefix(message, "minigrad.load")
    assert "is not a minigrad checkpoint" in message and "minigrad.save writes .npz" in message
    assert "allow_pickle" not in message and "pickle.load" not in message, "NumPy's advice is not minigrad's"


def test_load_of_pickled_objects_says_minigrad_never_unpickles(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, a=np.array([{"x": 1}], dtype=object))
    with pytest.raises(CheckpointError) as error:
        minigrad.load(path)
    message = str(error.value)
    assert "is not a minigrad checkpoint" in message and "never unpickles" in message
    assert "allow_pickle" not in message and "trust the file" not in message


def test_load_of_a_zip_that_is_not_arrays_names_the_member(tmp_path):
    path = tmp_path / "model.pt"                # torch.save writes a zip of pickles
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("model/data.pkl", b"\x80\x02}q\x00.")
    with pytest.raises(CheckpointError, match=re.escape("'model/data.pkl' in it is not a NumPy array")) as error:
        minigrad.load(path)
    assert "torch.save" in str(error.value) and "numpy.savez" in str(error.value)


def test_a_real_checkpoint_still_loads(tmp_path):
    minigrad.save({"w": minigrad.ones(2)}, tmp_path / "ok.npz")
    assert minigrad.load(tmp_path / "ok.npz")["w"].tolist() == [1.0, 1.0]


def test_matmul_shape_error_is_a_runtime_error_with_one_prefix():
    with pytest.raises(RuntimeError) as error:
        minigrad.randn(2, 3) @ minigrad.randn(4, 5)
    _one_prefix(str(error.value), "matmul")
    assert "(2, 3) @ (4, 5)" in str(error.value)
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.randn(2, 3) @ torch.randn(4, 5)


def test_dtype_mismatch_raises_pytorchs_type_in_linear_and_lstm():
    """PyTorch 2.13: F.linear raises RuntimeError, nn.LSTM ValueError ("RNN input dtype ... does not match")."""
    x = minigrad.randn(2, 1, 3, dtype=minigrad.float64)
    with pytest.raises(RuntimeError) as linear:
        F.linear(x, minigrad.randn(4, 3))
    with pytest.raises(ValueError) as lstm:
        nn.LSTM(3, 4)(x)
    for error, name in ((linear, "linear"), (lstm, "lstm")):
        _one_prefix(str(error.value), name)
        assert "float64" in str(error.value) and "model.double() or x.float()" in str(error.value)
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.nn.functional.linear(torch.randn(2, 1, 3, dtype=torch.float64), torch.randn(4, 3))
        with pytest.raises(ValueError):
            torch.nn.LSTM(3, 4)(torch.randn(2, 1, 3, dtype=torch.float64))


def test_cross_entropy_with_classes_last_suggests_transpose():
    logits, targets = minigrad.randn(2, 5, 7), minigrad.randint(0, 7, (2, 5))     # (N, T, V), (N, T)
    with pytest.raises(RuntimeError) as error:
        F.cross_entropy(logits, targets)
    message = str(error.value)
    _one_prefix(message, "cross_entropy")
    assert "pass logits.transpose(1, 2) (shape (2, 7, 5))" in message and "logits.reshape(-1, 7)" in message
    assert F.cross_entropy(logits.transpose(1, 2), targets).shape == ()          # the suggestion works
    with pytest.raises(RuntimeError, match=re.escape("logits.movedim(-1, 1)")):
        F.cross_entropy(minigrad.randn(2, 3, 4, 7), minigrad.randint(0, 7, (2, 3, 4)))
    with pytest.raises(RuntimeError, match=re.escape("flatten the logits too, classes last: logits.reshape(-1, 7)")):
        F.cross_entropy(logits, targets.reshape(-1))                                 # (N, T, V) with (N*T,)
    assert F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1)).shape == ()
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.nn.functional.cross_entropy(torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5)))


def test_cross_entropy_batch_size_mismatch_is_a_value_error_as_in_pytorch():
    with pytest.raises(ValueError) as error:
        F.cross_entropy(minigrad.randn(2, 3), minigrad.tensor([0, 1, 2]))
    _one_prefix(str(error.value), "cross_entropy")
    assert "transpose" not in str(error.value)
    if torch is not None:
        with pytest.raises(ValueError):
            torch.nn.functional.cross_entropy(torch.randn(2, 3), torch.tensor([0, 1, 2]))


def test_broadcast_errors_keep_the_op_and_shapes_prefix():
    """NumPy's own message names no op: the autograd wrapper still adds one prefix."""
    with pytest.raises(ValueError) as error:
        minigrad.randn(2, 3) + minigrad.randn(4)
    _one_prefix(str(error.value), "Add")
    assert "inputs of shapes (2, 3), (4,)" in str(error.value)


def test_cuda_from_the_environment_names_the_variable(monkeypatch):
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        pytest.skip("a GPU with CuPy is available here")
    except Exception:
        pass
    run = subprocess.run([sys.executable, "-c", "import minigrad; minigrad.zeros(2)"], capture_output=True,
                         text=True, env=dict(os.environ, MINIGRAD_DEVICE="cuda"))
    last = run.stderr.strip().splitlines()[-1]
    assert run.returncode != 0 and last.startswith("minigrad.backend.DeviceError: ")
    assert 'device "cuda" (the MINIGRAD_DEVICE environment variable) is not available' in last
    assert "pip install cupy-cuda12x" in last and 'unset MINIGRAD_DEVICE or set it to "cpu"' in last
    assert "minigrad-seq" not in last


def test_version_warns_of_a_clone_folder_that_shadows_minigrad(tmp_path, monkeypatch):
    clone = tmp_path / "minigrad"                        # a clone's root: its package is minigrad/minigrad/
    (clone / "minigrad").mkdir(parents=True)
    (clone / "minigrad" / "__init__.py").write_text("")
    (clone / "pyproject.toml").write_text("")
    script = tmp_path / "train.py"
    script.write_text("import minigrad\nminigrad.manual_seed(0)\n")
    shadowed = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                              env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert "has no attribute 'manual_seed'" in shadowed.stderr, "the failure the warning is about"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert cli.shadows() == [str(clone)]
    line, warning = cli.version_line().split("\n")
    assert line.startswith(f"minigrad {minigrad.__version__} ")
    assert warning.startswith(f"warning: {clone} has no __init__.py") and "namespace package" in warning
    assert "cd minigrad" in warning and "It is a clone's root folder" in warning
    monkeypatch.chdir(clone)                             # inside the clone: the real package, no warning
    assert cli.shadows() == [] and "\n" not in cli.version_line()
