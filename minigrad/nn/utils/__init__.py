"""``torch.nn.utils`` names: gradient clipping (the code lives in ``minigrad/optim/clip.py``) and ``rnn``."""
from ...optim.clip import clip_grad_norm_  # noqa: F401  (re-exported: nn.utils.clip_grad_norm_)
from ...tensor import Tensor
from . import rnn  # noqa: F401  (nn.utils.rnn.pad_sequence)


def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient element to [-clip_value, clip_value], in place (``p.grad.clamp_``, as PyTorch)."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for p in parameters:
        if p.grad is not None:
            p.grad.clamp_(-clip_value, clip_value)

