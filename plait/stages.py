"""``plait.stages``: the types of the ahead-of-time stages of a jitted function, as
``jax.stages``: ``jit(f)`` is a :class:`Wrapped`, ``.trace(...)`` gives a :class:`Traced`,
``.lower()`` a :class:`Lowered`, ``.compile()`` a :class:`Compiled`."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.jit import Jitted as Wrapped
from plait.frontend.api.stages import ArgInfo as ArgInfo
from plait.frontend.api.stages import Compiled as Compiled
from plait.frontend.api.stages import Lowered as Lowered
from plait.frontend.api.stages import Traced as Traced

CompilerOptions = dict[str, str | bool]
"""The type of ``compiler_options`` (XLA option names to values), as JAX names it."""

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
