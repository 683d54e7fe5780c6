"""Scalar types: ``plait.numpy.float32`` is a dtype and a constructor.

As in ``jax.numpy``, ``pnp.float32(1)`` makes an array (``Array(1.,
dtype=float32)``), while ``pnp.float32`` stands for its dtype wherever one is
expected (``np.dtype(pnp.float32)``, ``x.astype(pnp.float32)``,
``x.dtype == pnp.float32``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.numpy.creation import asarray

__all__ = ["ScalarType", "scalar_type"]


class ScalarType(type):
    """The metaclass of the scalar types: a class with a ``dtype`` attribute."""

    dtype: np.dtype[Any]

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: object) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: object) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'plait.numpy.{cls.__name__}'>"


def scalar_type(dtype: np.dtype[Any]) -> ScalarType:
    """The scalar type of ``dtype`` (named after it: ``float32``, ``bool``)."""
    name = "bool" if dtype == np.dtype(np.bool_) else dtype.name
    return ScalarType(name, (object,), {"dtype": dtype, "__doc__":
                      f"The {dtype.name} scalar type: ``{name}(x)`` is ``asarray(x, {name})``."})
