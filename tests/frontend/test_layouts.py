"""``plait.experimental.layout`` and ``jit(device=)`` against JAX 0.10.2: layouts and
formats as values, a ``Format`` where ``jit`` takes a sharding, and where calls run."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import layout as jlayout
from jax.sharding import NamedSharding as JNamedSharding
from jax.sharding import PartitionSpec as JP

import plait
import plait.numpy as pjnp
from plait.errors import ArgumentError
from plait.experimental import layout as playout
from plait.sharding import NamedSharding
from plait.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

X = np.arange(16.0, dtype=np.float32).reshape(8, 2)


def test_layouts_are_values_as_in_jax() -> None:
    for lib in (playout, jlayout):
        a = lib.Layout((0, 1))
        assert a == lib.Layout([0, 1]) and hash(a) == hash(lib.Layout((0, 1)))
        assert a != lib.Layout((1, 0)) and a != (0, 1)
        assert a.update(major_to_minor=(1, 0)) == lib.Layout((1, 0))
    assert repr(playout.Layout((1, 0), ((8,),))) == repr(jlayout.Layout((1, 0), ((8,),)))
    assert repr(playout.Layout.AUTO) == repr(jlayout.Layout.AUTO) == "AUTO"
    assert repr(playout.Format(playout.Layout.AUTO)) == repr(jlayout.Format(jlayout.Layout.AUTO))


@pytest.mark.parametrize("args,error", [((("layout",),), TypeError),
                                        (((0, 1),), ValueError)])
def test_bad_formats_raise_jaxs_errors(args: tuple[Any, ...], error: type[Exception]) -> None:
    layout = args[0] if args[0] == ("layout",) else None
    for lib in (playout, jlayout):
        given = lib.Layout(args[0]) if layout is None else layout[0]
        with pytest.raises(error):
            lib.Format(given)
    with pytest.raises(TypeError, match="expected the sharding None or a Sharding"):
        playout.Format(None, "cpu")


def test_a_format_gives_jit_its_sharding() -> None:
    ours_mesh = plait.make_mesh((8,), ("x",))
    their_mesh = jax.make_mesh((8,), ("x",))
    ours = plait.jit(lambda x: x * 2, in_shardings=playout.Format(
        playout.Layout.AUTO, NamedSharding(ours_mesh, P("x"))),
        out_shardings=playout.Format(None, NamedSharding(ours_mesh, P(None, "x"))))(X[:, :1]
                                                                                  .repeat(8, 1))
    theirs = jax.jit(lambda x: x * 2, in_shardings=jlayout.Format(
        jlayout.Layout.AUTO, JNamedSharding(their_mesh, JP("x"))),
        out_shardings=jlayout.Format(None, JNamedSharding(their_mesh, JP(None, "x"))))(
            X[:, :1].repeat(8, 1))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert ours.sharding.spec == P(None, "x") and tuple(theirs.sharding.spec) == (None, "x")


def test_only_the_default_layout_is_available() -> None:
    mesh = plait.make_mesh((8,), ("x",))
    default = playout.Format(playout.Layout((0, 1)), NamedSharding(mesh, P()))
    np.testing.assert_array_equal(np.asarray(plait.jit(lambda x: x + 1,
                                                       in_shardings=default)(X)), X + 1)
    column_major = playout.Format(playout.Layout((1, 0)), NamedSharding(mesh, P()))
    with pytest.raises(NotImplementedError, match=r"expected XLA's default layout "
                       r"\(major_to_minor=\(0, 1\), no tiling\), but got Layout"):
        plait.jit(lambda x: x + 1, in_shardings=column_major)(X)


def test_with_layout_constraint_keeps_default_layouts() -> None:
    def f(lib: Any, np_: Any, x: Any) -> Any:
        return lib.with_layout_constraint(np_.sin(x), lib.Layout((0, 1))) * 2

    ours = plait.jit(lambda x: f(playout, pjnp, x))(X)
    theirs = jax.jit(lambda x: f(jlayout, jjnp, x))(X)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert playout.with_layout_constraint({"a": X}, None)["a"] is X
    with pytest.raises(NotImplementedError, match=r"with_layout_constraint \(leaf 1\): "
                       r"expected XLA's default layout \(major_to_minor=\(0,\)"):
        playout.with_layout_constraint([X[0], X[:, 0]], [None, playout.Layout((0, 1))])


def _devices_of(jit: Any, devices: list[Any], put: Any, x: Any) -> list[tuple[Any, ...]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        on3 = jit(lambda v: v * 2, device=devices[3])
        on0 = jit(lambda v: v + 1, device=devices[0])
    elsewhere = put(x, devices[2])
    out = []
    for _ in range(2):  # (the second call through the dispatcher's fast path)
        for f, arg in ((on3, x), (on3, elsewhere), (on0, elsewhere), (on0, x)):
            y = f(arg)
            out.append((np.asarray(y).tolist(), sorted(d.id for d in y.devices())))
    return out


def test_jit_device_runs_every_call_on_that_device_as_jax() -> None:
    ours = _devices_of(plait.jit, plait.devices(), plait.device_put, pjnp.asarray(X[0]))
    theirs = _devices_of(jax.jit, jax.devices(), jax.device_put, jjnp.asarray(X[0]))
    assert ours == theirs


def test_jit_device_is_deprecated_and_checked() -> None:
    with pytest.warns(DeprecationWarning, match="the device argument is deprecated"):
        plait.jit(lambda x: x, device=plait.devices()[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ArgumentError, match="expected one of plait.devices()"):
            plait.jit(lambda x: x, device="cpu")
        mesh = plait.make_mesh((8,), ("x",))
        with pytest.raises(ValueError, match="expected device= or in_shardings"):
            plait.jit(lambda x: x, device=plait.devices()[0],
                      in_shardings=NamedSharding(mesh, P()))
