"""Assignment: the backward of autograd primitives.

Each class is a minigrad ``Function``: minigrad's own, from the library files
named below, with the parts you write taken out.  The engine calls

    y = forward(ctx, *args)          on arrays, saving what backward needs on ctx
    grads = backward(ctx, dout)      dout = dL/dy, of y's shape

and backward returns one gradient per argument of forward, each of that
argument's shape, or None for an argument that is not differentiable (an
axis, a flag).  ``ctx.needs_input_grad[i]`` is True when argument i needs a
gradient: a backward may skip the work for the others and return None.

    Mul       minigrad/functions/arithmetic.py    (the backward; the forward is written)
    MatMul    minigrad/functions/linalg.py        (the backward)
    Tanh      minigrad/functions/elementwise.py   (the backward)
    Sigmoid   minigrad/functions/elementwise.py   (the backward)
    Sum       minigrad/functions/reductions.py    (the backward, and _restore)
    Softmax   minigrad/functions/softmax.py       (softmax_forward and softmax_backward, which Softmax calls)

Written right, they are the code minigrad runs for ``a * b``, ``a @ b``,
``x.tanh()``, ``x.sigmoid()``, ``x.sum(dim)`` and ``x.softmax(dim)``.
Try each one in minigrad:

    minigrad.gradcheck(lambda a, b: Mul.apply(a, b), (a, b))
"""
# BEGIN LIBRARY
from minigrad.functions.arithmetic import Mul
from minigrad.functions.linalg import MatMul
from minigrad.functions.elementwise import Sigmoid, Tanh
from minigrad.functions.reductions import Sum
from minigrad.functions.softmax import Softmax
# END LIBRARY
