"""jit's C++ dispatch: cached calls never enter Python, and never run a stale program.

The oracles are real JAX and plait's eager execution (each primitive compiled on
its own).  Calls are counted by spying on :meth:`JitFunction.cache_miss`, the
Python path the dispatcher falls back to.
"""

from __future__ import annotations

import collections
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
from plait.frontend.api.jit import JitFunction


@pytest.fixture
def misses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[object, ...]]]:
    """The argument tuples of every call that took the Python path (for jits made
    while the fixture is active)."""
    calls: list[tuple[object, ...]] = []
    original = JitFunction.cache_miss

    def spy(self: JitFunction, *args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(JitFunction, "cache_miss", spy)
    yield calls


def _same(ours: object, theirs: object) -> None:
    o_leaves, o_tree = plait.tree_util.tree_flatten(ours)
    t_leaves, t_tree = jax.tree_util.tree_flatten(theirs)
    assert str(o_tree) == str(t_tree)
    for o, t in zip(o_leaves, t_leaves, strict=True):
        assert isinstance(o, plait.Array)
        assert (o.shape, o.dtype, o.weak_type) == (t.shape, t.dtype, t.weak_type)
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


def test_a_cached_signature_stays_out_of_python(misses: list[tuple[object, ...]]) -> None:
    traces = []

    def f(x, y):
        traces.append(1)
        return {"s": x * y, "t": (x + 1, y)}

    jf = plait.jit(f)
    x, y = np.arange(4, dtype=np.float32), np.float32(3.0)
    for k in range(3):
        _same(jf(pnp.asarray(x + k), pnp.asarray(y)), jax.jit(f)(x + k, y))
    assert len(traces) == 2 and len(misses) == 1  # (one trace for JAX)
    jf(pnp.ones(5), pnp.asarray(y))  # a new shape: a miss
    assert len(misses) == 2


def test_structures_keywords_and_statics_through_the_fast_path(misses: list[tuple[object, ...]]
                                                                ) -> None:
    Pair = collections.namedtuple("Pair", "a b")

    def f(p, scale, *, mode, bias=None):
        out = p.a * scale + (p.b if mode == "add" else -p.b)
        return [out, None, Pair(out.sum(), bias)]

    ours = plait.jit(f, static_argnames="mode")
    theirs = jax.jit(f, static_argnames="mode")
    a, b = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    for mode in ("add", "sub", "add"):
        for bias in (np.int32(2), np.int32(5)):
            args = (Pair(pnp.asarray(a), pnp.asarray(b)), pnp.asarray(np.float32(2)))
            _same(ours(*args, mode=mode, bias=pnp.asarray(bias)),
                  theirs(Pair(a, b), np.float32(2), mode=mode, bias=bias))
    assert len(misses) == 2  # one per static value


def test_weak_types_and_dtypes_key_the_cache(misses: list[tuple[object, ...]]) -> None:
    def f(x):
        return x * 2

    ours, theirs = plait.jit(f), jax.jit(f)
    for value in [np.float32(1.5), np.int32(3), np.float16(2.5), np.bool_(True),
                  np.float32(0.5), np.int32(4)]:
        _same(ours(pnp.asarray(value)), theirs(value))
    weak = plait.device_put(2.0)  # a weakly typed f32[]
    _same(ours(weak), theirs(2.0))
    _same(ours(weak), theirs(2.0))
    assert len(misses) == 5  # f32, i32, f16, bool, weak f32


def test_a_call_while_tracing_is_staged_even_when_cached(misses: list[tuple[object, ...]]
                                                         ) -> None:
    g = plait.jit(lambda v: pnp.sin(v) * 2.0)
    x = pnp.arange(3.0)
    g(x)
    g(x)
    assert len(misses) == 1
    closed = plait.make_jaxpr(lambda y: g(x) + y)(x)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit", "add"]
    assert len(misses) == 2
    g(x)  # outside again: the cached executable
    assert len(misses) == 2


def test_grad_and_vmap_of_a_cached_jit_match_jax() -> None:
    def f(w, x):
        return ((pnp.tanh(w * x)) ** 2).sum()

    def f_jax(w, x):
        return ((jnp.tanh(w * x)) ** 2).sum()

    jf = plait.jit(f)
    w, x = np.linspace(-1, 1, 5, dtype=np.float32), np.float32(0.7)
    jf(pnp.asarray(w), pnp.asarray(x))  # cached first
    np.testing.assert_allclose(plait.grad(jf)(pnp.asarray(w), pnp.asarray(x)),
                               jax.grad(jax.jit(f_jax))(w, x), rtol=1e-6)
    xs = np.linspace(0, 1, 4, dtype=np.float32)
    np.testing.assert_allclose(plait.vmap(jf, (None, 0))(pnp.asarray(w), pnp.asarray(xs)),
                               jax.vmap(jax.jit(f_jax), (None, 0))(w, xs), rtol=1e-6)


def test_options_key_the_cache(misses: list[tuple[object, ...]]) -> None:
    f = plait.jit(lambda a, b: a + b)
    x, i = pnp.ones(2, dtype=np.float32), pnp.asarray(np.int32(1))
    assert f(x, i).dtype == np.float32
    plait.config.update("numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(plait.errors.TypePromotionError):
            f(x, i)
    finally:
        plait.config.update("numpy_dtype_promotion", "standard")
    assert f(x, i).dtype == np.float32
    assert len(misses) == 2


def test_donation_through_the_fast_path() -> None:
    step = plait.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    jax_step = jax.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    g = pnp.ones(3)
    jp = jnp.full(3, 2.0)
    jax_step(jp, jnp.ones(3))
    with pytest.raises(ValueError) as theirs:
        jax_step(jp, jnp.ones(3))
    for _ in range(3):  # the first call compiles; the others take the fast path
        p = pnp.full(3, 2.0)
        new = step(p, g)
        np.testing.assert_array_equal(np.asarray(new), np.full(3, 1.5, np.float32))
        assert p.is_deleted() and not g.is_deleted()
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            p + 1
        # A donated Array passed to a jitted call again: after a donation by the C++
        # dispatcher, it reports it in JAX's words (checking each argument in Python
        # would slow every call); after one by plait's Python path, plait does.
        with pytest.raises((RuntimeError, ValueError), match="deleted") as ours:
            step(p, g)
        if isinstance(ours.value, ValueError):
            assert str(ours.value) == str(theirs.value)


def test_float0_results_keep_to_the_python_path(misses: list[tuple[object, ...]]) -> None:
    f = plait.jit(lambda a, n: plait.grad(lambda a, n: (a * n).sum(), argnums=(0, 1),
                                          allow_int=True)(a, n))
    theirs = jax.jit(lambda a, n: jax.grad(lambda a, n: (a * n).sum(), argnums=(0, 1),
                                           allow_int=True)(a, n))
    a, n = np.ones(3, np.float32), np.int32(3)
    for _ in range(2):
        (da, dn), (ta, tn) = f(pnp.asarray(a), pnp.asarray(n)), theirs(a, n)
        np.testing.assert_array_equal(np.asarray(da), np.asarray(ta))
        assert isinstance(dn, np.ndarray) and dn.dtype == tn.dtype and dn.shape == tn.shape
    assert len(misses) == 2


def test_negative_static_argnums_never_reuse_a_stale_program() -> None:
    f = plait.jit(lambda x, n: x * n, static_argnums=-1)
    x = pnp.ones(2)
    assert [float(f(x, n)[0]) for n in (2, 3, 2, 5)] == [2.0, 3.0, 2.0, 5.0]


def test_methods_and_clear_cache(misses: list[tuple[object, ...]]) -> None:
    class Scaler:
        def __init__(self, k: float) -> None:
            self.k = k

        def __hash__(self) -> int:
            return hash(self.k)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Scaler) and other.k == self.k

        @partial(plait.jit, static_argnums=0)
        def apply(self, x):
            return x * self.k

    x = pnp.ones(2)
    assert float(Scaler(3.0).apply(x)[0]) == 3.0
    assert float(Scaler(3.0).apply(x)[0]) == 3.0
    assert float(Scaler(4.0).apply(x)[0]) == 4.0
    assert len(misses) == 2
    Scaler.apply.clear_cache()
    Scaler(4.0).apply(x)
    assert len(misses) == 3
    assert Scaler.apply.__name__ == "apply" and callable(Scaler.apply.lower)


def test_threads_trace_and_run_independently() -> None:
    f = plait.jit(lambda v: v + 1.0)
    x = pnp.ones(2)
    f(x)
    started, release, out = threading.Event(), threading.Event(), []

    def slow_trace(v):
        started.set()
        release.wait(10)
        return v * 2.0

    tracer_thread = threading.Thread(target=lambda: out.append(plait.make_jaxpr(slow_trace)(x)))
    tracer_thread.start()
    started.wait(10)
    # Another thread is tracing; this one is not, so the cached program runs.
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(2, 2.0, np.float32))
    release.set()
    tracer_thread.join()
    assert [e.primitive.name for e in out[0].jaxpr.eqns] == ["mul"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["float32", "int32", "bool", "float16", "weak"]),
                          st.sampled_from([(), (3,), (2, 1)])), min_size=1, max_size=8))
