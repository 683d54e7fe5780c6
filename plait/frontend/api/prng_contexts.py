"""Context managers for the PRNG options, as JAX's: ``threefry_partitionable``,
``default_prng_impl``, ``legacy_prng_key`` and ``enable_custom_prng``.

Each sets the option of its name for the duration of a block.  All four are part of
every trace key, so a function traced outside the block is traced again inside it.
"""

from __future__ import annotations

import contextlib

from plait.frontend.api.contexts import _option

__all__ = ["threefry_partitionable", "default_prng_impl", "legacy_prng_key",
           "enable_custom_prng"]


def threefry_partitionable(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, threefry2x32 keys split and draw bits as JAX does with
    ``jax_threefry_partitionable`` set to ``enabled`` (``True``, the default: counters
    are the results' indices; ``False``: JAX's older counters, hence other bits).
    Programs record the mode they were traced in."""
    return _option("threefry_partitionable", bool(enabled))


def default_prng_impl(name: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``plait.random.key`` and ``PRNGKey`` called without ``impl``
    make keys of implementation ``name`` (``'threefry2x32'``, ``'rbg'``,
    ``'unsafe_rbg'``), and raw keys given to ``plait.random`` are taken as such keys.

    Raises:
      ValueError: ``name`` is no implementation's name.
      NotImplementedError: ``name`` is one of JAX's implementations that plait lacks.
    """
    return _option("default_prng_impl", name)


def legacy_prng_key(mode: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, a raw ``uint32`` key given to ``plait.random`` is accepted
    (``'allow'``), accepted with a ``UserWarning`` (``'warn'``) or refused with a
    ``ValueError`` (``'error'``).

    Raises:
      ValueError: ``mode`` is not one of the three.
    """
    return _option("legacy_prng_key", mode)


def enable_custom_prng(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``PRNGKey`` and the functions of ``plait.random`` given raw keys
    return typed keys, and raw keys given to them raise a ``FutureWarning`` (JAX's
    upgrade switch toward typed keys)."""
    return _option("enable_custom_prng", bool(enabled))
