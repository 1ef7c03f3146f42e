"""Public tests: run them with  python -m pytest test_primitives.py"""
import minigrad
from primitives import MatMul, Mul, Sigmoid, Softmax, Sum, Tanh


def inputs(*shapes):
    minigrad.manual_seed(0)
    return [minigrad.randn(*shape, dtype=minigrad.float64, requires_grad=True) for shape in shapes]


def test_mul_backward_with_broadcasting():
    a, b = inputs((4, 3), (3,))
    assert minigrad.gradcheck(lambda a, b: Mul.apply(a, b), (a, b))


def test_matmul_backward():
    a, b = inputs((2, 5), (5, 3))
    assert minigrad.gradcheck(lambda a, b: MatMul.apply(a, b), (a, b))
    a, b = inputs((4, 2, 5), (5, 3))                # a batch of matrices times one matrix
    assert minigrad.gradcheck(lambda a, b: MatMul.apply(a, b), (a, b))


def test_tanh_backward():
    (x,) = inputs((3, 4))
    assert minigrad.gradcheck(lambda x: Tanh.apply(x), (x,))


def test_sigmoid_backward():
    (x,) = inputs((3, 4))
    assert minigrad.gradcheck(lambda x: Sigmoid.apply(x), (x,))


def test_sum_backward():
    (x,) = inputs((2, 3, 4))
    assert minigrad.gradcheck(lambda x: Sum.apply(x, 2, False), (x,))
    assert minigrad.gradcheck(lambda x: Sum.apply(x, 0, True), (x,))
    assert minigrad.gradcheck(lambda x: Sum.apply(x, (0, 2), False), (x,))   # dim may be a tuple


def test_softmax_forward_and_backward():
    (x,) = inputs((2, 6))
    y = Softmax.apply(x + 1000.0, -1)               # no overflow
    assert abs(float(y.sum()) - 2.0) < 1e-12        # every row sums to 1
    assert minigrad.gradcheck(lambda x: Softmax.apply(x, -1), (x,))
    assert minigrad.gradcheck(lambda x: Softmax.apply(x, 0), (x,))
