"""Coverage of the torch names that classic teaching material uses (tests/teaching_names.py).

Each listed name must be, in minigrad, either
- present and meaning what it means in torch: the same kind of thing (class, function, module,
  dtype, property), and PyTorch's positional arguments under PyTorch's names in PyTorch's order
  (read from torch's signature, or from the first line of its docstring where torch's is in C); or
- absent on purpose, raising an AttributeError that says what to use instead (minigrad/torch_compat/absent.py).
The coverage figure (present / listed) is printed and must not fall below COVERAGE_FLOOR.
"""
import inspect
import re
import types

import numpy
import pytest

import minigrad
import minigrad.nn.functional
import minigrad.utils.data
from teaching_names import NAMES

torch = pytest.importorskip("torch")
import torch.nn.functional  # noqa: E402
import torch.utils.data  # noqa: E402

COVERAGE_FLOOR = 0.9

OURS = {
    "torch": minigrad, "torch.Tensor": minigrad.Tensor, "torch.nn": minigrad.nn,
    "torch.nn.functional": minigrad.nn.functional, "torch.nn.init": minigrad.nn.init,
    "torch.nn.utils": minigrad.nn.utils, "torch.nn.utils.rnn": minigrad.nn.utils.rnn, "torch.optim": minigrad.optim,
    "torch.optim.lr_scheduler": minigrad.optim.lr_scheduler, "torch.utils.data": minigrad.utils.data,
    "torch.autograd": minigrad.autograd,
}
THEIRS = {
    "torch": torch, "torch.Tensor": torch.Tensor, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional,
    "torch.nn.init": torch.nn.init, "torch.nn.utils": torch.nn.utils, "torch.nn.utils.rnn": torch.nn.utils.rnn,
    "torch.optim": torch.optim,
    "torch.optim.lr_scheduler": torch.optim.lr_scheduler, "torch.utils.data": torch.utils.data,
    "torch.autograd": torch.autograd,
}
# Argument names minigrad spells differently on purpose, each listed in minigrad/TORCH_DIFFERENCES.md
SPELLINGS = {
    ("torch.Tensor", "uniform_", "from"): "from_",          # `from` is a Python keyword
    ("torch.nn", "GRUCell", "device"): None,                # minigrad's reset_after sits there: device=, dtype=
}                                                            # by keyword (None: the comparison stops there)
NOT_ARGUMENTS = {"self", "out", "generator", "layout", "pin_memory", "memory_format", "names"}


