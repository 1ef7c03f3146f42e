"""The backend: devices, their errors, the strict test device itself, and a
source check that tensor code never calls NumPy directly."""
import pathlib
import re

import numpy
import pytest

import minigrad
from minigrad import backend
from minigrad.backend import DeviceError
from strict_backend import StrictArray, strict

PACKAGE = pathlib.Path(minigrad.__file__).parent


# ---------------------------------------------------------------------------- the strict device

def test_strict_arrays_refuse_implicit_conversion():
    a = strict.ones((2, 3))
    with pytest.raises(TypeError, match=r"\.get\(\)"):
        numpy.asarray(a)
    with pytest.raises(TypeError):
        numpy.exp(a)                                     # a NumPy function on device data
    with pytest.raises(TypeError):
        numpy.concatenate([a, a])
    assert isinstance(a.get(), numpy.ndarray) and a.get().shape == (2, 3)


@pytest.mark.parametrize("mix", [
    lambda a, h: a + h, lambda a, h: h + a, lambda a, h: a * h, lambda a, h: a @ h.T,
    lambda a, h: strict.where(a > 0, a, h), lambda a, h: strict.concatenate([a, h]),
    lambda a, h: a.__setitem__(0, h[0]), lambda a, h: a[h.astype(int)],
])
def test_strict_arrays_refuse_host_arrays(mix):
    with pytest.raises(TypeError):
        mix(strict.ones((2, 3)), numpy.ones((2, 3)))


def test_strict_arrays_accept_scalars_and_behave_like_arrays():
    a = strict.arange(6.0).reshape(2, 3)
    b = a * 2 + numpy.float64(1.0) - 0.5                 # Python and NumPy scalars are fine
    assert isinstance(b, StrictArray) and b.shape == (2, 3) and b.dtype == numpy.float64
    assert isinstance(a.sum(), StrictArray) and a.sum().ndim == 0   # reductions stay on the device
    assert float(a.sum()) == 15.0 and int(a[1, 2]) == 5 and bool(a[0, 1])
    with pytest.raises(TypeError):
        float(a)                                         # only size-1 arrays convert to scalars
    a[0] = 7.0
    a += 1
    assert a.get().tolist() == [[8.0, 8.0, 8.0], [4.0, 5.0, 6.0]]
    z = strict.zeros(3)
    strict.add.at(z, strict.asarray([0, 0, 2]), 1.0)
    assert z.get().tolist() == [2.0, 0.0, 1.0]
    assert strict.float32 is numpy.float32
    assert [row.get().tolist() for row in strict.eye(2)] == [[1.0, 0.0], [0.0, 1.0]]


def test_strict_device_is_registered():
    x = minigrad.ones(2, 3, device="strict")
    assert x.device == "strict" and isinstance(x._data, StrictArray)
    assert backend.array_module(x._data) is strict


# ---------------------------------------------------------------------------- devices

def test_mixing_devices_names_both():
    a = minigrad.ones(2, device="cpu", requires_grad=True)
    b = minigrad.ones(2, device="strict")
    with pytest.raises(DeviceError, match=r'"cpu".*"strict"|"strict".*"cpu"'):
        a + b
    with pytest.raises(DeviceError, match="strict"):
        minigrad.cat([a, b])


def test_cuda_without_cupy_says_how_to_install():
    try:
        import cupy  # noqa: F401
        cupy.cuda.runtime.getDeviceCount()
        pytest.skip("a GPU with CuPy is available here")
    except Exception:
        pass
    with pytest.raises(DeviceError, match=re.escape("install CuPy: pip install cupy-cuda12x")) as error:
        minigrad.zeros(2, device="cuda")
    assert "minigrad-seq" not in str(error.value), "not on the package index: never pip install minigrad-seq[gpu]"
    assert 'use device="cpu"' in str(error.value) and "MINIGRAD_DEVICE" not in str(error.value)
    with pytest.raises(DeviceError, match=re.escape("install CuPy: pip install cupy-cuda12x")):
        minigrad.ones(2).to("cuda")


def test_unknown_device():
    with pytest.raises(DeviceError, match="unknown device"):
        minigrad.zeros(2, device="tpu")


def test_default_device_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("MINIGRAD_DEVICE", "strict")
    assert minigrad.zeros(2).device == "strict"
    assert minigrad.tensor([1.0, 2.0]).device == "strict"
    monkeypatch.delenv("MINIGRAD_DEVICE")
    assert minigrad.zeros(2).device == "cpu"


def test_to_numpy_copies():
    x = numpy.ones(3)
    copy = backend.to_numpy(x)
    copy[0] = 5.0
    assert x[0] == 1.0
    assert backend.to_numpy(strict.ones(2)).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------- source rule

