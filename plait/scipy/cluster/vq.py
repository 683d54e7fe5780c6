"""``plait.scipy.cluster.vq``: ``vq``, the nearest code of a code book for each
observation (see :mod:`plait.frontend.scipy.cluster_vq`)."""

from plait.frontend.scipy.cluster_vq import *  # noqa: F401,F403
from plait.frontend.scipy.cluster_vq import __all__ as __all__
