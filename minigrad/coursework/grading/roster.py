"""The class as ``minigrad grade`` reads it: who handed in which files, and what cannot be graded, and why.

    students = roster("submissions/", "rnn.py")     # [Student, ...], one per student, in a fixed order
    digest = snapshot(student, "out/.snapshot/KEY") # copies the files to grade; their content hash

Two layouts (README, "Grading a folder of submissions"):

- one folder per student (Gradescope's export is laid out so): every regular
  file in it is the submission (helper modules, data); a symlink is listed as
  ignored, never followed; a FIFO, socket or device, a file that cannot be
  read, or more than MAX_BYTES of files makes the submission refused;
- a flat folder, as learning-management systems export it:

      Canvas  <login>[_LATE]_<user id>[_<attachment id>...]_<file>[-<n>].<ext>    smithjohn_LATE_1001_99999_rnn-1.py
      Moodle  <full name>_<participant id>_assignsubmission_<plugin>_<file>        Ann Lee_2001_assignsubmission_file_rnn.py

  A student is a name AND an id: two students called smithjohn are two rows.
  When a student handed a file in more than once, the latest counts: the
  highest attachment id, then the highest resubmission number ``-<n>``, as
  numbers (99999 < 100000), never as text.  The other files (earlier
  submissions, files that are not .py) are listed as ignored; an entry that
  names no usable student or file (``..``) makes that student refused.  A
  file that is no export's name makes the whole folder refused (the layout is
  not one ``grade`` reads), before anything runs.

A refused submission is not graded and not given 0: ``Student.refused`` says
why, in words for the instructor, who fixes the folder and runs ``grade``
again (it resumes).  Names are kept as the file system gives them (a name that
is not UTF-8 keeps its bytes: surrogateescape); ``escape.printable`` shows them.
"""
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field

MAX_BYTES = 64 << 20         # the most bytes of files one submission may hold
SKIPPED = ("__pycache__", ".DS_Store", "Thumbs.db")   # left out without a word (made by tools, not by students)

MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+_(?P<file>.+)$", re.DOTALL)
CANVAS = re.compile(r"^(?P<name>[^_]+)(?P<late>_LATE)?_(?P<id>\d+)(?P<numbers>(?:_\d+)*)_(?P<file>.+?)"
                    r"(?:-(?P<copy>\d+))?(?P<ext>\.[^.]*)?$", re.DOTALL)
LAYOUT = ("one folder per student (submissions/alice/rnn.py; Gradescope's export is laid out so), or a flat "
          "folder of files as Canvas (alice_123_456_rnn.py, alice_LATE_123_456_rnn.py, resubmissions "
          "rnn-1.py) or Moodle (Alice Lee_123_assignsubmission_file_rnn.py) export them")


@dataclass
class Student:
    """One student's submission as handed in.

    key: unique in the class, the name of the student's folder under --out/students/ (the folder's name; for an
         LMS export "<name>_<id>");  name, id: as the export spells them ("" id for a folder);
    files: {relative path in the submission: the path to copy it from};  graded_file: the module's file as handed
    in;  late: Canvas's LATE marker on it;  ignored: files not graded, each with why;  refused: why the submission
    cannot be graded ("": it can)."""
    key: str
    name: str
    id: str = ""
    files: dict = field(default_factory=dict)
    graded_file: str = ""
    late: bool = False
    ignored: list = field(default_factory=list)
    refused: str = ""

    @property
    def label(self):
        """How the instructor reads the student: the name, and the id where there is one."""
        return f"{self.name} ({self.id})" if self.id else self.name


class Refused(Exception):
    """A submission that cannot be graded as handed in: the student's row says why."""


def roster(folder, module):
    """The students of ``folder`` (one folder each, or a flat LMS export), sorted by key.

    Raises ValueError, naming the layouts ``grade`` reads, when ``folder`` is neither."""
    entries = sorted(os.listdir(folder))
    folders = [n for n in entries if not n.startswith((".", "_")) and os.path.isdir(os.path.join(folder, n))
               and not os.path.islink(os.path.join(folder, n))]
    if folders:
        return [_folder_student(folder, name, module) for name in folders]
    return _lms_export(folder, entries, module)


def _kind(mode):
    for test, words in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                        (stat.S_ISBLK, "a device")):
        if test(mode):
            return words
    return "not a regular file"


def _too_big(sizes):
    """Why ``sizes`` ({relative path: bytes}) is over MAX_BYTES, naming the largest files; "" when it is not."""
    if sum(sizes.values()) <= MAX_BYTES:
        return ""
    largest = sorted(sizes, key=lambda name: -sizes[name])[:3]
    return (f"the submission holds {sum(sizes.values()) / 2 ** 20:.0f} MB of files, more than the "
            f"{MAX_BYTES >> 20} MB a submission may ({', '.join(f'{n}: {sizes[n] / 2 ** 20:.0f} MB' for n in largest)}"
            "): remove what is not code (checkpoints, data) and run grade again")


