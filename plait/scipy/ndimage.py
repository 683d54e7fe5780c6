"""``plait.scipy.ndimage``: ``map_coordinates``, as ``jax.scipy.ndimage`` (see
:mod:`plait.frontend.scipy.ndimage`)."""

from plait.frontend.scipy.ndimage import map_coordinates as map_coordinates

__all__ = ["map_coordinates"]
