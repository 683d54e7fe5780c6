"""The ahead-of-time stages' view of a function's signature (``args_info``,
``in_tree``, ``in_avals``, ``out_avals``, ``donate_argnums``, shardings and formats of
``Compiled``) and the formats of arrays, printed as JAX 0.10.2 prints them."""

from __future__ import annotations

import pickle
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tree as dm_tree

import plait
import plait.numpy as pnp
from plait import sharding as psharding


def _f(x: Any, n: int, y: Any = None, *, z: Any) -> Any:
    return {"a": x * n, "b": (x + z, z)}


def _views(stage: Any) -> list[str]:
    """Everything a stage says of the signature, printed (``out_info`` as shapes and
    dtypes: JAX's compiled one also has shardings and layouts, which plait's
    ``ShapeDtypeStruct`` does not carry)."""
    out = jax.tree.map(lambda s: (s.shape, s.dtype), stage.out_info)
    return [str(v) for v in (stage.in_tree, stage.out_tree, stage.args_info, stage.in_avals,
                             stage.donate_argnums, out)]


def _staged(L: Any, np_: Any) -> tuple[Any, Any, Any]:
    traced = L.jit(_f, static_argnums=1, donate_argnums=0).trace(
        np_.ones(3), 2, z=np_.ones((), np.int32))
    lowered = traced.lower()
    return traced, lowered, lowered.compile()


def test_stages_describe_the_signature_as_jax() -> None:
    ours, theirs = _staged(plait, pnp), _staged(jax, jnp)
    for stage, want in zip(ours, theirs):
        assert _views(stage) == _views(want)
    assert ours[0].fun_name == theirs[0].fun_name == "_f"
    assert str(ours[0].out_avals) == str(theirs[0].out_avals)
    info = plait.tree.leaves(ours[0].args_info)[0]
    assert isinstance(info, plait.stages.ArgInfo)
    assert (info.shape, info.dtype, info.donated) == ((3,), np.float32, True)
    compiled, want = ours[2], theirs[2]
    for name in ("input_shardings", "output_shardings", "input_formats", "output_formats"):
        assert str(getattr(compiled, name)) == str(getattr(want, name)), name
    assert type(compiled.runtime_executable()) is type(want.runtime_executable())


def test_unused_arguments_have_no_sharding() -> None:
    def f(L: Any, np_: Any) -> Any:
        return L.jit(lambda a, b, k=1.0: a * k).lower(np_.ones(2), np_.ones(3), k=2.0).compile()
    ours, theirs = f(plait, pnp), f(jax, jnp)
    for name in ("in_avals", "args_info", "input_shardings", "input_formats"):
        assert str(getattr(ours, name)) == str(getattr(theirs, name)), name
    np.testing.assert_array_equal(ours(np.ones(2, np.float32), np.ones(3, np.float32), k=3.0),
                                  np.full(2, 3.0))


def test_sharded_program_shardings_and_formats() -> None:
    def compiled(L: Any, sh: Any, np_: Any) -> Any:
        mesh = sh.Mesh(np.array(L.devices()).reshape(4, 2), ("x", "y"))
        rows = sh.NamedSharding(mesh, sh.PartitionSpec("x", None))
        f = L.jit(lambda a, b: (a @ b, a.sum()),
                  in_shardings=(rows, sh.NamedSharding(mesh, sh.PartitionSpec(None, "y"))),
                  out_shardings=(rows, sh.NamedSharding(mesh, sh.PartitionSpec())))
        return f.lower(np_.ones((8, 4)), np_.ones((4, 6))).compile()
    ours, theirs = compiled(plait, psharding, pnp), compiled(jax, jax.sharding, jnp)
    for name in ("input_shardings", "output_shardings", "input_formats", "output_formats"):
        assert str(getattr(ours, name)) == str(getattr(theirs, name)), name


