"""The ``minigrad`` command.

    minigrad assignment list
    minigrad assignment make SOURCE OUT [--with-solutions] [--force]
    minigrad assignment new NAME [DIR]
    minigrad assignment autograder NAME out.zip [--seed N]
    minigrad check [SUBMISSION] [--assignment NAME] [--json results.json] [--report report.txt]
                   [--only CHECK ...] [--seed N] [--time-limit S] [--memory-limit MB]
    minigrad grade SUBMISSIONS --assignment NAME --out DIR [-j N] [--regrade] [--only CHECK ...] [--seed N]
    minigrad lessons notebooks [OUT] [--lessons PATH]
    minigrad lessons bundle OUT.zip [--lessons PATH]
    minigrad --version

The lessons ship in the repository (lessons/), not in the package: ``minigrad
lessons`` reads them from ``--lessons`` (default ./lessons, so run it from the
repository's root) and writes the .ipynb files into OUT (default: beside them).
``lessons bundle`` writes one zip a learner can carry without a clone: minigrad's
wheel and every lesson as a notebook (minigrad/bundle.py).

SOURCE and --assignment are a shipped assignment's name or the path of an assignment folder
(``assignment new`` scaffolds one: a private assignment, in the instructor's own folder).
"""
import argparse
import json
import os
import sys
import warnings
import zipfile


def _list(args):
    from .coursework import list_assignments
    for assignment in list_assignments():
        checks = ", ".join(c.name for c in assignment.checks)
        print(f"{assignment.name:<12} {assignment.title}\n{'':<12} file: {assignment.module}; checks: {checks}")
    print("\nThese are practice sets: their references ship with minigrad. For graded work, "
          "`minigrad assignment new NAME DIR` scaffolds a private assignment in a folder of your own.")
    return 0


def _make(args):
    from .coursework import load_assignment, make_assignment
    assignment = load_assignment(args.source)
    for path in make_assignment(assignment.path, args.out, solutions=args.with_solutions, force=args.force):
        print(path)
    return 0


def _new(args):
    from .coursework.authoring.scaffold import new_assignment
    folder = args.dir or args.name
    for path in new_assignment(args.name, folder):
        print(path)
    print(f"\nnext: replace the example with your exercise, then\n"
          f"  minigrad check {folder} --assignment {folder}                 # the reference passes every check\n"
          f"  minigrad assignment make {folder} {args.name}_student       # the student version\n"
          f"keep {folder} private: its reference and checks.json are the answers")
    return 0


def _say_isolation():
    """One line on stderr: what each submission is isolated by on this machine (a warning when nothing)."""
    from .coursework.sandbox import ISOLATION, isolation
    mode, why = isolation()
    line = f"isolation: {mode}: each submission gets {ISOLATION[mode]}" + (f" ({why})" if why else "")
    if mode == "none":
        warnings.warn(line, RuntimeWarning)
    else:
        print(f"minigrad: {line}", file=sys.stderr)


def _check(args):
    from .coursework.grading.escape import printable
    from .coursework.grading.grader import Grader
    from .coursework.grading.report import gradescope, table, write_atomic
    from .coursework.sandbox import Limits, NotGraded
    limits = Limits(time_s=args.time_limit, memory_mb=args.memory_limit)
    hide = [os.path.dirname(os.path.abspath(p)) for p in (args.json, args.report) if p]
    if args.assignment is None:
        from .coursework.spec.assignment import infer_assignment
        args.assignment = infer_assignment(args.submission)
        print(f"minigrad: assignment {args.assignment} (its files are in {os.path.abspath(args.submission)}; "
              "--assignment chooses another)", file=sys.stderr)
    _say_isolation()
    with Grader(args.assignment, seed=args.seed, only=args.only, limits=limits, hide=hide, graded=False) as grader:
        print(f"grading seed: {grader.seed}", file=sys.stderr)
        try:
            results = grader.grade(args.submission)
        except NotGraded as error:   # the grader's side failed: no report, no grade
            print(printable(f"minigrad: not graded: {error}"), file=sys.stderr)
            return 3
    text = table(results)
    print(text)
    if args.report:   # reports last, each written whole
        write_atomic(args.report, text + "\n")
    if args.json:
        write_atomic(args.json, json.dumps(gradescope(results), indent=2) + "\n")
    return 0 if all(r["passed"] for r in results) else 1


def _autograder(args):
    from .coursework.grading.autograder import build
    seed = build(args.source, args.out, seed=args.seed)
    print(f"{args.out}: a Gradescope autograder (grading seed {seed}; keep the zip from students)")
    return 0


