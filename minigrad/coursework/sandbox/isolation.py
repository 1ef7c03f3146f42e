"""The worker's own view of the machine, built from Linux namespaces (standard library only).

Two steps, in two processes (control.py starts them):

    supervisor:  enter_namespaces()     new pid, network, IPC and UTS namespaces for the worker it starts
                                        (not as root: inside a new user namespace, where it is root)
    worker:      private_view(...)      pid 1 of the new pid namespace: its own mount namespace with
                                        - a fresh /proc (it sees its own processes only),
                                        - every mount read-only (Python, minigrad, the grader's files),
                                        - one tmpfs of ``scratch_mb`` at /tmp, also mounted at /var/tmp and
                                          /dev/shm, holding its folder /tmp/work (a copy of the submission),
                                        - the grader's folders covered by empty, unreadable mounts,
                                        - Python's installation (prefix, site-packages, NumPy, minigrad)
                                          mounted read-only at its own path where a cover hides it or the
                                          worker's uid could not pass through a folder above it (/root);
                 lock()                 then, not as root, a nested user and mount namespace, in which those
                                        mounts are locked: the submission cannot unmount or remount them.
                                        (As root the worker switches to a uid of its own instead.)

When the worker (pid 1) ends, the kernel kills every process of its pid
namespace: nothing of a submission outlives its check.

Why not bubblewrap: measured and explained in coursework/README.md ("Security
model").  In short: as root bwrap cannot give the worker a uid of its own
outside while starting a Python that only root can read (CI's Python under
/root), and it cannot share one size cap between /tmp, /var/tmp, /dev/shm and
the worker's folder; the code below (about 60 lines of unshare(2) and
mount(2)) does both, and needs nothing installed.  (util-linux unshare(1)
loses the worker's exit status, which tells the student's failure from the
grader's.)

This file is loaded by its path in the worker (like protocol.py): it must not
import anything of the package.
"""
import ctypes
import os
import re

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    0x1, 0x2, 0x4, 0x8, 0x20, 0x1000, 0x4000, 0x40000)
MS_RELATIME = 0x200000
# statvfs flag -> mount flag (equal but for relatime): a remount must repeat the flags it cannot change
ST_TO_MS = {0x2: MS_NOSUID, 0x4: MS_NODEV, 0x8: MS_NOEXEC, 0x10: 0x10, 0x40: 0x40, 0x400: 0x400, 0x800: 0x800,
            0x1000: MS_RELATIME}
WORK = "/tmp/work"          # the worker's folder inside its view
NOBODY = 65534              # the worker's uid inside the nested user namespace


class IsolationError(OSError):
    """A namespace step the OS refused (the grader then grades with less isolation, and says so)."""


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise IsolationError(error, f"{what}: {os.strerror(error)}")


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _map_user(inside_uid, outside_uid, inside_gid, outside_gid):
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside_uid} {outside_uid} 1\n")
    _write("/proc/self/gid_map", f"{inside_gid} {outside_gid} 1\n")


def enter_namespaces():
    """New pid, network, IPC and UTS namespaces for this process's children; the mode, or raise IsolationError.

    "namespaces" as root; "user-namespaces" otherwise (this process becomes root of a new user namespace,
    which owns the others).  Must be called by a single-threaded process (the supervisor)."""
    flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() == 0:
        _check(_libc().unshare(flags), "unshare(pid, net, ipc, uts)")
        return "namespaces"
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc().unshare(flags | CLONE_NEWUSER), "unshare(user, pid, net, ipc, uts)")
    _map_user(0, uid, 0, gid)
    return "user-namespaces"


def _mount(libc, source, target, fstype, flags, data=None):
    # os.fsencode: a folder named in bytes that are not UTF-8 (a student's) is mounted by its own bytes
    _check(libc.mount(os.fsencode(source), os.fsencode(target), fstype.encode() if fstype else None, flags,
                      data.encode() if data else None), f"mount {target}")


def _mount_points():
    points = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            point = line.split()[4]   # "\040" is a space; the rest are the mount point's own bytes
            points.append(os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), point)))
    return points


