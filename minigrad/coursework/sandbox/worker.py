"""The worker: the only process that runs a submission's code.  It computes, the grader judges.

The grader (control.py) starts this file as a fresh interpreter,

    python -I -S -B worker.py FD        (its config, JSON, on the pipe FD; sys.path from the config)

in a temporary folder holding a copy of the student's folder, with protocol
requests on stdin and replies on stdout.  Its life:

    1. import NumPy and minigrad (the library, which checks of kind "function"
       and "autograd" need) and a few standard modules students use;
    2. move the protocol pipes aside (prints go to a log, never to the grader),
       refuse imports of ``minigrad.coursework`` (the grader and the shipped
       reference solutions are not the submission's to import), lower its
       limits (resource.setrlimit: memory, CPU time, file size, processes);
       with namespaces, build its private view (isolation.py: its own /proc,
       everything read-only, a private size-capped /tmp holding its folder,
       the grader's folders covered); as root, become the unprivileged user
       the config names;
    3. import the submission (its folder first on sys.path, so its helper
       modules import), report how that went, then answer requests:

       "forward"   run the forward at the given arguments, and at each
                   perturbation (position, flat index, delta) of them: the
                   finite differences of a whole check in one request
       "backward"  run the forward and then the backward at the arguments
       "parameters" a module's parameters as built (asked of the reference only)

    Replies carry arrays only (protocol.py); when the student's code failed,
    "failure" says how as data ("not implemented": it raised
    NotImplementedError; "raised": anything else) and "message" in words.

Module-level names are constants (PRELOAD, HARNESSES, OPERATIONS, the two
failures); the worker keeps no state outside main()'s locals and the
harnesses it builds (the output limit an error message quotes is read back
from the process's own rlimit).

This file imports nothing of the grader, and the grader never imports it.
Nothing here is trusted: the grader validates every reply and kills this
process's whole session when it is done with it.  (A little over 400 lines:
the worker loads no module of the package but protocol.py, so its harnesses,
limits and privilege drop live in this one file.)
"""
import errno
import importlib.util
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
# Imported before the student's clock starts (and before the switch to the worker's uid): the modules a
# submission is likely to use, NumPy's lazily loaded parts (minigrad's first random draw imports numpy.random)
# and minigrad's.  Any other module imports too: the worker's uid reads Python's installation (isolation.py
# mounts it at its own path; without namespaces, control.check_installation refuses a run where it cannot).
PRELOAD = ("numpy.random", "numpy.linalg", "numpy.fft", "minigrad.nn.functional", "minigrad.data",
           "minigrad.decoding", "minigrad.metrics", "minigrad.models", "minigrad.text", "math", "random",
           "itertools", "functools", "collections", "copy", "dataclasses", "typing", "warnings", "string",
           "re", "operator", "statistics", "numbers", "secrets", "hashlib", "heapq", "bisect", "contextlib",
           "enum", "fractions", "time", "json", "inspect", "subprocess", "signal", "glob", "pathlib",
           "tempfile", "shutil", "textwrap", "pprint", "gc", "io", "struct", "abc")


