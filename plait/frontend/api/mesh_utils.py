"""Arranging devices into the grid of a mesh (``plait.experimental.mesh_utils``, as
``jax.experimental.mesh_utils``).

plait runs on CPU devices, which have no physical topology to follow: a mesh takes the
devices in order, row-major, as JAX does for them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.lowering import runtime

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray[Any, Any]:
    """An array of shape ``mesh_shape`` of ``devices`` (all devices by default), in order.

    Raises:
      ValueError: the number of devices is not the product of ``mesh_shape``.
    """
    devices = runtime.devices() if devices is None else list(devices)
    if math.prod(mesh_shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {mesh_shape}")
    grid = np.empty(len(devices), dtype=object)
    grid[:] = devices
    return grid.reshape(tuple(mesh_shape))


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False
                              ) -> np.ndarray[Any, Any]:
    """A mesh over several granules (processes, or slices where devices have them): each
    granule's devices form a ``mesh_shape`` block, and the blocks are laid out in a
    ``dcn_mesh_shape`` grid, giving shape ``mesh_shape * dcn_mesh_shape`` per axis.

    Raises:
      ValueError: the devices have no slices (pass ``process_is_granule=True``), or the
        number of granules is not the product of ``dcn_mesh_shape``.
    """
    devices = runtime.devices() if devices is None else list(devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                         "`process_is_granule` option.")
    by_key: defaultdict[Any, list[Any]] = defaultdict(list)
    for d in devices:
        by_key[getattr(d, attr)].append(d)
    keys = sorted(by_key) if should_sort_granules_by_key else list(by_key)
    if math.prod(dcn_mesh_shape) != len(keys):
        raise ValueError(f"Number of slices {len(keys)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    blocks = [create_device_mesh(mesh_shape, by_key[k]) for k in keys]
    # Granule g sits at position unravel(g, dcn_mesh_shape) of the grid of blocks.
    shape = tuple(m * d for m, d in zip(mesh_shape, dcn_mesh_shape))
    out = np.empty(shape, dtype=object)
    for g, block in enumerate(blocks):
        at = np.unravel_index(g, tuple(dcn_mesh_shape))
        out[tuple(slice(i * m, (i + 1) * m) for i, m in zip(at, mesh_shape))] = block
    return out
