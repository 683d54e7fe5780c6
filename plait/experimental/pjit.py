"""``plait.experimental.pjit``: ``pjit``, the former name of :func:`plait.jit` (as in
``jax.experimental.pjit``, reading it warns that it is deprecated)."""

from plait.frontend.api.jit import jit as _jit
from plait.frontend.core.deprecations import deprecated_getattr

__all__: list[str] = []  # (as in JAX: pjit is read through __getattr__, with a warning)

__getattr__ = deprecated_getattr(__name__, {"pjit": (
    "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.", _jit)})
