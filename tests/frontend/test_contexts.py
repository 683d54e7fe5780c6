"""disable_jit, ensure_compile_time_eval, named_scope, named_call and live_arrays,
against JAX 0.10.2."""

from __future__ import annotations

import functools
import gc
import logging
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.experimental.compute_on as jax_compute_on
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.experimental.compute_on as plait_compute_on
import plait.numpy as pnp
from plait import lax

# (name, program over a namespace pair (numpy module, lax module)); each runs under
# disable_jit in both libraries and must give the same values.
PROGRAMS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("cond", lambda np_, lx: lx.cond(np_.float32(2.0) > 1, lambda x: x + 1, lambda x: x - 1,
                                     np_.arange(3.0))),
    ("switch_clamped", lambda np_, lx: lx.switch(7, [lambda x: x + 1, lambda x: x * 3],
                                                 np_.arange(3.0))),
    ("switch_negative", lambda np_, lx: lx.switch(-2, [lambda x: x + 1, lambda x: x * 3],
                                                  np_.arange(3.0))),
    ("while_loop", lambda np_, lx: lx.while_loop(lambda c: c[0] < 5,
                                                 lambda c: (c[0] + 1, c[1] * 2.0),
                                                 (0, np_.ones(2)))),
    ("fori_loop", lambda np_, lx: lx.fori_loop(1, 4, lambda i, c: c * i, np_.ones(2))),
    ("fori_loop_empty", lambda np_, lx: lx.fori_loop(4, 1, lambda i, c: c * i, np_.ones(2))),
    ("scan", lambda np_, lx: lx.scan(lambda c, x: (c + x["a"], (c * x["a"], x["b"])),
                                     np_.zeros(2), {"a": np_.ones((3, 2)),
                                                    "b": np_.arange(3)})),
    ("scan_reverse", lambda np_, lx: lx.scan(lambda c, x: (c + x, c - x), 0.0,
                                             np_.arange(4.0), reverse=True)),
    ("scan_length", lambda np_, lx: lx.scan(lambda c, _: (c + 1, c), 0, None, length=3)),
]


def _same(a: Any, b: Any) -> None:
    la, lb = plait.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        assert np.asarray(x).dtype == np.asarray(y).dtype


