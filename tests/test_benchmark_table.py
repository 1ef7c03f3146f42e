"""benchmarks/run.py's table prints each row in its own unit, with the minimum and the median, and
common.py times training steps as loops of consecutive steps (issue 41)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import common  # noqa: E402
import run  # noqa: E402


def test_times_print_in_seconds_and_a_memory_row_in_mib():
    rows = [{"suite": "rnn", "case": "a step", "minigrad_s": 0.0953, "torch_s": 0.0986, "note": ""},
            {"suite": "rnn", "case": "extra memory", "minigrad_s": 101.0, "torch_s": 217.0, "unit": "MiB",
             "note": "fresh process each"}]
    lines = run.table(rows).splitlines()
    assert "| 95.3 ms | - | 98.6 ms | - | 0.97x |" in lines[2]
    assert "| 101 MiB | - | 217 MiB | - | 0.47x |" in lines[3]


def test_a_timed_row_shows_minimum_and_median_and_its_ratio_is_of_the_medians():
    row = dict(common.timed_row("a step", [0.010, 0.030, 0.020], [0.010, 0.011, 0.012]), suite="workloads")
    assert (row["minigrad_s"], row["minigrad_median_s"], row["torch_median_s"]) == (0.010, 0.020, 0.011)
    line = run.table([row]).splitlines()[2]
    assert "| 10 ms | 20 ms | 10 ms | 11 ms | 1.82x |" in line      # 20 / 11, not 10 / 10


def test_a_row_without_torch_has_no_ratio():
    line = run.table([dict(common.timed_row("only minigrad", [0.002, 0.004]), suite="core")]).splitlines()[2]
    assert "| 2 ms | 3 ms | - | - | - |" in line


def test_training_steps_are_timed_as_loops_of_consecutive_calls():
    calls = []
    times = common.interleaved_times([lambda: calls.append("a"), lambda: calls.append("b")],
                                     repeat=2, warmup=1, steps=4)
    assert [len(bucket) for bucket in times] == [6, 6]          # 2 rounds of 4 calls, the first untimed
    assert calls == ["a", "b"] + ["a"] * 4 + ["b"] * 4 + ["b"] * 4 + ["a"] * 4   # round 2 starts with b
    full, quick = common.loop_times([lambda: None], 9), common.loop_times([lambda: None], 3)
    assert len(full[0]) == 4 * 3 and len(quick[0]) == 2 * 2     # 16 and 6 calls: no more than 9 and 3 pairs


def test_median():
    assert common.median([3.0, 1.0, 2.0]) == 2.0 and common.median([4.0, 1.0, 2.0, 3.0]) == 2.5
