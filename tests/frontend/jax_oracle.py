"""Running one program against both plait and JAX 0.10.2 (the oracle).

A test writes its function once against a namespace ``L`` (:data:`PLAIT` or
:data:`JAX`) and compares the two results with :func:`assert_close`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jjnp
import numpy as np

import plait
import plait.lax as plax
import plait.numpy as pjnp


class Lib(NamedTuple):
    np: Any
    lax: Any
    jit: Any
    grad: Any
    vmap: Any
    jvp: Any
    vjp: Any
    jacfwd: Any
    jacrev: Any
    hessian: Any
    make_jaxpr: Any
    custom_jvp: Any
    custom_vjp: Any
    checkpoint: Any
    policies: Any


JAX = Lib(jjnp, jax.lax, jax.jit, jax.grad, jax.vmap, jax.jvp, jax.vjp, jax.jacfwd, jax.jacrev,
          jax.hessian, jax.make_jaxpr, jax.custom_jvp, jax.custom_vjp, jax.checkpoint,
          jax.checkpoint_policies)
PLAIT = Lib(pjnp, plax, plait.jit, plait.grad, plait.vmap, plait.jvp, plait.vjp, plait.jacfwd,
            plait.jacrev, plait.hessian, plait.make_jaxpr, plait.custom_jvp, plait.custom_vjp,
            plait.checkpoint, plait.checkpoint_policies)

tree_map = jax.tree_util.tree_map  # over NumPy inputs and results only


def raised(fn: Callable[[], Any]) -> BaseException:
    """The exception ``fn()`` raises (failing the test if it raises none)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the caller compares whatever was raised)
        return e
    raise AssertionError("no error was raised")


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def assert_close(got: Any, want: Any, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    """Equal structures, shapes and dtypes; values equal up to float32 rounding."""
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree), f"structure {g_tree} != {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        if w.dtype == jax.dtypes.float0:
            continue
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@contextlib.contextmanager
def both_x64(on: bool = True) -> Iterator[None]:
    """64-bit dtypes ``on`` (or off) in plait and in JAX, restored on exit."""
    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", on)
    try:
        with plait.enable_x64(on):
            yield
    finally:
        jax.config.update("jax_enable_x64", before)