def test_traced_is_callable_without_static_arguments() -> None:
    ours, _, _ = _staged(plait, pnp)
    theirs, _, _ = _staged(jax, jnp)
    args = (np.arange(3.0, dtype=np.float32),)
    got = ours(*args, z=np.int32(4))
    want = theirs(*args, z=np.int32(4))
    assert str(plait.tree.structure(got)) == str(jax.tree.structure(want))
    for g, w in zip(plait.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(TypeError, match=r"expected arguments of structure "
                                        r"PyTreeDef\(\(\(\*,\), \{'z': \*\}\)\) \(static "
                                        r"arguments left out\), but got"):
        ours(*args, 2, z=np.int32(4))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_array_format_as_jax(shape: tuple[int, ...]) -> None:
    theirs: Any = jnp.ones(shape)  # (JAX's Array stub has no format)
    assert str(pnp.ones(shape).format) == str(theirs.format)


def test_shape_dtype_struct_update() -> None:
    for L in (plait, jax):
        s = L.ShapeDtypeStruct((2, 3), np.float32)
        assert (s.update(shape=(4,)).shape, s.update(dtype=np.int32).dtype) == (
            (4,), np.int32)
        assert s.update(weak_type=True).weak_type
    with pytest.raises(TypeError, match=r"expected fields among \['dtype', 'sharding', "
                                        r"'shape', 'weak_type'\], but got \['foo'\]"):
        plait.ShapeDtypeStruct((2,), np.float32).update(foo=1)


def test_compiler_options_reach_xla(tmp_path: Any) -> None:
    """``jit(compiler_options=)`` and ``Lowered.compile(compiler_options)`` set XLA's
    options: ``xla_dump_to`` makes XLA write the program's dumps there, as JAX's does."""
    def dumps(L: Any, where: str, via_compile: bool) -> list[str]:
        options = {"xla_dump_to": str(tmp_path / where)}

        def f(x: Any) -> Any:
            return x * 3.0
        if via_compile:
            out = L.jit(f).lower(np.float32(1)).compile(options)(np.float32(2))
        else:
            out = L.jit(f, compiler_options=options)(np.float32(2))
        assert float(out) == 6.0
        return sorted(p.name.split(".", 1)[1] for p in (tmp_path / where).iterdir()
                      if p.name.endswith(".txt"))
    for via_compile in (False, True):
        ours, theirs = dumps(plait, f"p{via_compile}", via_compile), dumps(
            jax, f"j{via_compile}", via_compile)
        assert ours and len(ours) == len(theirs)


def test_compiler_options_errors_as_jax() -> None:
    for L in (plait, jax):
        with pytest.raises(Exception, match="No such compile option: 'no_such_option'"):
            L.jit(lambda x: x * 2, compiler_options={"no_such_option": 1})(1.0)
    with pytest.raises(TypeError, match=r"jit: expected compiler_options to map option names "
                                        r"to str, bool, int or float values, but got"):
        plait.jit(lambda x: x, compiler_options={"xla_dump_to": None})
    with pytest.raises(TypeError, match="Lowered.compile: expected compiler_options"):
        plait.jit(lambda x: x).lower(1.0).compile({1: 2})  # type: ignore[dict-item]


@pytest.mark.parametrize("axis_type", ["Explicit", "Auto"])
def test_shape_dtype_struct_sharding_lays_the_argument_out(axis_type: str) -> None:
    """A ``ShapeDtypeStruct``'s sharding is the layout the program takes (and, over
    ``Explicit`` axes, part of its type), as in JAX."""
    def staged(L: Any) -> list[Any]:
        mesh = L.make_mesh((4, 2), ("x", "y"),
                           axis_types=(getattr(L.sharding.AxisType, axis_type),) * 2)
        s = L.sharding.NamedSharding(mesh, L.P("x", "y"))
        sds = L.ShapeDtypeStruct((8, 4), np.float32, sharding=s)
        traced = L.jit(lambda x: x.sum(0) * 2).trace(sds)
        compiled = traced.lower().compile()
        x = L.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), s)
        return [str(list(traced.jaxpr.in_avals)), str(list(traced.jaxpr.out_avals)),
                str(compiled.input_shardings), str(compiled.output_shardings), repr(sds),
                np.asarray(compiled(x)).tolist()]
    assert staged(plait) == staged(jax)