def _kind(value):
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, type):
        return "class"
    if isinstance(value, (torch.dtype, numpy.dtype)):
        return "dtype"
    if isinstance(value, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
        return "attribute"
    if callable(value):
        return "callable"
    return "value"


def _positional_names(obj):
    """The positional parameters (names, in order) of a function or class, or None if unknown."""
    target = obj.__init__ if isinstance(obj, type) else obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return _names_from_docstring(obj)
    names = []
    for parameter in signature.parameters.values():
        if parameter.kind == parameter.VAR_POSITIONAL:
            return None                                  # view(*shape): no fixed order to compare
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            names.append(parameter.name)
    return [n for n in names if n not in NOT_ARGUMENTS]


def _names_from_docstring(obj):
    """torch's C functions document themselves as 'cat(tensors, dim=0, *, out=None) -> Tensor'."""
    first = (getattr(obj, "__doc__", None) or "").strip().split("\n")[0]
    match = re.match(r"^\w+\((.*?)\)", first)
    if not match:
        return None
    names = []
    for part in match.group(1).replace("\\*", "*").split(","):
        part = part.split("=")[0].split(":")[0].strip()          # no default, no annotation
        if part.startswith("*"):
            break                                                 # keyword-only from here
        if part:
            names.append(part)
    return [n for n in names if n not in NOT_ARGUMENTS]


def _torch_method_names(name):
    """A Tensor method's arguments: torch.<name>'s (the function's first argument, the tensor, dropped), whose
    documentation spells them as the binding takes them (Tensor.mul's says 'value', torch.mul's 'other');
    in-place methods (mul_) take those of their function (mul).  None where torch has no such function."""
    function = getattr(torch, name[:-1] if name.endswith("_") and not name.endswith("__") else name, None)
    if function is None or isinstance(function, type) or not callable(function):
        return None
    names = _names_from_docstring(function)
    return names[1:] if names and names[0] in ("input", "tensor", "self") else None


def _explained_absence(namespace, name):
    try:
        getattr(minigrad.ones(1) if namespace == "torch.Tensor" else OURS[namespace], name)
    except AttributeError as error:
        return "is not in minigrad" in str(error) and len(str(error)) > 60, str(error)
    return False, "present"


def _check(namespace, name):
    """None if minigrad has ``name`` and it means torch's; else the problem, in words."""
    theirs = inspect.getattr_static(THEIRS[namespace], name, None) if namespace == "torch.Tensor" else None
    theirs = getattr(THEIRS[namespace], name) if theirs is None or namespace != "torch.Tensor" else theirs
    if namespace == "torch.Tensor":
        ours = inspect.getattr_static(OURS[namespace], name, None)
        if ours is None:
            return "missing"
        if isinstance(ours, (staticmethod, classmethod)):
            ours = ours.__func__
    else:
        try:
            ours = getattr(OURS[namespace], name)
        except AttributeError:
            return "missing"
    their_kind, our_kind = _kind(theirs), _kind(ours)
    if namespace == "torch" and name in ("FloatTensor", "LongTensor", "Tensor"):
        their_kind = our_kind                            # legacy constructors: functions here (TORCH_DIFFERENCES.md)
    if {their_kind, our_kind} <= {"attribute", "value"} or {their_kind, our_kind} <= {"callable", "class"} \
            and namespace != "torch.nn" or their_kind == our_kind:
        pass
    else:
        return f"a {our_kind} in minigrad, a {their_kind} in torch"
    if our_kind not in ("callable", "class") or their_kind not in ("callable", "class"):
        return None
    their_names = (namespace == "torch.Tensor" and _torch_method_names(name)) or _positional_names(theirs)
    our_names = _positional_names(ours)
    if their_names is None or our_names is None:
        return None
    if namespace == "torch.nn" and their_kind == "class":
        their_names, our_names = their_names[1:], our_names[1:]     # self
    elif namespace == "torch.Tensor" and our_names and our_names[0] == "self":
        our_names = our_names[1:]
    for position, (their_name, our_name) in enumerate(zip(their_names, our_names)):
        if SPELLINGS.get((namespace, name, their_name), "") is None:
            break
        if our_name != SPELLINGS.get((namespace, name, their_name), their_name):
            return f"argument {position} is '{our_name}' in minigrad, '{their_name}' in torch"
    return None


def _results():
    results = {}
    for namespace, names in NAMES.items():
        for name in names:
            results[namespace, name] = _check(namespace, name)
    return results


def test_every_listed_name_is_torchs_or_explained():
    problems, absent, present = [], [], []
    for (namespace, name), problem in _results().items():
        assert hasattr(THEIRS[namespace], name), f"{namespace}.{name} is not a torch name: fix the list"
        if problem is None:
            present.append(f"{namespace}.{name}")
        elif problem == "missing":
            explained, message = _explained_absence(namespace, name)
            if explained:
                absent.append(f"{namespace}.{name}")
            else:
                problems.append(f"{namespace}.{name}: missing, and the error does not say what to use ({message})")
        else:
            problems.append(f"{namespace}.{name}: {problem}")
    total = len(present) + len(absent) + len(problems)
    coverage = len(present) / total
    print(f"\nteaching-name coverage: {len(present)} of {total} ({coverage:.1%}); absent on purpose: {', '.join(absent)}")
    assert not problems, "\n".join(problems)
    assert coverage >= COVERAGE_FLOOR, f"coverage {coverage:.1%} fell below {COVERAGE_FLOOR:.0%}"


def test_the_check_catches_a_missing_name_and_a_different_order():
    # the test can fail: a name minigrad lacks, and a function whose arguments are in another order
    assert _check("torch", "tensordot") == "missing"

    def topk(input, dim, k):                              # torch: topk(input, k, dim=None, ...)
        return input

    original = minigrad.topk
    minigrad.topk = topk
    try:
        assert _check("torch", "topk") == "argument 1 is 'dim' in minigrad, 'k' in torch"
    finally:
        minigrad.topk = original
    assert _check("torch", "topk") is None


@pytest.mark.parametrize("namespace, name", [
    ("torch", "einsum"), ("torch.Tensor", "is_contiguous"), ("torch.Tensor", "index_add_"),
    ("torch.nn", "Conv2d"), ("torch.utils.data", "IterableDataset"),
])
def test_absent_names_say_what_to_use(namespace, name):
    target = minigrad.ones(2) if namespace == "torch.Tensor" else OURS[namespace]
    with pytest.raises(AttributeError, match=r"is not in minigrad: .*(use|write|subclass|call|drop)"):
        getattr(target, name)
