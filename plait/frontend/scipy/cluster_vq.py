"""``plait.scipy.cluster.vq``: vector quantization, as JAX 0.10.2's
``jax.scipy.cluster.vq``: ``vq`` assigns each observation the nearest code of a code book
(by Euclidean distance; the first one on a tie)."""

from __future__ import annotations

from typing import Any

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.numpy._core import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Array, Array]:
    """``(code, dist)``: for each row of ``obs`` (``(M, N)``; a 1-D ``obs`` holds ``M``
    scalar observations), the index into ``code_book`` (``(K, N)``, or 1-D) of its nearest
    code and the Euclidean distance to it.  ``check_finite`` is ignored, as in JAX.

    Raises:
      TypeError: an argument is not an array or scalar (a list, say).
      ValueError: ``obs`` and ``code_book`` have different ranks, or a rank other than 1
        or 2.
    """
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    points, codes = promote_dtypes_inexact("scipy.cluster.vq.vq", obs, code_book)
    if points.ndim != codes.ndim:
        raise ValueError(f"scipy.cluster.vq.vq: expected obs and code_book to have the same "
                         f"rank, but got ranks {points.ndim} and {codes.ndim}")
    if points.ndim == 1:
        points, codes = points[:, None], codes[:, None]
    if points.ndim != 2:
        raise ValueError(f"scipy.cluster.vq.vq: expected obs and code_book of rank 1 or 2, "
                         f"but got rank {points.ndim}")
    # distances[i, j]: from observation i to code j.
    distances = np_linalg.norm(points[:, None, :] - codes[None, :, :], axis=-1)
    code = pnp.argmin(distances, axis=-1)
    nearest = pnp.take_along_axis(distances, code[:, None], axis=-1)[:, 0]
    return code, nearest
