"""benchmarks/run.py's table prints each row in its own unit: seconds, or what the row says it holds."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import run  # noqa: E402


def test_times_print_in_seconds_and_a_memory_row_in_mib():
    rows = [{"suite": "rnn", "case": "a step", "minigrad_s": 0.0953, "torch_s": 0.0986, "note": ""},
            {"suite": "rnn", "case": "extra memory", "minigrad_s": 101.0, "torch_s": 217.0, "unit": "MiB",
             "note": "fresh process each"}]
    lines = run.table(rows).splitlines()
    assert "| 95.3 ms | 98.6 ms | 0.97x |" in lines[2]
    assert "| 101 MiB | 217 MiB | 0.47x |" in lines[3]