def _load(name):
    """protocol.py or isolation.py, loaded by its path: importing minigrad.coursework would load the grader."""
    spec = importlib.util.spec_from_file_location("minigrad_worker_" + name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NoCoursework:
    """A meta-path finder that refuses ``minigrad.coursework`` and everything under it."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "minigrad.coursework" or name.startswith("minigrad.coursework."):
            raise ImportError(f"{name} cannot be imported while grading: the grader and the reference "
                              "solutions are not part of what a submission may use")
        return None


def answer_stubs(library, names):
    """Stand-ins for the library modules that implement the assignment's answer (checks.json "answer_modules"),
    put in sys.modules before minigrad is imported: the library imports them, the student's code reaches only
    names that raise.  Their top-level names are read from the source, which is never run here."""
    import ast
    import types
    for name in names:
        path = os.path.join(library, *name.split(".")) + ".py"
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        stub = types.ModuleType(name, f"{name} implements this assignment's answer: not available while grading")
        defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        defined += [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]

        def unavailable(*args, _name=name, **kwargs):
            raise ImportError(f"{_name} implements this assignment's answer: it cannot be used while grading "
                              "(write the function yourself)")
        for attribute in defined:
            setattr(stub, attribute, unavailable)
        sys.modules[name] = stub


def set_limits(config):
    """Memory (on top of what is in use now), CPU seconds, output file size, processes; no core files."""
    import resource
    with open("/proc/self/status") as f:
        in_use = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:")), 0)
    limits = {
        resource.RLIMIT_AS: in_use + int(config["memory_mb"] * 2 ** 20),
        resource.RLIMIT_CPU: int(config["cpu_s"]),
        resource.RLIMIT_FSIZE: int(config["output_mb"] * 2 ** 20),
        resource.RLIMIT_NPROC: int(config["nproc"]),
        resource.RLIMIT_CORE: 0,
    }
    for which, value in limits.items():
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value if which != resource.RLIMIT_CPU else value + 1))


def drop_privileges(uid, gid):
    """Become ``uid``/``gid`` for good (root only); check that there is no way back."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise SystemExit("the worker could still become root after dropping its privileges")


# --------------------------------------------------------------------------- calling student code

NOT_IMPLEMENTED = "not implemented"   # a reply's "failure": protocol.NOT_IMPLEMENTED and RAISED (the same words:
RAISED = "raised"                     # StudentError is made before main() loads protocol.py by its path)


class StudentError(Exception):
    """Student code failed; the message says how, in words the student reads; ``failure`` (NOT_IMPLEMENTED or
    RAISED) says it as data, in the reply's "failure" field: the grader never reads the words to decide."""

    def __init__(self, message, failure=RAISED):
        super().__init__(message)
        self.failure = failure


def _where(error):
    """" (rnn.py line 42)" for the last frame of ``error`` inside the submission's folder."""
    folder = os.getcwd() + os.sep
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith("<") and os.path.abspath(f.filename).startswith(folder)]   # no <frozen ..>
    return f" ({os.path.basename(frames[-1].filename)} line {frames[-1].lineno})" if frames else ""


def call(what, function, *args):
    """Call student code, turning whatever it raises into a StudentError that says what happened."""
    try:
        return function(*args)
    except NotImplementedError as error:
        detail = "" if "not implemented yet" in str(error) or not str(error) else f" ({error})"
        raise StudentError(f"{what} is not implemented yet{detail}", NOT_IMPLEMENTED)
    except SystemExit as error:
        raise StudentError(f"{what} called sys.exit({error.code!r}){_where(error)}: a submission must not exit")
    except MemoryError as error:
        raise StudentError(f"{what} ran out of memory{_where(error)} (the limit is set by the grader)")
    except RecursionError as error:
        raise StudentError(f"{what} recursed too deeply{_where(error)}")
    except SyntaxError as error:   # the student's file and line, from the error itself: importlib is not theirs
        line = (error.text or "").strip()
        raise StudentError(f"{what} raised {type(error).__name__}: {error.msg} "
                           f"({os.path.basename(error.filename or '?')} line {error.lineno})"
                           + (f": {line[:200]}" if line else ""))
    except OSError as error:
        if error.errno == errno.EFBIG:   # RLIMIT_FSIZE: what it prints goes to a file of limited size
            import resource   # the limit set_limits set from the config
            limit_mb = resource.getrlimit(resource.RLIMIT_FSIZE)[0] >> 20
            raise StudentError(f"{what} printed more than the {limit_mb} MB of output the grader allows"
                               f"{_where(error)}")
        raise StudentError(f"{what} raised {type(error).__name__}: {str(error)[:500]}{_where(error)}")
    except BaseException as error:   # KeyboardInterrupt and friends too: nothing escapes to the loop
        raise StudentError(f"{what} raised {type(error).__name__}: {str(error)[:500]}{_where(error)}")


def _member(module, name):
    value = getattr(module, name, None)
    if value is None:
        raise StudentError(f"your file has no {name}: keep the names of the assignment's file",
                           NOT_IMPLEMENTED)   # an empty file: nothing tried yet, the first hint only
    return value


