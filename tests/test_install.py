"""How minigrad installs: its own distribution name, one version, the floors CI tests, tests without PyTorch."""
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad
from minigrad import cli

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = (ROOT / "pyproject.toml").read_text()
DISTRIBUTION = "minigrad-seq"    # "minigrad" on the package index is another project


def test_the_distribution_has_a_name_of_its_own_and_the_version_one_source():
    assert re.search(rf'^name = "{DISTRIBUTION}"', PYPROJECT, re.M)
    assert re.search(r'^dynamic = \["version"\]', PYPROJECT, re.M)
    project = PYPROJECT.split("[project]\n")[1].split("\n[")[0]
    assert not re.search(r"^version =", project, re.M), "the version is written once, in minigrad/__init__.py"
    assert 'version = { attr = "minigrad.__version__" }' in PYPROJECT
    assert re.fullmatch(r"\d+\.\d+\.\d+", minigrad.__version__)


def test_version_command_prints_the_one_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"minigrad {minigrad.__version__} (distribution {DISTRIBUTION}) from ")
    assert "\n" not in line
    command = subprocess.run([sys.executable, "-m", "minigrad.cli", "--version"], capture_output=True, text=True)
    assert command.returncode == 0 and command.stdout.strip() == line


def test_the_installed_metadata_has_the_same_version():
    try:
        installed = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{DISTRIBUTION} is not installed here (a checkout on PYTHONPATH)")
    assert installed == minigrad.__version__, f"reinstall: pip install -e . (metadata {installed})"


def _install_lines():
    """Every line of the repository's text that says `pip install` (this file aside)."""
    files = [ROOT / "README.md", ROOT / "pyproject.toml", *(ROOT / ".ci").iterdir()]
    for folder in ("minigrad", "lessons", "tests", "benchmarks"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".sh", ".txt", ".json")]
    for path in files:
        if path.is_file() and "output" not in path.parts and path != Path(__file__):
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for command in re.split(r"&&|;|\|\||\s#\s", line):  # the pip command, not what follows it
                    if "pip install" in command:
                        yield f"{path.relative_to(ROOT)}:{number}", command


UNTIL_PUBLISHED = "Once `minigrad-seq` is published on the package index, `pip install minigrad-seq` will replace"


def test_nothing_installs_minigrad_seq_from_the_package_index_until_it_is_published_there():
    """minigrad-seq is not on PyPI: every install names a clone (-e) or the wheel; one README line says what
    to do once it is published, and it is the only line that says `pip install minigrad-seq`."""
    by_name = re.compile(r"""pip install\s+(-[\w-]+\s+)*["']?minigrad-seq(?![\w-])""")
    named = [f"{where}: {line.strip()}" for where, line in _install_lines()
             if by_name.search(line) and not where.startswith("tests")]     # tests assert its absence
    readme = (ROOT / "README.md").read_text()
    assert readme.count(UNTIL_PUBLISHED) == 1
    line = readme[:readme.index(UNTIL_PUBLISHED)].count("\n") + 1
    assert named == [f"README.md:{line}: {readme.splitlines()[line - 1].strip()}"], named
    from minigrad import lesson
    assert "pip install minigrad-seq" not in lesson.INSTALL_CELL
    assert "minigrad-seq[" not in (ROOT / "minigrad" / "backend.py").read_text()


def test_no_install_instruction_names_a_distribution_we_do_not_own():
    lines = list(_install_lines())
    assert any("pip install -e ." in line for _, line in lines)
    stranger = re.compile(r"""pip install[^\n]*?(?<![\w./-])["']?minigrad(?![\w-])""")
    wrong = [f"{where}: {line.strip()}" for where, line in lines if stranger.search(line)]
    assert not wrong, f"installs the other project called minigrad, not {DISTRIBUTION}:\n" + "\n".join(wrong)


def _floors(names):
    """{package: floor} for the requirements ``names >= x`` in pyproject.toml."""
    return dict(re.findall(r'"([A-Za-z][\w-]*)>=([\d.]+)"', names))


def _release(version):
    return re.sub(r"(\.0)+$", "", version)     # 1.24.0 is 1.24


def test_ci_matrix_pins_every_floor_pyproject_claims():
    matrix = (ROOT / ".ci" / "matrix").read_text()
    floors_row = re.search(r'"floors\|([\d.]+)\|([^"]*)"', matrix)
    assert floors_row, ".ci/matrix has a floors row"
    python, pins = floors_row.group(1), dict(re.findall(r"([\w-]+)==([\d.]+)", floors_row.group(2)))
    claimed_python = re.search(r'requires-python = ">=([\d.]+)"', PYPROJECT).group(1)
    assert python.startswith(claimed_python + ".")
    runtime = re.search(r"^dependencies = \[(.*?)\]", PYPROJECT, re.M | re.S).group(1)
    extras = re.search(r"^(test|notebook) = \[(.*?)\]", PYPROJECT, re.M).group(2)
    claimed = {**_floors(runtime), **_floors(extras)}
    assert {"numpy", "matplotlib", "ipykernel"} <= set(claimed)
    for package, floor in claimed.items():
        pinned = pins.get(package)
        assert pinned is not None, f"the floors row does not pin {package} (pyproject claims >= {floor})"
        assert _release(pinned) == _release(floor), f"{package}: pyproject claims >= {floor}, the floors row tests {pinned}"
    assert "bash .ci/matrix" in (ROOT / ".ci" / "run").read_text(), "CI runs the matrix"


def test_only_files_of_comparisons_skip_whole_without_torch():
    """A module-level importorskip("torch") would skip minigrad's own tests too (tests/optional_torch.py)."""
    whole = [p.name for p in (ROOT / "tests").glob("test_*.py")
             if re.search(r'^torch = pytest\.importorskip\("torch"\)', p.read_text(), re.M)]
    comparisons = re.compile(r"test_(\w+_parity|program_\w+|torch_names|teaching_names|ties)\.py")
    assert whole and all(comparisons.fullmatch(name) for name in whole), \
        [name for name in whole if not comparisons.fullmatch(name)]


def test_a_missing_python_is_a_skip_line_in_the_matrix_never_a_silent_pass(tmp_path):
    """.ci/matrix with no pyenv Pythons: each row says SKIP and NOT tested, and the summary repeats it."""
    env = {"PATH": "/usr/bin:/bin", "PYENV_ROOT": str(tmp_path), "TMPDIR": str(tmp_path)}
    result = subprocess.run(["bash", str(ROOT / ".ci" / "matrix")], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for row, python in (("floors", "3.10"), ("colab", "3.12"), ("newest", "3.13")):
        assert any(line.startswith(f"SKIP: matrix row '{row}' needs Python {python}.") and line.endswith("NOT tested")
                   for line in lines), result.stdout
        assert any(line.startswith(f"SKIP    {row}: Python {python}.") and "did not run" in line
                   for line in lines[lines.index(next(l for l in lines if l.startswith("=== matrix summary"))):])
    assert "passed" not in result.stdout and "ok  " not in result.stdout
