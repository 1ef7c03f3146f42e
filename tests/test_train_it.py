"""The practice sets' "train it" parts: the student's own code learns a shipped corpus (the rnn set's
rnn_forward / rnn_backward on Tiny Shakespeare, the lstm_gru set's GRU step on names by language)."""
import os
import re
import subprocess
import sys
from pathlib import Path

from minigrad.coursework import load_assignment, make_assignment

ROOT = Path(__file__).resolve().parents[1]


def _run(folder, *args, script="train_shakespeare.py"):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, script, *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=240)


def test_the_solved_rnn_learns_shakespeare(tmp_path):
    make_assignment(load_assignment("rnn").path, tmp_path, solutions=True)
    result = _run(tmp_path, "--steps", "150", "--hidden", "32")
    assert result.returncode == 0, result.stderr[-3000:]
    held, unigram = (float(v) for v in re.search(r"held-out: ([\d.]+) bits per character \(unigram ([\d.]+)",
                                                 result.stdout).groups())
    assert held < unigram - 1.0, result.stdout[-2000:]          # 150 updates: about 3.5 against 4.8
    assert "your RNN writes" in result.stdout and "ROMEO:" in result.stdout


def test_the_student_version_says_what_is_missing(tmp_path):
    make_assignment(load_assignment("rnn").path, tmp_path)
    result = _run(tmp_path, "--steps", "2")
    assert result.returncode != 0 and "NotImplementedError" in result.stderr and "not implemented yet" in result.stderr


def test_the_solved_gru_step_classifies_names(tmp_path):
    make_assignment(load_assignment("lstm_gru").path, tmp_path, solutions=True)
    result = _run(tmp_path, "--epochs", "1", "--names", "Nakamura", script="train_names.py")
    assert result.returncode == 0, result.stderr[-3000:]
    accuracy, majority = (float(v) for v in re.search(r"test accuracy ([\d.]+) \(always 'Russian': ([\d.]+)\)",
                                                      result.stdout).groups())
    assert accuracy > majority + 0.15, result.stdout[-2000:]        # one epoch: 0.75 against 0.52
    assert re.search(r"Nakamura +Japanese", result.stdout)