def _tuple(value, count, what):
    if count == 1 and not isinstance(value, (tuple, list)):
        return (value,)
    if not isinstance(value, (tuple, list)) or len(value) != count:
        got = len(value) if isinstance(value, (tuple, list)) else 1
        raise StudentError(f"{what} should return {count} value(s), got {got}")
    return tuple(value)


def _array(value, what):
    """A returned value as a NumPy array of numbers (a Tensor's .data), or a StudentError."""
    import numpy
    value = getattr(value, "_data", value) if type(value).__name__ == "Tensor" else value
    try:
        array = numpy.asarray(value)
    except Exception as error:
        raise StudentError(f"{what} is not an array ({type(value).__name__}: {error})")
    if array.dtype.kind not in "fiub":
        raise StudentError(f"{what} is not an array of numbers (a {type(value).__name__} of dtype {array.dtype})")
    return array


class Pair:
    """CS231n style: ``*outputs, cache = forward(*inputs)``; ``grads = backward(*douts, cache)``."""

    def __init__(self, module, target):
        self.target = target
        self.forward_fn = _member(module, target["forward"])
        self.backward_fn = _member(module, target["backward"])

    def _forward(self, args):
        result = call(self.target["forward"], self.forward_fn, *args)
        n = self.target["n_outputs"]
        if not isinstance(result, tuple) or len(result) != n + 1:
            raise StudentError(f"{self.target['forward']} should return {n} output(s) and a cache, as a tuple")
        return result[:-1], result[-1]

    def forward(self, args):
        return self._forward(args)[0]

    def backward(self, args, douts):
        _, cache = self._forward(args)
        grads = call(self.target["backward"], self.backward_fn, *douts, cache)
        return _tuple(grads, len(self.target["differentiable"]), self.target["backward"])


class FunctionClass:
    """A minigrad Function subclass, called as the engine calls it: forward(ctx, *args), backward(ctx, *douts)."""

    def __init__(self, module, target):
        self.target = target
        self.cls = _member(module, target["class"])

    def _context(self, args):
        from minigrad.autograd import Context
        needs = tuple(i in self.target["differentiable"] for i in range(len(args)))
        return Context(self.cls, needs, True)       # a recording context: forward saves for backward

    def forward(self, args):
        name = self.target["class"] + ".forward"
        return _tuple(call(name, self.cls.forward, self._context(args), *args), self.target["n_outputs"], name)

    def backward(self, args, douts):
        name = self.target["class"]
        ctx = self._context(args)
        call(name + ".forward", self.cls.forward, ctx, *args)
        grads = call(name + ".backward", self.cls.backward, ctx, *douts)
        grads = _tuple(grads, len(args), name + ".backward (one gradient per forward argument)")
        return [grads[i] for i in self.target["differentiable"]]


class Autograd:
    """A function on Tensors, or an nn.Module whose parameters the grader sets; differentiated by minigrad."""

    def __init__(self, module, target):
        import minigrad
        self.target = target
        self.name = target.get("class") or target["function"]
        self.fn = _member(module, self.name)
        self.params = []
        if "class" in target:
            if "init_seed" in target:
                minigrad.manual_seed(target["init_seed"])
            self.fn = call(f"{self.name}(...)", lambda: self.fn(**target.get("kwargs", {})).double())
            named = dict(self.fn.named_parameters())
            target.setdefault("parameters", list(named))
            missing = [n for n in target["parameters"] if n not in named]
            if missing or len(named) != len(target["parameters"]):
                raise StudentError(f"{self.name}'s parameters are not the reference's (yours: {sorted(named)}; "
                                   f"expected: {target['parameters']}): keep the layers __init__ creates, "
                                   "with their names")
            self.params = [named[n] for n in target["parameters"]]
        self.minigrad = minigrad

    def _call(self, args, requires_grad):
        import numpy
        Tensor = self.minigrad.Tensor
        n_inputs = self.target["n_inputs"]
        tensors = [Tensor(a, requires_grad=requires_grad and i in self.target["differentiable"])
                   if isinstance(a, numpy.ndarray) else a for i, a in enumerate(args[:n_inputs])]
        for p, value in zip(self.params, args[n_inputs:]):
            if p.shape != value.shape:
                raise StudentError(f"{self.name} has a parameter of shape {p.shape}, the reference's is {value.shape}")
            p._data = numpy.array(value, dtype=numpy.float64)
            p.grad = None
        outputs = _tuple(call(self.name, self.fn, *tensors), self.target["n_outputs"], self.name)
        for out in outputs:
            if not isinstance(out, Tensor):
                raise StudentError(f"{self.name} should return minigrad Tensors, got {type(out).__name__}")
        return tensors, outputs

    def forward(self, args):
        with self.minigrad.no_grad():
            return tuple(out._data for out in self._call(args, False)[1])

    def backward(self, args, douts):
        import numpy
        with self.minigrad.enable_grad():
            tensors, outputs = self._call(args, True)
            for k, (out, v) in enumerate(zip(outputs, douts)):
                if not out.requires_grad:
                    raise StudentError(f"{self.name}'s output {k} has no graph: did the forward use .data or numpy?")
                call(f"backward through {self.name}", out.backward, v, k < len(outputs) - 1)
        leaves = [tensors[i] for i in self.target["differentiable"]] + self.params
        # no gradient at all means the graph never reached the leaf: the grader reads it as zeros
        return [numpy.zeros(t.shape) if t.grad is None else t.grad._data for t in leaves]


