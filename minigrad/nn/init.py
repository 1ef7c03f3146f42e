"""Parameter initialisations (in place, under no_grad), named as in ``torch.nn.init``.

All draws come from the generator seeded by ``minigrad.manual_seed``.
"""
import math

from .. import backend
from ..autograd import no_grad


def _fill(tensor, data):
    with no_grad():
        tensor._data = data.astype(tensor.dtype)
        tensor._version[0] += 1
    return tensor


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with draws from U(a, b)."""
    return _fill(tensor, backend.random_uniform(tensor.shape, tensor.dtype, tensor.device, a, b))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with draws from N(mean, std^2)."""
    return _fill(tensor, backend.random_normal(tensor.shape, tensor.dtype, tensor.device, mean, std))


def constant_(tensor, val):
    """Fill with ``val``."""
    return _fill(tensor, backend.array_module(tensor._data).full(tensor.shape, val, dtype=tensor.dtype))


def zeros_(tensor):
    return _fill(tensor, backend.array_module(tensor._data).zeros_like(tensor._data))


def ones_(tensor):
    return _fill(tensor, backend.array_module(tensor._data).ones_like(tensor._data))


def fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight (out_features, in_features, *kernel)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out need a weight with 2 or more dimensions, got {tensor.shape}")
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def xavier_uniform_(tensor, gain=1.0):
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))  (Glorot & Bengio, 2010)."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """N(0, s^2), s = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def calculate_gain(nonlinearity, param=None):
    """The gain torch recommends for an activation: tanh 5/3, relu sqrt(2), leaky_relu sqrt(2 / (1 + a^2)), ..."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}")


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-b, b), b = sqrt(3) * gain / sqrt(fan)  (He et al., 2015); the defaults give b = sqrt(6 / fan_in)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """N(0, s^2), s = gain / sqrt(fan)  (He et al., 2015)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """N(mean, std^2) restricted to [a, b] (values outside are drawn again)."""
    generator = backend.host_generator()
    values = generator.normal(mean, std, size=tensor.shape)
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = generator.normal(mean, std, size=int(outside.sum()))
        outside = (values < a) | (values > b)
    return _fill(tensor, backend.asarray(values, dtype=tensor.dtype, device=tensor.device))


def orthogonal_(tensor, gain=1.0):
    """Fill with a random (semi-)orthogonal matrix times ``gain`` (Saxe et al., 2014), as torch.nn.init.orthogonal_.

    The weight is viewed as (rows, cols) = (shape[0], the rest).  A Gaussian
    matrix is QR-factorised and each column of Q multiplied by the sign of R's
    diagonal, which makes the draw uniform over orthogonal matrices: the rows
    (if rows <= cols) or the columns (otherwise) are orthonormal.  Keras'
    ``Orthogonal`` initializer, the default for recurrent weights, is the same.
    """
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_ needs a weight with 2 or more dimensions, got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = math.prod(tensor.shape[1:])
    host = backend.get_module("cpu")                       # drawn and factorised on the host, like every draw
    flat = backend.random_normal((rows, cols), "float64", "cpu")
    if rows < cols:
        flat = flat.T                                      # QR of the tall (cols, rows) matrix
    q, r = host.linalg.qr(flat)
    q = q * host.sign(host.diagonal(r))                    # column j times sign(r_jj)
    if rows < cols:
        q = q.T
    data = backend.asarray(gain * q.reshape(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return _fill(tensor, data)
