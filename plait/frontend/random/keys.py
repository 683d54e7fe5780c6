"""PRNG keys: making, splitting and folding them, and their data, as ``jax.random``'s.

A typed key (``key(0)``) is an array of dtype ``key<fry>`` (``key<rbg>``,
``key<urbg>`` for the other implementations); a raw key (``PRNGKey(0)``) is its data,
``uint32[2]`` (``uint32[4]``).  Every function taking a key takes either: a raw key is
wrapped (``random_wrap``, as a key of the default implementation, the
``default_prng_impl`` option) on the way in and results that are keys are unwrapped
again, so raw keys give raw keys, as in JAX.  The ``legacy_prng_key`` option makes raw
keys warn or raise; ``enable_custom_prng`` makes results typed keys in any case.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.random import key_impls as _key_impls  # noqa: F401  (registers)
from plait.ir import config as _config
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.primitives.random import PRNGImpl, impl_of

__all__ = ["key", "PRNGKey", "split", "fold_in", "clone", "key_data", "wrap_key_data",
           "key_impl", "key_dtype", "check_prng_key", "return_keys", "KeyArray",
           "default_impl", "split_keys", "random_bits"]

KeyArray = Array
"""A typed or raw PRNG key array (JAX's alias)."""

_BY_NAME = {impl.impl_name: impl for impl in PRNGImpl}

_LEGACY_KEY = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')


def default_impl() -> PRNGImpl:
    """The implementation named by the ``default_prng_impl`` option."""
    return _BY_NAME[_config.values.default_prng_impl]


def _resolve(impl: Any) -> PRNGImpl:
    """The implementation ``impl`` names or is the key dtype of (``None``: the default).

    Raises:
      ValueError: a string naming no implementation.
      NotImplementedError: one of JAX's implementations that plait lacks.
      TypeError: neither a string nor a key dtype.
    """
    if impl is None:
        return default_impl()
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, np.dtype) and dt.is_key(impl):
        return impl_of(impl)
    if not isinstance(impl, str):
        raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")
    if impl in _BY_NAME:
        return _BY_NAME[impl]
    if impl in _config.MISSING_PRNG_IMPLS:
        raise NotImplementedError(f"the {impl!r} PRNG implementation is not available in "
                                  f"plait; expected one of {list(_BY_NAME)}")
    names = ", ".join(f'"{name}"' for name in _BY_NAME)
    raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
                     f"{names}?")


def key_dtype(impl: Any = None) -> np.dtype[Any]:
    """The dtype of typed keys of an implementation (the default one's for ``None``:
    ``key<fry>``)."""
    return _resolve(impl).dtype


def is_typed_key(x: Any) -> bool:
    """Whether ``x`` is an array of typed keys."""
    dtype = getattr(x, "dtype", None)
    return isinstance(dtype, np.dtype) and dt.is_key(dtype)


