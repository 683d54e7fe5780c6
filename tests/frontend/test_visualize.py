"""``plait.debug.visualize_array_sharding`` and abstract meshes against JAX 0.10.2 on the
same 8 CPU devices: the same drawings and the same printed meshes."""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jjnp
import pytest
from jax.sharding import AxisType as JAxisType
from jax.sharding import NamedSharding as JNamedSharding
from jax.sharding import PartitionSpec as JP

import plait
import plait.numpy as pjnp
from plait.errors import ArgumentError
from plait.sharding import AbstractMesh, AxisType, NamedSharding, get_abstract_mesh
from plait.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

CASES = [((8,), ("X",)), ((8,), (("X", "Y"),)), ((8,), ()), ((16,), ("Y",)),
         ((8, 4), ()), ((3, 5), ()), ((8, 4), (None, "Y")), ((16, 16), ("X", "Y")),
         ((64, 64), ("Y", "X")), ((8, 4), ("X", "Y")), ((8, 4), ("X",))]
OPTIONS: list[dict[str, Any]] = [{}, {"scale": 2.0}, {"min_width": 3, "max_width": 40},
                                 {"scale": 0.5, "min_width": 12}]


def _drawings(capsys: Any, draw: Any) -> tuple[str, str]:
    out = []
    for lib in ("plait", "jax"):
        draw(lib)
        out.append(capsys.readouterr().out)
    return out[0], out[1]


@pytest.mark.parametrize("shape, spec", CASES, ids=str)
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_drawings_are_jaxs(capsys: Any, shape: tuple[int, ...], spec: tuple[Any, ...],
                           options: dict[str, Any]) -> None:
    pm = plait.make_mesh((4, 2), ("X", "Y"))
    jm = jax.make_mesh((4, 2), ("X", "Y"), (JAxisType.Auto,) * 2)

    def draw(lib: str) -> None:
        if lib == "plait":
            x = plait.device_put(pjnp.zeros(shape), NamedSharding(pm, P(*spec)))
            plait.debug.visualize_array_sharding(x, **options)
        else:
            x = jax.device_put(jjnp.zeros(shape), JNamedSharding(jm, JP(*spec)))
            jax.debug.visualize_array_sharding(x, **options)
    ours, theirs = _drawings(capsys, draw)
    if _device_ids(theirs) == set(range(8)):
        assert ours == theirs
    else:  # (JAX's table was too wide for max_width and lost its labels: plait keeps them)
        assert _device_ids(ours) == set(range(8))


def test_a_single_device_array_and_a_bare_sharding_are_drawn_as_jax(capsys: Any) -> None:
    def draw(lib: str) -> None:
        m = plait if lib == "plait" else jax
        m.debug.visualize_array_sharding(m.numpy.zeros(3))
        mesh = (plait.make_mesh((4, 2), ("X", "Y")) if lib == "plait"
                else jax.make_mesh((4, 2), ("X", "Y"), (JAxisType.Auto,) * 2))
        m.debug.visualize_sharding((8, 4), m.sharding.NamedSharding(mesh, m.P("X")))
    ours, theirs = _drawings(capsys, draw)
    assert ours == theirs


def test_too_wide_a_drawing_keeps_its_labels_within_max_width(capsys: Any) -> None:
    # (JAX's rich table drops the labels here; plait narrows the columns instead.)
    m = plait.make_mesh((4, 2), ("X", "Y"))
    x = plait.device_put(pjnp.zeros((4, 40)), NamedSharding(m, P("X", "Y")))
    plait.debug.visualize_array_sharding(x)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert _device_ids(out) == set(range(8))


def _device_ids(drawing: str) -> set[int]:
    return {int(i) for label in re.findall(r"CPU ([\d,]+)", drawing) for i in label.split(",")}


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match=r"visualize_sharding: expected a shape of 1 or 2 "
                                         r"dimensions, but got \(2, 2, 2\)"):
        plait.debug.visualize_array_sharding(pjnp.zeros((2, 2, 2)))
    with pytest.raises(ArgumentError, match=r"visualize_array_sharding: expected a concrete "
                                            r"array, but got a traced value f32\[3\]"):
        plait.jit(plait.debug.visualize_array_sharding)(pjnp.zeros(3))
    with pytest.raises(TypeError, match="expected a plait Array, but got list"):
        plait.debug.visualize_array_sharding([1.0])


def test_abstract_meshes_print_and_compare_as_jaxs() -> None:
    pm = plait.make_mesh((4, 2), ("X", "Y"), (AxisType.Auto, AxisType.Auto))
    jm = jax.make_mesh((4, 2), ("X", "Y"), (JAxisType.Auto, JAxisType.Auto))
    assert str(get_abstract_mesh()) == str(jax.sharding.get_abstract_mesh())
    with plait.set_mesh(pm), jax.set_mesh(jm):
        ours, theirs = get_abstract_mesh(), jax.sharding.get_abstract_mesh()
        assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
        assert (ours.axis_names, ours.axis_sizes, ours.size, dict(ours.shape)) == (
            theirs.axis_names, theirs.axis_sizes, theirs.size, dict(theirs.shape))
        seen = []

        def f(x: Any) -> Any:
            seen.append(str(get_abstract_mesh()))
            return x
        plait.jit(f)(1.0)
        assert seen == [str(theirs)]
    assert str(pm.abstract_mesh) == str(jm.abstract_mesh)
    a = AbstractMesh((8,), ("A",), (AxisType.Explicit,))
    b = jax.sharding.AbstractMesh((8,), ("A",), (JAxisType.Explicit,))
    assert str(a) == str(b)
    assert a == AbstractMesh((8,), ("A",), (AxisType.Explicit,))
    assert hash(a) == hash(AbstractMesh((8,), ("A",), (AxisType.Explicit,)))
    assert a != AbstractMesh((8,), ("A",))
    assert str(a.update(axis_sizes=(2, 4), axis_names=("a", "b"),
                        axis_types=(AxisType.Auto,) * 2)) == str(
        b.update(axis_sizes=(2, 4), axis_names=("a", "b"), axis_types=(JAxisType.Auto,) * 2))


def test_abstract_mesh_bad_input() -> None:
    with pytest.raises(ValueError, match=r"AbstractMesh: expected one size and one type per "
                                         r"axis name \('a',\), but got sizes \(2, 4\)"):
        AbstractMesh((2, 4), ("a",))
    with pytest.raises(ValueError, match="expected distinct string axis names"):
        AbstractMesh((2, 4), ("a", "a"))
