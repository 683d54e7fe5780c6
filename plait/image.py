"""``plait.image``: image resampling, as ``jax.image`` (see :mod:`plait.frontend.image`):
``resize``, ``scale_and_translate`` and ``ResizeMethod``."""

from plait.frontend.image.scale import ResizeMethod as ResizeMethod
from plait.frontend.image.scale import resize as resize
from plait.frontend.image.scale import scale_and_translate as scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
