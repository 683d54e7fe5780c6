"""``plait.sharding``: meshes of devices and the layouts of arrays over them, as
``jax.sharding``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.explicit_sharding import auto_axes as auto_axes
from plait.frontend.api.explicit_sharding import explicit_axes as explicit_axes
from plait.frontend.api.explicit_sharding import reshard as reshard
from plait.ir.sharding import AbstractMesh as AbstractMesh
from plait.ir.sharding import AxisType as AxisType
from plait.ir.sharding import Mesh as Mesh
from plait.ir.sharding import NamedSharding as NamedSharding
from plait.ir.sharding import PartitionSpec as PartitionSpec
from plait.ir.sharding import Sharding as Sharding
from plait.ir.sharding import current_mesh as get_mesh
from plait.ir.sharding import get_abstract_mesh as get_abstract_mesh
from plait.ir.sharding import set_mesh as set_mesh
from plait.ir.sharding import use_abstract_mesh as use_abstract_mesh
from plait.lowering.runtime import Sharding as SingleDeviceSharding
from plait.lowering.runtime import make_single_device_sharding as make_single_device_sharding

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "set_mesh", "reshard",
           "auto_axes", "explicit_axes", "make_single_device_sharding",
           "use_abstract_mesh"]
