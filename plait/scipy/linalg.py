"""``plait.scipy.linalg``: dense linear algebra (see :mod:`plait.frontend.scipy.linalg`)."""

from plait.frontend.scipy.linalg import *  # noqa: F401,F403
from plait.frontend.scipy.linalg import __all__ as __all__

# (The same names again, from their own modules, whose literal __all__ mypy reads.)
from plait.frontend.scipy.linalg_expm import *  # noqa: F401,F403,E402
from plait.frontend.scipy.linalg_schur import *  # noqa: F401,F403,E402