def _grade(args):
    from .coursework.grading.escape import printable
    from .coursework.grading.gradebook import NOT_GRADED, REFUSED, grade_folder
    from .coursework.sandbox import Limits
    _say_isolation()
    rows = grade_folder(args.submissions, args.assignment, args.out, jobs=args.jobs, regrade=args.regrade,
                        only=args.only, seed=args.seed,
                        limits=Limits(time_s=args.time_limit, memory_mb=args.memory_limit), progress=sys.stderr)
    totals = [r["total"] for r in rows if r["status"] == "graded"]
    counts = rows.counts
    for row in rows:
        if row["status"] != "graded":
            who = row["student"] + (f" ({row['id']})" if row["id"] else "")
            print(printable(f"{who}: {row['status']}"), file=sys.stderr)
    changed = f" ({counts['changed']} of them changed since their grade)" if counts["changed"] else ""
    print(printable(f"{counts['graded']} graded{changed}, {counts['skipped']} already graded (skipped), "
                    f"{counts[NOT_GRADED]} not graded, {counts[REFUSED]} refused; gradebook.csv in {args.out} "
                    f"(mean {sum(totals) / max(len(totals), 1):.2f} / {rows[0]['max'] if rows else 0:g} over "
                    f"{len(totals)} students)"))
    return 1 if counts[NOT_GRADED] or counts[REFUSED] else 0


def _notebooks(args):
    from .lesson import write_notebooks
    for path in write_notebooks(args.lessons, args.out):
        print(path)
    return 0


def _bundle(args):
    from .bundle import bundle
    path = bundle(args.out, args.lessons)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    wheel = next(name for name in names if name.endswith(".whl"))
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB, {wheel} and {len(names) - 2} notebooks; "
          "without a clone, open a notebook beside the wheel and run its first cell (README.txt inside)")
    return 0


