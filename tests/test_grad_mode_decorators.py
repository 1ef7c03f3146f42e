"""no_grad and enable_grad as decorators with or without parentheses, as PyTorch's (issue 39)."""
import minigrad


def test_bare_and_called_decorators_switch_recording():
    x = minigrad.ones(2, requires_grad=True)

    @minigrad.no_grad
    def bare(t):
        return t * 2

    @minigrad.no_grad()
    def called(t):
        return t * 2

    @minigrad.enable_grad
    def recording(t):
        return t * 2

    assert not bare(x).requires_grad and not called(x).requires_grad
    assert bare.__name__ == "bare"                     # functools.wraps, as PyTorch's
    with minigrad.no_grad():
        assert recording(x).requires_grad
    assert (x * 2).requires_grad                       # the switch ends with the call