def _read_tree(folder):
    """{relative path: bytes} of the regular files under ``folder`` (the submission's copy, 64 MB at most)."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _blocked(path, owner):
    """The topmost folder above ``path`` that ``owner`` (a uid other than root's) cannot pass through: /root,
    mode 0700, above a pyenv Python; None when there is none (or no owner: the worker keeps this user)."""
    if owner is None:
        return None
    folder = os.sep
    for part in path.strip(os.sep).split(os.sep)[:-1]:
        folder = os.path.join(folder, part)
        info = os.stat(folder)
        if not (info.st_mode & 0o001 or info.st_uid == owner and info.st_mode & 0o100):
            return folder
    return None


def private_view(workdir, scratch_mb, hide=(), keep=(), owner=None):
    """Build the worker's view (see the module docstring); returns the paths it covered.

    workdir: the host folder with the submission's copy (read, then left behind: the worker works in WORK)
    hide:    folders and files to cover
    keep:    what the worker must be able to read wherever it is installed (Python, site-packages, NumPy,
             minigrad): each is mounted read-only at its own path where a cover would hide it: under the
             private /tmp (a venv there), under a covered folder (a home), or below a folder the worker's uid
             cannot pass through (/root, 0700): such a folder is covered by a read-only tmpfs holding only the
             way down to what is kept
    owner:   the uid that will own WORK (root's worker switches to it); None: this process's"""
    libc = _libc()
    files = _read_tree(workdir)
    scratch = ("/tmp", "/var/tmp", "/dev/shm")
    keep = sorted(set(os.path.realpath(k) for k in keep if os.path.isdir(k)))
    keep = [k for k in keep if not any(k != other and _inside(k, other) for other in keep)]
    hide = [os.path.realpath(h) for h in hide]
    hide = [h for h in hide if h not in scratch and os.path.exists(h)]
    # folders covered by a skeleton: a hidden folder holding something kept, and what the worker cannot pass
    skeletons = sorted(set([h for h in hide if any(_inside(k, h) for k in keep)] +
                           [b for b in (_blocked(k, owner) for k in keep) if b is not None]))
    skeletons = [s for s in skeletons if not any(s != o and _inside(s, o) for o in skeletons + list(scratch))]
    covers = skeletons + list(scratch)
    _check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE)
    # opened in this mount namespace (a mount of another cannot be bound), before anything covers them
    rebound = {k: os.open(k, os.O_PATH | os.O_DIRECTORY) for k in keep if any(_inside(k, c) for c in covers)}
    _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for point in sorted(set(_mount_points())):
        if point == "/proc" or point.startswith(("/proc/", "/sys")):
            continue
        try:
            flags = sum(ms for st, ms in ST_TO_MS.items() if os.statvfs(point).f_flag & st)
            _mount(libc, "none", point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)
        except OSError:
            if point == "/":
                raise
    size = f"size={int(scratch_mb)}m,mode=1777"
    _mount(libc, "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    for also in ("/var/tmp", "/dev/shm"):
        if os.path.isdir(also):
            _mount(libc, "/tmp", also, None, MS_BIND)
    for folder in skeletons:
        _mount(libc, "tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    for path, fd in rebound.items():   # each kept folder at its own path, read-only
        mask = os.umask(0o022)          # the way down is passable by the worker's uid whatever the caller's umask
        os.makedirs(path, mode=0o755, exist_ok=True)
        os.umask(mask)
        _mount(libc, f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        _mount(libc, "none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)
    for folder in skeletons:
        _mount(libc, "none", folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    hidden = list(skeletons)
    for path in hide:   # what is still to see of them, through the kept folders (the grader's code, answers)
        if path in skeletons or not os.path.exists(path) or any(_inside(k, path) for k in keep):
            continue
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")
        else:
            _mount(libc, os.devnull, path, None, MS_BIND)
        hidden.append(path)
    os.makedirs(WORK, mode=0o700)
    for relative, data in files.items():
        path = os.path.join(WORK, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    if owner is not None:
        for root, dirs, names in os.walk(WORK):
            for name in [root] + [os.path.join(root, n) for n in dirs + names]:
                os.lchown(name, owner, owner)
    os.chdir(WORK)
    return hidden


def lock():
    """Not as root: a nested user and mount namespace in which every mount above is locked (it cannot be
    unmounted to uncover what it hides, nor made writable again); the worker is uid NOBODY there."""
    _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(user, mount)")
    _map_user(NOBODY, 0, NOBODY, 0)