# Files that work on the host by design: the backend itself, Tensor construction
# from host data, gradcheck's bookkeeping, state dicts, file I/O, data and text
# preparation, the lessons' instruments (eigenvalues of a host copy), and the
# coursework grader; dtype names, and multinomial's draws from the host generator.
HOST_SIDE = {"backend.py", "tensor.py", "torch_compat/arguments.py", "creation.py", "gradient_check.py", "finite_differences.py", "nn/module.py",
             "serialization.py", "instruments.py", "dtypes.py", "sampling.py"}
HOST_SIDE_DIRS = ("data/", "text/", "coursework/")


def test_tensor_code_never_imports_numpy():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name in HOST_SIDE or name.startswith(HOST_SIDE_DIRS):
            continue
        if re.search(r"^\s*(import numpy|from numpy\b)", path.read_text(encoding="utf-8"), re.MULTILINE):
            offenders.append(name)
    assert not offenders, (
        f"{offenders} import numpy: ops must call xp = backend.array_module(...) so that they run on "
        "every device (numpy on device data breaks on CuPy); host-side helpers belong in HOST_SIDE"
    )



@pytest.mark.parametrize("op", [
    lambda c, s: c @ s, lambda c, s: minigrad.stack([c, s]), lambda c, s: minigrad.where(s > 0, c, c),
    lambda c, s: c.masked_fill(s > 0, 0.0), lambda c, s: c[s.long() * 0],
    lambda c, s: minigrad.functional.embedding(s.long() * 0, c),
    lambda c, s: minigrad.functional.cross_entropy(c, s[:, 0].long() * 0),
    lambda c, s: minigrad.functional.mse_loss(c, s),
])
def test_every_kind_of_op_names_both_devices_when_mixed(op):
    on_cpu = minigrad.ones(2, 2, requires_grad=True, device="cpu")
    on_strict = minigrad.ones(2, 2, device="strict")
    with pytest.raises(DeviceError, match=r'(?s)"cpu".*"strict"|"strict".*"cpu"'):
        op(on_cpu, on_strict)


class _HostExp(minigrad.autograd.Function):
    """A deliberately wrong op: numpy.exp on the data, as a careless forward might do."""

    @staticmethod
    def forward(ctx, x):
        return numpy.exp(x)

    @staticmethod
    def backward(ctx, dout):
        return (dout,)


class _HostMask(minigrad.autograd.Function):
    """A deliberately wrong op: a host mask mixed into device data."""

    @staticmethod
    def forward(ctx, x):
        return x * (numpy.arange(x.shape[-1]) > 0)

    @staticmethod
    def backward(ctx, dout):
        return (dout,)


class _NumberCondition(minigrad.autograd.Function):
    """A deliberately wrong op: where() with a Python bool as its condition (Pow's backward
    did this for a number exponent; cupy.where calls condition.astype, a bool has none)."""

    @staticmethod
    def forward(ctx, x):
        xp = minigrad.backend.array_module(x)
        return xp.where(2 == 0, 0, x)

    @staticmethod
    def backward(ctx, dout):
        return (dout,)


@pytest.mark.parametrize("bad_op, error", [(_HostExp, TypeError), (_HostMask, TypeError),
                                           (_NumberCondition, AttributeError)])
def test_the_strict_device_catches_code_that_would_break_on_cupy(bad_op, error):
    assert bad_op.apply(minigrad.ones(3, device="cpu")).shape == (3,)   # NumPy lets it pass on "cpu" ...
    with pytest.raises(error):
        bad_op.apply(minigrad.ones(3, device="strict"))          # ... the strict device, like CuPy, does not


def test_a_number_exponent_differentiates_on_the_strict_device():
    x = minigrad.tensor([0.0, 1.0, 2.0], dtype=minigrad.float64, device="strict", requires_grad=True)
    ((x ** 2).sum() + (x ** 0).sum()).backward()
    assert x.grad.numpy().tolist() == [0.0, 2.0, 4.0]


def test_an_unknown_default_device_is_named_with_where_it_came_from(monkeypatch):
    monkeypatch.setenv("MINIGRAD_DEVICE", "gpu")
    with pytest.raises(DeviceError, match=r'unknown device "gpu" \(the MINIGRAD_DEVICE environment variable\)'):
        minigrad.zeros(2)


# ---------------------------------------------------------------------------- memory (issue 41)

def test_empty_cache_runs_on_any_machine():
    """Without a GPU or glibc it simply does nothing; tests/test_memory_reuse.py checks what it hands back."""
    assert minigrad.empty_cache() is None and minigrad.cuda.empty_cache() is None
    assert backend.KEEPS_FREED_MEMORY == (backend._glibc() is not None
                                          and backend.os.environ.get("MINIGRAD_KEEP_FREED_MEMORY", "1") != "0")
