"""Gradient clipping by global norm (the standard cure for exploding RNN gradients)."""
import numbers

from .. import backend
from ..checks import grad_array
from ..creation import tensor
from ..tensor import Tensor


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    """Scale all gradients together so that their joint norm is at most ``max_norm``.

        total = || (g_1, g_2, ...) ||_norm_type  =  || (||g_1||, ||g_2||, ...) ||_norm_type
        g_i <- g_i * min(1, max_norm / (total + 1e-6))

    The direction of the update is kept; only its length shrinks.  Returns the
    total norm before clipping, as a 0-d Tensor (as PyTorch).  Each gradient is
    scaled in place (``p.grad.mul_(coef)``, as PyTorch): it is .grad's own storage.
    """
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    if isinstance(max_norm, bool) or not isinstance(max_norm, numbers.Real) or not max_norm >= 0:
        raise ValueError(f"clip_grad_norm_: max_norm must be a number >= 0, got {max_norm!r} (a NaN or negative "
                         "bound would make every gradient NaN or flip its sign)")
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise ValueError(f"clip_grad_norm_: norm_type must be a number (2.0, 1.0 or float('inf')), got {norm_type!r}")
    grads = [grad_array("clip_grad_norm_", p) for p in parameters if p.grad is not None]
    if not grads:
        return tensor(0.0)
    xp = backend.array_module(*grads)
    norms = [xp.linalg.norm(g.reshape(-1), norm_type) for g in grads if g.size]   # one per parameter
    total = xp.linalg.norm(xp.stack(norms), norm_type) if norms else xp.zeros((), dtype=grads[0].dtype)
    total = backend.ensure_array(total)
    coef = xp.minimum(max_norm / (total + 1e-6), 1.0)   # stays on the device: no host sync
    for p in parameters:
        if p.grad is not None:
            p.grad._data *= coef.astype(p.dtype)        # p.grad.mul_(coef), on its array
            p.grad._version[0] += 1                     # changed in place: a graph that saved it notices
    return Tensor(total)
