"""Memory freed by one training step is reused by the next (backend.py's malloc settings, issue 41).

Each check runs a small char-LM training loop in a fresh process, so the allocator's
history is that loop's alone, and counts the page faults of each step (getrusage's
ru_minflt) and the resident memory after it (/proc/self/statm).  Linux with glibc only:
elsewhere the backend changes nothing (its docstring says why).
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from minigrad import backend

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(backend._glibc() is None, reason="the malloc settings are glibc's (Linux)")

# Embedding(65, 32) -> LSTM(32, 64) -> Linear(64, 65) -> cross_entropy -> SGD, batch 32, T = 32:
# the step, smaller; its gates (T, N, 4H) are 1 MiB, well over malloc's 128 KiB mmap threshold.
LOOP = r"""
import json, resource, sys
import minigrad
from minigrad import functional as F, nn, optim
V, N, T, H = 65, 32, 32, 64
minigrad.manual_seed(0)
embedding, lstm, head = nn.Embedding(V, 32), nn.LSTM(32, H, batch_first=True), nn.Linear(H, V)
optimizer = optim.SGD([*embedding.parameters(), *lstm.parameters(), *head.parameters()], lr=0.1)
ids = minigrad.randint(0, V, (N, T + 1))

def step():
    out, _ = lstm(embedding(ids[:, :-1]))
    loss = F.cross_entropy(head(out).reshape(-1, V), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss

def rss():
    with open("/proc/self/statm") as file:
        return int(file.read().split()[1]) * resource.getpagesize()

faults, resident = [], []
loss = None
for i in range(int(sys.argv[1])):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    if i < 10:
        loss = step()          # the caller keeps the loss: two graphs live at once, the heap grows
    else:
        step()                 # then the loss is dropped at the end of each step, as in most loops
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    resident.append(rss())
    loss = None
minigrad.empty_cache()
print(json.dumps({"faults": faults, "resident": resident, "emptied": rss(),
                  "keeps": minigrad.backend.KEEPS_FREED_MEMORY}))
"""


def run_loop(steps, **environment):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), **environment)
    result = subprocess.run([sys.executable, "-c", LOOP, str(steps)], capture_output=True, text=True, env=env,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def loop():
    return run_loop(200)


def test_a_step_whose_loss_is_dropped_reuses_the_last_steps_memory(loop):
    assert loop["keeps"]
    dropped = loop["faults"][20:]
    # Before (glibc's defaults): every other step faulted its arrays in again, about 500 faults each.
    assert sum(dropped) / len(dropped) < 20, f"page faults per step with the loss dropped: {dropped}"


def test_resident_memory_stays_flat_over_200_steps(loop):
    resident = loop["resident"]
    settled = resident[20]                        # after the kept and the first dropped steps
    growth = max(resident[20:]) - settled
    assert growth < 2 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MiB over steps 20-200"
    assert resident[-1] - settled < 2**20


def test_empty_cache_hands_the_kept_memory_back(loop):
    assert loop["resident"][-1] - loop["emptied"] > 2**20, (loop["resident"][-1], loop["emptied"])


def test_the_settings_can_be_left_alone():
    """MINIGRAD_KEEP_FREED_MEMORY=0: glibc's defaults, and the fault tax the settings remove."""
    loop = run_loop(40, MINIGRAD_KEEP_FREED_MEMORY="0")
    dropped = loop["faults"][20:]
    assert not loop["keeps"]
    assert sum(dropped) / len(dropped) > 100, f"expected glibc's defaults to refault: {dropped}"
