"""``minigrad assignment new NAME [DIR]``: a private assignment, in the instructor's own folder.

The shipped assignments are practice sets: their references are public and
minigrad implements every layer they teach.  A graded course writes its own,
starting from this scaffold: a small working example (an affine layer and a
leaky ReLU) with every part an assignment needs, which the instructor then
replaces.  The files here are templates; ``ASSIGNMENT_NAME`` becomes NAME.

    NAME.py          the reference solution, with BEGIN/END SOLUTION and HINT markers
    checks.json      the grader's checks: hidden shapes, points, hints in levels
    test_NAME.py     the public tests students run
    README.md        what students read

Nothing of it is installed with minigrad: the folder is the instructor's, kept
wherever they keep private course material, and ``make``, ``check`` and
``grade`` take its path.
"""
import keyword
import os

TEMPLATES = os.path.dirname(os.path.abspath(__file__))
PLACEHOLDER = "ASSIGNMENT_NAME"
FILES = {"reference.py": "{name}.py", "test_reference.py": "test_{name}.py", "README.md": "README.md",
         "checks.json": "checks.json"}


def new_assignment(name, folder=None):
    """Write the scaffold of assignment ``name`` into ``folder`` (default: ./name); returns the written paths.

    ``name`` names the module students write (``name.py``), so it must be a
    Python identifier.  A ``folder`` that exists and is not empty is an error:
    nothing is overwritten.
    """
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"assignment new: {name!r} is not a valid name: it becomes the module students write "
                         f"({name}.py), so use letters, digits and _, e.g. lstm_seq")
    folder = name if folder is None else folder
    if os.path.exists(folder) and (not os.path.isdir(folder) or os.listdir(folder)):
        raise FileExistsError(f"{folder} already exists and is not empty: minigrad assignment new writes only "
                              "into a new or empty folder (choose another, e.g. minigrad assignment new "
                              f"{name} courses/{name})")
    os.makedirs(folder, exist_ok=True)
    written = []
    for template, target in FILES.items():
        with open(os.path.join(TEMPLATES, template), encoding="utf-8") as f:
            text = f.read().replace(PLACEHOLDER, name)
        path = os.path.join(folder, target.format(name=name))
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        written.append(path)
    return sorted(written)
