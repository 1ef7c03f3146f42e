"""NumPy meets a Tensor as it meets a CPU torch tensor: ``np.asarray(t)`` is its array (a view),
``np.exp(t)`` a Tensor, and a NumPy scalar or array on the left of an operator (``np.sqrt(d_k) * x``)
defers to the Tensor's operator, so the result is a Tensor, never an object array of 0-d Tensors.
(That NumPy scalars never change a tensor's dtype is promotion.py's job.)  ``t.__index__`` lets a
one-element integer tensor index a list (``all_letters[top_index]``, ``range(n_tensor)``).

Tensor inherits this class ("go to definition" from ``np.asarray(t)``'s ``__array__`` lands here).
"""
from .. import autograd


class NumPyInterop:
    """The NumPy protocol methods of a Tensor (mixed into minigrad.Tensor)."""

    __slots__ = ()

    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        """The values as a NumPy array (np.asarray(t), np.exp(t)), refused where torch refuses."""
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad (as in PyTorch): "
                               "use t.detach().numpy(), or the Tensor method (t.exp() for np.exp(t))")
        if self.device != "cpu":
            raise TypeError(f"can't convert a {self.device} tensor to NumPy implicitly (as in PyTorch): "
                            "use t.cpu() or t.numpy() first")
        array = self._data if dtype is None else self._data.astype(dtype, copy=False)
        return array.copy() if copy else array

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy function's result on a Tensor (np.exp(t)) comes back a Tensor, as in torch."""
        return self._from_array(array)

    def __index__(self):
        """A one-element integer tensor as a Python index (letters[top_index], range(n_tensor))."""
        if self._data.size != 1 or self.dtype.kind not in "iub":
            raise TypeError(f"only integer tensors of a single element can be converted to an index "
                            f"(got {self.dtype} of shape {self.shape}): use int(t) or t.long()")
        return int(self.item())
