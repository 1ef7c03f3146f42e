"""What a learner can carry without a clone: minigrad's wheel, and the lessons bundle (``minigrad lessons bundle``).

minigrad-seq is not published on the Python package index, so a machine without a clone of
the repository (Colab, a lab computer) installs minigrad from its wheel, a file built here:

    python -m pip wheel . --no-deps -w dist        # from the repository's root: dist/minigrad_seq-X-py3-none-any.whl
    minigrad lessons bundle minigrad-lessons.zip   # the wheel and every lesson as a notebook, in one zip

Each notebook's first cell installs minigrad from a wheel beside it when minigrad is missing
(in Colab it asks for the wheel with an upload button), and from the clone when the notebook
sits in lessons/ of one (``minigrad.lesson.INSTALL_CELL``).  The wheel holds the package
only (the lessons ship in the repository); it needs NumPy, Matplotlib and threadpoolctl,
which Colab has and pip installs elsewhere.
"""
import glob
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from .lesson import find_lessons, write_notebooks

WHEEL_PATTERN = "minigrad_seq-*.whl"   # the distribution minigrad-seq, as a wheel names it

BUNDLE_README = """\
minigrad's lessons without a clone of the repository
====================================================

{wheel}   minigrad itself (the package minigrad; distribution minigrad-seq, not on the package index)
NN_name.ipynb      the lessons as notebooks; the first cell of each installs the wheel when minigrad is missing

Jupyter: unzip into a folder, open a notebook there, run its cells from the first.
Colab: upload a notebook (File > Upload notebook) and run its first cell: it asks for the wheel
(an upload button); pick {wheel}.
Anywhere else: python -m pip install {wheel}  (it needs NumPy, Matplotlib and threadpoolctl).
Outputs (figures, results.md) go to output/ beside the notebook.
"""


def _repository(lessons_folder):
    """The repository's root, the folder above ``lessons_folder``; a clear error when it is not one."""
    root = os.path.dirname(os.path.abspath(lessons_folder))
    if not (os.path.isfile(os.path.join(root, "pyproject.toml")) and os.path.isdir(os.path.join(root, "minigrad"))):
        raise FileNotFoundError(f"{root!r} is not the minigrad repository (no pyproject.toml and minigrad/ there): "
                                "the wheel is built from a clone; run this from its root or pass --lessons PATH/lessons")
    return root


def _isolation_flags():
    """Build with the installed setuptools when it is new enough (no download); else let pip fetch one."""
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return []
    return ["--no-build-isolation"] if major >= 64 else []


def build_wheel(root, out):
    """Build minigrad's wheel from the repository at ``root`` into the folder ``out``; returns its path.

    The build runs on a copy of pyproject.toml, README.md and minigrad/ (without __pycache__),
    so it leaves nothing in the clone and no stale file of an earlier build/ can slip in.
    Same as ``python -m pip wheel . --no-deps -w out`` from the root.
    """
    with tempfile.TemporaryDirectory() as source:
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(os.path.join(root, name), source)
        shutil.copytree(os.path.join(root, "minigrad"), os.path.join(source, "minigrad"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        os.makedirs(out, exist_ok=True)
        command = [sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--quiet", "-w", out]
        built = subprocess.run(command + _isolation_flags(), capture_output=True, text=True)
        if built.returncode != 0:
            raise OSError(f"building the wheel failed ({' '.join(command)}):\n{built.stderr[-2000:]}")
    wheels = sorted(glob.glob(os.path.join(out, WHEEL_PATTERN)), key=os.path.getmtime)
    return wheels[-1]


def bundle(out, lessons_folder="lessons"):
    """Write the zip ``out``: minigrad's wheel, every lesson as a notebook, a README.txt; returns its path."""
    root = _repository(lessons_folder)
    find_lessons(lessons_folder)                       # the clear error when there are none
    with tempfile.TemporaryDirectory() as work:
        wheel = build_wheel(root, os.path.join(work, "wheel"))
        notebooks = write_notebooks(lessons_folder, os.path.join(work, "notebooks"))
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(wheel, os.path.basename(wheel))
            for notebook in notebooks:
                archive.write(notebook, os.path.basename(notebook))
            archive.writestr("README.txt", BUNDLE_README.format(wheel=os.path.basename(wheel)))
    return out
