"""``plait.scipy.special``: special functions (see :mod:`plait.frontend.scipy.special` and
the ``special_*`` modules beside it)."""

# ruff: noqa: F405  (the names of __all__ come from the star imports)

from plait.frontend.core.deprecations import deprecated_getattr
from plait.frontend.scipy.special import *  # noqa: F401,F403
from plait.frontend.scipy.special_bessel_legendre import *  # noqa: F401,F403
from plait.frontend.scipy.special_bessel_legendre import lpmn_values as _lpmn_values
from plait.frontend.scipy.special_exp_integrals import *  # noqa: F401,F403
from plait.frontend.scipy.special_faddeeva import *  # noqa: F401,F403
from plait.frontend.scipy.special_hypergeometric import *  # noqa: F401,F403
from plait.frontend.scipy.special_misc import *  # noqa: F401,F403
from plait.frontend.scipy.special_trig_integrals import *  # noqa: F401,F403

__all__ = [
    "gammaln", "gammasgn", "gamma", "loggamma", "betaln", "beta", "betainc", "factorial",
    "comb", "digamma", "polygamma", "zeta", "gammainc", "gammaincc", "erf", "erfc", "erfinv",
    "expit", "logit", "logsumexp", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div",
    "multigammaln", "boxcox", "boxcox1p", "ndtr", "ndtri", "log_ndtr", "i0", "i0e", "i1",
    "i1e", "softmax", "log_softmax",
    # (the special_* modules)
    "bessel_jn", "sph_harm_y", "expi", "exp1", "expn", "wofz", "erfcx", "dawsn", "poch",
    "hyp1f1", "hyp2f1", "spence", "bernoulli", "owens_t", "sici", "fresnel",
]

# (Deprecated in JAX 0.10.2, as here: read with a warning, left out of ``__all__``.)
__getattr__ = deprecated_getattr(__name__, {"lpmn_values": (
    "jax.scipy.special.lpmn_values is deprecated; no replacement is planned.", _lpmn_values)})
