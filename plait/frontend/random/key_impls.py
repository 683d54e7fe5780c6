"""The key primitives' decompositions: each implementation's functions of one key's data
(:mod:`.threefry`, :mod:`.rbg`) mapped over the batch dimensions of the keys as JAX maps
them (``vmap``, once per dimension), and registered for physicalization
(:mod:`plait.transforms.physicalize`), which passes the keys' implementation as
``impl``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from plait.frontend import lax
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tree_util import tree_structure
from plait.frontend.random import rbg, threefry
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.decompositions import register_decomposition
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives.random import PRNGImpl

__all__ = ["IMPLS", "ImplFunctions"]


class ImplFunctions(NamedTuple):
    """An implementation's functions of one key's data."""

    seed: Callable[[Array], Array]
    split: Callable[[Array, tuple[int, ...], bool], Array]
    fold_in: Callable[[Array, Array], Array]
    random_bits: Callable[[Array, int, tuple[int, ...], bool], Array]


IMPLS: dict[PRNGImpl, ImplFunctions] = {
    PRNGImpl.THREEFRY2X32: ImplFunctions(threefry.seed, threefry.split, threefry.fold_in,
                                         threefry.random_bits),
    PRNGImpl.RBG: ImplFunctions(rbg.seed, rbg.split, rbg.fold_in, rbg.random_bits),
    PRNGImpl.UNSAFE_RBG: ImplFunctions(rbg.seed, rbg.unsafe_split, rbg.unsafe_fold_in,
                                       rbg.random_bits),
}
"""The functions of each implementation."""


def _over_keys(fn: Callable[..., Array], nbatch: int) -> Callable[..., Array]:
    """``fn`` of one key, mapped over ``nbatch`` leading key dimensions."""
    for _ in range(nbatch):
        fn = vmap(fn)
    return fn


def _trace(fn: Callable[..., Any], avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    avals = tuple(a.update(weak_type=False) for a in avals)
    return trace_to_jaxpr(fn, tree_structure((0,) * len(avals)), avals, "decomposition").closed


def _build_seed(seeds: ShapedArray, *, impl: PRNGImpl) -> ClosedJaxpr:
    return _trace(_over_keys(IMPLS[impl].seed, seeds.ndim), [seeds])


def _build_split(data: ShapedArray, *, shape: tuple[int, ...], partitionable: bool,
                 impl: PRNGImpl) -> ClosedJaxpr:
    split = IMPLS[impl].split
    return _trace(_over_keys(lambda k: split(k, shape, partitionable), data.ndim - 1), [data])


def _build_bits(data: ShapedArray, *, bit_width: int, shape: tuple[int, ...],
                partitionable: bool, impl: PRNGImpl) -> ClosedJaxpr:
    bits = IMPLS[impl].random_bits
    fn = _over_keys(lambda k: bits(k, bit_width, shape, partitionable), data.ndim - 1)
    return _trace(fn, [data])


def _over_pairs(fn: Callable[[Array, Array], Array], keys_shape: tuple[int, ...],
                msgs_shape: tuple[int, ...]) -> Callable[[Array, Array], Array]:
    """``fn`` of one key and one message, mapped as JAX maps ``fold_in`` over keys and
    messages whose shapes broadcast: a rank-0 side is passed whole; otherwise, dimension
    by dimension, both sides are mapped where their sizes agree, and a size-1 side is
    squeezed and passed whole.  (Where that side is passed whole matters to unsafe_rbg,
    whose ``RngBitGenerator`` is mapped differently.)"""
    if not keys_shape or not msgs_shape:
        n = len(keys_shape) + len(msgs_shape)
        if not keys_shape:
            return lambda k, m: _over_keys(lambda m1: fn(k, m1), n)(m)
        return lambda k, m: _over_keys(lambda k1: fn(k1, m), n)(k)
    for i in reversed(range(len(keys_shape))):
        fn = _map_dim(fn, keys_shape[i], msgs_shape[i])
    return fn


def _map_dim(fn: Callable[[Array, Array], Array], nk: int, nm: int
             ) -> Callable[[Array, Array], Array]:
    if nk == nm:
        return vmap(fn)
    if nk == 1:
        return lambda k, m: vmap(fn, in_axes=(None, 0))(lax.squeeze(k, (0,)), m)
    return lambda k, m: vmap(fn, in_axes=(0, None))(k, lax.squeeze(m, (0,)))


def _build_fold_in(data: ShapedArray, msgs: ShapedArray, *, impl: PRNGImpl) -> ClosedJaxpr:
    keys_shape, msgs_shape, words = data.shape[:-1], msgs.shape, data.shape[-1:]
    if keys_shape and msgs_shape and len(keys_shape) != len(msgs_shape):
        # (NumPy broadcasting of different ranks: the shorter side gains leading 1s)
        rank = max(len(keys_shape), len(msgs_shape))
        keys_shape = (1,) * (rank - len(keys_shape)) + keys_shape
        msgs_shape = (1,) * (rank - len(msgs_shape)) + msgs_shape
    fold_in = _over_pairs(IMPLS[impl].fold_in, keys_shape, msgs_shape)

    def run(k: Array, m: Array) -> Array:
        return fold_in(lax.reshape(k, keys_shape + words),
                       lax.reshape(m, msgs_shape))
    return _trace(run, [data, msgs])


register_decomposition(P.random_seed_p, _build_seed)
register_decomposition(P.random_split_p, _build_split)
register_decomposition(P.random_bits_p, _build_bits)
register_decomposition(P.random_fold_in_p, _build_fold_in)
