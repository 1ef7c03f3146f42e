"""The small toolkit every lesson in ``lessons/`` uses (options, output folder, progress, tables, checks).

A lesson starts with

    from minigrad import lesson
    run = lesson.setup("04_lstm_gru")

and then reads ``run.quick`` (tiny sizes for CI), ``run.device`` ("cpu" or
"cuda") and ``run.output`` (the folder its figures go to).  Options come from
the command line or the environment, so the same file runs as a script, in CI
and as a notebook:

    --quick          or  MINIGRAD_QUICK=1     tiny sizes, under 30 s on a CPU
    --device cuda    or  MINIGRAD_DEVICE=cuda run on CuPy
    --out FOLDER     or  MINIGRAD_LESSON_OUT  where figures and tables go
    --seed N                                  (default 0)

The output folder defaults to ``output/NN_name`` next to the lesson file when
run as a script, else to a folder under the system's temporary directory.
"""
import argparse
import os
import sys
import tempfile
import time

from . import backend


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _default_output(name):
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script).startswith(name):  # run as `python lessons/NN_name.py`
        return os.path.join(os.path.dirname(os.path.abspath(script)), "output", name)
    return os.path.join(tempfile.gettempdir(), "minigrad-lessons", name)


def _writable(folder):
    try:
        os.makedirs(folder, exist_ok=True)
        probe = os.path.join(folder, ".write-test")
        with open(probe, "w"):
            pass
        os.remove(probe)
        return True
    except OSError:
        return False


class Run:
    """One run of a lesson: its options, its output folder, its checks and its clock."""

    def __init__(self, name, quick, device, output, seed):
        self.name, self.quick, self.device, self.output, self.seed = name, quick, device, output, seed
        self.started = time.perf_counter()
        self.checks_passed = 0
        self._pyplot = None

    def size(self, quick, full):
        """``quick`` in quick mode, else ``full`` (step counts, sequence lengths, ...)."""
        return quick if self.quick else full

    def path(self, filename):
        """Where a file named ``filename`` goes in the output folder."""
        return os.path.join(self.output, filename)

    # ---------------------------------------------------------------- figures
    def pyplot(self):
        """matplotlib.pyplot on the headless Agg backend, or None when matplotlib is missing."""
        if self._pyplot is None:
            try:
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt
            except ImportError:
                print("(matplotlib is not installed: figures are skipped; pip install matplotlib)")
                self._pyplot = False
                return None
            self._pyplot = plt
        return self._pyplot or None

    def savefig(self, fig, filename):
        """Save a matplotlib figure as PNG in the output folder, close it, print where it went."""
        path = self.path(filename)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        self._pyplot.close(fig)
        print(f"figure: {path}")
        return path

    # ---------------------------------------------------------------- progress and tables
    def progress(self, total, every=None, unit="step"):
        """A Progress printer for a loop of ``total`` steps (about 10 lines by default)."""
        return Progress(total, every or max(1, total // 10), unit)

    def table(self, rows, title=None, columns=None):
        """Print ``rows`` (a list of dicts) as an aligned table and append it to results.md.

        Floats print with 4 significant digits; ``columns`` picks and orders the keys.
        """
        text = format_table(rows, columns)
        if title:
            print(f"\n{title}")
        print(text)
        mode = "quick" if self.quick else "full"
        with open(self.path("results.md"), "a") as results:
            results.write(f"\n### {title or 'results'} ({mode} mode, {time.strftime('%Y-%m-%d')})\n\n")
            results.write(format_table(rows, columns, markdown=True) + "\n")
        return text

    # ---------------------------------------------------------------- checks
    def check(self, condition, message):
        """Assert a headline result of the lesson: print it, or stop the lesson with an AssertionError."""
        if not condition:
            print(f"CHECK FAILED: {message}")
            raise AssertionError(f"{self.name}: {message}")
        self.checks_passed += 1
        print(f"check ok: {message}")

    def done(self):
        """Print the closing line: checks passed, time taken, where the outputs are."""
        seconds = time.perf_counter() - self.started
        print(f"\n{self.name} done in {seconds:.1f} s ({'quick' if self.quick else 'full'} mode, "
              f"{self.device}); {self.checks_passed} checks passed; outputs in {self.output}")


class Progress:
    """Prints 'step 120/400  loss 1.234  (35.2 step/s)' every ``every`` steps and at the last one."""

    def __init__(self, total, every, unit="step"):
        self.total, self.every, self.unit = total, every, unit
        self.last_time = time.perf_counter()
        self.last_step = 0

    def log(self, step, **values):
        """Report ``values`` (loss=..., accuracy=...) at 0-based ``step``; prints only now and then."""
        done = step + 1
        if done % self.every and done != self.total:
            return
        now = time.perf_counter()
        speed = (done - self.last_step) / max(now - self.last_time, 1e-9)
        self.last_time, self.last_step = now, done
        shown = "  ".join(f"{k} {_cell(v)}" for k, v in values.items())
        print(f"{self.unit} {done:>{len(str(self.total))}}/{self.total}  {shown}  ({speed:.1f} {self.unit}/s)",
              flush=True)


def format_table(rows, columns=None, markdown=False):
    """Rows (a list of dicts) as aligned plain text, or as a Markdown table."""
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    cells = [[_cell(row.get(c, "")) for c in columns] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in cells])
    widths = [max(len(str(c)), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(columns, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(value):
    if isinstance(value, float):
        if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.3e}"
        return f"{value:.4g}"
    return str(value)


def setup(name, description=None, argv=None):
    """Parse the lesson's options, seed minigrad, make the output folder; returns a Run.

    ``--device cuda`` also sets MINIGRAD_DEVICE, so tensors made without a
    ``device=`` argument land on the GPU too.  Unknown arguments (a notebook
    kernel's) are ignored.
    """
    parser = argparse.ArgumentParser(description=description or f"minigrad lesson {name}")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (also MINIGRAD_QUICK=1)")
    parser.add_argument("--device", default=None, help='"cpu" (default) or "cuda"')
    parser.add_argument("--out", default=None, help="folder for figures and tables")
    parser.add_argument("--seed", type=int, default=0)
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)

    quick = args.quick or _flag("MINIGRAD_QUICK")
    device = backend.normalize_device(args.device or backend.default_device())
    os.environ["MINIGRAD_DEVICE"] = device
    output = args.out or os.environ.get("MINIGRAD_LESSON_OUT") or _default_output(name)
    if not _writable(output):
        output = os.path.join(tempfile.gettempdir(), "minigrad-lessons", name)
        os.makedirs(output, exist_ok=True)
    results = os.path.join(output, "results.md")
    if os.path.exists(results):
        os.remove(results)  # tables of this run only

    from . import manual_seed
    manual_seed(args.seed)
    print(f"minigrad lesson {name}: {'quick' if quick else 'full'} mode on {device}; outputs in {output}")
    return Run(name, quick, device, output, args.seed)
