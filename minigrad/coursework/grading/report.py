"""A graded submission in words: the plain-text table a student reads, Gradescope's results.json."""
from ...atomic_file import atomic_write
from .escape import printable


def _part(ok):
    return "-" if ok is None else ("pass" if ok else "FAIL")


def table(results, flags=()):
    """Check, forward, backward, points, max relative error, worst element, diagnosis; then details and hints."""
    rows = [("check", "forward", "backward", "points", "max rel err", "worst", "diagnosis")]
    for r in results:
        error = "-" if r["max_rel_error"] is None else f"{r['max_rel_error']:.2e}"
        first = r["message"].splitlines()[0] if r["message"] else ""
        rows.append((r["name"], _part(r["forward"]), _part(r["backward"]), f"{r['score']:g}/{r['max_score']:g}",
                     error, r["worst"] or "-", first if len(first) <= 60 else first[:57] + "..."))
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    score = sum(r["score"] for r in results)
    total = sum(r["max_score"] for r in results)
    lines.append(f"\nscore: {score:g} / {total:g}")
    for r in results:
        if not r["passed"]:
            lines.append(f"\n{r['name']}: {r['message']}")
            for level, hint in enumerate(r["hints"], start=1):
                lines.append(f"  hint {level}: {hint}")
    for flag in list(flags) + [f for r in results for f in r.get("flags", [])]:
        lines.append(f"\nflag: {flag}")
    return printable("\n".join(lines))   # a student's message may carry terminal escapes: shown, never run


def gradescope(results, flags=()):
    """The results as Gradescope's autograder reads them (results.json)."""
    tests = []
    for r in results:
        output = "passed" if r["passed"] else r["message"]
        for level, hint in enumerate(r["hints"], start=1):
            output += f"\nHint {level}: {hint}"
        if r["max_rel_error"] is not None:
            output += f"\nmax relative error {r['max_rel_error']:.2e}" + (f" at {r['worst']}" if r["worst"] else "")
        tests.append({"name": r["name"], "score": r["score"], "max_score": r["max_score"],
                      "status": "passed" if r["passed"] else "failed", "output": printable(output)})
    flags = list(flags) + [f for r in results for f in r.get("flags", [])]
    if flags:   # for the course staff: Gradescope does not show a hidden test to the student
        tests.append({"name": "copy flags (course staff only)", "score": 0, "max_score": 0, "status": "failed",
                      "visibility": "hidden", "output": printable("\n".join(flags))})
    return {"score": sum(r["score"] for r in results), "tests": tests}


def write_atomic(path, text):
    """Write ``text`` to ``path`` all at once (atomic_file.atomic_write): never half a report."""
    with atomic_write(path, "w") as f:
        f.write(text)
