"""First contact without a clone: the lessons bundle installs into a fresh environment and a lesson runs from it.

`minigrad lessons bundle` writes one zip (minigrad's wheel and every lesson as a notebook).
The test builds it, makes a fresh virtual environment outside the repository in which
minigrad is NOT importable, and executes one lesson notebook (the fastest, in quick mode)
through a Jupyter kernel of that environment, from a folder that holds only the notebook
and the wheel, as a learner in Colab or on a lab computer would.  The notebook's first
cell must install minigrad from the wheel (pip, with no index: nothing comes from the
network), the lesson must pass its checks and show its figures inline, and minigrad must
come from the new environment, never from this checkout.

The new environment reaches NumPy, Matplotlib, ipykernel and nbclient through a .pth file
naming this interpreter's site-packages folders: a path listed in a .pth file is not itself
processed for .pth files, so this checkout's editable install (a .pth import hook) stays off.
"""
import json
import os
import shutil
import site
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from minigrad import cli

ROOT = Path(__file__).resolve().parents[1]
LESSON = "06_sentiment"          # the fastest lesson in quick mode (lessons/README.md)
BUNDLE_LIMIT_MB = 3              # 1.1 MB on 2026-11-28: the corpora are most of it

RUNNER = """\
import sys
import nbclient
import nbformat
from jupyter_client import KernelManager

path, folder = sys.argv[1], sys.argv[2]
notebook = nbformat.read(path, as_version=4)
kernel = KernelManager(kernel_name="minigrad-wheel", transport="ipc", ip=path + ".kernel")
client = nbclient.NotebookClient(notebook, km=kernel, timeout=240, resources={"metadata": {"path": folder}})
try:
    client.execute()
finally:
    nbformat.write(notebook, path)
"""


def _environment(jupyter):
    """A learner's environment: no PYTHONPATH to this checkout, no package index, no proxy that answers."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MINIGRAD_LESSON_OUT", "MPLBACKEND", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(MINIGRAD_QUICK="1", JUPYTER_PATH=str(jupyter), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1", http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    return env


def _fresh_venv(folder):
    """A venv with no minigrad; this interpreter's packages (NumPy, ipykernel, pip, ...) reached by a .pth."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    packages = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    ours = [p for p in site.getsitepackages() + [site.getusersitepackages()] if os.path.isdir(p)]
    (packages / "parent-packages.pth").write_text("\n".join(ours) + "\n")
    return python, packages


def _outputs(notebook):
    return [o for cell in notebook["cells"] if cell["cell_type"] == "code" for o in cell.get("outputs", [])]


def _text(outputs):
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) for o in outputs)


def test_a_lesson_runs_from_the_bundle_in_a_fresh_environment_without_a_clone(tmp_path):
    started = time.perf_counter()
    bundle = tmp_path / "minigrad-lessons.zip"
    assert cli.main(["lessons", "bundle", str(bundle), "--lessons", str(ROOT / "lessons")]) == 0
    built = time.perf_counter() - started
    size_mb = bundle.stat().st_size / 1e6
    assert size_mb < BUNDLE_LIMIT_MB, f"the bundle grew to {size_mb:.1f} MB"
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        wheels = [n for n in names if n.startswith("minigrad_seq-") and n.endswith("-py3-none-any.whl")]
        assert len(wheels) == 1 and "README.txt" in names, names
        assert sorted(n for n in names if n.endswith(".ipynb")) == \
            sorted(p.stem + ".ipynb" for p in (ROOT / "lessons").glob("[0-9][0-9]_*.py"))
        learner = tmp_path / "learner"                   # only the notebook and the wheel
        archive.extract(wheels[0], learner)
        archive.extract(LESSON + ".ipynb", learner)
    with zipfile.ZipFile(learner / wheels[0]) as wheel:
        packaged = wheel.namelist()
    assert "minigrad/data/corpora/tinyshakespeare.txt.gz" in packaged and not any("__pycache__" in n for n in packaged)
    assert not any(n.startswith(("lessons/", "tests/")) for n in packaged), "the wheel holds the package only"

    python, packages = _fresh_venv(tmp_path / "venv")
    jupyter = tmp_path / "jupyter"
    spec = jupyter / "kernels" / "minigrad-wheel"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(python), "-m", "ipykernel_launcher", "-f",
                                                           "{connection_file}"], "language": "python",
                                                  "display_name": "fresh venv"}))
    env = _environment(jupyter)
    probe = subprocess.run([str(python), "-c", "import numpy, matplotlib, ipykernel, nbclient, pip, minigrad"],
                           cwd=learner, env=env, capture_output=True, text=True)
    if "No module named 'minigrad'" not in probe.stderr:
        if "ModuleNotFoundError" in probe.stderr:
            pytest.skip(f"this interpreter lacks what the fresh environment borrows: {probe.stderr.strip()[-200:]}")
        pytest.skip("a non-editable minigrad is installed in this interpreter's site-packages: the fresh "
                    "environment would see it (run the test from a venv with the editable install)")
    assert sorted(p.name for p in learner.iterdir()) == sorted([wheels[0], LESSON + ".ipynb"])

    notebook_path = learner / (LESSON + ".ipynb")
    ran = time.perf_counter()
    result = subprocess.run([str(python), "-c", RUNNER, str(notebook_path), str(learner)], cwd=learner, env=env,
                            capture_output=True, text=True, timeout=420)
    seconds = time.perf_counter() - ran
    notebook = json.loads(notebook_path.read_text())
    outputs = _outputs(notebook)
    assert result.returncode == 0, f"the notebook failed:\n{result.stderr[-3000:]}\n{_text(outputs)[-3000:]}"

    first = _text(notebook["cells"][0].get("outputs", []))
    assert f"pip install {wheels[0]}" in first, first
    installed = first.strip().splitlines()[-1]
    assert installed.startswith("minigrad ") and f" from {packages}{os.sep}minigrad" in installed, installed
    assert str(ROOT) not in _text(outputs), "something came from this checkout"
    assert (packages / "minigrad" / "__init__.py").is_file()

    text = _text(outputs)
    assert "checks passed" in text and "CHECK FAILED" not in text
    saved = sorted((learner / "output" / "quick" / LESSON).glob("*.png"))
    shown = [o for o in outputs if "image/png" in o.get("data", {})]
    assert saved and len(shown) == len(saved), f"{len(saved)} figures saved, {len(shown)} shown inline"
    print(f"\nbundle {size_mb:.2f} MB built in {built:.1f} s; {LESSON}.ipynb from the wheel in a fresh venv: "
          f"{seconds:.1f} s; whole test {time.perf_counter() - started:.1f} s")


def test_the_bundle_command_says_it_needs_a_clone(tmp_path, capsys):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    shutil.copy(ROOT / "lessons" / "00_autograd.py", lessons)
    assert cli.main(["lessons", "bundle", str(tmp_path / "b.zip"), "--lessons", str(lessons)]) == 2
    error = capsys.readouterr().err
    assert "is not the minigrad repository" in error and "--lessons" in error
    assert not (tmp_path / "b.zip").exists()