def _make(ctor: str, seed: Any, impl: Any) -> Array:
    resolved = _resolve(impl)
    if is_typed_key(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use plait.vmap for batching")
    seeds = pnp.asarray(seed)
    if not (dt.is_integer(seeds.dtype) or dt.is_bool(seeds.dtype)):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds!r}")
    out: Array = P.random_seed_p.bind(seeds, impl=resolved)
    return out


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> Array:
    """A typed PRNG key (a scalar of dtype ``key<fry>``) from an integer seed, as
    ``jax.random.key``.

    Raises:
      TypeError: ``seed`` is not a scalar integer.
      ValueError: both ``impl`` and ``dtype`` are given, or name no implementation.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _make("key", seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Array:  # noqa: N802  (JAX's name)
    """A raw PRNG key (``uint32[2]``: the key's data; ``uint32[4]`` for rbg) from an
    integer seed, as ``jax.random.PRNGKey`` (a typed key with ``enable_custom_prng``)."""
    return return_keys(True, _make("PRNGKey", seed, impl))


def _check_key_data(impl: PRNGImpl, data: Array) -> None:
    if data.dtype != dt.uint32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")
    if data.shape[-1:] != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {impl.key_shape}; got shape={data.shape} for "
                        f"impl={impl.impl_name}")


def check_prng_key(name: str, k: Any, *, allow_batched: bool = False) -> tuple[Array, bool]:
    """``k`` as a typed key array, and whether it was a raw key (wrapped here, as a key
    of the default implementation).

    Raises:
      TypeError: ``k`` is neither a typed key nor valid raw key data.
      ValueError: ``k`` holds several keys and ``allow_batched`` is false, or ``k`` is raw
        and the ``legacy_prng_key`` option is ``'error'``.
    """
    if is_typed_key(k):
        typed, wrapped = k, False
    elif isinstance(k, Array | np.ndarray | np.generic | list | tuple | int):
        impl = default_impl()
        data = pnp.asarray(k)
        _check_key_data(impl, data)
        typed, wrapped = P.random_wrap_p.bind(data, impl=impl), True
        _legacy_key_used()
    else:
        raise TypeError(f"unexpected PRNG key type {type(k)}")
    if not allow_batched and typed.ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{typed.shape} != (). Use plait.vmap for batching.")
    return typed, wrapped


def _legacy_key_used() -> None:
    """Warn or raise for a raw key, as the options say (as JAX: raw keys are errors or
    warnings by ``legacy_prng_key``, else deprecated with ``enable_custom_prng``)."""
    mode = _config.values.legacy_prng_key
    if mode == "error":
        raise ValueError(_LEGACY_KEY)
    if mode == "warn":
        warnings.warn(_LEGACY_KEY, UserWarning, stacklevel=4)
    elif _config.values.enable_custom_prng:
        warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                      "Assuming valid threefry2x32 key for now.", FutureWarning, stacklevel=4)


def return_keys(wrapped: bool, keys: Array) -> Array:
    """Keys made from a raw key's are returned raw too (typed with
    ``enable_custom_prng``)."""
    if not wrapped or _config.values.enable_custom_prng:
        return keys
    out: Array = P.random_unwrap_p.bind(keys)
    return out


def split_keys(keys: Array, shape: tuple[int, ...]) -> Array:
    """``shape`` new keys per typed key (``random_split``, in the current
    ``threefry_partitionable`` mode)."""
    out: Array = P.random_split_p.bind(keys, shape=shape,
                                       partitionable=_config.values.threefry_partitionable)
    return out


def random_bits(keys: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    """``shape`` random unsigned integers per typed key (``random_bits``, in the current
    ``threefry_partitionable`` mode)."""
    out: Array = P.random_bits_p.bind(keys, bit_width=bit_width, shape=shape,
                                      partitionable=_config.values.threefry_partitionable)
    return out


def split(key: Any, num: int | Sequence[int] = 2) -> Array:
    """``num`` new keys (a leading axis; a tuple ``num`` gives that shape) from one key."""
    typed, wrapped = check_prng_key("split", key)
    shape = tuple(int(n) for n in num) if isinstance(num, Sequence) else (int(num),)
    return return_keys(wrapped, split_keys(typed, shape))


def fold_in(key: Any, data: Any) -> Array:
    """A new key from a key and a 32-bit integer (``data`` as ``uint32``)."""
    typed, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of "
                        f"shape {np.shape(data)} != (). Use plait.vmap for batching.")
    msg = pnp.asarray(data, dtype=dt.uint32)
    return return_keys(wrapped, P.random_fold_in_p.bind(typed, msg))


def clone(key: Any) -> Array:
    """The same key, marked as reused on purpose (JAX's ``random.clone``)."""
    typed, wrapped = check_prng_key("clone", key, allow_batched=True)
    return return_keys(wrapped, P.random_clone_p.bind(typed))


def key_data(keys: Any) -> Array:
    """The data of a key array (``uint32[..., 2]``); a raw key is its own data."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    out: Array = P.random_unwrap_p.bind(typed)
    return out


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Array:
    """Typed keys holding ``key_bits_array`` (``uint32[..., 2]``; ``uint32[..., 4]`` for
    rbg) as their data.

    Raises:
      TypeError: the data have the wrong dtype or trailing dimension.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    resolved = _resolve(impl)
    data = pnp.asarray(key_bits_array)
    _check_key_data(resolved, data)
    out: Array = P.random_wrap_p.bind(data, impl=resolved)
    return out


def key_impl(keys: Any) -> str:
    """The name of the keys' implementation (``'threefry2x32'``, ``'rbg'``,
    ``'unsafe_rbg'``)."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    return impl_of(typed.dtype).impl_name
