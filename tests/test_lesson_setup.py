"""The lesson runner's setup: BLAS threads, quick mode's own output folder, figures when inline display fails."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python(code, cwd, **environment):
    """Run ``code`` in a fresh Python (OpenBLAS's default set to 2 threads), return its stdout."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MINIGRAD_BLAS_THREADS",
                                                              "MINIGRAD_QUICK", "MINIGRAD_LESSON_OUT")}
    env.update(OPENBLAS_NUM_THREADS="2", MINIGRAD_DEVICE="cpu", **environment)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


BLAS_THREADS = """
    import json, sys
    from threadpoolctl import threadpool_info
    from minigrad import lesson

    def blas():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    seen = {"before": blas()}
    for argv in json.loads(sys.argv[1] if len(sys.argv) > 1 else "[]") or [[]]:
        lesson.setup("99_test", argv=argv + ["--out", "out"])
        seen[" ".join(argv) or "no option"] = blas()
    print(json.dumps(seen))
"""


def _blas(tmp_path, *argvs, **environment):
    code = BLAS_THREADS.replace('sys.argv[1] if len(sys.argv) > 1 else "[]"', repr(json.dumps(list(argvs))))
    lines = _python(code, tmp_path, **environment).splitlines()
    return lines, json.loads(lines[-1])


def test_lessons_run_with_one_blas_thread_and_say_so(tmp_path):
    lines, seen = _blas(tmp_path, [])
    if not seen["before"]:
        pytest.skip("NumPy's BLAS here is not one threadpoolctl can set (not OpenBLAS, MKL or BLIS)")
    assert seen["before"][0] == 2 and seen["no option"][0] == 1
    assert lines[0].startswith("minigrad lesson 99_test: full mode on cpu")
    assert lines[1] == ("BLAS threads: 1 (OpenBLAS's default here is 2; "
                        "--blas-threads default or MINIGRAD_BLAS_THREADS=default restores it)")


def test_the_flag_and_the_environment_restore_the_default(tmp_path):
    _, seen = _blas(tmp_path, [], ["--blas-threads", "default"], ["--blas-threads", "3"])
    if not seen["before"]:
        pytest.skip("NumPy's BLAS here is not one threadpoolctl can set")
    assert seen["no option"][0] == 1
    assert seen["--blas-threads default"][0] == 2, "a second setup() in the same kernel starts from the default"
    assert seen["--blas-threads 3"][0] == 3
    lines, seen = _blas(tmp_path, [], MINIGRAD_BLAS_THREADS="default")
    assert seen["no option"][0] == 2
    assert lines[1] == "BLAS threads: 2 (OpenBLAS's default here; --blas-threads 1 is faster for the lessons)"


def test_a_bad_thread_count_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "lessons" / "00_autograd.py"), "--blas-threads", "two",
                             "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip() == ("minigrad lesson: --blas-threads 'two': use a number of threads (1, 2, ...) "
                                     "or default")


def test_quick_mode_writes_to_its_own_folder(tmp_path):
    """A quick run (CI, a notebook test) must not overwrite the full run's figures in lessons/output/NN_name."""
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    script = lessons / "99_test.py"
    script.write_text("from minigrad import lesson\nprint(lesson.setup('99_test').output)\n")
    full = _python(f"import runpy, sys; sys.argv = [{str(script)!r}]; runpy.run_path(sys.argv[0])", tmp_path)
    quick = _python(f"import runpy, sys; sys.argv = [{str(script)!r}, '--quick']; runpy.run_path(sys.argv[0])",
                    tmp_path)
    assert full.splitlines()[-1] == str(lessons / "output" / "99_test")
    assert quick.splitlines()[-1] == str(lessons / "output" / "quick" / "99_test")


def test_figures_are_saved_when_the_notebook_backend_fails(tmp_path):
    """matplotlib-inline 0.2 on matplotlib 3.6 raised AttributeError, not ImportError, and no figure was saved."""
    (tmp_path / "broken_inline.py").write_text(
        "raise AttributeError(\"'RcParams' object has no attribute '_get'\")\n")
    out = _python("""
        from minigrad import lesson
        run = lesson.Run("99_test", quick=True, device="cpu", output=".", seed=0, notebook=True)
        plt = run.pyplot()
        fig, ax = plt.subplots()
        ax.plot([0, 1])
        fig.savefig("figure.png")
        print("backend", plt.get_backend())
    """, tmp_path, MPLBACKEND="module://broken_inline", PYTHONPATH=str(tmp_path))
    assert ("(the notebook's figure backend failed: AttributeError: 'RcParams' object has no attribute '_get'; "
            "figures are drawn with Agg, saved as PNG and shown from the files)") in out
    assert out.strip().splitlines()[-1].lower() == "backend agg"
    assert (tmp_path / "figure.png").stat().st_size > 0
