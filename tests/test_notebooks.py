"""Every lesson runs as a Jupyter notebook, through a real kernel, and shows its figures inline.

The notebooks are written by ``minigrad lessons notebooks`` (jupytext) and
executed by nbclient on the ``python3`` kernel that ipykernel installs, in
quick mode, two kernels at a time.  A lesson fails here when any cell raises,
when it does not reach ``run.done()``, or when a figure it saved is not shown
in the notebook as an image/png output.  The time of each notebook is printed
(``pytest -s``); the limit below only catches a hang.
"""
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbclient   # the test extra installs nbclient, ipykernel (the python3 kernel) and jupytext
import nbformat
import pytest
from jupyter_client import AsyncKernelManager

import minigrad
from minigrad import cli, lesson

ROOT = Path(__file__).resolve().parents[1]
LESSONS = [Path(p) for p in lesson.find_lessons(str(ROOT / "lessons"))]
KERNELS_AT_ONCE = 2
CELL_LIMIT_S = 240


def _kernel_environment():
    env = dict(os.environ)
    env["MINIGRAD_QUICK"] = "1"
    # this checkout's minigrad, whatever else is installed (as in test_lessons.py)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("MINIGRAD_LESSON_OUT", None)   # the default output folder next to the notebook is under test
    env.pop("MPLBACKEND", None)            # the kernel's own inline backend
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    return env


async def _execute(path, limit):
    async with limit:
        notebook = nbformat.read(path, as_version=4)
        # local sockets (ipc) instead of TCP: nothing listens on the network, and the kernel says nothing
        kernel = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(path.with_suffix(".kernel")))
        client = nbclient.NotebookClient(notebook, km=kernel, timeout=CELL_LIMIT_S,
                                         resources={"metadata": {"path": str(path.parent)}})
        started = time.perf_counter()
        try:
            await client.async_execute(env=_kernel_environment())
            error = None
        except Exception as failure:  # CellExecutionError, a timeout, a dead kernel
            error = failure
        return notebook, error, time.perf_counter() - started


async def _execute_all(paths):
    limit = asyncio.Semaphore(KERNELS_AT_ONCE)
    return await asyncio.gather(*(_execute(path, limit) for path in paths))


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """{lesson stem: (executed notebook, error or None, seconds, folder)} for every lesson."""
    folder = tmp_path_factory.mktemp("notebooks")
    assert cli.main(["lessons", "notebooks", str(folder), "--lessons", str(ROOT / "lessons")]) == 0
    paths = sorted(folder.glob("*.ipynb"))
    started = time.perf_counter()
    results = asyncio.run(_execute_all(paths))
    print(f"\n{len(paths)} lesson notebooks executed in {time.perf_counter() - started:.1f} s "
          f"({KERNELS_AT_ONCE} kernels at a time)")
    return {path.stem: (notebook, error, seconds, folder) for path, (notebook, error, seconds)
            in zip(paths, results)}


def _outputs(notebook):
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])]


def _text(notebook):
    parts = []
    for output in _outputs(notebook):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_notebooks_are_written_with_an_install_cell(tmp_path):
    written = lesson.write_notebooks(str(ROOT / "lessons"), str(tmp_path))
    assert [Path(p).stem for p in written] == [p.stem for p in LESSONS]
    notebook = json.loads(Path(written[0]).read_text())
    first = "".join(notebook["cells"][0]["source"])
    assert notebook["cells"][0]["cell_type"] == "code"
    assert 'find_spec("minigrad")' in first
    assert '"-e", root' in first, "installs from the repository's root, one folder up from lessons/"
    assert "minigrad_seq-*.whl" in first and "google.colab" in first, "else from the wheel beside it (Colab: uploaded)"
    assert "pip install minigrad-seq" not in first, "minigrad-seq is not on the package index"
    assert str(ROOT) not in first and str(tmp_path) not in first, "no path of the machine that wrote it"
    assert "minigrad[" not in first and "install minigrad " not in first, "never the name another project owns"
    assert "jupytext" not in notebook["metadata"], "a plain notebook, not paired with the lesson file"
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"


FAKE_PIP = """\
import os, sys
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(here, "pip-calls.txt"), "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\\n")
if sys.argv[-1].endswith(".whl"):               # "install" the wheel: a minigrad on the path
    os.makedirs(os.path.join(here, "minigrad"), exist_ok=True)
    with open(os.path.join(here, "minigrad", "__init__.py"), "w") as package:
        package.write("__version__ = 'from the wheel'\\n")
"""

FAKE_COLAB_FILES = """\
def upload():                                    # the learner picks the wheel: it lands in the working folder
    open("minigrad_seq-0.1.0-py3-none-any.whl", "w").close()
    return {"minigrad_seq-0.1.0-py3-none-any.whl": b""}
"""


