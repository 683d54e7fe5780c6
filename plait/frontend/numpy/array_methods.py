"""The one place where ``plait.Array`` learns of the NumPy namespace.

``Array`` (in the frontend core) defines its operators and methods (``x + y``,
``x.sum()``, ``x[i]``, ``x.T``) as calls into :mod:`plait.frontend.numpy`, which
sits above the core and so cannot be imported by it.  Loading the namespace
installs it here.
"""

from __future__ import annotations

import sys
import types

from plait.frontend import lax
from plait.frontend.core.array_base import set_array_namespace
from plait.frontend.numpy import builtin_ufuncs
from plait.frontend.numpy.at import IndexUpdateHelper
from plait.frontend.numpy.indexing import getitem

__all__ = ["install_array_methods"]


def install_array_methods() -> None:
    """Route ``Array``'s operators and methods to :mod:`plait.frontend.numpy`
    (called once, at the end of that package's import)."""
    # The operators call the built-in ufuncs' plain functions: ``x + y`` then skips the
    # ufunc object's own call, a fifth of a microsecond on every operator of a trace.
    namespace = types.SimpleNamespace(**vars(sys.modules["plait.frontend.numpy"]))
    for name in builtin_ufuncs.__all__:
        setattr(namespace, name, getattr(builtin_ufuncs, name)._typed)
    set_array_namespace(namespace, getitem, IndexUpdateHelper,
                        lambda x, i: lax.index_in_dim(x, i, 0, keepdims=False))
