"""minigrad assignment autograder: the zip, unpacked into a tree laid out like Gradescope's /autograder."""
import json
import os
import subprocess
import sys
import zipfile

from minigrad.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "coursework_fixture", "tinyrnn")


def run_autograder(tmp_path, zip_path, submission_text):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):   # zipfile keeps no modes: Gradescope's unzip does
        os.chmod(root / "source" / name, 0o755)
    (root / "submission" / "tinyrnn.py").write_text(submission_text)
    env = dict(os.environ, MINIGRAD_AUTOGRADER_ROOT=str(root),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])   # python3: this one
    subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, check=True, timeout=300,
                   cwd=root, capture_output=True)
    return json.loads((root / "results" / "results.json").read_text())


def test_the_autograder_zip_grades_the_reference_and_a_buggy_submission(tmp_path):
    zip_path = tmp_path / "autograder.zip"
    assert main(["assignment", "autograder", FIXTURE, str(zip_path), "--seed", "77"]) == 0
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        config = json.loads(archive.read("config.json"))
        setup = archive.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "assignment/checks.json", "assignment/tinyrnn.py",
            "lib/minigrad/__init__.py", "lib/minigrad/coursework/worker.py"} <= set(names)
    assert config["seed"] == 77 and config["assignment"] == "tinyrnn"
    import numpy
    assert f'numpy=={numpy.__version__}' in setup
    reference = open(os.path.join(FIXTURE, "tinyrnn.py")).read()
    data = run_autograder(tmp_path / "a", zip_path, reference)
    assert data["score"] == 5 and [t["status"] for t in data["tests"]] == ["passed", "passed"]
    buggy = reference.replace("dh[:, t] + dh_prev", "dh[:, t]")     # forgets the carry
    data = run_autograder(tmp_path / "b", zip_path, buggy)
    assert data["score"] == 3
    assert [(t["name"], t["score"], t["max_score"]) for t in data["tests"]] == [("step", 2, 2), ("sequence", 1, 3)]
