"""RMSprop (Hinton's lecture 6e), as torch.optim.RMSprop computes it."""
from .. import backend
from ..checks import hyper_parameter
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """Divide the gradient by a running root mean square of recent gradients.  With g the gradient:

        g = g + weight_decay * p                     (L2 penalty)
        v = alpha * v + (1 - alpha) * g^2            (mean square, state "square_avg")
        centered:  a = alpha * a + (1 - alpha) * g   (mean, "grad_avg");  v_used = v - a^2
        d = g / (sqrt(v_used) + eps)                 (eps outside the square root, as PyTorch)
        momentum > 0:  b = momentum * b + d;  d = b  ("momentum_buffer")
        p = p - lr * d
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
        for name, value in dict(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay).items():
            hyper_parameter("RMSprop", name, value)    # PyTorch's ValueError and words; NaN too
        hyper_parameter("RMSprop", "alpha", alpha, 0, 1)            # a decay: above 1 the average diverges
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group, p, g, state in self._params_with_grad():
            alpha, momentum = group["alpha"], group["momentum"]
            xp = backend.array_module(p._data)
            if not state:
                state["step"] = 0
                state["square_avg"] = xp.zeros_like(p._data)
                if momentum > 0:
                    state["momentum_buffer"] = xp.zeros_like(p._data)
                if group["centered"]:
                    state["grad_avg"] = xp.zeros_like(p._data)
            state["step"] += 1
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            v = state["square_avg"]                       # ours: updated in place
            v *= alpha
            v += (1 - alpha) * g * g
            if group["centered"]:
                a = state["grad_avg"]
                a *= alpha
                a += (1 - alpha) * g
                root = xp.sqrt(v - a * a) + group["eps"]
            else:
                root = xp.sqrt(v) + group["eps"]
            d = g / root
            if momentum > 0:
                b = state["momentum_buffer"]
                b *= momentum
                b += d
                d = b
            self._subtract(p, group["lr"] * d)
        return loss
