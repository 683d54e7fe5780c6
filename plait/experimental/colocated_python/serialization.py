"""``jax.experimental.colocated_python.serialization``: how JAX pickles meshes, device
lists and shardings for a colocated function on another host.  plait calls colocated
functions in place, so it pickles nothing; ``DeviceList`` is jaxlib's, for code that
names it."""

from jaxlib._jax import DeviceList as DeviceList

__all__ = ["DeviceList"]
