"""Special functions of floating values: ``erf``, ``erfc``, ``erf_inv``, ``lgamma``,
``digamma``, the binary ``polygamma(m, x)`` and Hurwitz ``zeta(s, q)`` (JAX's names;
each lowers to the CHLO op of the same name), and the exponentially scaled modified
Bessel functions ``bessel_i0e`` (a Chebyshev series, as JAX lowers it) and
``bessel_i1e`` (CHLO)."""

from __future__ import annotations

from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import FLOAT, nary, unary

__all__ = ["erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p", "zeta_p",
           "bessel_i0e_p", "bessel_i1e_p"]

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
