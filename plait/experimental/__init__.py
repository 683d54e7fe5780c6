"""``plait.experimental``: ``io_callback``, ``checkify``, ``multihost_utils``,
``colocated_python``, ``array_serialization``,
``mesh_utils``, ``compilation_cache``, ``compute_on``, ``hijax``, ``jet``, ``key_reuse``,
``ode``, ``rnn``,
``sparse``, ``pallas``, ``serialize_executable``, and the former ``shard_map`` and
``pjit``, as ``jax.experimental``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental import array_serialization as array_serialization
from plait.experimental import checkify as checkify
from plait.experimental import colocated_python as colocated_python
from plait.experimental import compilation_cache as compilation_cache
from plait.experimental import compute_on as compute_on
from plait.experimental import hijax as hijax
from plait.experimental import jet as jet
from plait.experimental import key_reuse as key_reuse
from plait.experimental import layout as layout
from plait.experimental import mesh_utils as mesh_utils
from plait.experimental import multihost_utils as multihost_utils
from plait.experimental import ode as ode
from plait.experimental import pallas as pallas
from plait.experimental import pjit as pjit
from plait.experimental import rnn as rnn
from plait.experimental import serialize_executable as serialize_executable
from plait.experimental import shard_map as shard_map
from plait.experimental import sparse as sparse
from plait.frontend.api.callbacks import io_callback as io_callback

__all__ = ["array_serialization", "checkify", "colocated_python", "compilation_cache",
           "compute_on", "hijax", "io_callback", "jet", "key_reuse", "layout", "mesh_utils",
           "multihost_utils", "ode", "pallas", "pjit", "rnn", "serialize_executable",
           "shard_map", "sparse"]
