"""Adagrad (Duchi, Hazan & Singer, 2011), as torch.optim.Adagrad computes it."""
from .. import backend
from ..checks import hyper_parameter
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """Each coordinate's step shrinks with the sum of its squared gradients.  At step t (from 1):

        g = g + weight_decay * p                     (L2 penalty)
        lr_t = lr / (1 + (t - 1) * lr_decay)
        s = s + g^2                                  (state "sum", from initial_accumulator_value)
        p = p - lr_t * g / (sqrt(s) + eps)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10):
        for name, value in dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                initial_accumulator_value=initial_accumulator_value, eps=eps).items():
            hyper_parameter("Adagrad", name, value)    # PyTorch's ValueError and words; NaN too
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps))

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group, p, g, state in self._params_with_grad():
            if not state:
                state["step"] = 0
                state["sum"] = backend.array_module(p._data).full_like(p._data, group["initial_accumulator_value"])
            state["step"] += 1
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            lr_t = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
            s = state["sum"]                              # ours: updated in place
            s += g * g
            self._subtract(p, lr_t * g / (backend.array_module(s).sqrt(s) + group["eps"]))
        return loss
