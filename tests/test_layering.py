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


# ------------------------------------------------------------------ layers: no cycle, nothing upward, no late import

# minigrad's layers, bottom to top: a module imports from its own layer and the layers below, never above.
# A unit is a top-level module or subpackage of minigrad/ (coursework: each of its subpackages).
LAYERS = [
    ["dtypes", "atomic_file", "finite_differences", "coursework.sandbox"],
    ["backend", "grad_mode", "cuda", "sampling"],
    ["checks"],                            # bad input at the public boundary: arrays through backend only
    ["autograd"],                          # Function, the graph, backward: knows tensors as TensorBase only
    ["functions"],                         # arrays only
    ["composed", "in_place", "gradients"],   # gradients: .grad and register_hook (knows tensors as TensorBase)
    ["torch_compat"],                      # entirely below the Tensor: what the Tensor is built with
    ["tensor"],
    ["creation"],
    ["masks", "text", "ops", "optim", "serialization", "gradient_check", "decoding", "utils"],
    ["functional", "metrics"],
    ["nn"],
    ["instruments", "models", "data", "lesson"],
    ["bundle"],                            # the lessons bundle: built with lesson.py's notebook writer, for cli.py
    ["coursework.spec"],                   # the assignment, which authoring and grading share
    ["coursework.authoring"],
    ["coursework.grading"],
    ["coursework", "cli", "minigrad"],     # "minigrad": the package's __init__, which imports the rest
]

# Folders of files handed to students, which import minigrad as any user's code does: not the package's layers.
STUDENT_FILES = {"assignments", "scaffold"}

# The only modules that import one of minigrad's own modules inside a function, and why (none of them dodges a cycle).
LATE_IMPORTS = {
    "minigrad.cli": "the command imports what its subcommand needs, so `minigrad --version` answers at once",
    "minigrad.coursework.sandbox.worker": "the worker loads the library only when it is set up to run a "
                                           "submission (its import guard first; see sandbox/worker.py)",
}


def import_graph(root, package):
    """The imports of package ``package`` (its folder: ``root``) between its own modules.

    Returns (edges, late): edges {module: {imported module: line}} for the imports at module level (class
    bodies included), late [(module, line, imported)] for those inside a function.  ``from . import x``
    names module x when it is one, else the package; the root package's ``__version__``, set before it
    imports anything, is data and not counted."""
    root = pathlib.Path(root)
    modules = {}
    for path in root.rglob("*.py"):
        if STUDENT_FILES.intersection(path.relative_to(root).parts):
            continue
        parts = (package,) + path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges, late = {}, []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        inside = {id(node) for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for node in ast.walk(function)}
        edges[module] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(here.split(".")[:len(here.split(".")) - node.level + 1]) if node.level else ""
                source = ".".join(part for part in (base, node.module) if part)
                if [alias.name for alias in node.names] == ["__version__"] and source == package:
                    continue
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            else:
                continue
            for target in targets:
                while target not in modules and "." in target:
                    target = target.rpartition(".")[0]
                if target not in modules or target == module:
                    continue                                    # another library, or itself
                if id(node) in inside:
                    late.append((module, node.lineno, target))
                else:
                    edges[module].setdefault(target, node.lineno)
    return edges, late


def import_cycles(edges):
    """Every import cycle, each as [a, b, ..., a]: a depth-first walk with an explicit stack (no recursion)."""
    state, found = {}, []                  # state: 1 on the current path, 2 done
    for start in sorted(edges):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(edges[start]))]
        state[start] = 1
        while stack:
            target = next(stack[-1], None)
            if target is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(target) == 1:
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                state[target] = 1
                path.append(target)
                stack.append(iter(sorted(edges.get(target, ()))))
    return found


def layer_of(module, package, layers):
    """The index in ``layers`` of the unit ``module`` belongs to (KeyError naming it when in none)."""
    parts = module.split(".")[1:]
    candidates = [".".join(parts[:2]), parts[0] if parts else package] if len(parts) > 1 else [parts[0] if parts else package]
    for candidate in candidates:
        for index, layer in enumerate(layers):
            if candidate in layer:
                return index
    raise KeyError(f"{module} is in no layer: add its unit to LAYERS in tests/test_layering.py")


def upward_imports(edges, package, layers):
    """[(module, line, imported)] for each import of a module in a higher layer."""
    return [(module, line, target) for module, targets in sorted(edges.items()) for target, line in targets.items()
            if layer_of(target, package, layers) > layer_of(module, package, layers)]


def test_minigrad_has_no_import_cycle():
    edges, _ = import_graph(PACKAGE, "minigrad")
    assert import_cycles(edges) == []


def test_no_module_imports_one_in_a_higher_layer():
    edges, _ = import_graph(PACKAGE, "minigrad")
    for module in edges:
        layer_of(module, "minigrad", LAYERS)                # every module sits in a layer
    assert upward_imports(edges, "minigrad", LAYERS) == []


def test_no_import_inside_a_function_except_where_the_reason_is_written_down():
    _, late = import_graph(PACKAGE, "minigrad")
    assert [entry for entry in late if entry[0] not in LATE_IMPORTS] == []


def test_torch_compat_sits_entirely_below_the_tensor():
    edges, _ = import_graph(PACKAGE, "minigrad")
    above = {name for layer in LAYERS[LAYERS.index(["tensor"]):] for name in layer}
    for module, targets in edges.items():
        if module.startswith("minigrad.torch_compat"):
            assert not [t for t in targets if t.split(".")[1] in above], module


def _plant(tmp_path, files):
    """A package ``pkg`` with these files (relative path -> source)."""
    for name, source in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return tmp_path / "pkg"


PLANTED_LAYERS = [["low"], ["high"], ["pkg"]]


def test_the_checks_find_a_planted_cycle(tmp_path):
    root = _plant(tmp_path, {"__init__.py": "", "low.py": "from . import high\n", "high.py": "from .low import x\n"})
    edges, _ = import_graph(root, "pkg")
    assert import_cycles(edges) == [["pkg.high", "pkg.low", "pkg.high"]]


def test_the_checks_find_a_planted_upward_import(tmp_path):
    root = _plant(tmp_path, {"__init__.py": "", "low.py": "import pkg.high as h\n", "high.py": "from . import low\n"})
    edges, _ = import_graph(root, "pkg")
    assert import_cycles(edges) == [["pkg.high", "pkg.low", "pkg.high"]]
    root = _plant(tmp_path, {"high.py": "x = 1\n", "low.py": "from .high import x\n"})
    edges, _ = import_graph(root, "pkg")
    assert upward_imports(edges, "pkg", PLANTED_LAYERS) == [("pkg.low", 1, "pkg.high")]


def test_the_checks_find_a_planted_function_level_import(tmp_path):
    root = _plant(tmp_path, {"__init__.py": "", "low.py": "x = 1\n",
                             "high.py": "import os\n\n\ndef f():\n    from .low import x\n    return x\n"})
    edges, late = import_graph(root, "pkg")
    assert late == [("pkg.high", 5, "pkg.low")] and edges["pkg.high"] == {}


def test_no_file_of_minigrad_is_over_500_lines_but_tensor_py():
    """The README's promise: every file short enough to read in one sitting (tensor.py: an index of
    one-line methods in sections)."""
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 500 and path.name != "tensor.py"}
    assert long == {}, f"files over 500 lines: {long}; split them by concern"


def test_the_engine_fits_one_sitting():
    assert len((PACKAGE / "autograd.py").read_text(encoding="utf-8").splitlines()) <= 300
