"""torch.Tensor's in-place methods beyond those in tensor.py: x.clamp_(lo, hi), x.exp_(),
x.normal_(), x.unsqueeze_(0), ...  Each one is a call of minigrad/in_place.py, which changes the
values (or the shape) in place and, while gradients are recorded, the tensor's graph node, as in
PyTorch: a leaf that requires grad refuses, and a node that saved the old values raises at backward.

Tensor inherits this class, so every method below is a Tensor method ("go to definition" from
``x.clamp_`` lands here).  The value methods run the out-of-place method of the same name
(``clamp_`` runs ``x.clamp``) through ``in_place.write``: one equation, one backward, for both.
"""
from .. import backend, in_place
from .. import functions as fn


class InPlaceMethods:
    """The in-place methods of a Tensor (mixed into minigrad.Tensor)."""

    __slots__ = ()

    # ---------------------------------------------------------------- values: y = f(x), written into x
    def clamp_(self, min=None, max=None):
        clamped = in_place.Computed(lambda x, low, high: x.clamp(low, high))
        return in_place.write(self, "clamp_", clamped, min, max, reads_old_values=True)

    clip_ = clamp_

    def clamp_min_(self, min):
        return self.clamp_(min, None)

    def clamp_max_(self, max):
        return self.clamp_(None, max)

    def neg_(self):
        return in_place.write(self, "neg_", in_place.Computed(lambda x: x.neg()))

    def abs_(self):
        return in_place.write(self, "abs_", in_place.Computed(lambda x: x.abs()), reads_old_values=True)

    def exp_(self):
        return in_place.write(self, "exp_", in_place.Computed(lambda x: x.exp()), reads_old_values=True)

    def log_(self):
        return in_place.write(self, "log_", in_place.Computed(lambda x: x.log()), reads_old_values=True)

    def sqrt_(self):
        return in_place.write(self, "sqrt_", in_place.Computed(lambda x: x.sqrt()), reads_old_values=True)

    def rsqrt_(self):
        return in_place.write(self, "rsqrt_", in_place.Computed(lambda x: x.rsqrt()), reads_old_values=True)

    def square_(self):
        return in_place.write(self, "square_", in_place.Computed(lambda x: x.square()), reads_old_values=True)

    def pow_(self, exponent):
        powered = in_place.Computed(lambda x, p: x.pow(p))
        return in_place.write(self, "pow_", powered, exponent, reads_old_values=True)

    def tanh_(self):
        return in_place.write(self, "tanh_", in_place.Computed(lambda x: x.tanh()), reads_old_values=True)

    def sigmoid_(self):
        return in_place.write(self, "sigmoid_", in_place.Computed(lambda x: x.sigmoid()), reads_old_values=True)

    def relu_(self):
        return in_place.write(self, "relu_", in_place.Computed(lambda x: x.relu()), reads_old_values=True)

    def sin_(self):
        return in_place.write(self, "sin_", in_place.Computed(lambda x: x.sin()), reads_old_values=True)

    def cos_(self):
        return in_place.write(self, "cos_", in_place.Computed(lambda x: x.cos()), reads_old_values=True)

    def tril_(self, diagonal=0):
        return in_place.write(self, "tril_", in_place.Computed(lambda x: x.tril(diagonal)))

    def triu_(self, diagonal=0):
        return in_place.write(self, "triu_", in_place.Computed(lambda x: x.triu(diagonal)))

    def addcmul_(self, tensor1, tensor2, value=1):
        """self += value * tensor1 * tensor2 (the gradient reaches all three)."""
        return self.add_(tensor1 * tensor2, alpha=value)

    def addcdiv_(self, tensor1, tensor2, value=1):
        """self += value * tensor1 / tensor2 (the gradient reaches all three)."""
        return self.add_(tensor1 / tensor2, alpha=value)

    # ---------------------------------------------------------------- random fills (no gradient)
    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Every element drawn from N(mean, std^2); reproducible under ``minigrad.manual_seed``."""
        _no_generator("normal_", generator)
        draws = backend.random_normal(self.shape, self.dtype, self.device, mean, std)
        return in_place.write(self, "normal_", fn.SetItem, Ellipsis, draws)

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        """Every element drawn from U(from_, to) (torch names the first argument ``from``, a Python keyword)."""
        _no_generator("uniform_", generator)
        draws = backend.random_uniform(self.shape, self.dtype, self.device, from_, to)
        return in_place.write(self, "uniform_", fn.SetItem, Ellipsis, draws)

    def bernoulli_(self, p=0.5, *, generator=None):
        """Every element 1 with probability p, else 0 (p a number)."""
        _no_generator("bernoulli_", generator)
        draws = backend.random_uniform(self.shape, "float64", self.device) < p
        return in_place.write(self, "bernoulli_", fn.SetItem, Ellipsis, draws.astype(self.dtype))

    # ---------------------------------------------------------------- shapes: the tensor becomes its view
    def unsqueeze_(self, dim):
        return in_place.reshape(self, "unsqueeze_", lambda x: x.unsqueeze(dim))

    def squeeze_(self, dim=None):
        return in_place.reshape(self, "squeeze_", lambda x: x.squeeze(dim))

    def transpose_(self, dim0, dim1):
        return in_place.reshape(self, "transpose_", lambda x: x.transpose(dim0, dim1))

    def t_(self):
        return in_place.reshape(self, "t_", lambda x: x.t())

    def detach_(self):
        """Cut this tensor from the graph, in place: it becomes a leaf that does not require grad."""
        if self._view_of is not None and self.grad_fn is not None:
            raise RuntimeError("detach_: a view cannot be detached in place (as in PyTorch): use x = x.detach()")
        self.grad_fn, self._output_index, self.requires_grad = None, 0, False
        return self


def _no_generator(op, generator):
    if generator is not None:
        raise NotImplementedError(f"{op}(generator=...) is not implemented: seed with minigrad.manual_seed")
