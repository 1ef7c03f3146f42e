"""Optimizer: the base class that holds parameter groups and per-parameter state."""
from .. import backend
from ..autograd import enable_grad, no_grad
from ..checks import grad_array
from ..tensor import Tensor


class Optimizer:
    """Updates parameters from their ``.grad``.

    params:   an iterable of Parameters, or of dicts ``{"params": [...], "lr": ...}``
              (parameter groups, each with its own hyper-parameters)
    defaults: the hyper-parameters a group gets unless it names its own

    ``self.param_groups`` is a list of dicts (``group["lr"]`` is what schedulers
    change); ``self.state[p]`` is a dict of arrays and numbers per parameter
    (momentum buffers, Adam's moments and step count).
    """

    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            raise TypeError(
                "params must be an iterable of Tensors or of dicts, got one Tensor: "
                "pass [tensor] or model.parameters()"
            )
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = {}
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list: does the model have parameters?")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group):
        """Add a dict with "params" (and optional hyper-parameters) to ``param_groups``."""
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("optimizer can't optimize a non-leaf Tensor: pass the parameters (leaves)")
            if id(p) in seen:
                raise ValueError("some parameters appear in more than one parameter group")
            seen.add(id(p))
        group = {**self.defaults, **group, "params": params}
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients: ``p.grad = None``, or with set_to_none=False ``p.grad.zero_()`` (as PyTorch)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient.

        closure (optional): a function that recomputes the loss, calls backward() and returns the
        loss; step calls it first (under enable_grad) and returns what it returned, as PyTorch's.
        """
        raise NotImplementedError(f"{type(self).__name__} must define step()")

    @staticmethod
    def _evaluate(closure):
        """closure() under enable_grad, or None without a closure: the loss that step() returns."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _params_with_grad(self):
        """(group, p, g, state) for each parameter whose grad is not None; g is p.grad's array."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield group, p, grad_array(f"{type(self).__name__}.step", p), self.state.setdefault(p, {})

    @staticmethod
    def _subtract(p, delta):
        """p._data -= delta, in place, and tell autograd that p changed.

        The version bump makes a backward through a graph that saved the old
        values of p raise an error instead of silently using the new ones.
        """
        with no_grad():
            p._data -= delta
            p._version[0] += 1

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self):
        """{"state": {index: {name: array or number}}, "param_groups": [{hyper-parameters, "params": [index]}]}.

        Parameters are numbered in the order of ``param_groups``, as in PyTorch;
        arrays are shared (not copied), numbers and tuples are plain Python, so
        the dict can go through ``minigrad.save``.
        """
        index = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = [index[id(p)] for p in group["params"]]
            groups.append(saved)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state saved by ``state_dict`` (arrays are copied).

        State keys may be ints or strings ("0", as they come back from
        ``minigrad.load``); array values may be Tensors or arrays.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"load_state_dict: the checkpoint has {len(saved_groups)} parameter groups, "
                f"this optimizer has {len(self.param_groups)}"
            )
        by_index = {}
        for number, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"load_state_dict: parameter group {number} has {len(saved['params'])} parameters "
                    f"in the checkpoint and {len(group['params'])} here"
                )
            for saved_index, p in zip(saved["params"], group["params"]):
                by_index[int(saved_index)] = p
            for key, value in saved.items():
                if key != "params":
                    group[key] = tuple(value) if isinstance(group.get(key), tuple) else value
        self.state = {}
        for key, saved_state in state_dict["state"].items():
            p = by_index[int(key)]
            self.state[p] = {name: _copy_to(value, p) for name, value in saved_state.items()}

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for number, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {number}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines + [")"])


def _copy_to(value, p):
    """A state value as a new array on p's device (and float dtype); numbers stay numbers."""
    if isinstance(value, Tensor):
        value = value._data
    if not hasattr(value, "shape"):
        return value
    dtype = p.dtype if value.dtype.kind == "f" else value.dtype
    return backend.asarray(backend.to_numpy(value), dtype=dtype, device=p.device)