def test_shape_structs_of_results_carry_explicit_shardings() -> None:
    """``eval_shape`` and ``out_info`` give the sharding in the result's type (over an
    abstract mesh), as JAX's do, and such a struct types a later trace."""
    def shapes(L: Any) -> list[str]:
        mesh = L.make_mesh((4, 2), ("x", "y"))
        s = L.sharding.NamedSharding(mesh, L.P("x", "y"))
        sds = L.ShapeDtypeStruct((8, 4), np.float32, sharding=s)
        out = L.eval_shape(lambda x: x.sum(0) * 2, sds)
        return [str(out), str(L.eval_shape(lambda x: x * 2, L.device_put(np.ones((8, 4),
                                                                                 np.float32), s))),
                str(L.jit(lambda x: x.sum(0)).trace(sds).out_info),
                str(list(L.jit(lambda x: x * 3).trace(out).jaxpr.in_avals)),
                str(L.eval_shape(lambda x: x * 2, np.ones(3)))]
    assert shapes(plait) == shapes(jax)


def _entry(hlo: str) -> list[str]:
    """The entry computation's instructions: type, opcode and attributes, without the
    operands' names (JAX names values after its source locations)."""
    body = hlo[hlo.index("ENTRY"):].splitlines()[1:]
    rhs = [line.split("=", 1)[1].strip() for line in body if "=" in line]
    return [r[:r.index("(")] + r[r.rindex(")"):] for r in rhs]


def test_hlo_dialect_as_jax() -> None:
    """``compiler_ir("hlo")`` is XLA's computation of the module and ``as_text("hlo")``
    its HLO text: the entry computation and program shape are JAX's."""
    def f(J: Any, L: Any) -> Any:
        return J.jit(lambda x, y: (L.square(x) + y[0] * y[1],)).lower(
            np.ones((2, 3), np.float32), (np.float32(2), np.ones(3, np.float32)))

    ours, theirs = f(plait, pnp), f(jax, jnp)
    assert _entry(ours.as_text("hlo")) == _entry(theirs.as_text("hlo"))
    assert str(ours.compiler_ir("hlo").program_shape()) == \
        str(theirs.compiler_ir("hlo").program_shape())
    assert _entry(ours.compiler_ir(dialect="hlo").as_hlo_text()) == _entry(ours.as_text("hlo"))
    assert ours.as_text() == ours.as_text("stablehlo")
    with pytest.raises(ValueError, match="unknown dialect: mhlo"):
        ours.compiler_ir("mhlo")
    with pytest.raises(ValueError, match="unknown dialect: mhlo"):
        theirs.compiler_ir("mhlo")


def test_shape_dtype_struct_is_a_leaf_to_tree_libraries_as_jax() -> None:
    """dm-tree descends into attrs instances; JAX's struct is a plain class (haiku's
    dtype tests map dm-tree over eval_shape's results)."""
    for L in (plait, jax):
        s = L.eval_shape(lambda x: {"y": x * 2}, L.ShapeDtypeStruct((2, 3), np.float32))
        assert dm_tree.map_structure(lambda v: v.dtype, s) == {"y": np.dtype(np.float32)}
        struct = s["y"]
        assert struct == L.ShapeDtypeStruct((2, 3), np.float32) and hash(struct) == hash(
            L.ShapeDtypeStruct((2, 3), np.float32))
        assert pickle.loads(pickle.dumps(struct)) == struct
        with pytest.raises(RuntimeError, match=r"Cannot reassign attributes \(shape\)"):
            struct.shape = (1,)
