"""Arrays made from NumPy values own their data.

jaxlib lets a CPU buffer alias the memory of a suitably aligned NumPy array unless
told to copy: an Array made that way would change when the NumPy array is written
to afterwards.  Every path from a host value to a device (``asarray``, ``array``,
``device_put`` to a device or a mesh) copies,
as ``jax.numpy.asarray`` does; the oracle is the NumPy value before it changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
from plait.sharding import Mesh, NamedSharding, PartitionSpec


def _mesh_put(spec: PartitionSpec) -> Callable[[np.ndarray], Any]:
    def put(x: np.ndarray) -> Any:
        mesh = Mesh(np.array(plait.devices()[:2]), ("i",))
        return plait.device_put(x, NamedSharding(mesh, spec))
    return put


PUTS: dict[str, Callable[[np.ndarray], Any]] = {
    "asarray": pnp.asarray,
    "array": pnp.array,
    "device_put": plait.device_put,
    "device_put to device 1": lambda x: plait.device_put(x, plait.devices()[1]),
    "device_put replicated over a mesh": _mesh_put(PartitionSpec()),
    "device_put split over a mesh": _mesh_put(PartitionSpec("i")),
}


@pytest.mark.parametrize("name", PUTS)
@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 35).map(lambda r: 2 * r),  # (even: split over 2 devices)
       cols=st.sampled_from([1, 16, 64, 257]),
       dtype=st.sampled_from([np.float32, np.int32, np.float16, np.uint8]))
def test_writing_to_the_numpy_value_later_changes_nothing(name: str, rows: int, cols: int,
                                                          dtype: Any) -> None:
    x = np.arange(rows * cols).astype(dtype).reshape(rows, cols)
    want = x.copy()
    a = PUTS[name](x)
    x[...] = 0
    np.testing.assert_array_equal(np.asarray(a), want)
    np.testing.assert_array_equal(np.asarray(a + 0), want + 0)