@pytest.mark.parametrize("where", ["clone", "wheel", "colab", "nothing"])
def test_the_install_cell_installs_from_what_is_beside_the_notebook(tmp_path, where):
    """Without minigrad the first cell installs it: from the clone, the wheel beside it, or the wheel uploaded in Colab.

    pip is a stand-in here (it records its arguments; for a wheel it puts a minigrad on the path):
    tests/test_first_contact.py installs the real wheel with the real pip.
    """
    shims = tmp_path / "shims"
    (shims / "pip").mkdir(parents=True)
    (shims / "pip" / "__init__.py").write_text("")
    (shims / "pip" / "__main__.py").write_text(FAKE_PIP)
    (shims / "google" / "colab").mkdir(parents=True)
    (shims / "google" / "__init__.py").write_text("")
    (shims / "google" / "colab" / "__init__.py").write_text("")
    (shims / "google" / "colab" / "files.py").write_text(FAKE_COLAB_FILES)
    folder = tmp_path / "lessons"
    folder.mkdir()
    if where == "clone":                        # lessons/ under a root that holds pyproject.toml and minigrad/
        (tmp_path / "pyproject.toml").write_text("")
        (tmp_path / "minigrad").mkdir()
        (tmp_path / "minigrad" / "__init__.py").write_text("__version__ = 'from the clone'\n")
    if where == "wheel":
        (folder / "minigrad_seq-0.1.0-py3-none-any.whl").write_text("")
    code = ("import google.colab\n" if where == "colab" else "") + lesson.INSTALL_CELL
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(shims)}
    result = subprocess.run([sys.executable, "-S", "-c", code], cwd=folder, env=env, capture_output=True, text=True)
    calls = (shims / "pip-calls.txt").read_text().splitlines() if (shims / "pip-calls.txt").exists() else []
    if where == "nothing":
        assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr and not calls
        assert "no minigrad_seq-*.whl is in" in result.stderr and "pip wheel . --no-deps" in result.stderr
        return
    assert result.returncode == 0, result.stderr
    if where == "clone":
        assert calls == [f"install --quiet -e {tmp_path}"]
        assert result.stdout.splitlines()[-1] == f"minigrad from the clone from {tmp_path / 'minigrad'}"
    else:
        assert calls == ["install --quiet minigrad_seq-0.1.0-py3-none-any.whl"]
        assert result.stdout.splitlines()[-1].startswith("minigrad from the wheel from ")
    if where == "colab":
        assert "Upload minigrad's wheel" in result.stdout


def test_the_install_cell_leaves_an_installed_minigrad_alone(tmp_path):
    installed = subprocess.run([sys.executable, "-c", lesson.INSTALL_CELL], cwd=tmp_path, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.startswith(f"minigrad {minigrad.__version__} from "), installed.stdout


def test_notebooks_command_says_where_the_lessons_are(tmp_path, capsys):
    assert cli.main(["lessons", "notebooks", str(tmp_path), "--lessons", str(tmp_path / "nowhere")]) == 2
    assert "--lessons" in capsys.readouterr().err


@pytest.mark.parametrize("stem", [p.stem for p in LESSONS])
def test_lesson_runs_as_a_notebook(executed, stem):
    notebook, error, seconds, folder = executed[stem]
    if error is not None:
        pytest.fail(f"{stem}.ipynb failed in the kernel after {seconds:.1f} s:\n{str(error)[-4000:]}")
    text = _text(notebook)
    assert "checks passed" in text and "CHECK FAILED" not in text
    output = folder / "output" / "quick" / stem           # next to the notebook, found from the kernel; quick mode's own
    assert f"outputs in {output}" in text
    saved = sorted(output.glob("*.png"))
    shown = [o for o in _outputs(notebook) if "image/png" in o.get("data", {})]
    assert saved, f"{stem} saved no figure"
    assert len(shown) == len(saved), f"{stem} saved {len(saved)} figures but showed {len(shown)} inline"
    tables = [o for o in _outputs(notebook) if "text/markdown" in o.get("data", {})]
    assert tables, f"{stem} rendered no table"
    assert (output / "results.md").exists()
    print(f"{stem}.ipynb: {seconds:.1f} s")


def test_progress_updates_one_line_in_place(executed):
    """Lesson 0's training loop logs 10 times; the notebook keeps one line, updated to the last step."""
    notebook, error, _, _ = executed["00_autograd"]
    assert error is None
    progress = [o["data"]["text/plain"] for o in _outputs(notebook)
                if o.get("output_type") == "display_data" and o.get("data", {}).get("text/plain", "").startswith("step")]
    assert len(progress) == 1 and progress[0].startswith("step 300/300"), progress
    streamed = "".join(o.get("text", "") for o in _outputs(notebook))
    assert "step  30/300" not in streamed