class Output:
    """A plain function whose outputs alone are graded (sampling, BLEU): ``outputs = function(*inputs)``."""

    def __init__(self, module, target):
        self.target = target
        self.fn = _member(module, target["function"])

    def forward(self, args):
        return _tuple(call(self.target["function"], self.fn, *args), self.target["n_outputs"], self.target["function"])


HARNESSES = {"pair": Pair, "function": FunctionClass, "autograd": Autograd, "output": Output}


# --------------------------------------------------------------------------- requests

def _arguments(header, arrays):
    """The call's arguments: arrays by number, constants by value."""
    return [arrays[entry["array"]] if "array" in entry else entry["value"] for entry in header["args"]]


def _copies(args):
    return [a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a for a in args]


def forward(harness, header, arrays):
    """Outputs at the arguments, then at each perturbation [position, flat index, delta] of them."""
    args = _arguments(header, arrays)
    n_outputs = harness.target["n_outputs"]
    replies = []
    points = [None] + header.get("perturbations", [])
    for number, perturbation in enumerate(points):
        point = _copies(args)
        if perturbation is not None:
            position, index, delta = perturbation
            point[position].reshape(-1)[index] += delta
        outputs = harness.forward(point)
        outputs = _tuple(outputs, n_outputs, harness.target.get("forward") or harness.target.get("class")
                         or harness.target.get("function"))
        replies.extend(_array(out, f"output {k} of the forward") for k, out in enumerate(outputs))
    point = _copies(args)
    for _ in range(header.get("repeat", 1) - 1):   # the timing case: the forward's CPU cost, measured outside
        harness.forward(point)
    return {"status": "ok"}, replies


def backward(harness, header, arrays):
    args = _arguments(header, arrays)
    douts = arrays[header["douts"]:]
    grads = harness.backward(_copies(args), [d.copy() for d in douts])
    missing = [k for k, g in enumerate(grads) if g is None]
    present = [_array(g, f"gradient {k} of the backward") for k, g in enumerate(grads) if g is not None]
    return {"status": "ok", "missing": missing}, present


def parameters(harness, header, arrays):
    """A module's parameters, by name, as built: how the grader gets the reference's."""
    return {"status": "ok", "names": harness.target["parameters"]}, [p._data for p in harness.params]


OPERATIONS = {"forward": forward, "backward": backward, "parameters": parameters}


