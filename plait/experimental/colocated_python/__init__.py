"""``plait.experimental.colocated_python``: Python functions run on the CPU devices
colocated with accelerators, as ``jax.experimental.colocated_python``.  plait runs on the
CPU only, so every device is its own colocated CPU device and a colocated function is
called where it is, on the arrays it is given."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental.colocated_python import func as func
from plait.experimental.colocated_python import serialization as serialization
from plait.frontend.api.colocated import colocated_cpu_devices as colocated_cpu_devices
from plait.frontend.api.colocated import colocated_python as colocated_python
from plait.frontend.api.colocated import colocated_python_class as colocated_python_class

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class", "func",
           "serialization"]
