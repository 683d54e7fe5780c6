"""Small parts of JAX's API that libraries built on JAX call (flax among them), against
JAX 0.10.2: ``jnp.einsum(_dot_general=)``, ``lax.scan(_split_transpose=)``,
``NamedSharding.update``, ``dtypes.supports_inf``, ``jax.extend.core``'s opaque trace
state and ``source_info_util.register_exclusion``."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any

import jax
import jax._src.dtypes as jdtypes
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from jax.extend import core as jcore

import plait
import plait.numpy as pjnp
from plait.extend import core as pcore
from plait.extend import source_info_util
from plait.frontend.core import traceback_util
from plait.frontend.core.dtype_queries import supports_inf
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
