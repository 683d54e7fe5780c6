"""``plait.scipy.spatial.transform``: ``Rotation`` and ``Slerp``, rotations in three
dimensions and their interpolation (see :mod:`plait.frontend.scipy.spatial_transform`)."""

from plait.frontend.scipy.spatial_transform import *  # noqa: F401,F403
from plait.frontend.scipy.spatial_transform import __all__ as __all__
