"""``plait.scipy.linalg``: dense linear algebra, as JAX 0.10.2's ``jax.scipy.linalg``
(see :mod:`plait.frontend.scipy.linalg`): factorizations and solves, Hessenberg and Schur
forms, ``expm``, matrix functions (``sqrtm``, ``funm``, ``polar``...), the Sylvester
equation and SciPy's special matrices (``toeplitz``, ``hankel``, ``dft``...)."""

from plait.frontend.scipy import linalg as _linalg
from plait.frontend.scipy import linalg_functions as _functions
from plait.frontend.scipy import linalg_polar as _polar
from plait.frontend.scipy import linalg_special_matrices as _special
from plait.frontend.scipy import linalg_tridiagonal as _tridiagonal
from plait.frontend.scipy.linalg import *  # noqa: F401,F403

# (The same names again, from their own modules, whose literal __all__ mypy reads.)
from plait.frontend.scipy.linalg_expm import *  # noqa: F401,F403,E402
from plait.frontend.scipy.linalg_functions import *  # noqa: F401,F403,E402
from plait.frontend.scipy.linalg_polar import *  # noqa: F401,F403,E402
from plait.frontend.scipy.linalg_schur import *  # noqa: F401,F403,E402
from plait.frontend.scipy.linalg_special_matrices import *  # noqa: F401,F403,E402
from plait.frontend.scipy.linalg_tridiagonal import *  # noqa: F401,F403,E402

__all__: list[str] = []
__all__ += _linalg.__all__
__all__ += _functions.__all__
__all__ += _polar.__all__
__all__ += _special.__all__
__all__ += _tridiagonal.__all__
