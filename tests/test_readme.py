"""The README's tour runs as written, and its test command is the one CI runs."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_tour_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the tour writes checkpoint.npz
    blocks = python_blocks((ROOT / "README.md").read_text())
    assert blocks, "README.md has no python code block"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "checkpoint.npz").exists()


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"python -m pip install -e \"\.\[test\]\" && python -m pytest", readme)
    assert command, "README.md must show the test command"
    assert command.group(0) in (ROOT / ".ci" / "run").read_text()
