"""minigrad: a small autograd engine on NumPy/CuPy for learning sequence models.

    import minigrad
    from minigrad import nn, functional as F

The package reads like the course: backend (where arrays live), autograd
(the graph and the chain rule), tensor, creation, functions/ (every primitive's forward
and backward), finite_differences and gradient_check (gradcheck), nn/ (layers), functional (F), optim, serialization.
"""
__version__ = "0.1.0"   # the one source: pyproject.toml reads it, `minigrad --version` prints it

from . import backend
from .autograd import enable_grad, is_grad_enabled, no_grad
from .backend import empty_cache, manual_seed
from .tensor import (
    Tensor, bool_, float16, float32, float64, get_default_dtype, int32, int64, long, set_default_dtype,
)
from .creation import (
    FloatTensor, LongTensor, arange, as_tensor, bernoulli, cat, empty, empty_like, eye, from_numpy, full, full_like,
    linspace, normal, ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, split,
    stack, tensor, where, zeros, zeros_like,
)
from .gradient_check import check_module, gradcheck
from . import functional
from . import nn
from . import optim
from .serialization import save, load

# torch's other top-level names (issue 13): dtypes, devices, the operations as functions
from .autograd import inference_mode, set_grad_enabled
from .dtypes import bool, double, float, half, int, int8, int16, short, uint8
from .torch_compat.devices import device
from . import cuda
from . import utils
from .torch_compat import return_types
from .ops import (
    abs, add, allclose, amax, amin, argmax, argmin, argsort, bmm, ceil, chunk, clamp, clip, clone, cos, cumprod,
    cumsum, detach, div, divide, dot, equal, exp, fix, flatten, flip, floor, floor_divide, gather, ger, index_select,
    is_tensor, isinf, isnan, log, log_softmax, logsumexp, masked_fill, masked_select, matmul, max, maximum, mean,
    min, minimum, mm, mul, multinomial, mv, narrow, neg, nonzero, norm, numel, outer, permute, pow, prod, relu,
    remainder, repeat_interleave, reshape, roll, round, rsqrt, scatter, select, sigmoid, sign, sin, softmax, sort,
    sqrt, square, squeeze, std, sub, sum, t, tanh, topk, transpose, tril, triu, trunc, unbind, unsqueeze, var,
)
from .torch_compat import absent as _absent



def __getattr__(name):
    """Names of torch that minigrad leaves out on purpose: say so, and what to use (minigrad/torch_compat/absent.py)."""
    return _absent.explain("minigrad", name)
