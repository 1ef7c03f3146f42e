"""Layering a reader can trust: the engine does not import the Tensor, functions/ works on
arrays only, and functions/__init__.py is the index of every primitive.

``import minigrad`` must work whatever order its modules are first imported in: each
subprocess below installs a bare ``minigrad`` package (its __init__ skipped) and imports
the modules in a given order, then runs a forward and a backward.
"""
import ast
import inspect
import os
import pathlib
import subprocess
import sys

import pytest

import minigrad
from minigrad import functions
from minigrad.autograd import Function

PACKAGE = pathlib.Path(minigrad.__file__).parent

BARE_PACKAGE = """
import importlib.util, sys, types
spec = importlib.util.find_spec("minigrad")
package = types.ModuleType("minigrad")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["minigrad"] = package
"""

USE = """
from minigrad.tensor import Tensor
from minigrad import functions as fn
x = Tensor([1.0, 2.0], requires_grad=True)
fn.Mul.apply(x, x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0], x.grad
print("ok")
"""


def _child_environment():
    """The environment for a child Python: the "strict" device lives only in this test process."""
    environment = dict(os.environ)
    if environment.get("MINIGRAD_DEVICE") == "strict":
        environment["MINIGRAD_DEVICE"] = "cpu"
    return environment


@pytest.mark.parametrize("order", [
    ["minigrad.tensor", "minigrad.autograd"],
    ["minigrad.autograd", "minigrad.tensor"],
    ["minigrad.functions", "minigrad.tensor"],
    ["minigrad.creation"],
])
def test_modules_import_in_any_order(order):
    code = BARE_PACKAGE + "".join(f"import {name}\n" for name in order) + USE
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=_child_environment())
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_import_minigrad_after_its_submodules():
    code = "import minigrad.tensor, minigrad.autograd, minigrad.functional\nimport minigrad\n" \
           "print(minigrad.randn(2, requires_grad=True).sum().item() is not None)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=_child_environment())
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr


def _imports(path):
    """(module, names) of every import statement in a file."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or ""), [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []


def test_the_engine_does_not_import_the_tensor():
    modules = [module for module, _ in _imports(PACKAGE / "autograd.py")]
    assert not any(module.endswith("tensor") for module in modules), modules


def test_functions_work_on_arrays_only():
    for path in sorted((PACKAGE / "functions").glob("*.py")):
        for module, names in _imports(path):
            assert not module.endswith(("tensor", "creation", "functional")), (path.name, module)
            assert "Tensor" not in names, path.name


def test_functions_init_exports_every_function():
    defined = set()
    for path in sorted((PACKAGE / "functions").glob("*.py")):
        module = __import__(f"minigrad.functions.{path.stem}", fromlist=["_"])
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Function) and value.__module__ == module.__name__:
                defined.add(name)
    missing = sorted(name for name in defined if getattr(functions, name, None) is None)
    assert not missing, f"functions/__init__.py does not export {missing}"
