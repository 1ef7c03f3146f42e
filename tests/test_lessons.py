"""Every lesson runs in quick mode, as a student would run it, and passes its own checks.

Each lesson (lessons/NN_name.py) asserts its headline results with
``run.check(...)``, so exit code 0 means: it ran top to bottom on tiny sizes
and every claim it makes held.  Quick mode is meant to take under 30 s on an
idle 2-core CPU; each lesson prints its own time ("done in ... s"), which is
measured and recorded in lessons/README.md, not asserted here (a loaded CI
machine would make such a test flaky).  The limit below only catches a hang.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigrad import lesson

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.py"))
HANG_LIMIT_S = 240


def _environment(output):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["MINIGRAD_QUICK"] = "1"
    env["MINIGRAD_LESSON_OUT"] = str(output)
    env["MPLBACKEND"] = "Agg"
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")  # lessons are overhead-bound at these sizes
    return env


# Lessons whose results tables say in words what a nan or a 1e-79 would say (issue 40: a baseline that
# does not train says so; a BLEU of 0 prints 0).
READABLE_TABLES = ("08_seq2seq_attention", "10_transformer", "12_pretraining")


def _unreadable_cells(markdown):
    """The cells of a results.md table that are nan or a float so small it stands for 0 (below 1e-30)."""
    cells = [cell.strip() for line in markdown.splitlines() if line.startswith("|") for cell in line.split("|")]
    small = re.compile(r"^-?\d(\.\d+)?e-(\d+)$")
    return [c for c in cells if c.lower() in ("nan", "inf", "-inf") or (small.match(c) and int(small.match(c)[2]) > 30)]


def test_unreadable_cells_are_found():
    table = "| model | loss | BLEU-4 |\n|---|---|---|\n| copy | nan | 6.944e-79 |\n| gru | 0.22 | 1.2e-05 |"
    assert _unreadable_cells(table) == ["nan", "6.944e-79"]


def test_lessons_are_found():
    assert any(path.name == "00_autograd.py" for path in LESSONS)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_runs_in_quick_mode(path, tmp_path):
    started = time.perf_counter()
    try:
        result = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=_environment(tmp_path),
                                capture_output=True, text=True, timeout=HANG_LIMIT_S)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{path.name} hung: more than {HANG_LIMIT_S} s in quick mode:\n{error.stdout or ''}")
    seconds = time.perf_counter() - started
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{path.name} failed (exit {result.returncode}):\n{output[-6000:]}"
    assert "CHECK FAILED" not in output
    assert re.search(r"\d+ checks passed", output), f"{path.name} did not reach run.done():\n{output[-3000:]}"
    assert (tmp_path / "results.md").exists(), f"{path.name} printed no results table"
    if path.stem in READABLE_TABLES:
        unreadable = _unreadable_cells((tmp_path / "results.md").read_text())
        assert not unreadable, f"{path.name}: cells a reader cannot tell from a bug: {unreadable}"
    assert "Next: the exercises at the end of" in output, "the closing line points to the exercises"
    assert list(tmp_path.glob("*.png")), f"{path.name} saved no figure"
    print(f"{path.name}: {seconds:.1f} s")


def test_unknown_options_are_warned_about(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINIGRAD_DEVICE", "cpu")
    run = lesson.setup("99_test", argv=["--quik", "--out", str(tmp_path), "extra"])
    err = capsys.readouterr().err
    assert "warning: unknown option --quik ignored (did you mean --quick?)" in err
    assert "unexpected argument 'extra' ignored" in err
    assert not run.quick


def test_unknown_device_is_a_one_line_error(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "lessons" / "00_autograd.py"), "--device", "gpu",
                             "--out", str(tmp_path)], cwd=ROOT, env=_environment(tmp_path),
                            capture_output=True, text=True, timeout=HANG_LIMIT_S)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == ['minigrad lesson: unknown device "gpu": use "cpu" or "cuda"'], \
        result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_device_can_fall_back(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINIGRAD_DEVICE", "cpu")
    run = lesson.setup("99_test", argv=["--device", "gpu", "--out", str(tmp_path)], fallback_device="cpu")
    assert run.device == "cpu" and "going on with 'cpu'" in capsys.readouterr().out


def test_lessons_point_to_files_that_exist():
    for path in LESSONS:
        text = path.read_text()
        assert "**Read the code.**" in text, f"{path.name} does not say which files to read"
        for named in re.findall(r"minigrad/[\w/]+\.py", text):
            assert (ROOT / named).exists(), f"{path.name} points to {named}, which does not exist"


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_format(path):
    """Jupytext percent cells, an exercises section pointing to the coursework, public API only."""
    text = path.read_text()
    assert "# %% [markdown]" in text and "\n# %%\n" in text, "use Jupytext percent cells"
    assert "## Exercises" in text and "minigrad assignment list" in text
    assert f'lesson.setup("{path.stem}"' in text, "the lesson's output folder must carry its file name"
    private = re.findall(r"minigrad(?:\.\w+)*\._\w+|from minigrad[\w.]* import [^\n]*\b_\w+", text)
    assert not private, f"lessons use the public API only, found {private}"


def test_table_formats_floats_and_markdown():
    rows = [{"model": "LSTM", "loss": 0.123456, "tiny": 1.5e-7, "steps": 10}]
    text = lesson.format_table(rows)
    assert text.splitlines()[0].split() == ["model", "loss", "tiny", "steps"]
    assert "0.1235" in text and "1.500e-07" in text
    markdown = lesson.format_table(rows, markdown=True)
    assert markdown.splitlines()[1] == "|---|---|---|---|"


def test_setup_reads_quick_flag_and_output(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MINIGRAD_QUICK", raising=False)
    monkeypatch.setenv("MINIGRAD_DEVICE", "cpu")
    run = lesson.setup("99_test", argv=["--quick", "--out", str(tmp_path / "out")])
    assert run.quick and run.device == "cpu" and run.output == str(tmp_path / "out")
    assert run.size(1, 100) == 1
    run.table([{"a": 1.0}], "title")
    assert "### title (quick mode" in (tmp_path / "out" / "results.md").read_text()
    run.check(True, "fine")
    with pytest.raises(AssertionError, match="99_test: broken"):
        run.check(False, "broken")
    run.done()
    assert "1 checks passed" in capsys.readouterr().out


def test_progress_prints_every_and_last(capsys):
    progress = lesson.Progress(total=5, every=2)
    for step in range(5):
        progress.log(step, loss=float(step))
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines] == ["2/5", "4/5", "5/5"]
