"""Adam (Kingma & Ba, 2015) and AdamW (Loshchilov & Hutter, 2019)."""
from .. import backend
from ..checks import hyper_parameter
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adaptive moments.  At step t (from 1), with g the gradient:

        g = g + weight_decay * p        (Adam: L2 penalty added to the gradient)
        p = p * (1 - lr * weight_decay) (AdamW: decoupled decay, g unchanged)
        m = beta1 * m + (1 - beta1) * g          (first moment)
        v = beta2 * v + (1 - beta2) * g^2        (second moment)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    the last line being p - lr * m_hat / (sqrt(v_hat) + eps) with the bias
    corrections m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t).
    """

    decoupled_weight_decay = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        for name, value in dict(lr=lr, eps=eps, weight_decay=weight_decay).items():
            hyper_parameter(type(self).__name__, name, value)    # PyTorch's ValueError and words; NaN too
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{type(self).__name__}: Invalid betas: {betas!r} (a pair (beta1, beta2), such "
                             "as (0.9, 0.999))")
        for index, beta in enumerate(betas):
            hyper_parameter(type(self).__name__, "betas", beta, 0, 1, high_open=True,
                            words=f"beta parameter at index {index}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group, p, g, state in self._params_with_grad():
            lr, (beta1, beta2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            xp = backend.array_module(p._data)
            if not state:
                state["step"] = 0
                state["exp_avg"] = xp.zeros_like(p._data)       # m
                state["exp_avg_sq"] = xp.zeros_like(p._data)    # v
            state["step"] += 1
            t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
            if decay and self.decoupled_weight_decay:
                self._subtract(p, (lr * decay) * p._data)     # p * (1 - lr * decay)
            elif decay:
                g = g + decay * p._data
            # the moments are ours, so they are updated in place, and ONE scratch array
            # (p's size) holds each temporary in turn: no fresh memory per operation
            scratch = xp.multiply(g, 1 - beta1, out=xp.empty_like(p._data))   # an array even for a 0-d p
            m *= beta1
            m += scratch                                      # m = beta1 m + (1 - beta1) g
            xp.multiply(g, g, out=scratch)
            scratch *= 1 - beta2
            v *= beta2
            v += scratch                                      # v = beta2 v + (1 - beta2) g^2
            xp.sqrt(v, out=scratch)
            scratch /= (1 - beta2 ** t) ** 0.5
            scratch += eps                                    # sqrt(v_hat) + eps
            xp.divide(m, scratch, out=scratch)
            scratch *= lr / (1 - beta1 ** t)                  # lr m_hat / (sqrt(v_hat) + eps)
            self._subtract(p, scratch)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: p shrinks by lr * weight_decay * p each step,
    outside the adaptive scaling (so decay is not divided by sqrt(v))."""

    decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
