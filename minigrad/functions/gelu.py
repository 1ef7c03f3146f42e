"""GELU, the Gaussian error linear unit, exact (erf) form as PyTorch's default.

    y = x * Phi(x),   Phi(x) = (1 + erf(x / sqrt(2))) / 2     the standard normal CDF
    dy/dx = Phi(x) + x * phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)

NumPy has no erf, so ``erf`` below builds one from xp operations.
"""
import math

from .. import backend
from ..autograd import Function

# Rational approximations of erf and erfc on four intervals of |x|, with the
# coefficients of fdlibm's s_erf.c (Sun Microsystems, 1993, freely distributable;
# the same as FreeBSD's and musl's libm).  Each is accurate to about 1e-16 relative.
# Coefficients are listed lowest power first.
_ERX = 8.45062911510467529297e-01     # erf(1) rounded to float precision
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _polynomial(coefficients, z):
    """c0 + c1 z + c2 z^2 + ... by Horner's rule."""
    result = coefficients[-1] + 0 * z
    for c in reversed(coefficients[:-1]):
        result = result * z + c
    return result


def erf(x):
    """erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt, elementwise, for an xp array x.

    |x| < 0.84375:          erf(x) = x + x * P(x^2) / Q(x^2)
    0.84375 <= |x| < 1.25:  erf(x) = erx + P(|x| - 1) / Q(|x| - 1)          (sign of x)
    1.25 <= |x| < 6:        erf(x) = 1 - exp(-x^2 - 0.5625 + R(1/x^2) / S(1/x^2)) / |x|
                            (one R/S pair below 1/0.35, another above)
    |x| >= 6:               erf(x) = +-1 (erfc(6) < 3e-17)
    Each piece is computed for |x| and the sign put back at the end (erf is odd).
    Accurate to about 1e-16 relative in float64.
    """
    xp = backend.array_module(x)
    a = xp.abs(x)
    y = xp.ones_like(x)                                     # |x| >= 6 (and inf)
    small = a < 0.84375
    if small.any():
        xs = a[small]
        z = xs * xs
        y[small] = xs + xs * (_polynomial(_PP, z) / _polynomial(_QQ, z))
    middle = (a >= 0.84375) & (a < 1.25)
    if middle.any():
        s = a[middle] - 1
        y[middle] = _ERX + _polynomial(_PA, s) / _polynomial(_QA, s)
    for low, high, r, s_coefficients in ((1.25, 1 / 0.35, _RA, _SA), (1 / 0.35, 6.0, _RB, _SB)):
        tail = (a >= low) & (a < high)
        if tail.any():
            at = a[tail]
            s = 1 / (at * at)
            erfc = xp.exp(-at * at - 0.5625 + _polynomial(r, s) / _polynomial(s_coefficients, s)) / at
            y[tail] = 1 - erfc
    y[xp.isnan(x)] = xp.nan
    return xp.where(x < 0, -y, y)                           # erf is odd


class GELU(Function):
    """y = x Phi(x) (exact erf form).   dy/dx = Phi(x) + x phi(x)."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "f":
            raise TypeError(f"gelu: expected a floating-point tensor, got dtype {x.dtype}")
        cdf = 0.5 * (1 + erf(x * (1 / math.sqrt(2))))       # Phi(x)
        ctx.save_for_backward(x, cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, dout):
        x, cdf = ctx.saved_tensors
        xp = backend.array_module(x)
        pdf = xp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))   # phi(x)
        return (dout * (cdf + x * pdf),)                             # dy/dx = Phi + x phi

