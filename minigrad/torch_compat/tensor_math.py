"""torch.Tensor's arithmetic beyond the operators, added for the teaching programs (issue 18):
products of vectors (outer, dot, mv), running products and reductions (cumprod, prod, logsumexp),
rounding division (div(rounding_mode=), //, %), round/floor/ceil/trunc, sign, roll, isnan/isinf.
Each is one Function of ``minigrad.functions`` or a few Tensor operations (follow them with
"go to definition").

Tensor inherits this class, so these are Tensor methods; tensor.py holds the rest.
"""
import numbers

from .. import autograd, backend, composed
from . import arguments, promotion
from .. import functions as fn


class MathMethods:
    """More of torch.Tensor's arithmetic (mixed into minigrad.Tensor)."""

    __slots__ = ()

    def div(self, other, *, rounding_mode=None):
        """self / other; rounding_mode "trunc" (toward zero) or "floor" rounds it, with zero gradient."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f'div: rounding_mode must be None, "trunc" or "floor", got {rounding_mode!r}')
        a, b = promotion.promote(self, other)
        return fn.RoundedDiv.apply(a, b, rounding_mode)

    divide = div

    def cumprod(self, dim=None, *, axis=None):
        """Running products along dim: y_i = x_1 * ... * x_i (zeros allowed)."""
        dim, _ = arguments.numpy_aliases("cumprod", dim, False, axis, None, required=True)
        return fn.CumProd.apply(self, dim)

    def logsumexp(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """log(sum(exp(x))) over dim, computed stably (the max taken out first)."""
        dim, keepdim = arguments.numpy_aliases("logsumexp", dim, keepdim, axis, keepdims, required=True)
        return composed.logsumexp(self, dim, keepdim)

    def roll(self, shifts, dims=None):
        """Entries shifted by ``shifts`` along ``dims``, wrapping around (the flattened tensor if dims is None)."""
        shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else shifts
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else dims
        return fn.Roll.apply(self, shifts, dims)

    def outer(self, vec2):
        """The outer product of two 1-D tensors: out[i, j] = self[i] * vec2[j]."""
        if self.ndim != 1 or vec2.ndim != 1:
            raise ValueError(f"outer: expected two 1-D tensors, got shapes {self.shape} and {vec2.shape}")
        return self.unsqueeze(1) * vec2.unsqueeze(0)

    ger = outer

    def dot(self, tensor):
        """The inner product of two 1-D tensors of the same length."""
        if self.ndim != 1 or tensor.ndim != 1 or self.shape != tensor.shape:
            raise ValueError(f"dot: expected two 1-D tensors of the same size, got {self.shape} and {tensor.shape}")
        return self @ tensor

    def prod(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The product over dim (all elements by default): the last running product, so zeros are fine."""
        dim, keepdim = arguments.numpy_aliases("prod", dim, keepdim, axis, keepdims)
        if dim is None:
            return self.reshape(-1).cumprod(0)[-1] if self.numel() else self.new_ones(())
        last = self.cumprod(dim).narrow(dim, self.shape[dim] - 1, 1)
        return last if keepdim else last.squeeze(dim)

    def sign(self):
        """-1, 0 or 1 per element (zero gradient)."""
        return fn.Sign.apply(self)

    def round(self, *, decimals=0):
        """The nearest whole number, halves to even (or to ``decimals`` places), with zero gradient."""
        if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
            raise TypeError(f"round: decimals must be an int, got {decimals!r}")
        return fn.Round.apply(self, "round", int(decimals))

    def floor(self):
        """The largest whole number <= each element (zero gradient)."""
        return fn.Round.apply(self, "floor", 0)

    def ceil(self):
        """The smallest whole number >= each element (zero gradient)."""
        return fn.Round.apply(self, "ceil", 0)

    def trunc(self):
        """Each element rounded toward zero (zero gradient)."""
        return fn.Round.apply(self, "trunc", 0)

    fix = trunc

    def isnan(self):
        return self._from_array(backend.array_module(self._data).isnan(self._data))

    def isinf(self):
        return self._from_array(backend.array_module(self._data).isinf(self._data))

    def __floordiv__(self, other):
        return self.div(other, rounding_mode="floor")

    def __mod__(self, other):
        """self - floor(self / other) * other (the sign of other, as torch.remainder and Python's %)."""
        return self - (self // other) * other

    remainder = __mod__

    def mv(self, vec):
        """Matrix (n, m) times vector (m,) -> (n,)."""
        if self.ndim != 2 or vec.ndim != 1:
            raise ValueError(f"mv: expected a matrix and a vector, got {self.shape} and {vec.shape}; use matmul (@)")
        return self @ vec
