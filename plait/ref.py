"""``plait.ref``: mutable arrays (:class:`Ref`), as ``jax.ref``.  See ``docs/refs.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.refs import AbstractRef as AbstractRef
from plait.frontend.api.refs import Ref as Ref
from plait.frontend.api.refs import addupdate as addupdate
from plait.frontend.api.refs import empty_ref as empty_ref
from plait.frontend.api.refs import free_ref as free_ref
from plait.frontend.api.refs import freeze as freeze
from plait.frontend.api.refs import get as get
from plait.frontend.api.refs import new_ref as new_ref
from plait.frontend.api.refs import set as set  # noqa: A004  (JAX's name)
from plait.frontend.api.refs import swap as swap

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref",
           "set", "swap"]
