"""Small parts of JAX's API that libraries built on JAX call (flax among them), against
JAX 0.10.2: ``jnp.einsum(_dot_general=)``, ``lax.scan(_split_transpose=)``,
``NamedSharding.update``, ``dtypes.supports_inf``, ``jax.extend.core``'s opaque trace
state and ``source_info_util.register_exclusion``; and flax nnx's: user effects, the
hijax type declarations, the mesh's axis-type queries, ``sharding`` of traced values,
``typeof`` of Refs and jit of Refs with shardings left unspecified."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any

import jax
import jax._src.dtypes as jdtypes
import jax._src.effects as jeffects
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from jax.experimental import hijax as jhijax
from jax.extend import core as jcore

import plait
import plait.numpy as pjnp
from plait.experimental import hijax
from plait.extend import core as pcore
from plait.extend import source_info_util
from plait.frontend.api import hitypes
from plait.frontend.core import traceback_util
from plait.frontend.core.dtype_queries import supports_inf
from plait.ir.effects import IO
from plait.sharding import NamedSharding
from plait.sharding import PartitionSpec as P

A = np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
B = np.linspace(0.5, 2.0, 4 * 5, dtype=np.float32).reshape(4, 5)


def _einsum_with(np_: Any, lax: Any) -> tuple[Any, list[Any]]:
    calls: list[Any] = []

    def dot_general(x: Any, y: Any, dims: Any, precision: Any = None, **kw: Any) -> Any:
        calls.append((tuple(map(tuple, dims[0])), tuple(map(tuple, dims[1])), sorted(kw)))
        return lax.dot_general(x, y, dims, precision, **kw) * 2
    return np_.einsum("bij,jk->bik", A, B, _dot_general=dot_general), calls


def test_einsum_contracts_with_the_dot_general_given() -> None:
    ours, our_calls = _einsum_with(pjnp, plait.lax)
    theirs, their_calls = _einsum_with(jjnp, jax.lax)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert our_calls == their_calls


def test_scan_accepts_split_transpose() -> None:
    def loss(lib: Any, w: Any) -> Any:
        def body(c: Any, x: Any) -> tuple[Any, Any]:
            c = lib.numpy.tanh(c @ w + x)
            return c, c.sum()
        return lib.lax.scan(body, A[0, 0, :3] * 0, A[0, :, :3], _split_transpose=True)[1].sum()

    w = B[:3, :3]
    np.testing.assert_allclose(np.asarray(plait.grad(lambda v: loss(plait, v))(w)),
                               np.asarray(jax.grad(lambda v: loss(jax, v))(w)), rtol=1e-5)


@pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices")
def test_named_sharding_update_is_jaxs() -> None:
    ours = NamedSharding(plait.make_mesh((4, 2), ("x", "y")), P("x", None))
    theirs = jax.sharding.NamedSharding(jax.make_mesh((4, 2), ("x", "y")),
                                        jax.sharding.PartitionSpec("x", None))
    for change in ({"spec": ("y",)}, {"spec": P(None, ("x", "y"))}, {}):
        theirs_change = {k: jax.sharding.PartitionSpec(*v) for k, v in change.items()}
        assert tuple(ours.update(**change).spec) == tuple(theirs.update(**theirs_change).spec)
    assert ours.update() == ours
    assert ours.update(mesh=plait.make_mesh((2, 4), ("x", "y"))).mesh.shape == {"x": 2, "y": 4}
    with pytest.raises(TypeError, match=r"expected fields among mesh, spec, memory_kind"):
        ours.update(axis=1)


_DTYPES = ["bool", "int8", "uint32", "float16", "float32", "float64", "complex64", "bfloat16",
           "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
           "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu",
           "float4_e2m1fn", "int4", "uint2"]


@pytest.mark.parametrize("name", _DTYPES)
def test_supports_inf_answers_as_jax(name: str) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name, None) or name)
    assert supports_inf(dtype) == jdtypes.supports_inf(dtype)


def _trace_states(lib: Any, core: Any) -> list[bool]:
    eager = core.get_opaque_trace_state(convention="test")
    seen: list[Any] = []

    def f(x: Any) -> Any:
        seen.append(core.get_opaque_trace_state(convention="test"))
        seen.append(core.get_opaque_trace_state(convention="test"))
        return x * 2

    lib.jit(f)(1.0)
    lib.jit(f)(np.ones(2))
    return [eager == core.get_opaque_trace_state(convention="test"), seen[0] == seen[1],
            seen[0] == eager, seen[1] == seen[2]]


def test_opaque_trace_states_compare_as_jaxs() -> None:
    assert _trace_states(plait, pcore) == _trace_states(jax, jcore) == [True, True, False,
                                                                         False]


def test_registered_files_are_internal(tmp_path: Path) -> None:
    library = tmp_path / "a_library.py"
    library.write_text("def double(x):\n    return x * 2\n\n"
                       "def fail(x):\n    raise ValueError('bad input')\n")
    spec = importlib.util.spec_from_file_location("a_library", library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = list(traceback_util.excluded_paths)
    try:
        # Before: the equation's line is the library's; after, the caller's.
        eqn = plait.make_jaxpr(module.double)(1.0).jaxpr.eqns[0]
        assert eqn.source_info is not None and eqn.source_info.file == str(library)
        source_info_util.register_exclusion(str(tmp_path))
        eqn = plait.make_jaxpr(module.double)(1.0).jaxpr.eqns[0]
        assert eqn.source_info is not None and eqn.source_info.file != str(library)
        try:
            plait.jit(module.fail)(1.0)
        except ValueError as e:
            frames = [f.filename for f in traceback.extract_tb(e.__traceback__)]
            assert str(library) not in frames and __file__ in frames
        with pytest.raises(TypeError, match="expected a path"):
            source_info_util.register_exclusion(3)  # type: ignore[arg-type]  # (the error tested)
    finally:
        traceback_util.excluded_paths[:] = before
        sys.modules.pop("a_library", None)


@pytest.mark.parametrize("name", ["matmul", "reduce", "exp"])
def test_lowered_cost_analysis_is_jaxs(name: str) -> None:
    # flax's tabulate counts each module's flops this way.
    def program(np_: Any) -> Any:
        return {"matmul": lambda x: np_.sin(x) @ x, "reduce": lambda x: np_.sum(x * x, axis=0),
                "exp": lambda x: np_.exp(x) + np_.log1p(x)}[name]

    x = np.ones((4, 4), np.float32)
    ours = plait.jit(program(pjnp)).lower(x).cost_analysis()
    theirs = jax.jit(program(jjnp)).lower(x).cost_analysis()
    assert theirs is not None
    for key in ("flops", "transcendentals", "bytes accessed"):
        assert ours.get(key) == theirs.get(key), key


def test_user_effects_subclass_and_group_as_jaxs() -> None:
    # (flax nnx declares `class VariableEffect(Effect): ...` and allows it in control flow)
    class Mine(pcore.Effect):
        ...

    class Theirs(jcore.Effect):
        ...

    ours, theirs = hitypes.EffectTypeSet(), jeffects.EffectTypeSet()
    ours.add_type(Mine)
    theirs.add_type(Theirs)
    assert ours.contains(Mine()) and theirs.contains(Theirs())
    assert not ours.contains(IO) and not theirs.contains(jeffects.Effect())
    mine = Mine()
    assert ours.filter_not_in([mine, IO]) == [IO] and ours.filter_in([mine, IO]) == [mine]
    assert mine.name == "Mine" and not mine.ordered and mine != IO
    with pytest.raises(TypeError, match="add_type: expected a subclass of Effect, but got"):
        ours.add_type(int)  # type: ignore[arg-type]  # (the wrong type tested)


def test_hi_types_are_declared_but_not_applied() -> None:
    class BoxTy(hijax.MutableHiType):
        __slots__ = ()

    class BoxNew(hijax.HiPrimitive):
        pass

    assert isinstance(BoxTy(), pcore.AbstractValue)
    assert hijax.aval_property(fget=len).fget is len and hijax.aval_method(len).fun is len
    assert hijax.AvalQDD(BoxTy(), None).qdd is None
    hijax.register_hitype(list, lambda v: BoxTy())
    with pytest.raises(NotImplementedError, match="HiPrimitive 'box_new': plait does not trace "
                       "values of high-level \\(hijax\\) types yet"):
        BoxNew("box_new").bind(1.0)
    with pytest.raises(TypeError, match="register_hitype: expected a class and a function"):
        hijax.register_hitype(1, len)  # type: ignore[arg-type]  # (the wrong type tested)
    missing = {n for n in dir(jhijax) if not n.startswith("_")} - set(dir(hijax))
    assert missing == {"HiPspec", "TransformedRef"}


AXIS_TYPES = [("Explicit", "Explicit"), ("Auto", "Auto"), ("Manual", "Manual"),
              ("Explicit", "Auto"), ("Manual", "Explicit")]


@pytest.mark.parametrize("types", AXIS_TYPES, ids=["-".join(t) for t in AXIS_TYPES])
def test_mesh_axis_type_queries_are_jaxs(types: tuple[str, str]) -> None:
    ours = [plait.sharding.AbstractMesh((1, 1), ("a", "b"),
                                        tuple(getattr(plait.sharding.AxisType, t) for t in types)),
            plait.make_mesh((1, 1), ("a", "b"),
                            axis_types=tuple(getattr(plait.sharding.AxisType, t) for t in types))]
    theirs = [jax.sharding.AbstractMesh((1, 1), ("a", "b"),
                                        tuple(getattr(jax.sharding.AxisType, t) for t in types)),
              jax.make_mesh((1, 1), ("a", "b"),
                            axis_types=tuple(getattr(jax.sharding.AxisType, t) for t in types))]
    for our, their in zip(ours, theirs):
        for query in ("are_all_axes_explicit", "are_all_axes_auto", "are_all_axes_manual",
                      "explicit_axes", "auto_axes", "manual_axes"):
            assert getattr(our, query) == getattr(their, query), query


def test_traced_values_have_no_sharding_attribute() -> None:
    # (flax reads getattr(value, "sharding", None) on traced values)
    seen: list[Any] = []

    def look(x: Any) -> Any:
        seen.append(getattr(x, "sharding", None))
        return x

    for lib in (plait, jax):
        lib.jit(look)(1.0)
    assert seen == [None, None]
    with pytest.raises(AttributeError, match="sharding needs a concrete array, but got a traced "
                       "value of type float32\\[\\]"):
        plait.jit(lambda x: x.sharding)(1.0)


def test_typeof_a_ref_is_its_abstract_ref() -> None:
    ours = plait.typeof(plait.new_ref(pjnp.ones(3)))
    theirs = jax.typeof(jax.new_ref(jjnp.ones(3)))
    assert type(ours).__name__ == type(theirs).__name__ == "AbstractRef"
    assert isinstance(ours, hijax.AbstractRef) and isinstance(theirs, jhijax.AbstractRef)
    assert ours.inner_aval.str_short(short_dtypes=False) == theirs.inner_aval.str_short()


def test_jit_of_refs_takes_shardings_left_unspecified() -> None:
    # (flax's nnx.jit gives out_shardings=(None, None, None) for its tuple of results)
    def count(r: Any) -> Any:
        r[...] += 1.0
        return r[...] * 2, r[...]

    results = []
    for lib, np_ in ((plait, pjnp), (jax, jjnp)):
        r = lib.new_ref(np_.zeros(2))
        out = lib.jit(count, in_shardings=None, out_shardings=(None, None))(r)
        results.append((np.asarray(out[0]), np.asarray(r[...])))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    with pytest.raises(plait.errors.RefError, match="donate_argnums are not supported"):
        plait.jit(count, donate_argnums=0)(plait.new_ref(pjnp.zeros(2)))


def test_key_dtypes_have_jaxs_scalar_type() -> None:
    # (jaxtyping's Key[Array, ...] reads the name of the dtype's scalar type)
    ours, theirs = plait.random.key(0).dtype, jax.random.key(0).dtype
    assert ours.type is plait.dtypes.prng_key and theirs.type is jax.dtypes.prng_key
    assert ours.type.__name__ == theirs.type.__name__ == "prng_key"
    for above in ("prng_key", "extended"):
        assert plait.dtypes.issubdtype(ours, getattr(plait.dtypes, above))
        assert jax.dtypes.issubdtype(theirs, getattr(jax.dtypes, above))
    for kind in (np.void, np.integer, np.floating):
        assert plait.dtypes.issubdtype(ours, kind) == jax.dtypes.issubdtype(theirs, kind)
