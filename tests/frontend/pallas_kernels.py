"""Pallas kernels written once over a library's modules (``m.pl``, ``m.plt``, ``m.pltpu``,
``m.jnp``, ``m.lib``): the tests run each under plait and JAX, and ``bench_pallas`` times
them."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.experimental.pallas as jpl
import jax.experimental.pallas.tpu as jpltpu
import jax.experimental.pallas.triton as jplt
import jax.numpy as jjnp
import numpy as np

import plait
import plait.experimental.pallas as ppl
import plait.experimental.pallas.tpu as ppltpu
import plait.experimental.pallas.triton as pplt
import plait.numpy as pjnp

PLAIT = types.SimpleNamespace(lib=plait, pl=ppl, plt=pplt, pltpu=ppltpu, jnp=pjnp)
"""plait's modules."""
JAX = types.SimpleNamespace(lib=jax, pl=jpl, plt=jplt, pltpu=jpltpu, jnp=jjnp)
"""JAX's modules."""


def matmul(m: Any, bm: int = 4, bn: int = 8, bk: int = 4) -> Callable[..., Any]:
    # The quickstart's blocked matmul, accumulating over a grid axis.
    def kernel(x_ref: Any, y_ref: Any, o_ref: Any) -> None:
        @m.pl.when(m.pl.program_id(2) == 0)
        def _() -> None:
            o_ref[...] = m.jnp.zeros_like(o_ref[...])
        o_ref[...] += x_ref[...] @ y_ref[...]

    def mm(x: Any, y: Any) -> Any:
        (mm_, kk), (_, nn) = x.shape, y.shape
        return m.pl.pallas_call(
            kernel, out_shape=m.lib.ShapeDtypeStruct((mm_, nn), x.dtype),
            grid=(mm_ // bm, nn // bn, kk // bk),
            in_specs=[m.pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                      m.pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
            out_specs=m.pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)), interpret=True)(x, y)
    return mm


def softmax(m: Any, block: int = 16) -> Callable[..., Any]:
    # Triton style: one row per program, a power-of-two block, masked loads past the row.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        row = m.pl.program_id(0)
        cols = m.jnp.arange(block)
        mask = cols < x_ref.shape[1]
        x = m.plt.load(x_ref.at[row, m.pl.ds(0, block)], mask=mask, other=-np.inf)
        e = m.jnp.exp(x - m.jnp.max(x))
        m.plt.store(o_ref.at[row, m.pl.ds(0, block)], e / m.jnp.sum(e), mask=mask)

    def run(x: Any) -> Any:
        return m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct(x.shape, x.dtype),
                                grid=(x.shape[0],), interpret=True)(x)
    return run


def tpu_matmul(m: Any, b: int = 4) -> Callable[..., Any]:
    # The TPU tutorials' matmul: a VMEM scratch accumulator, written out at the last step.
    def kernel(x_ref: Any, y_ref: Any, z_ref: Any, acc_ref: Any, *, nsteps: int) -> None:
        @m.pl.when(m.pl.program_id(2) == 0)
        def _() -> None:
            acc_ref[...] = m.jnp.zeros_like(acc_ref[...])
        acc_ref[...] += m.jnp.dot(x_ref[...], y_ref[...], preferred_element_type=np.float32)

        @m.pl.when(m.pl.program_id(2) == nsteps - 1)
        def _() -> None:
            z_ref[...] = acc_ref[...].astype(z_ref.dtype)

    def mm(x: Any, y: Any) -> Any:
        (n, k), (_, p) = x.shape, y.shape
        spec = m.pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, grid=(n // b, p // b, k // b),
            in_specs=[m.pl.BlockSpec((b, b), lambda i, j, k: (i, k)),
                      m.pl.BlockSpec((b, b), lambda i, j, k: (k, j))],
            out_specs=m.pl.BlockSpec((b, b), lambda i, j, k: (i, j)),
            scratch_shapes=[m.pltpu.VMEM((b, b), np.float32)])
        params = m.pltpu.CompilerParams(dimension_semantics=("parallel", "parallel",
                                                             "arbitrary"))
        return m.pl.pallas_call(functools.partial(kernel, nsteps=k // b), grid_spec=spec,
                                out_shape=m.lib.ShapeDtypeStruct((n, p), x.dtype),
                                compiler_params=params, interpret=True)(x, y)
    return mm
