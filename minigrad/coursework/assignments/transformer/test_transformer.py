"""Public tests: run them with  python -m pytest test_transformer.py"""
import minigrad
from transformer import SelfAttention, TransformerBlock, scaled_dot_product_attention


def randn(*shape):
    return minigrad.randn(*shape, dtype=minigrad.float64, requires_grad=True)


def causal(T):
    """(T, T) bool: True where query i may NOT look at key j (j > i, the future)."""
    return minigrad.tensor([[j > i for j in range(T)] for i in range(T)])


def test_attention_first_query_sees_only_first_key():
    minigrad.manual_seed(0)
    q, k, v = randn(1, 2, 3, 4), randn(1, 2, 3, 4), randn(1, 2, 3, 4)
    out = scaled_dot_product_attention(q, k, v, causal(3))
    assert out.shape == (1, 2, 3, 4)
    assert (out[:, :, 0] - v[:, :, 0]).abs().sum().item() < 1e-12
    assert minigrad.gradcheck(lambda q, k, v: scaled_dot_product_attention(q, k, v, causal(3)), (q, k, v))


def test_self_attention_gradcheck():
    minigrad.manual_seed(0)
    layer = SelfAttention(d_model=4, n_heads=2).double()
    x = randn(2, 3, 4)
    assert layer(x, causal(3)).shape == (2, 3, 4)
    assert minigrad.check_module(layer, x, causal(3))


def test_transformer_block_gradcheck():
    minigrad.manual_seed(0)
    block = TransformerBlock(d_model=4, n_heads=2, d_ff=6).double()
    x = randn(2, 3, 4)
    assert block(x).shape == (2, 3, 4)
    assert minigrad.check_module(block, x, causal(3))
