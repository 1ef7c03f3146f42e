"""The README's map of the package names files that exist, and every module of minigrad/ is on it."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _map_rows():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("Where things live"):text.index("Benchmarks against PyTorch CPU")]
    return [line for line in section.splitlines() if line.startswith("| ") and "`" in line]


def _paths(rows):
    """Each backticked name ending in .py or / in the file column, resolved as a reader would: from the
    repository root, from minigrad/, or beside the name before it in the same cell."""
    found = []
    for row in rows:
        cell = row.split("|")[2]
        previous = None
        for name in re.findall(r"`([^`]+)`", cell):
            candidates = [ROOT / name, ROOT / "minigrad" / name]
            if previous is not None:
                candidates.append(previous.parent / name)
            path = next((c for c in candidates if c.exists()), None)
            assert path is not None, f"README's map names {name!r}, which does not exist ({row[:60]}...)"
            found.append(path.resolve())
            previous = path
    return found


def test_the_map_names_only_files_that_exist():
    assert len(_paths(_map_rows())) > 30


def test_every_top_level_module_and_subpackage_is_on_the_map():
    named = set(_paths(_map_rows()))
    package = ROOT / "minigrad"
    missing = []
    for path in sorted(package.iterdir()):
        if path.name.startswith(("_", ".")) or path.suffix not in (".py", "") or path.name.endswith(".egg-info"):
            continue
        if path.is_dir() and not (path / "__init__.py").exists():
            continue
        if path.resolve() not in named and not any(p.is_relative_to(path.resolve()) for p in named):
            missing.append(path.name)
    assert not missing, f"README's map of the package leaves out {missing}"
