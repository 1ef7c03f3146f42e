"""Public tests: run them with  python -m pytest test_transformer.py"""
import minigrad
from transformer import SelfAttention, TransformerBlock


def randn(*shape):
    return minigrad.randn(*shape, dtype=minigrad.float64, requires_grad=True)


def causal(T):
    """(T, T) bool: True where query i may NOT look at key j (j > i, the future)."""
    return minigrad.tensor([[j > i for j in range(T)] for i in range(T)])


def test_self_attention_first_position_sees_only_itself():
    minigrad.manual_seed(0)
    layer = SelfAttention(d_model=4, n_heads=2).double()
    x = randn(1, 3, 4)
    changed = x.detach().clone()
    changed[:, 1:] += 1.0                                  # the future moves; position 0 must not notice
    first, moved = layer(x, causal(3))[:, 0], layer(changed, causal(3))[:, 0]
    assert (first - moved).abs().sum().item() < 1e-12


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
