"""minigrad assignment autograder: the zip, unpacked into a tree laid out like Gradescope's /autograder."""
import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from minigrad.cli import main
from minigrad.coursework.grading.autograder import NUMPY_RANGE

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")


def unpack(tmp_path, zip_path):
    """The zip unpacked as Gradescope does: ROOT/source (modes kept), ROOT/submission, ROOT/results."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):   # zipfile keeps no modes: Gradescope's unzip does
        os.chmod(root / "source" / name, 0o755)
    return root


def grade_in(root, submission_text, env):
    shutil.rmtree(root / "results", ignore_errors=True)
    (root / "submission" / "tinyrnn.py").write_text(submission_text)
    subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, check=True, timeout=300,
                   cwd=root, capture_output=True)
    return json.loads((root / "results" / "results.json").read_text())


def run_autograder(tmp_path, zip_path, submission_text):
    root = unpack(tmp_path, zip_path)
    env = dict(os.environ, MINIGRAD_AUTOGRADER_ROOT=str(root),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])   # python3: this one
    return grade_in(root, submission_text, env)


def test_the_autograder_zip_grades_the_reference_and_a_buggy_submission(tmp_path):
    zip_path = tmp_path / "autograder.zip"
    assert main(["assignment", "autograder", FIXTURE, str(zip_path), "--seed", "77"]) == 0
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        config = json.loads(archive.read("config.json"))
        setup = archive.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "assignment/checks.json", "assignment/tinyrnn.py",
            "lib/minigrad/__init__.py", "lib/minigrad/coursework/sandbox/worker.py"} <= set(names)
    assert config["seed"] == 77 and config["assignment"] == "tinyrnn"
    assert f'pip install --quiet "{NUMPY_RANGE}"' in setup and "venv" in setup   # the image's Python decides
    assert "install minigrad" not in setup and "minigrad==" not in setup          # PyPI's minigrad is not ours
    reference = open(os.path.join(FIXTURE, "tinyrnn.py")).read()
    data = run_autograder(tmp_path / "a", zip_path, reference)
    assert data["score"] == 5 and [t["status"] for t in data["tests"]] == ["passed", "passed"]
    buggy = reference.replace("dh[:, t] + dh_prev", "dh[:, t]")     # forgets the carry
    data = run_autograder(tmp_path / "b", zip_path, buggy)
    assert data["score"] == 3
    assert [(t["name"], t["score"], t["max_score"]) for t in data["tests"]] == [("step", 2, 2), ("sequence", 1, 3)]


WHEELS = os.environ.get("MINIGRAD_TEST_WHEELS", os.path.expanduser("~/.cache/minigrad-wheels"))


def _python(version):
    """An interpreter of ``version``: pythonX.Y on PATH, else pyenv's (CI's machine has 3.10 to 3.13 there)."""
    pyenv = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    found = shutil.which(f"python{version}")
    return pyenv[-1] if pyenv else (found if found and "/shims/" not in found else None)


def test_setup_sh_builds_a_venv_and_the_zip_grades_under_python_3_10_and_3_12(tmp_path):
    """setup.sh as Gradescope runs it, with other Pythons than the instructor's (both set up at once): NumPy from
    a local wheelhouse (no download in tests; .ci/gradescope-wheels fills it from PyPI), then the reference and
    a buggy submission graded in each."""
    versions = {version: _python(version) for version in ("3.10", "3.12")}
    for version, python in versions.items():
        if python is None or not glob.glob(os.path.join(WHEELS, f"numpy-*-cp{version.replace('.', '')}-*.whl")):
            pytest.skip(f"needs python{version} and a NumPy wheel for it in {WHEELS} (run .ci/gradescope-wheels)")
    zip_path = tmp_path / "autograder.zip"
    assert main(["assignment", "autograder", FIXTURE, str(zip_path), "--seed", "77"]) == 0
    roots, envs, setups = {}, {}, {}
    for version, python in versions.items():
        roots[version] = unpack(tmp_path / version, zip_path)
        envs[version] = dict(os.environ, MINIGRAD_AUTOGRADER_ROOT=str(roots[version]), MINIGRAD_PYTHON=python,
                             PIP_NO_INDEX="1", PIP_FIND_LINKS=WHEELS, PIP_CONFIG_FILE=os.devnull)
        setups[version] = subprocess.Popen(["bash", str(roots[version] / "source" / "setup.sh")], env=envs[version],
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    reference = open(os.path.join(FIXTURE, "tinyrnn.py")).read()
    for version, setup in setups.items():
        assert setup.wait(timeout=300) == 0, setup.stdout.read()[-2000:]
        venv_python = roots[version] / "venv" / "bin" / "python"
        assert subprocess.run([str(venv_python), "-c", "import sys; print(sys.version[:4])"], capture_output=True,
                              text=True).stdout.strip() == version
        assert grade_in(roots[version], reference, envs[version])["score"] == 5
        data = grade_in(roots[version], reference.replace("dh[:, t] + dh_prev", "dh[:, t]"), envs[version])
        assert [(t["name"], t["score"]) for t in data["tests"]] == [("step", 2), ("sequence", 1)], version
