"""``plait.lib``: the version of the jaxlib plait runs on (JAX's ``jax.lib``)."""

from jaxlib.version import __version__ as __version__

__all__ = ["__version__"]