@pytest.mark.parametrize("name,program", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_control_flow_under_disable_jit_matches_jax(name: str,
                                                    program: Callable[[Any, Any], Any]) -> None:
    with plait.disable_jit():
        ours = program(pnp, lax)
    with jax.disable_jit():
        theirs = program(jnp, jax.lax)
    _same(ours, theirs)


def test_control_flow_runs_as_python_when_jit_is_disabled() -> None:
    # Each branch and iteration is called with concrete values (so print works), in
    # both libraries: the bodies record what they receive.
    def record(lx: Any, log: list[str]) -> None:
        def body(c: Any) -> Any:
            log.append(type(c).__name__)
            return c + 1
        lx.while_loop(lambda c: c < 3, body, 0)

    ours: list[str] = []
    theirs: list[str] = []
    with plait.disable_jit():
        record(lax, ours)
    with jax.disable_jit():
        record(jax.lax, theirs)
    assert len(ours) == len(theirs) == 3
    assert "Tracer" not in ours


def test_jitted_function_runs_python_each_call_under_disable_jit() -> None:
    calls: list[Any] = []

    def f(x: Any) -> Any:
        calls.append(x)
        return x * 2

    g = plait.jit(f)
    g(1.0)
    traced = len(calls)
    with plait.disable_jit():
        np.testing.assert_array_equal(g(3.0), 6.0)
        np.testing.assert_array_equal(g(3.0), 6.0)
    assert len(calls) == traced + 2
    assert calls[-1] == 3.0  # the argument itself, as JAX passes it
    np.testing.assert_array_equal(g(4.0), 8.0)  # compiled again afterwards
    assert len(calls) == traced + 2


def test_config_option_and_static_arguments_under_disable_jit() -> None:
    g = plait.jit(lambda x, n: x * n, static_argnums=1)
    plait.config.update("disable_jit", True)
    try:
        assert plait.config.read("disable_jit")
        np.testing.assert_array_equal(g(pnp.ones(2), 3), [3.0, 3.0])
    finally:
        plait.config.update("jax_disable_jit", False)
    assert not plait.config.read("disable_jit")


def test_zero_length_scan_under_disable_jit_raises_jax_error() -> None:
    with jax.disable_jit(), pytest.raises(ValueError) as theirs:
        jax.lax.scan(lambda c, x: (c, x), 0.0, jnp.zeros((0,)))
    with plait.disable_jit(), pytest.raises(ValueError) as ours:
        lax.scan(lambda c, x: (c, x), 0.0, pnp.zeros((0,)))
    assert str(ours.value) == str(theirs.value)


def test_vmap_and_grad_still_apply_under_disable_jit() -> None:
    def loop(np_: Any, lx: Any, x: Any) -> Any:
        return lx.while_loop(lambda c: c < x, lambda c: c + 1.5, np_.float32(0.0))

    with plait.disable_jit():
        ours = plait.vmap(lambda x: loop(pnp, lax, x))(pnp.arange(4.0))
        g = plait.grad(lambda x: lax.cond(x > 0, lambda: x ** 3, lambda: -x))(2.0)
    with jax.disable_jit():
        theirs = jax.vmap(lambda x: loop(jnp, jax.lax, x))(jnp.arange(4.0))
        h = jax.grad(lambda x: jax.lax.cond(x > 0, lambda: x ** 3, lambda: -x))(2.0)
    _same(ours, theirs)
    np.testing.assert_allclose(g, h)


def _prims(jaxpr: Any) -> list[str]:
    return [e.primitive.name for e in jaxpr.eqns]


def test_ensure_compile_time_eval_computes_constants_while_tracing() -> None:
    def make(np_: Any, ctx: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            with ctx():
                y = np_.sin(3.0)
                positive = y > 0
                z = x * 2
            if positive:  # a concrete value: Python may branch on it
                return np_.cos(x) + y + z
            return x
        return f

    ours = plait.jit(make(pnp, plait.ensure_compile_time_eval))
    theirs = jax.jit(make(jnp, jax.ensure_compile_time_eval))
    np.testing.assert_allclose(ours(0.5), theirs(0.5), rtol=1e-6)
    inner_ours = plait.make_jaxpr(make(pnp, plait.ensure_compile_time_eval))(0.5).jaxpr
    inner_theirs = jax.make_jaxpr(make(jnp, jax.ensure_compile_time_eval))(0.5).jaxpr
    # sin(3.0) was computed, not staged; x * 2 (traced) was staged.
    assert "sin" not in _prims(inner_ours)
    assert sorted(_prims(inner_ours)) == sorted(_prims(inner_theirs))


def test_without_ensure_compile_time_eval_branching_is_an_error() -> None:
    def f(x: Any) -> Any:
        return x if pnp.sin(3.0) > 0 else -x

    with pytest.raises(plait.errors.TracerBoolConversionError):
        plait.jit(f)(1.0)


def _op_names(hlo: str) -> list[str]:
    return re.findall(r'op_name="([^"]*)"', hlo)


def test_named_scope_and_named_call_name_the_compiled_ops_as_jax() -> None:
    def program(np_: Any, api: Any) -> Callable[[Any], Any]:
        @api.named_call
        def layer(x: Any) -> Any:
            with api.named_scope("inner"):
                return np_.tanh(x)

        @api.named_scope("block")
        def f(x: Any) -> Any:
            return layer(x) * 3.0

        return f

    ours = _op_names(plait.jit(program(pnp, plait)).lower(1.0).compile().as_text())
    theirs = _op_names(str(jax.jit(program(jnp, jax)).lower(1.0).compile().as_text()))
    # (JAX also names the parameter after the argument, "x".)
    assert sorted(ours) == sorted(n for n in theirs if "/" in n)
    assert "jit(f)/block/layer/inner/tanh" in ours


def test_named_scope_in_jaxpr_source_info() -> None:
    def f(x: Any) -> Any:
        with plait.named_scope("outer"), plait.named_scope("mid"):
            y = pnp.sin(x)
        return y + 1

    text = plait.make_jaxpr(f)(1.0).pretty_print(source_info=True)
    sin_line = next(line for line in text.splitlines() if "= sin" in line)
    add_line = next(line for line in text.splitlines() if "= add" in line)
    assert "# [outer/mid] " in sin_line
    assert "[" not in add_line.split("#")[1]


def _scoped_program(api: Any, np_: Any, lax_: Any) -> Callable[[Any], Any]:
    @api.jit
    def inner(x: Any) -> Any:
        with api.named_scope("inner_scope"):
            return np_.sin(x) * 2

    @api.custom_jvp
    def cj(x: Any) -> Any:
        with api.named_scope("cj_in"):
            return np_.sin(x)
    cj.defjvp(lambda p, t: (cj(p[0]), t[0]))

    def f(x: Any) -> Any:
        with api.named_scope("a"):
            def body(c: Any, xi: Any) -> Any:
                with api.named_scope("c"):
                    return c + np_.cos(xi), c
            y = lax_.scan(body, 0.0, x)[0]
            z = lax_.cond(y > 0, lambda v: np_.exp(v), lambda v: v, y)
            w = api.checkpoint(lambda v: np_.tanh(v))(z)
            u = cj(w) + inner(w).sum()
            v = lax_.while_loop(lambda c: c < 3.0, lambda c: c + np_.abs(u), 0.0)
        with api.named_scope("b"):
            return inner(x).sum() + v
    return f


def _name_stacks(jaxpr: Any) -> list[Any]:
    """Each equation's primitive and name stack, with those of the jaxprs it holds."""
    out: list[Any] = []
    for e in jaxpr.eqns:
        out.append((e.primitive.name, str(e.source_info.name_stack)))
        # (plait's custom_jvp_call holds its rule's jaxpr, JAX's a function to trace it.)
        for v in [v for k, v in e.params.items() if k != "jvp_jaxpr"]:
            for j in v if isinstance(v, tuple) else (v,):
                inner = getattr(j, "jaxpr", j)
                if hasattr(inner, "eqns"):
                    out.append(_name_stacks(inner))
    return out


def test_name_stacks_are_relative_to_their_jaxpr_as_jaxs() -> None:
    """A called or nested jaxpr (jit, scan, cond, while, checkpoint, custom_jvp) is traced
    from an empty name stack, as in JAX: a jitted function called under two scopes has
    one jaxpr, right for both, and its compiled ops are named under the calling scope."""
    x = np.arange(3, dtype=np.float32)
    ours = plait.make_jaxpr(_scoped_program(plait, pnp, lax))(x)
    theirs = jax.make_jaxpr(_scoped_program(jax, jnp, jax.lax))(x)
    assert _name_stacks(ours.jaxpr) == _name_stacks(theirs.jaxpr)
    with plait.named_scope("outside"):  # (a trace starts from an empty stack, as in JAX)
        eqn, = plait.make_jaxpr(pnp.sin)(1.0).jaxpr.eqns
        assert eqn.source_info is not None and eqn.source_info.name_stack == ""
    # The jitted function is one private function, its ops named relative to it, called
    # under each scope; XLA names the compiled ops by joining the two, as JAX's
    # ("jit(f)/b/jit(inner)/inner_scope/sin").
    text = plait.jit(_scoped_program(plait, pnp, lax)).lower(x).as_text(debug_info=True)
    locs = set(re.findall(r'loc\("([^"]*)"', text))
    assert {"jit(f)/a/jit(inner)", "jit(f)/b/jit(inner)", "inner_scope/sin",
            "jit(f)/a/c/cos", "jit(f)/a/cj_in/sin"} <= locs
    assert not any("a/inner_scope" in n or "b/inner_scope" in n for n in locs)


def _transformed_program(lib: Any, np_: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        with lib.named_scope("a"):
            with lib.named_scope("b"):
                y = np_.sin(x)
        return y * x
    return f


def _stacks(closed: Any) -> list[tuple[str, str]]:
    return [(e.primitive.name, str(e.source_info.name_stack)) for e in closed.eqns]


def test_name_stacks_under_transformations_are_jaxs() -> None:
    """jvp, transpose and vmap wrap the outermost scope of each equation they emit, as
    JAX names them: ``jvp(a)/b``, ``transpose(jvp(a))/b``, ``vmap()``."""
    ours_f, theirs_f = _transformed_program(plait, pnp), _transformed_program(jax, jnp)
    ours = _stacks(plait.make_jaxpr(plait.vmap(ours_f))(np.ones(2, np.float32)))
    theirs = _stacks(jax.make_jaxpr(jax.vmap(theirs_f))(np.ones(2, np.float32)))
    assert ours == theirs == [("sin", "vmap(a)/b"), ("mul", "vmap()")]
    # (JAX's grad jaxpr keeps the unused primal product, jvp(); plait's drops it.)
    ours = _stacks(plait.make_jaxpr(plait.grad(ours_f))(1.0))
    theirs = _stacks(jax.make_jaxpr(jax.grad(theirs_f))(1.0))
    assert ours == [e for e in theirs if e != ("mul", "jvp()")]
    assert ("add_any", "transpose(jvp(a))/b") in ours
    ours_text = plait.jit(plait.grad(ours_f)).lower(1.0).as_text(debug_info=True)
    theirs_text = jax.jit(jax.grad(theirs_f)).lower(1.0).as_text(debug_info=True)
    for name in ("jit(f)/jvp(a)/b/sin", "jit(f)/transpose(jvp(a))/b/mul",
                 "jit(f)/transpose(jvp())/mul"):
        assert f'"{name}"' in ours_text and f'"{name}"' in theirs_text, name


def test_named_scope_name_must_be_a_string() -> None:
    with pytest.raises(TypeError) as theirs:
        jax.named_scope(3)  # type: ignore[arg-type]  # the error under test
    with pytest.raises(TypeError) as ours:
        plait.named_scope(3)  # type: ignore[arg-type]  # the error under test
    assert str(ours.value) == str(theirs.value)


def test_named_call_keeps_the_function_name() -> None:
    def body(x: Any) -> Any:
        return x + 1

    wrapped = plait.named_call(body, name="renamed")
    assert wrapped.__name__ == "body"
    np.testing.assert_array_equal(wrapped(pnp.ones(2)), [2.0, 2.0])


def test_live_arrays_sees_new_arrays_and_forgets_freed_ones() -> None:
    gc.collect()
    before = len(plait.live_arrays())
    a = pnp.arange(5.0)
    b = a * 2
    live = plait.live_arrays()
    assert len(live) == before + 2
    assert any(x.shape == (5,) and np.array_equal(np.asarray(x), np.asarray(b)) for x in live)
    del live, a, b
    gc.collect()
    assert len(plait.live_arrays()) == before
    with pytest.raises(RuntimeError, match="Unknown backend 'gpu'"):
        plait.live_arrays("gpu")


def test_config_options_read_as_attributes_and_platform_pinning() -> None:
    for name in ("jax_enable_x64", "jax_disable_jit"):
        assert getattr(plait.config, name) is getattr(jax.config, name) is False
    assert plait.config.read("jax_disable_jit") is False
    for name in ("jax_platform_name", "jax_platforms"):
        plait.config.update(name, "cpu")  # as programs that pin JAX to the CPU do
        assert plait.config.read(name) == "cpu"
        with pytest.raises(ValueError, match="plait runs on 'cpu' only"):
            plait.config.update(name, "gpu")
        plait.config.update(name, "")
    with pytest.raises(AttributeError, match="has no attribute 'jax_no_such_option'"):
        _ = plait.config.jax_no_such_option
    with pytest.raises(KeyError, match="expected a config option among"):
        plait.config.read("no_such_option")


def test_remat3_is_accepted_and_checkpoint_is_unchanged() -> None:
    def f(x: Any) -> Any:
        return plait.checkpoint(lambda y: pnp.sin(pnp.sin(y)))(x) * x
    before = plait.make_jaxpr(plait.grad(f))(2.0)
    for lib in (plait, jax):
        lib.config.update("jax_remat3", True)
    try:
        assert plait.config.jax_remat3 is jax.config.jax_remat3 is True  # type: ignore[attr-defined]  # (set above)
        after = plait.make_jaxpr(plait.grad(f))(2.0)
        assert str(after) == str(before)
        with pytest.raises(ValueError, match="invalid value 1 for config option 'remat3'"):
            plait.config.update("jax_remat3", 1)
    finally:
        for lib in (plait, jax):
            lib.config.update("jax_remat3", False)


def test_num_cpu_devices_as_jax() -> None:
    # A fresh process: this one's runtime has started (with 8 devices).
    code = """
import jax, plait
for lib in (plait, jax):
    lib.config.update("jax_num_cpu_devices", 3)
    print(lib.device_count(), len(lib.devices()))
    try:
        lib.config.update("jax_num_cpu_devices", 2)
    except RuntimeError as e:
        print("RuntimeError", "before" in str(e))
    lib.config.update("jax_num_cpu_devices", 3)  # the same value: accepted
    print(lib.config.jax_num_cpu_devices)
"""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.split("\n")
    assert out[:6] == ["3 3", "RuntimeError True", "3"] * 2
    with pytest.raises(RuntimeError, match="expected the option set before the runtime"):
        plait.config.update("num_cpu_devices", plait.device_count() + 1)
    with pytest.raises(ValueError, match="expected -1 or a positive int"):
        plait.config.update("num_cpu_devices", 0)


@pytest.mark.parametrize("precision", ["highest", "bfloat16", "F32_F32_F32", None])
def test_default_matmul_precision_stages_as_jax(precision: str | None) -> None:
    a, b = np.ones((2, 3), np.float32), np.ones((3,), np.float32)
    w = np.ones((3, 3, 1, 1), np.float32)
    programs: list[tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = [
        (lambda x, y: x @ y, lambda x, y: x @ y, (a, b)),
        (lambda x, y: pnp.einsum("ij,j->i", x, y), lambda x, y: jnp.einsum("ij,j->i", x, y),
         (a, b)),
        (lambda v: lax.conv(v, v, (1, 1), "SAME"), lambda v: jax.lax.conv(v, v, (1, 1), "SAME"),
         (w,)),
    ]
    for ours_fn, theirs_fn, args in programs:
        with plait.default_matmul_precision(precision):
            ours = str(plait.make_jaxpr(ours_fn)(*args))
            values = plait.jit(ours_fn)(*args)
        with jax.default_matmul_precision(precision):
            theirs = str(jax.make_jaxpr(theirs_fn)(*args))
        assert ours == theirs
        _same(values, theirs_fn(*args))


def test_default_matmul_precision_refuses_unknown_names() -> None:
    with pytest.raises(ValueError) as theirs:
        jax.default_matmul_precision("nope")
    with pytest.raises(ValueError, match=r"expected None or one of \['default', 'high'"):
        plait.default_matmul_precision("nope")
    assert str(theirs.value).startswith("new enum value must be None or in ['default', 'high'")
    assert list(plait.config.MATMUL_PRECISIONS[6:]) == [
        p.name for p in plait.lax.DotAlgorithmPreset if p.name != "DEFAULT"]


@pytest.mark.parametrize("mode", ["raise", "warn"])
def test_numpy_rank_promotion_as_jax(mode: str) -> None:
    a, b = np.ones((2, 3), np.float32), np.ones((3,), np.float32)

    def run(lib: Any, np_: Any) -> str:
        with lib.numpy_rank_promotion(mode), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                np_.add(a, b)
            except ValueError as e:
                return f"ValueError: {e}"
        return "; ".join(str(w.message) for w in caught)

    ours, theirs = run(plait, pnp), run(jax, jnp)
    # JAX's texts end with a link to its documentation; plait's stop before it.
    assert theirs.startswith(ours.rstrip("."))
    assert ours  # an error or a warning, never silence
    with plait.numpy_rank_promotion(mode):
        _same(pnp.add(np.ones(3), np.ones(3)), jnp.add(np.ones(3), np.ones(3)))  # same ranks
        _same(pnp.add(a, 2.0), jnp.add(a, 2.0))  # scalars never count
    with pytest.raises(ValueError, match="invalid value 'sometimes'"):
        plait.numpy_rank_promotion("sometimes")


def _floating_point_error(run: Callable[[], Any]) -> str:
    with pytest.raises(FloatingPointError) as caught:
        run()
    return str(caught.value)


def test_debug_nans_and_infs_name_the_operation_as_jax() -> None:
    def program(np_: Any, lib: Any) -> Callable[[Any], Any]:
        return lib.jit(lambda x: np_.log(x) * 2.0)

    ours, theirs = program(pnp, plait), program(jnp, jax)
    for option, bad in (("debug_nans", -1.0), ("debug_infs", 0.0)):
        with getattr(plait, option)(), getattr(jax, option)(True):
            assert (_floating_point_error(functools.partial(pnp.log, bad))
                    == _floating_point_error(functools.partial(jnp.log, bad)))
            # A jitted call is run again operation by operation to name the operation.
            assert (_floating_point_error(functools.partial(ours, bad))
                    == _floating_point_error(functools.partial(theirs, bad)))
            _same(ours(2.0), theirs(2.0))  # valid results pass
        assert np.isnan(ours(-1.0)) and np.isinf(ours(0.0))  # off again: no error
    # Transformations outside jit run operation by operation, checking each result.
    with plait.debug_nans(), jax.debug_nans(True):
        assert (_floating_point_error(functools.partial(plait.grad(pnp.sqrt), -1.0))
                == _floating_point_error(functools.partial(jax.grad(jnp.sqrt), -1.0)))


def test_log_compiles_reports_what_jax_reports(caplog: pytest.LogCaptureFixture) -> None:
    def messages(lib: Any, np_: Any) -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.WARNING), lib.log_compiles():
            lib.jit(lambda x: np_.cos(x) * 3.0)(np.ones(5, np.float32))
        # Times vary; JAX also names the sharding of each argument, which plait has not.
        return [re.sub(r"in [0-9.e-]+ sec", "in T sec", r.getMessage().split(" Argument")[0])
                for r in caplog.records]

    ours, theirs = messages(plait, pnp), messages(jax, jnp)
    assert ours == theirs, (ours, theirs)
    assert ours[1] == ("Compiling jit(<lambda>) with global shapes and types "
                       "(ShapedArray(float32[5]),).")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        plait.jit(lambda x: x - 1.0)(np.ones(5, np.float32))
    assert not caplog.records  # off outside the block


def test_default_device_accepts_the_first_device_and_refuses_others() -> None:
    """``default_device`` as JAX's programs pin the CPU (the first device, ``'cpu'``,
    ``None``, and the config option): arrays land there; another device is refused with
    what to do instead, and a value that is not a device is JAX's ``ValueError``."""
    first = plait.devices()[0]
    for value in (first, "cpu", None):
        with plait.default_device(value):
            assert pnp.ones(2).devices() == {first}
            assert plait.jit(lambda x: x + 1)(np.ones(2)).devices() == {first}
    plait.config.update("jax_default_device", first)
    try:
        assert plait.config.jax_default_device == first
    finally:
        plait.config.update("jax_default_device", None)
    with pytest.raises(ValueError):
        jax.default_device(3).__enter__()
    with pytest.raises(ValueError, match="expected None, 'cpu' or a device"):
        plait.default_device(3)
    if len(plait.devices()) > 1:
        with pytest.raises(NotImplementedError, match="place the data on .* with "
                                                      "plait.device_put"):
            with plait.default_device(plait.devices()[1]):
                pass
        assert plait.config.jax_default_device is None  # (the refused value was not kept)


@pytest.mark.slow  # (14 s in CI: the check walks the referrers of a large heap)
def test_checking_leaks_reports_a_stored_tracer_at_once() -> None:
    """Under ``checking_leaks`` (as under JAX's), a tracer stored in a global list or an
    object's attribute raises as its trace ends, naming its holder; without it the leak
    goes unnoticed until use; traces that leak nothing (jit, grad through a loop, custom
    rules calling their function) are unaffected."""
    leak: list[Any] = []

    def stores(x: Any) -> Any:
        leak.append(x * 2)
        return x + 1
    with jax.checking_leaks(), pytest.raises(Exception, match="Leaked"):
        jax.jit(stores)(1.0)
    with plait.checking_leaks():
        with pytest.raises(plait.errors.UnexpectedTracerError,
                           match=r"(?s)Leaked trace of stores for jit.*held by a list"):
            plait.jit(stores)(1.0)

        class Box:
            pass
        box = Box()

        def keeps(x: Any) -> Any:
            box.y = pnp.sin(x)  # type: ignore[attr-defined]  # (set on purpose)
            return x
        with pytest.raises(plait.errors.UnexpectedTracerError, match="held by a Box"):
            plait.make_jaxpr(keeps)(1.0)

        @plait.custom_jvp
        def f(x: Any) -> Any:
            return pnp.sin(x)
        f.defjvp(lambda p, t: (f(p[0]), pnp.cos(p[0]) * t[0]))
        g = plait.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: f(c) * x, x))(2.0)
        np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(
            lambda x: jax.lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * x, x))(2.0)), rtol=1e-6)
    assert plait.jit(stores)(1.0) == 2.0  # (option off: no search)


def test_compute_on_runs_the_same_program_as_jaxs_on_the_cpu() -> None:
    # (On the CPU the host is the device: JAX's program and values are unchanged.)
    def program(lib: Any, np_: Any, co: Any) -> Any:
        def f(x: Any) -> Any:
            with co.compute_on("device_host"):
                y = x * 2
            return y + 1
        decorated = co.compute_on("device")(lib.jit(lambda x: x * 3))
        return lib.jit(f)(np_.ones(3)), decorated(np_.ones(2)), str(lib.make_jaxpr(f)(1.0))
    ours = program(plait, pnp, plait_compute_on)
    theirs = program(jax, jax.numpy, jax_compute_on)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert ours[2] == theirs[2]
    for co in (plait_compute_on, jax_compute_on):
        with pytest.raises(ValueError, match="Invalid compute type gpu. Current supported"):
            with co.compute_on("gpu"):
                pass
        with pytest.raises(TypeError, match="compute_type argument must be a string"):
            with co.compute_on(1):
                pass
