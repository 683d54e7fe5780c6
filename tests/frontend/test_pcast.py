"""``lax.pcast(x, axes, to='varying')`` (JAX 0.10's ``pvary``) in ``shard_map`` bodies,
against JAX 0.10.2 on the same 8 CPU devices: values, gradients, ``vmap``, the
``out_specs`` check, the printed equation and the errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.sharding import AxisType as JAxisType
from jax.sharding import PartitionSpec as JP

import plait
import plait.lax as plax
import plait.numpy as pjnp
from plait.sharding import AxisType
from plait.sharding import PartitionSpec as P
from tests.frontend.jax_oracle import assert_close, raised

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

MESHES = (plait.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,)),
          jax.make_mesh((4,), ("i",), axis_types=(JAxisType.Auto,)))


def _both(make: Any) -> tuple[Any, Any]:
    """``make(lib, np, lax, P, mesh)`` for plait and for JAX."""
    return (make(plait, pjnp, plax, P, MESHES[0]), make(jax, jjnp, jax.lax, JP, MESHES[1]))


def _scan_carry(lib: Any, np_: Any, lax: Any, spec: Any, mesh: Any) -> Any:
    """A scan whose carry starts replicated and becomes varying: JAX 0.10 asks for the
    pcast of the initial carry."""
    def body(x: Any, w: Any) -> Any:
        def step(c: Any, wi: Any) -> tuple[Any, Any]:
            c = np_.tanh(c * wi + 1.0)
            return c, c.sum()
        c0 = lax.pcast(np_.zeros_like(x) + x, "i", to="varying")
        c, ys = lax.scan(step, c0, w)
        return lax.psum(c, "i"), ys
    return lib.shard_map(body, mesh=mesh, in_specs=(spec(), spec(None, "i")),
                         out_specs=(spec(), spec("i")))


def _replicated_weight(lib: Any, np_: Any, lax: Any, spec: Any, mesh: Any) -> Any:
    def body(x: Any, w: Any) -> Any:
        return lax.psum(lax.pcast(x, ("i",), to="varying") * w, "i")
    return lib.shard_map(body, mesh=mesh, in_specs=(spec(), spec("i")), out_specs=spec())


X = np.linspace(-1.0, 1.0, 3, dtype=np.float32)
W = np.linspace(0.5, -0.7, 20, dtype=np.float32).reshape(5, 4)


def test_scan_carry_values_and_gradients() -> None:
    ours, theirs = _both(_scan_carry)
    assert_close(ours(X, W), theirs(X, W))
    def loss(f: Any) -> Any:
        return lambda x, w: (f(x, w)[0] ** 2).sum() + f(x, w)[1].sum()
    assert_close(plait.grad(loss(ours), argnums=(0, 1))(X, W),
                 jax.grad(loss(theirs), argnums=(0, 1))(X, W))
    assert_close(plait.jit(plait.grad(loss(ours), argnums=(0, 1)))(X, W),
                 jax.grad(loss(theirs), argnums=(0, 1))(X, W))


def test_replicated_input_gradients_jvp_and_vmap() -> None:
    ours, theirs = _both(_replicated_weight)
    w = W[0] * 3
    assert_close(ours(X[:1], w), theirs(X[:1], w))
    assert_close(plait.grad(lambda x, v: ours(x, v).sum(), argnums=(0, 1))(2.0, w),
                 jax.grad(lambda x, v: theirs(x, v).sum(), argnums=(0, 1))(2.0, w))
    assert_close(plait.jvp(ours, (X[:1], w), (X[:1] + 1, w * 2)),
                 jax.jvp(theirs, (X[:1], w), (X[:1] + 1, w * 2)))
    xs = np.stack([X[:1], -X[:1]])
    assert_close(plait.vmap(ours, in_axes=(0, None))(xs, w),
                 jax.vmap(theirs, in_axes=(0, None))(xs, w))


def test_the_jaxpr_has_a_pvary_equation() -> None:
    ours, theirs = _both(_replicated_weight)
    mine = str(plait.make_jaxpr(ours)(2.0, W[0]))
    their = str(jax.make_jaxpr(theirs)(2.0, W[0]))
    line = "pvary[axes=('i',)] "
    assert line in their and line in mine
    closed = plait.make_jaxpr(ours)(2.0, W[0])
    body = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert plait.ir.parse_jaxpr(str(body)) == body
    plait.ir.check_jaxpr(plait.make_jaxpr(plait.grad(lambda x: ours(x, W[0]).sum()))(2.0))
    # The reference interpreter runs it.
    got = plait.ir.eval_jaxpr(closed.jaxpr, closed.consts, 2.0, W[0])
    assert_close(got, [theirs(2.0, W[0])])


def test_a_varying_result_needs_its_axis_in_out_specs() -> None:
    def make(lib: Any, np_: Any, lax: Any, spec: Any, mesh: Any) -> Any:
        return lib.shard_map(lambda x: lax.pcast(x, "i", to="varying"), mesh=mesh,
                             in_specs=spec(), out_specs=spec())
    ours, theirs = _both(make)
    assert type(raised(lambda: theirs(X))) is ValueError
    with pytest.raises(ValueError, match=r"out_specs is P\(\) which implies that the "
                                         r"corresponding output value is only varying"):
        ours(X)


def test_errors() -> None:
    ours = MESHES[0]
    with pytest.raises(ValueError, match="must be called under plait.shard_map over a mesh "
                                         "with the axis 'i'"):
        plax.pcast(X, "i", to="varying")
    assert type(raised(lambda: jax.lax.pcast(X, "i", to="varying"))) is ValueError
    def call(fn: Any) -> Any:
        return plait.shard_map(fn, mesh=ours, in_specs=P("i"), out_specs=P("i"))(W[0])
    with pytest.raises(ValueError, match=r"pcast: expected to= to be one of \['varying', "
                                         r"'reduced', 'unreduced'\], but got 'bogus'"):
        call(lambda w: plax.pcast(w, "i", to="bogus"))
    with pytest.raises(TypeError, match=r"axis_name=\{'i'\} must be a tuple or a str"):
        call(lambda w: plax.pcast(w, {"i"}, to="varying"))
    with pytest.raises(NotImplementedError, match=r"pcast\(..., to='reduced'\): plait has "
                                                  "no reduced or unreduced shardings"):
        call(lambda w: plax.pcast(w, "i", to="reduced"))
    assert_close(call(lambda w: plax.pcast(w, (), to="varying")), W[0])
