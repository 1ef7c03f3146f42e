"""minigrad: a small autograd engine on NumPy/CuPy for learning sequence models.

    import minigrad
    from minigrad import nn, functional as F

The package reads like the course: backend (where arrays live), autograd
(the graph and the chain rule), tensor, creation, functions/ (every primitive's forward
and backward), finite_differences and gradient_check (gradcheck), nn/ (layers), functional (F), optim, serialization.
"""
from . import backend
from .autograd import enable_grad, is_grad_enabled, no_grad
from .backend import manual_seed
from .tensor import (
    Tensor, bool_, float16, float32, float64, get_default_dtype, int32, int64, long, set_default_dtype,
)
from .creation import (
    arange, cat, empty, full, ones, ones_like, rand, randint, randn, split, stack, tensor, where,
    zeros, zeros_like,
)
from .functions import use_reference_kernels  # run the layers on the reference tier (functions/)
from .gradient_check import check_module, gradcheck
from . import functional
from . import nn
from . import optim
from .serialization import save, load

__version__ = "0.1.0"