def serve(protocol, requests, replies, submission):
    """Answer requests until the grader closes the pipe."""
    harnesses = {}
    while True:
        try:
            header, arrays = protocol.read_message(requests)
        except protocol.ProtocolError:
            return
        try:
            target = header["target"]
            if target["name"] not in harnesses:
                harnesses[target["name"]] = HARNESSES[target["kind"]](submission, target)
            reply, out = OPERATIONS[header["op"]](harnesses[target["name"]], header, arrays)
        except StudentError as error:
            reply, out = {"status": "error", "failure": error.failure, "message": str(error)[:2000]}, []
        except Exception as error:   # a bug here, or a returned value NumPy cannot read
            message = f"{type(error).__name__}: {str(error)[:1000]}{_where(error)}"
            reply, out = {"status": "error", "failure": RAISED, "message": message}, []
        try:
            protocol.write_message(replies, reply, out)
        except protocol.ProtocolError as error:   # e.g. a gradient of dtype object
            protocol.write_message(replies, {"status": "error", "failure": RAISED, "message": str(error)}, [])


def main(config):
    sys.path[:] = [p for p in sys.path if p] + [p for p in config["path"] if p not in sys.path]   # no site: no .pth
    protocol, isolation = _load("protocol"), _load("isolation")
    import numpy  # the grader's arrays arrive as NumPy arrays
    sys.path.insert(0, config["library"])   # the grader's own minigrad, whatever is installed
    answer_stubs(config["library"], config.get("answers", []))
    import minigrad  # the library: checks of kind "function" and "autograd" use it
    for name in PRELOAD:
        __import__(name)
    sys.path.remove(config["library"])
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)              # prints go to the log the grader reads only to quote it
    sys.meta_path.insert(0, NoCoursework)
    for name in [n for n in sys.modules if n == "minigrad.coursework" or n.startswith("minigrad.coursework.")]:
        del sys.modules[name]
    os.umask(0o077)
    hidden, mode = [], config["isolation"]
    # what a submission may import, mounted where it is: not the grader's other sys.path folders (its cwd)
    keep = [os.path.dirname(os.path.abspath(minigrad.__file__)), os.path.dirname(os.path.abspath(numpy.__file__)),
            sys.prefix, sys.base_prefix] + [p for p in sys.path if p.endswith(("-packages", "-packages/"))]
    try:
        if mode in ("namespaces", "user-namespaces"):
            hidden = isolation.private_view(os.getcwd(), config["scratch_mb"], config["hide"],
                                            [os.path.realpath(k) for k in keep], owner=config["uid"])
            os.environ.update(TMPDIR="/tmp", HOME=os.getcwd())
            if mode == "user-namespaces":
                isolation.lock()
    except OSError as error:   # the probe said this works: the grader's side, not the student's
        protocol.write_message(replies, {"status": "sandbox", "message": str(error)})
        return
    set_limits(config)
    if config.get("uid") is not None:
        drop_privileges(config["uid"], config["gid"])
    installed = dict.fromkeys([sys.base_prefix, sys.prefix, os.path.dirname(os.path.abspath(numpy.__file__)),
                               os.path.dirname(os.path.abspath(minigrad.__file__))])
    unreadable = [path for path in installed if not os.access(path, os.R_OK | os.X_OK)]
    # the grader's clock for the submission starts now; "unreadable" is for the instructor (control.py)
    protocol.write_message(replies, {"status": "started", "unreadable": unreadable})
    sys.path.insert(0, os.getcwd())
    module_name = os.path.splitext(config["module"])[0]
    path = os.path.join(os.getcwd(), config["module"])
    try:
        if not os.path.isfile(path):
            found = sorted(name for name in os.listdir(".") if name.endswith(".py"))
            raise StudentError(f"there is no {config['module']} in your submission (found: "
                               f"{', '.join(found) or 'no .py file'}): name your file {config['module']}")
        spec = importlib.util.spec_from_file_location(module_name, path)
        submission = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = submission
        call("importing your file", spec.loader.exec_module, submission)
    except StudentError as error:
        protocol.write_message(replies, {"status": "error", "message": str(error)[:2000]})
        return
    protocol.write_message(replies, {"status": "ready", "uid": os.getuid(), "hidden": hidden})
    serve(protocol, requests, replies, submission)


if __name__ == "__main__":
    with os.fdopen(int(sys.argv[1])) as config_pipe:   # the config comes on a pipe, not on the command line
        main(json.loads(config_pipe.read()))
    os._exit(0)   # no interpreter teardown: the submission's atexit handlers do not run