def _folder_student(folder, name, module):
    student = Student(key=name, name=name)
    top = os.path.join(folder, name)
    sizes, problems = {}, []
    for root, dirs, files in os.walk(top, onerror=lambda error: problems.append(f"cannot be read ({error})")):
        for entry in sorted(dirs):
            if os.path.islink(os.path.join(root, entry)) or entry in SKIPPED:
                dirs.remove(entry)
                if entry not in SKIPPED:
                    student.ignored.append(f"{os.path.relpath(os.path.join(root, entry), top)} (a link)")
        for entry in sorted(files):
            path = os.path.join(root, entry)
            relative = os.path.relpath(path, top)
            if entry in SKIPPED:
                continue
            try:
                info = os.lstat(path)
            except OSError as error:   # gone since the folder was listed, or a folder we may not search
                problems.append(f"{relative} cannot be read ({error.strerror})")
                continue
            if stat.S_ISLNK(info.st_mode):
                student.ignored.append(f"{relative} (a link)")
            elif not stat.S_ISREG(info.st_mode):
                problems.append(f"{relative} is {_kind(info.st_mode)}")
            elif not os.access(path, os.R_OK):
                problems.append(f"{relative} cannot be read (permission denied)")
            else:
                student.files[relative] = path
                sizes[relative] = info.st_size
    student.refused = "; ".join(problems) or _too_big(sizes)
    student.graded_file = module if module in student.files else ""
    return student


def _lms_name(entry):
    """(name, id, file name as handed in, order, late) of an export's file name, or None for no export's name.

    ``order`` sorts a student's copies of one file, the latest last: the attachment ids, then the resubmission
    number, as numbers."""
    moodle = MOODLE.match(entry)
    if moodle:
        return moodle["name"], moodle["id"], moodle["file"], (), False
    canvas = CANVAS.match(entry)
    if canvas:
        numbers = tuple(int(n) for n in canvas["numbers"].split("_") if n)
        return (canvas["name"], canvas["id"], canvas["file"] + (canvas["ext"] or ""),
                numbers + (int(canvas["copy"] or 0),), bool(canvas["late"]))
    return None


def _lms_export(folder, entries, module):
    students, strangers, copies = {}, [], {}
    for entry in entries:
        found = _lms_name(entry)
        if found is None:
            if not entry.startswith((".", "_")) and entry not in SKIPPED:   # hidden, or __MACOSX: as for folders
                strangers.append(entry)
            continue
        name, number, original, order, late = found
        key = f"{name}_{number}"
        student = students.setdefault(key, Student(key=key, name=name, id=number))
        path = os.path.join(folder, entry)
        try:
            info = os.lstat(path)
        except OSError as error:
            student.refused = student.refused or f"{entry} cannot be read ({error.strerror})"
            continue
        if name in (".", "..") or original in (".", ".."):
            student.refused = student.refused or f"{entry}: the export's entry names no usable student or file"
        elif not stat.S_ISREG(info.st_mode):
            student.refused = student.refused or f"{entry} is {_kind(info.st_mode)}"
        elif not original.endswith(".py"):
            student.ignored.append(f"{entry} (not a .py file)")
        elif not os.access(path, os.R_OK):
            student.refused = student.refused or f"{entry} cannot be read (permission denied)"
        else:
            copies.setdefault(key, {}).setdefault(original, []).append((order, entry, path, late, info.st_size))
    if strangers or not any(module in files for files in copies.values()):
        what = (f"files not named as an export names them: {', '.join(strangers[:5])}" if strangers
                else f"no student's {module}" if entries else "no student folder and no file")
        raise ValueError(f"{folder}: {what}.  minigrad grade reads {LAYOUT}")
    for key, files in copies.items():
        student, sizes = students[key], {}
        for original, handed_in in files.items():
            handed_in.sort(key=lambda copy: copy[0])
            order, entry, path, late, size = handed_in[-1]      # the latest copy counts
            student.files[original], sizes[original] = path, size
            student.ignored += [f"{copy[1]} (an earlier submission of {original})" for copy in handed_in[:-1]]
            if original == module:
                student.graded_file, student.late = entry, late
        student.refused = student.refused or _too_big(sizes)
    return [students[key] for key in sorted(students)]


def snapshot(student, target):
    """Copy the student's files into ``target`` (a new folder); their content hash: sha256 over every file's
    relative path and sha256, in order (hex).

    Raises Refused when a file cannot be read, is no longer a regular file or the files grew over MAX_BYTES
    (they changed since ``roster`` looked); an OSError of the writing side (a full disk) is the grader's, and
    propagates."""
    digest, total = hashlib.sha256(), 0
    os.makedirs(target, mode=0o700)
    for relative in sorted(student.files):
        try:   # O_NONBLOCK: a file swapped for a FIFO must not hang the class
            fd = os.open(student.files[relative], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as error:
            raise Refused(f"{relative} cannot be read ({error.strerror})")
        with os.fdopen(fd, "rb") as source:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"{relative} is {_kind(os.fstat(fd).st_mode)}")
            path = os.path.join(target, relative)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            content = hashlib.sha256()
            with open(path, "wb") as copy:
                while True:
                    try:
                        chunk = source.read(1 << 20)
                    except OSError as error:
                        raise Refused(f"{relative} cannot be read ({error.strerror})")
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > MAX_BYTES:
                        raise Refused(f"the submission grew over {MAX_BYTES >> 20} MB while it was copied")
                    copy.write(chunk)
                    content.update(chunk)
        digest.update(os.fsencode(relative) + b"\0" + content.digest())
    return digest.hexdigest()
