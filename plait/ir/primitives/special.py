"""Special functions of floating values: ``erf``, ``erfc``, ``erf_inv``, ``lgamma``,
``digamma``, the binary ``polygamma(m, x)`` and Hurwitz ``zeta(s, q)`` (JAX's names;
each lowers to the CHLO op of the same name), the exponentially scaled modified
Bessel functions ``bessel_i0e`` (a Chebyshev series, as JAX lowers it) and
``bessel_i1e`` (CHLO), and the regularized incomplete gamma and beta functions with
the derivatives JAX defines through them (lowered, as in JAX, through jaxprs of their
series and continued fractions: :mod:`plait.ir.decompositions`)."""

from __future__ import annotations

from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import FLOAT, nary, unary

__all__ = ["erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p", "zeta_p",
           "bessel_i0e_p", "bessel_i1e_p", "igamma_p", "igammac_p", "igamma_grad_a_p",
           "regularized_incomplete_beta_p", "DECOMPOSED"]

erf_p = Primitive("erf", unary(FLOAT))
erfc_p = Primitive("erfc", unary(FLOAT))
erf_inv_p = Primitive("erf_inv", unary(FLOAT))
lgamma_p = Primitive("lgamma", unary(FLOAT))
"""The logarithm of the absolute value of the gamma function."""
digamma_p = Primitive("digamma", unary(FLOAT))
polygamma_p = Primitive("polygamma", nary([FLOAT, FLOAT]))
"""The ``m``-th derivative of ``digamma`` (``m`` a whole number, as a float)."""
zeta_p = Primitive("zeta", nary([FLOAT, FLOAT]))
"""The Hurwitz zeta function ``sum_k (q + k) ** -s``."""
bessel_i0e_p = Primitive("bessel_i0e", unary(FLOAT))
"""``exp(-|x|) I0(x)``, with ``I0`` the modified Bessel function of order 0."""
bessel_i1e_p = Primitive("bessel_i1e", unary(FLOAT))
"""``exp(-|x|) I1(x)``, with ``I1`` the modified Bessel function of order 1."""
igamma_p = Primitive("igamma", nary([FLOAT, FLOAT]))
"""``igamma(a, x)``: the regularized lower incomplete gamma function ``P(a, x)``."""
igammac_p = Primitive("igammac", nary([FLOAT, FLOAT]))
"""``igammac(a, x) = 1 - P(a, x)``, computed directly."""
igamma_grad_a_p = Primitive("igamma_grad_a", nary([FLOAT, FLOAT]))
"""``d/da P(a, x)``."""
regularized_incomplete_beta_p = Primitive("regularized_incomplete_beta",
                                          nary([FLOAT, FLOAT, FLOAT]))
"""``betainc(a, b, x)``: the regularized incomplete beta function ``I_x(a, b)``."""

DECOMPOSED = (igamma_p, igammac_p, igamma_grad_a_p, regularized_incomplete_beta_p)
"""The special functions lowered through a decomposition."""