def test_any_sequence_of_signatures_gives_eager_results(calls: list[tuple[str, tuple[int, ...]]]
                                                        ) -> None:
    def f(x, y):
        return pnp.where(x > 0, x, y) + y

    jf = plait.jit(f)
    for kind, shape in calls:
        if kind == "weak":
            x = plait.device_put(1.5) if shape == () else pnp.full(shape, 1.5)
        else:
            x = pnp.asarray(np.arange(np.prod(shape, dtype=int)).reshape(shape).astype(kind))
        y = pnp.asarray(np.full(shape, 2, np.int32))
        got, want = jf(x, y), f(x, y)
        assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_without_jax_plait_owns_the_dispatcher_state() -> None:
    # With JAX imported (as in this process) JAX owns jaxlib's x64 flag, and Python
    # scalars and NumPy arguments take the Python path.  Without it, plait owns it and
    # they take the fast path too; check that they still follow plait's rules.
    code = textwrap.dedent("""
        import sys, numpy as np, plait, plait.numpy as pnp
        from plait.frontend.api import dispatch
        from plait.frontend.api.jit import JitFunction
        misses = []
        original = JitFunction.cache_miss
        def spy(self, *args, **kwargs):
            misses.append(args)
            return original(self, *args, **kwargs)
        JitFunction.cache_miss = spy
        assert dispatch._owns_jit_state
        f = plait.jit(lambda a, s: a * s)
        x = pnp.ones(3)
        for s in (2.0, 3.0, 4.0):
            out = f(x, s)
            assert out.dtype == np.float32 and float(out[0]) == s
        assert len(misses) == 1, misses
        for v in (np.ones(3), np.ones(3) * 2):     # float64 NumPy narrows to float32
            assert f(v, 1.0).dtype == np.float32
        assert len(misses) == 2, misses
        g = plait.jit(lambda i: i + 1)
        assert int(g(3)) == 4 and int(g(5)) == 6 and len(misses) == 3
        try:
            g(2 ** 40)
        except plait.errors.ArgumentError as e:
            assert "too large to convert to int32" in str(e)
        else:
            raise AssertionError("no overflow error")
        plait.config.update("enable_x64", True)
        assert f(x, 2.0).dtype == np.float32 and f(np.ones(3), 2.0).dtype == np.float64
        assert int(g(2 ** 40)) == 2 ** 40 + 1 and g(2 ** 40).dtype == np.int64
        plait.config.update("enable_x64", False)
        assert g(3).dtype == np.int32
        assert not [m for m in sys.modules if m == "jax" or m.startswith("jax.")]
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unused_arguments_are_left_out_of_the_program(misses: list[tuple[object, ...]]) -> None:
    def f(x, y, z):
        return x * 2.0 + z

    jf = plait.jit(f)
    for k in range(3):
        x, y, z = np.full(2, k, np.float32), np.ones(5, np.float32), np.full(2, 0.5, np.float32)
        _same(jf(pnp.asarray(x), pnp.asarray(y), pnp.asarray(z)), jax.jit(f)(x, y, z))
    assert len(misses) == 1
    compiled = jf.lower(pnp.ones(2), pnp.ones(5), pnp.ones(2)).compile()
    np.testing.assert_array_equal(np.asarray(compiled(pnp.ones(2), pnp.ones(5), pnp.ones(2))),
                                  np.full(2, 3.0, np.float32))
    with pytest.raises(TypeError, match=r"Argument 'y' compiled with float32\[5\] and called "
                                        r"with float32\[4\]"):
        compiled(pnp.ones(2), pnp.ones(4), pnp.ones(2))
    # keep_unused=True keeps them, and the staged call says so, as in JAX.
    kept = plait.jit(f, keep_unused=True)
    assert "tensor<5xf32>" in kept.lower(pnp.ones(2), pnp.ones(5), pnp.ones(2)).as_text()
    _same(kept(pnp.ones(2), pnp.ones(5), pnp.ones(2)), jax.jit(f)(np.ones(2, np.float32),
                                                                  np.ones(5, np.float32),
                                                                  np.ones(2, np.float32)))
    ours = plait.make_jaxpr(lambda a: kept(a, a, a))(np.ones(2, np.float32))
    theirs = jax.make_jaxpr(lambda a: jax.jit(f, keep_unused=True)(a, a, a))(
        np.ones(2, np.float32))
    assert str(ours) == str(theirs)


def test_an_unused_donated_argument_is_not_deleted() -> None:
    f = plait.jit(lambda x, y: y * 2.0, donate_argnums=0)
    x, y = pnp.ones(3), pnp.ones(3)
    for _ in range(2):
        f(x, y)
        assert not x.is_deleted()  # as in JAX: the program does not take it


def test_scalar_and_numpy_arguments_follow_plaits_x64_flag(misses: list[tuple[object, ...]]
                                                           ) -> None:
    # JAX (imported here) owns the x64 flag jaxlib converts with: while it agrees with
    # plait's, scalars and NumPy values take the fast path; otherwise the Python path.
    f = plait.jit(lambda a, s: a * s)
    x = np.ones(3, np.float32)
    for s in (2.0, 3.0, 4.0):
        _same(f(x, s), jax.jit(lambda a, s: a * s)(x, s))
    assert len(misses) == 1
    plait.config.update("enable_x64", True)
    try:
        for s in (2.0, 3.0):
            out = f(np.ones(3), s)  # float64 NumPy values stay float64 in plait's x64 mode
            assert out.dtype == np.float64 and float(out[0]) == s
        assert len(misses) == 3  # jaxlib would narrow them: each call takes the Python path
    finally:
        plait.config.update("enable_x64", False)
    assert f(np.ones(3), 5.0).dtype == np.float32


def test_one_single_device_sharding_per_device(misses: list[tuple[object, ...]]) -> None:
    """Single-device shardings are interned (jaxlib hashes each argument's sharding
    on every call; identity makes that hash C-level): equal means identical, and
    arrays placed by any route share the one sharding, so they share cache entries."""
    from plait.sharding import SingleDeviceSharding
    dev = plait.devices()[0]
    s = SingleDeviceSharding(dev)
    assert s is SingleDeviceSharding(dev) and s == SingleDeviceSharding(dev)
    assert hash(s) == hash(SingleDeviceSharding(dev)) and len({s, SingleDeviceSharding(dev)}) == 1
    others = [SingleDeviceSharding(d) for d in plait.devices()[1:]]
    assert all(o != s for o in others)  # (eight host devices in the tests)
    xs = [pnp.ones(4), plait.device_put(np.ones(4, np.float32), dev), pnp.asarray(np.ones(4)),
          plait.device_put(np.ones(4, np.float32), s), plait.jit(lambda: pnp.ones(4))()]
    assert all(x.sharding is s for x in xs)
    theirs = jax.device_put(np.ones(4, np.float32)).sharding
    assert (repr(s), s.memory_kind) == (repr(theirs), theirs.memory_kind)
    f = plait.jit(lambda a: a * 2.0)
    before = len(misses)
    for x in xs:
        np.testing.assert_array_equal(np.asarray(f(x)), np.full(4, 2.0, np.float32))
    assert len(misses) == before + 1
