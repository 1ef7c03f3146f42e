"""Stochastic gradient descent, with momentum and Nesterov momentum."""
from ..checks import hyper_parameter
from .optimizer import Optimizer


class SGD(Optimizer):
    """p <- p - lr * d, where (as in PyTorch):

        g = grad + weight_decay * p                      (L2 penalty)
        b = g                        at the first step    (momentum buffer)
        b = momentum * b + (1 - dampening) * g  after
        d = g + momentum * b   if nesterov,   else d = b  (d = g without momentum)
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        for name, value in dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay).items():
            hyper_parameter("SGD", name, value)    # PyTorch's ValueError and words; NaN too
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening (nesterov=True "
                             f"needs momentum > 0 and dampening=0, got {momentum} and {dampening})")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group, p, g, state in self._params_with_grad():
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            momentum = group["momentum"]
            if momentum:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.copy()
                else:
                    buf *= momentum                          # the buffer is ours: update in place
                    buf += g if not group["dampening"] else (1 - group["dampening"]) * g
                g = g + momentum * buf if group["nesterov"] else buf
            self._subtract(p, group["lr"] * g)
        return loss
