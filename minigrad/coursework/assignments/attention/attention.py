"""Assignment: softmax, LayerNorm and scaled dot-product attention, forward and backward.

    softmax:     y_i = exp(x_i - m) / sum_j exp(x_j - m), m = max_j x_j    over one axis
    layer norm:  x_hat = (x - mean) / sqrt(var + eps),  y = x_hat * weight + bias   over the last axes
    attention:   S = q k^T * scale + B,  P = softmax(S) over the keys,  out = P v

Each forward returns its output and a ``cache``, anything the backward needs;
each backward takes the upstream gradient and the cache and returns one
gradient per input, of that input's shape.

These are minigrad's own functions, with the parts you write taken out:

    softmax_forward, softmax_backward          minigrad/functions/softmax.py
    layer_norm_forward, layer_norm_backward    minigrad/functions/normalization.py
    attention_forward, attention_backward      minigrad/functions/attention.py

Written right, they are the code minigrad runs: ``Tensor.softmax`` and the reference
tier of the layer norm and the attention (``nn.LayerNorm(..., reference=True)``,
``F.scaled_dot_product_attention(..., reference=True)``, ``nn.MultiheadAttention(...,
reference=True)``) call them.

The mask of the attention is minigrad's one convention: a float bias B added to
the scores, 0 where a query may attend and -inf where it may not (any other
value is a bias, given or learned: it gets its gradient dB).  The causal mask is
B = np.where(np.triu(np.ones((T, T), bool), k=1), -np.inf, 0.0).

Shapes: N batch, T queries, S keys, d features of a query or key, dv of a value.
"""
# BEGIN LIBRARY
from minigrad.functions.softmax import softmax_backward, softmax_forward
from minigrad.functions.normalization import layer_norm_backward, layer_norm_forward
from minigrad.functions.attention import attention_backward, attention_forward
# END LIBRARY
