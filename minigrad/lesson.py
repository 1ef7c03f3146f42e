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
    --blas-threads N or  MINIGRAD_BLAS_THREADS  BLAS threads (default 1; "default": the library's own)

In a notebook (a Jupyter kernel: Jupyter, VS Code, Colab) the command line is
the kernel's, so only the environment counts; figures are shown inline and
saved, tables render as Markdown, and progress updates one line in place.  As
a script, figures are saved on the headless Agg backend and tables and
progress are printed.

The output folder defaults to ``output/NN_name`` next to the lesson (the
script, or the notebook when the kernel can tell where it is: VS Code, Jupyter
server, or a kernel started in the notebook's folder), else to a folder under
the system's temporary directory.

``write_notebooks`` turns the lessons into .ipynb files (``minigrad lessons notebooks``).

Module-level state: ``_blas_limit``, the BLAS thread limit the last ``setup`` set, kept to undo
it when a notebook runs ``setup`` again (BLAS threads are process-wide).
"""
import argparse
import difflib
import glob
import os
import sys
import tempfile
import time

from . import backend

OPTIONS = ("--quick", "--device", "--out", "--seed", "--blas-threads")


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def in_notebook():
    """True inside a Jupyter kernel (Jupyter, VS Code's interactive window, Colab)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    return shell is not None and hasattr(shell, "kernel")


def own_options(parser):
    """A lesson's own options (``parser``) and the arguments left for ``setup``: parsed from the
    command line of a script; in a notebook, the defaults (a kernel's command line is not the learner's)."""
    if in_notebook():
        return parser.parse_known_args([])[0], None
    return parser.parse_known_args()


def _display(*objects, **options):
    from IPython.display import display
    return display(*objects, **options)


def _notebook_folder(name):
    """The folder of the running notebook, or None when the kernel cannot tell."""
    shell = sys.modules["IPython"].get_ipython()
    candidates = [shell.user_ns.get("__vsc_ipynb_file__"),      # VS Code
                  os.environ.get("JPY_SESSION_NAME")]            # Jupyter server 2
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.dirname(os.path.abspath(path))
    here = os.getcwd()                                           # kernels start in the notebook's folder
    if glob.glob(os.path.join(here, name + ".*")):
        return here
    return None


def _default_output(name, quick=False):
    """output/NN_name next to the lesson (output/quick/NN_name in quick mode: the full run's figures stay)."""
    if in_notebook():
        folder = _notebook_folder(name)
    else:
        script = sys.argv[0] if sys.argv else ""
        folder = os.path.dirname(os.path.abspath(script)) if os.path.basename(script).startswith(name) else None
    mode = ("quick",) if quick else ()
    if folder:                                      # next to `lessons/NN_name.py` (or .ipynb)
        return os.path.join(folder, "output", *mode, name)
    return os.path.join(tempfile.gettempdir(), "minigrad-lessons", *mode, name)


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

    def __init__(self, name, quick, device, output, seed, notebook=False):
        self.name, self.quick, self.device, self.output, self.seed = name, quick, device, output, seed
        self.notebook = notebook
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
        """matplotlib.pyplot (on the headless Agg backend in a script), or None when matplotlib is missing.

        In a notebook the kernel's inline backend is kept; if it cannot be set up (an
        inline backend too new for the installed matplotlib, say), figures are drawn on
        Agg instead: still saved, and still shown, since savefig displays the PNG file.
        """
        if self._pyplot is None:
            try:
                import matplotlib
            except ImportError:
                print("(matplotlib is not installed: figures are skipped; pip install matplotlib)")
                self._pyplot = False
                return None
            if not self.notebook:
                matplotlib.use("Agg")
            try:
                import matplotlib.pyplot as plt
                plt.close(plt.figure())     # loads the backend now, not at the lesson's first figure
            except Exception as error:      # any failure of the kernel's backend, not only ImportError
                print(f"(the notebook's figure backend failed: {type(error).__name__}: {error}; "
                      "figures are drawn with Agg, saved as PNG and shown from the files)")
                matplotlib.use("Agg", force=True)
                import matplotlib.pyplot as plt
                plt.switch_backend("Agg")
            self._pyplot = plt
        return self._pyplot or None

    def savefig(self, fig, filename):
        """Save a matplotlib figure as PNG in the output folder (and show it in a notebook), then close it."""
        path = self.path(filename)
        if fig.get_layout_engine() is None:      # a figure made with layout="constrained" keeps its own
            fig.tight_layout()
        fig.savefig(path, dpi=110)
        self._pyplot.close(fig)
        if self.notebook:
            from IPython.display import Image
            _display(Image(filename=path))     # the saved PNG itself, whatever the kernel's backend
        print(f"figure: {path}")
        return path

    # ---------------------------------------------------------------- progress and tables
    def progress(self, total, every=None, unit="step"):
        """A Progress printer for a loop of ``total`` steps (about 10 lines by default)."""
        return Progress(total, every or max(1, total // 10), unit, in_place=self.notebook)

    def table(self, rows, title=None, columns=None):
        """Print ``rows`` (a list of dicts) as an aligned table and append it to results.md.

        Floats print with 4 significant digits; ``columns`` picks and orders the keys.
        """
        text = format_table(rows, columns)
        markdown = format_table(rows, columns, markdown=True)
        if self.notebook:                 # rendered as a table; plain text where Markdown is not shown
            shown = (f"**{title}**\n\n" if title else "") + markdown
            _display({"text/markdown": shown, "text/plain": (f"{title}\n" if title else "") + text}, raw=True)
        else:
            if title:
                print(f"\n{title}")
            print(text)
        mode = "quick" if self.quick else "full"
        with open(self.path("results.md"), "a") as results:
            results.write(f"\n### {title or 'results'} ({mode} mode, {time.strftime('%Y-%m-%d')})\n\n")
            results.write(markdown + "\n")
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
        print(f"Next: the exercises at the end of {'this notebook' if self.notebook else f'lessons/{self.name}.py'}"
              " (## Exercises); the coursework: `minigrad assignment list`.")


class Progress:
    """Prints 'step 120/400  loss 1.234  (35.2 step/s)' every ``every`` steps and at the last one.

    ``in_place`` (in a notebook): one output line, updated each time, instead of a new line.
    """

    def __init__(self, total, every, unit="step", in_place=False):
        self.total, self.every, self.unit = total, every, unit
        self.last_time = time.perf_counter()
        self.last_step = 0
        self.in_place, self.handle = in_place, None

    def log(self, step, **values):
        """Report ``values`` (loss=..., accuracy=...) at 0-based ``step``; prints only now and then."""
        done = step + 1
        if done % self.every and done != self.total:
            return
        now = time.perf_counter()
        speed = (done - self.last_step) / max(now - self.last_time, 1e-9)
        self.last_time, self.last_step = now, done
        shown = "  ".join(f"{k} {_cell(v)}" for k, v in values.items())
        line = f"{self.unit} {done:>{len(str(self.total))}}/{self.total}  {shown}  ({speed:.1f} {self.unit}/s)"
        if not self.in_place:
            print(line, flush=True)
        elif self.handle is None:
            self.handle = _display({"text/plain": line}, raw=True, display_id=True)
        else:
            self.handle.update({"text/plain": line}, raw=True)


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


def _warn_unknown(unknown):
    for argument in unknown:
        if argument.startswith("-"):
            option = argument.split("=")[0]
            close = difflib.get_close_matches(option, OPTIONS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else f" (the options are {', '.join(OPTIONS)})"
            print(f"warning: unknown option {option} ignored{hint}", file=sys.stderr)
        else:
            print(f"warning: unexpected argument {argument!r} ignored", file=sys.stderr)


def _device(asked, fallback):
    """The device to run on; a device that is unknown or missing stops the lesson with one line."""
    asked = asked or backend.default_device()
    try:
        return backend.normalize_device(asked)
    except backend.DeviceError as error:
        if fallback:
            print(f"(device {asked!r} asked for, but: {error}; going on with {fallback!r})")
            return backend.normalize_device(fallback)
        raise SystemExit(f"minigrad lesson: {error}") from None  # printed as one line, exit status 1


# ------------------------------------------------------------------- BLAS threads
LESSON_BLAS_THREADS = "1"
_blas_limit = None   # threadpoolctl's handle on the limit the last setup() set, to undo it


def _blas_threads(asked):
    """Give the BLAS library (OpenBLAS, MKL) ``asked`` threads, or its own default for "default".

    The lessons' matrices are small (tens to hundreds of rows), where OpenBLAS's threads
    cost more than they save: on a 2-core machine all fourteen lessons ran 2.5-2.8x faster
    on one thread, lightly loaded or busy, and none much slower (lessons/README.md, "BLAS threads").
    NumPy is loaded by then, so an environment variable such as OPENBLAS_NUM_THREADS would
    come too late; threadpoolctl changes the running library.  Returns the line to print.
    """
    global _blas_limit
    from threadpoolctl import threadpool_info, threadpool_limits
    if _blas_limit is not None:              # setup() again in the same kernel: start from the defaults
        _blas_limit.restore_original_limits()
        _blas_limit = None
    pools = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    if not pools:
        return "BLAS threads: no BLAS library found to set"
    library = {"openblas": "OpenBLAS", "mkl": "MKL", "blis": "BLIS"}.get(pools[0]["internal_api"], "BLAS")
    default = pools[0]["num_threads"]
    if asked == "default":
        return f"BLAS threads: {default} ({library}'s default here; --blas-threads 1 is faster for the lessons)"
    _blas_limit = threadpool_limits(limits=int(asked), user_api="blas")
    return (f"BLAS threads: {asked} ({library}'s default here is {default}; "
            "--blas-threads default or MINIGRAD_BLAS_THREADS=default restores it)")


def _blas_option(value):
    value = value.strip().lower()
    if value != "default" and not (value.isdigit() and int(value) > 0):
        raise SystemExit(f"minigrad lesson: --blas-threads {value!r}: use a number of threads (1, 2, ...) "
                         "or default")
    return value


def setup(name, description=None, argv=None, fallback_device=None):
    """Parse the lesson's options, seed minigrad, make the output folder; returns a Run.

    ``--device cuda`` also sets MINIGRAD_DEVICE, so tensors made without a
    ``device=`` argument land on the GPU too.  An unknown device (``--device gpu``),
    or CUDA without CuPy and a GPU, stops the lesson with a one-line message,
    unless ``fallback_device`` names the device to go on with.  Unknown options
    (``--quik``) are warned about.  In a notebook the kernel's own command line is
    ignored: set MINIGRAD_QUICK / MINIGRAD_DEVICE, or pass ``argv``.
    """
    notebook = in_notebook()
    parser = argparse.ArgumentParser(description=description or f"minigrad lesson {name}")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (also MINIGRAD_QUICK=1)")
    parser.add_argument("--device", default=None, help='"cpu" (default) or "cuda"')
    parser.add_argument("--out", default=None, help="folder for figures and tables")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blas-threads", default=None,
                        help=f"BLAS threads: a number, or default for the library's own (lesson default "
                             f"{LESSON_BLAS_THREADS}; also MINIGRAD_BLAS_THREADS)")
    if argv is None:
        argv = [] if notebook else sys.argv[1:]
    args, unknown = parser.parse_known_args(argv)
    _warn_unknown(unknown)

    quick = args.quick or _flag("MINIGRAD_QUICK")
    device = _device(args.device, fallback_device)
    os.environ["MINIGRAD_DEVICE"] = device
    output = args.out or os.environ.get("MINIGRAD_LESSON_OUT") or _default_output(name, quick)
    if not _writable(output):
        output = os.path.join(tempfile.gettempdir(), "minigrad-lessons", *(("quick",) if quick else ()), name)
        os.makedirs(output, exist_ok=True)
    results = os.path.join(output, "results.md")
    if os.path.exists(results):
        os.remove(results)  # tables of this run only

    backend.manual_seed(args.seed)
    threads = _blas_option(args.blas_threads or os.environ.get("MINIGRAD_BLAS_THREADS") or LESSON_BLAS_THREADS)
    print(f"minigrad lesson {name}: {'quick' if quick else 'full'} mode on {device}; outputs in {output}")
    print(_blas_threads(threads))
    return Run(name, quick, device, output, args.seed, notebook=notebook)


# ------------------------------------------------------------------- lessons as notebooks
def find_lessons(folder):
    """The lesson files ``NN_name.py`` in ``folder``, in order; a clear error when there are none."""
    lessons = sorted(glob.glob(os.path.join(folder, "[0-9][0-9]_*.py")))
    if not lessons:
        raise FileNotFoundError(
            f"no lessons (NN_name.py files) in {os.path.abspath(folder)!r}: the lessons ship in the minigrad "
            "repository, not in the package; run this from the repository's root or pass --lessons PATH/lessons")
    return lessons


INSTALL_CELL = """\
# minigrad: found, or installed from what is here (run this cell first).
#   In lessons/ of a clone of the repository: pip install -e ..  (editable: your own edits take effect).
#   Elsewhere: the wheel beside this notebook (minigrad_seq-*.whl, from `minigrad lessons bundle` or
#   `python -m pip wheel . --no-deps -w dist` in a clone).  In Colab this cell asks you to upload it.
# minigrad-seq is not on the Python package index: a clone or its wheel is the way in.
import glob
import importlib
import importlib.util
import os
import subprocess
import sys


def _pip_install(*args):
    print("pip install", *args)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *args], check=True)
    importlib.invalidate_caches()


if importlib.util.find_spec("minigrad") is None:
    root = os.path.abspath("..")
    if os.path.isfile(os.path.join(root, "pyproject.toml")) and os.path.isdir(os.path.join(root, "minigrad")):
        _pip_install("-e", root)
        sys.path.insert(0, root)      # new kernels see the editable install; this one is told where it is
    else:
        wheels = sorted(glob.glob("minigrad_seq-*.whl"), key=os.path.getmtime)
        if not wheels and "google.colab" in sys.modules:
            from google.colab import files
            print("Upload minigrad's wheel (minigrad_seq-*.whl):")
            files.upload()
            wheels = sorted(glob.glob("minigrad_seq-*.whl"), key=os.path.getmtime)
        if not wheels:
            raise ModuleNotFoundError(
                f"minigrad is not installed and no minigrad_seq-*.whl is in {os.getcwd()}: put the wheel beside "
                "this notebook (build it in a clone: python -m pip wheel . --no-deps -w dist) and run this cell again")
        _pip_install(wheels[-1])
import minigrad

print(f"minigrad {minigrad.__version__} from {os.path.dirname(minigrad.__file__)}")
"""


def write_notebooks(lessons_folder, out=None):
    """Write ``NN_name.ipynb`` for every lesson in ``lessons_folder`` into ``out`` (default: the same folder).

    The first cell of each notebook finds minigrad or installs it from where the notebook is:
    the clone when the notebook is in its lessons/ (``pip install -e ..``), else the wheel beside
    it (in Colab, uploaded when the cell asks; ``minigrad.bundle``).  It names no path of this
    machine, so the notebooks work wherever they are copied.  Needs jupytext
    (``pip install -e ".[notebook]"``).  Returns the paths written.
    """
    try:
        import jupytext
        from nbformat.v4 import new_code_cell
    except ImportError:
        raise ImportError('writing notebooks needs jupytext: python -m pip install -e ".[notebook]"') from None
    lessons = find_lessons(lessons_folder)
    out = out or lessons_folder
    os.makedirs(out, exist_ok=True)
    written = []
    for source in lessons:
        notebook = jupytext.read(source, fmt="py:percent")
        notebook.metadata.pop("jupytext", None)        # a plain notebook, not paired with the .py
        notebook.cells.insert(0, new_code_cell(INSTALL_CELL))
        path = os.path.join(out, os.path.basename(source)[:-3] + ".ipynb")
        jupytext.write(notebook, path, fmt="ipynb")
        written.append(path)
    return written
