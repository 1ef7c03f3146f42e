"""coursework/ grouped by job, and kept so: the sandbox knows nothing of grading or authoring, the
worker and its supervisor run alone (no import of the package), and no function rebinds module state."""
import ast
import pathlib

import minigrad.coursework

COURSEWORK = pathlib.Path(minigrad.coursework.__file__).parent
GROUPS = ("spec", "authoring", "grading", "sandbox")


def _modules(folder):
    return sorted(p for p in (COURSEWORK / folder).rglob("*.py"))


def _imported(path):
    """Every module an import statement of ``path`` names, relative ones resolved against the package."""
    package = ".".join(("minigrad", "coursework") + path.relative_to(COURSEWORK).parent.parts)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            yield ".".join(base + ([node.module] if node.module else []))
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_every_module_of_coursework_sits_in_one_of_its_groups():
    loose = [p.name for p in COURSEWORK.glob("*.py") if p.name != "__init__.py"]
    assert loose == [], f"{loose}: put each module in the group of its job ({', '.join(GROUPS)})"


def test_the_sandbox_imports_nothing_of_grading_or_authoring():
    for path in _modules("sandbox"):
        bad = [m for m in _imported(path) if m.startswith(("minigrad.coursework.grading",
                                                           "minigrad.coursework.authoring"))]
        assert bad == [], f"{path.name} imports {bad}: the sandbox only runs code and carries arrays"


def test_the_worker_and_its_supervisor_import_nothing_of_the_package():
    for name in ("worker.py", "supervisor.py", "protocol.py", "isolation.py"):
        bad = [m for m in _imported(COURSEWORK / "sandbox" / name) if m.startswith("minigrad.coursework")]
        assert bad == [], f"{name} imports {bad}: it runs in the worker's process, where the grader is refused"


def test_no_function_rebinds_module_state():
    for group in GROUPS:
        for path in _modules(group):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rebinding = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Global)]
            assert rebinding == [], f"{path.relative_to(COURSEWORK)}:{rebinding}: state a reader must discover"


def test_the_worker_names_a_failure_in_the_protocols_words():
    from minigrad.coursework.sandbox import protocol, worker
    assert (worker.NOT_IMPLEMENTED, worker.RAISED) == (protocol.NOT_IMPLEMENTED, protocol.RAISED)