def shadows(folder=None):
    """Folders named minigrad without an __init__.py where ``python script.py`` run here would look first.

    A clone's root folder is one (its package is minigrad/minigrad/): from the folder that holds the
    clone, ``import minigrad`` finds the root first and makes it an empty namespace package, so
    ``minigrad.manual_seed`` is an AttributeError although minigrad is installed.  The places
    checked: ``folder`` (default the working directory) and the PYTHONPATH folders.
    """
    places = [folder or os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    found = []
    for place in places:
        candidate = os.path.abspath(os.path.join(place, "minigrad"))
        if os.path.isdir(candidate) and not os.path.isfile(os.path.join(candidate, "__init__.py")) \
                and candidate not in found:
            found.append(candidate)
    return found


def version_line():
    """What ``minigrad --version`` prints: minigrad's version (minigrad/__init__.py), where it is, what it runs on;
    and a warning when a folder named minigrad would shadow it for scripts run from here (``shadows``)."""
    import platform
    from . import __version__, backend
    where = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    line = (f"minigrad {__version__} (distribution minigrad-seq) from {where}; "
            f"Python {platform.python_version()}, NumPy {backend.numpy.__version__}")
    for folder in shadows():
        clone = os.path.isfile(os.path.join(folder, "pyproject.toml"))
        line += (f"\nwarning: {folder} has no __init__.py: a script run from {os.path.dirname(folder)} imports it "
                 "as an empty namespace package named minigrad instead of this one (AttributeError: module "
                 "'minigrad' has no attribute ...). " + ("It is a clone's root folder: " if clone else "")
                 + "run scripts from inside it (cd minigrad) or from another folder, or rename that folder.")
    return line


def parser():
    top = argparse.ArgumentParser(prog="minigrad", description="minigrad coursework tools",
                                  formatter_class=argparse.RawDescriptionHelpFormatter)  # --version on one line
    top.add_argument("--version", action="version", version=version_line())
    commands = top.add_subparsers(dest="command", required=True)
    assignment = commands.add_parser("assignment", help="list or make assignments")
    actions = assignment.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="show the shipped assignments").set_defaults(run=_list)
    make = actions.add_parser("make", help="write the student version of an assignment")
    make.add_argument("source", help="a shipped assignment's name, or an assignment folder")
    make.add_argument("out", help="the folder to write the student version into")
    make.add_argument("--with-solutions", action="store_true", help="keep the solutions (the instructor's copy)")
    make.add_argument("--force", action="store_true", help="write into OUT even if it is not empty")
    make.set_defaults(run=_make)
    autograder = actions.add_parser("autograder", help="write a Gradescope autograder zip for an assignment")
    autograder.add_argument("source", help="a shipped assignment's name, or an assignment folder")
    autograder.add_argument("out", help="the zip to write")
    autograder.add_argument("--seed", type=int,
                            help="the grading seed (default: MINIGRAD_GRADING_SEED, else a fresh one)")
    autograder.set_defaults(run=_autograder)
    new = actions.add_parser("new", help="scaffold a private assignment in a folder of your own")
    new.add_argument("name", help="the assignment's name; students write NAME.py")
    new.add_argument("dir", nargs="?", help="the folder to create (default: ./NAME)")
    new.set_defaults(run=_new)
    check = commands.add_parser("check", help="grade a submission")
    check.add_argument("submission", nargs="?", default=".",
                       help="the student's file, or a folder holding it (default: this folder)")
    check.add_argument("--assignment", help="a shipped assignment's name, or an assignment folder (default: "
                       "the shipped one whose files are there, as `minigrad assignment make` wrote them)")
    check.add_argument("--json", help="also write the results for Gradescope to this file")
    check.add_argument("--report", help="also write the table and diagnoses to this file")
    check.add_argument("--seed", type=int, help="the grading seed (default: MINIGRAD_GRADING_SEED, else a fresh one)")
    check.add_argument("--only", nargs="+", help="run only these checks")
    check.add_argument("--time-limit", type=float, default=10.0, help="seconds per check (default 10)")
    check.add_argument("--memory-limit", type=int, default=1024, help="MB per check (default 1024)")
    check.set_defaults(run=_check)
    grade = commands.add_parser("grade", help="grade a folder of submissions (one folder per student)")
    grade.add_argument("submissions", help="a folder holding one folder per student")
    grade.add_argument("--assignment", required=True, help="a shipped assignment's name, or an assignment folder")
    grade.add_argument("--out", required=True, help="where the gradebook and the reports go (outside submissions)")
    grade.add_argument("-j", "--jobs", type=int, default=1, help="students graded at once (default 1)")
    grade.add_argument("--regrade", action="store_true", help="grade again students already graded in --out")
    grade.add_argument("--only", nargs="+", help="run only these checks")
    grade.add_argument("--seed", type=int, help="the grading seed (default: the one recorded in --out, "
                       "else MINIGRAD_GRADING_SEED, else a fresh one)")
    grade.add_argument("--time-limit", type=float, default=10.0, help="seconds per check (default 10)")
    grade.add_argument("--memory-limit", type=int, default=1024, help="MB per worker (default 1024)")
    grade.set_defaults(run=_grade)
    lessons = commands.add_parser("lessons", help="the lessons as Jupyter notebooks")
    lesson_actions = lessons.add_subparsers(dest="action", required=True)
    notebooks = lesson_actions.add_parser("notebooks", help="write an .ipynb for every lesson")
    notebooks.add_argument("out", nargs="?", help="folder for the notebooks (default: the lessons folder)")
    notebooks.add_argument("--lessons", default="lessons", help="the repository's lessons folder (default ./lessons)")
    notebooks.set_defaults(run=_notebooks)
    carry = lesson_actions.add_parser("bundle", help="one zip without a clone: minigrad's wheel and the notebooks")
    carry.add_argument("out", help="the zip to write, e.g. minigrad-lessons.zip")
    carry.add_argument("--lessons", default="lessons", help="the repository's lessons folder (default ./lessons)")
    carry.set_defaults(run=_bundle)
    return top


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning for the person at the command line: one line, no source line of minigrad's."""
    print(f"minigrad: warning: {message}", file=sys.stderr if file is None else file)


def _seed_out_of_sight(argv):
    """Re-run this command with --seed N moved into the environment (MINIGRAD_GRADING_SEED): every user of
    the machine can read a process's command line (/proc/PID/cmdline), only its own user its environment."""
    for k, arg in enumerate(argv):
        if arg == "--seed" and k + 1 < len(argv) or arg.startswith("--seed="):
            value = argv[k + 1] if arg == "--seed" else arg.split("=", 1)[1]
            rest = argv[:k] + argv[k + (2 if arg == "--seed" else 1):]
            if not value.lstrip("-").isdigit():
                return
            sys.stdout.flush()
            library = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            run = f"import sys; sys.path.insert(0, {library!r}); from minigrad.cli import main; sys.exit(main())"
            os.execve(sys.executable, [sys.executable, "-c", run] + rest, dict(os.environ, MINIGRAD_GRADING_SEED=value))


def main(argv=None):
    if argv is None and sys.argv[1:2] in (["check"], ["grade"]):   # the command line, not a call from Python
        _seed_out_of_sight(sys.argv[1:])
    args = parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.run(args)
    except (ValueError, KeyError, OSError, ImportError) as error:
        print(f"minigrad: {error.args[0] if isinstance(error, KeyError) else error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
