"""Pallas kernels (``plait.experimental.pallas``): each kernel is written once, over the
library's modules, and run by plait and by JAX 0.10.2 in interpret mode (the oracle); the
outputs agree bit for bit.  Transformations of a call are checked against JAX's, or
(``grad``, which JAX refuses) against the same function written without Pallas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import jax
import jax.experimental.pallas as jpl
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.experimental.pallas as ppl
import plait.experimental.pallas.triton as pplt
import plait.numpy as pjnp
from plait.errors import PallasError

from .pallas_kernels import JAX, PLAIT, matmul, softmax, tpu_matmul


def _same(program: Callable[[Any], Any], *args: Any) -> Any:
    """``program(m)(*args)`` under plait and JAX: equal outputs (values, dtypes, tree)."""
    got = program(PLAIT)(*args)
    want = program(JAX)(*args)
    g, gt = jax.tree_util.tree_flatten(got, is_leaf=lambda x: x is None)
    w, wt = jax.tree_util.tree_flatten(want)
    assert str(gt).replace("PyTreeDef", "") == str(wt).replace("PyTreeDef", "")
    for a, b in zip(g, w, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    return got


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return (np.arange(np.prod(shape)) % 17 - 8).reshape(shape).astype(dtype) / 4


def add_vectors(m: Any) -> Callable[..., Any]:
    def kernel(x_ref: Any, y_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + y_ref[...]

    def add(x: Any, y: Any) -> Any:
        return m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct(x.shape, x.dtype),
                                interpret=True)(x, y)
    return add


def iota(m: Any) -> Callable[..., Any]:
    def kernel(o_ref: Any) -> None:
        i = m.pl.program_id(0)
        o_ref[i] = i * m.pl.num_programs(0)
    return lambda: m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct((8,), np.int32),
                                    grid=(8,), interpret=True)()


def masked_tail(m: Any) -> Callable[..., Any]:
    # Blocks of 4 over 10 elements: the last block's tail is masked off.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        i = m.pl.program_id(0)
        offs = i * 4 + m.jnp.arange(4)
        mask = offs < x_ref.shape[0]
        v = m.plt.load(x_ref.at[m.pl.ds(i * 4, 4)], mask=mask, other=-1.0)
        m.plt.store(o_ref.at[m.pl.ds(i * 4, 4)], v * 2 + 1, mask=mask)
    return lambda x: m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct(x.shape, x.dtype),
                                      grid=(3,), interpret=True)(x)


def row_sums(m: Any) -> Callable[..., Any]:
    # A squeezed dimension (None), and a reduction over a grid axis into one block.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        @m.pl.when(m.pl.program_id(1) == 0)
        def _() -> None:
            o_ref[...] = m.jnp.zeros(o_ref.shape, o_ref.dtype)
        o_ref[...] += m.jnp.sum(x_ref[...]).reshape(1)
    return lambda x: m.pl.pallas_call(
        kernel, out_shape=m.lib.ShapeDtypeStruct((x.shape[0], 1), x.dtype), grid=(2, 3),
        in_specs=[m.pl.BlockSpec((None, 4, 2), lambda i, j: (i, 0, j))],
        out_specs=m.pl.BlockSpec((None, 1), lambda i, j: (i, 0)), interpret=True)(x)


def ragged_blocks(m: Any) -> Callable[..., Any]:
    # Blocks that do not divide the array: the padding is uninitialized (NaN), visible in
    # the sums of the last block, and the outputs past the array are dropped.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + m.jnp.sum(x_ref[...])
    return lambda x: m.pl.pallas_call(
        kernel, out_shape=m.lib.ShapeDtypeStruct(x.shape, x.dtype), grid=(3,),
        in_specs=[m.pl.BlockSpec((4,), lambda i: (i,))],
        out_specs=m.pl.BlockSpec((4,), lambda i: (i,)), interpret=True)(x)


def aliased_update(m: Any) -> Callable[..., Any]:
    # The output starts as the aliased input; a pytree of inputs and of outputs.
    def kernel(x_ref: Any, w_ref: Any, o_ref: Any, n_ref: Any) -> None:
        o_ref[...] += w_ref[...] * 2
        n_ref[...] = m.jnp.sum(x_ref[...], keepdims=True).astype(np.int32)
    return lambda d: m.pl.pallas_call(
        kernel, out_shape=(m.lib.ShapeDtypeStruct(d["x"].shape, d["x"].dtype),
                           m.lib.ShapeDtypeStruct((1,), np.int32)),
        input_output_aliases={0: 0}, interpret=True)(d["x"], d["w"])


def histogram(m: Any) -> Callable[..., Any]:
    # Atomics: every point adds one to the bin of its element.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        @m.pl.when(m.pl.program_id(0) == 0)
        def _() -> None:
            o_ref[...] = m.jnp.zeros(o_ref.shape, o_ref.dtype)
        b = x_ref[m.pl.program_id(0)]
        m.plt.atomic_add(o_ref, (b,), m.jnp.ones((), np.int32))
    return lambda x: m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct((5,), np.int32),
                                      grid=(x.shape[0],), interpret=True)(x)


def looped(m: Any) -> Callable[..., Any]:
    # pl.loop over a Ref's rows, with and without a carry.
    def kernel(x_ref: Any, o_ref: Any, s_ref: Any) -> None:
        @m.pl.loop(0, x_ref.shape[0])
        def _(i: Any) -> None:
            o_ref[i] = x_ref[i] * i

        @m.pl.loop(1, x_ref.shape[0], init_carry=m.jnp.zeros((), x_ref.dtype), step=2)
        def total(i: Any, c: Any) -> Any:
            return c + m.jnp.sum(x_ref[i])
        s_ref[...] = m.jnp.full((1,), total)
    return lambda x: m.pl.pallas_call(
        kernel, out_shape=(m.lib.ShapeDtypeStruct(x.shape, x.dtype),
                           m.lib.ShapeDtypeStruct((1,), x.dtype)), interpret=True)(x)


def triton_dot(m: Any) -> Callable[..., Any]:
    def kernel(x_ref: Any, y_ref: Any, o_ref: Any) -> None:
        o_ref[...] = m.plt.dot(x_ref[...], y_ref[...], trans_b=True).astype(o_ref.dtype)
    return lambda x, y: m.pl.pallas_call(
        kernel, out_shape=m.lib.ShapeDtypeStruct((x.shape[0], y.shape[0]), np.float32),
        interpret=True)(x, y)


def structured(m: Any) -> Callable[..., Any]:
    # Inputs and outputs in pytrees: the kernel gets a dict of Refs and a None for a None
    # input (whose spec is None), and a list of outputs comes back a tuple.
    def kernel(d: Any, none: Any, o_ref: Any, p_ref: Any) -> None:
        assert none is None
        o_ref[...] = d["a"][...] * d["b"][...]
        p_ref[...] = d["a"][...] - 1
    spec = m.pl.BlockSpec((2,), lambda i: (i,))
    return lambda a, b: m.pl.pallas_call(
        kernel, out_shape=[m.lib.ShapeDtypeStruct(a.shape, a.dtype)] * 2, grid=(2,),
        in_specs=[{"a": spec, "b": spec}, None], out_specs=[spec, spec],
        interpret=True)({"a": a, "b": b}, None)


def prefetched_rows(m: Any) -> Callable[..., Any]:
    # Scalar prefetch: the index map picks rows by a prefetched index array.
    def kernel(idx_ref: Any, x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] * 2 + idx_ref[m.pl.program_id(0)]
    return lambda idx, x: m.pl.pallas_call(
        kernel, grid_spec=m.pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(idx.shape[0],),
            in_specs=[m.pl.BlockSpec((1, x.shape[1]), lambda i, idx_ref: (idx_ref[i], 0))],
            out_specs=m.pl.BlockSpec((1, x.shape[1]), lambda i, idx_ref: (i, 0))),
        out_shape=m.lib.ShapeDtypeStruct((idx.shape[0], x.shape[1]), x.dtype),
        interpret=True)(idx, x)


def manual_dma(m: Any) -> Callable[..., Any]:
    # An unblocked (ANY) input copied block by block into VMEM scratch with DMAs, run_scoped
    # buffers and semaphores, roll and sync_copy.
    def kernel(x_hbm: Any, o_ref: Any, buf: Any, sem: Any) -> None:
        i = m.pl.program_id(0)
        copy = m.pltpu.make_async_copy(x_hbm.at[m.pl.ds(i * 2, 2)], buf, sem.at[0])
        copy.start()
        copy.wait()

        def scoped(tmp: Any, sem2: Any) -> None:
            m.pltpu.sync_copy(buf, tmp)
            o_ref[...] = m.pltpu.roll(tmp[...], 1, 1) + m.pltpu.roll(
                tmp[...], 1, 1, stride=1, stride_axis=0)
        m.pl.run_scoped(scoped, m.pltpu.VMEM((2, 8), np.float32), m.pltpu.SemaphoreType.DMA)
    return lambda x: m.pl.pallas_call(
        kernel, grid=(x.shape[0] // 2,), in_specs=[m.pl.BlockSpec(memory_space=m.pl.ANY)],
        out_specs=m.pl.BlockSpec((2, 8), lambda i: (i, 0)),
        out_shape=m.lib.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[m.pltpu.VMEM((2, 8), np.float32), m.pltpu.SemaphoreType.DMA((2,))],
        interpret=True)(x)


def bitcasts(m: Any) -> Callable[..., Any]:
    def kernel(x_ref: Any, i_ref: Any, a_ref: Any, b_ref: Any, c_ref: Any) -> None:
        a_ref[...] = m.pltpu.bitcast(x_ref[...], np.int32)
        b_ref[...] = m.pltpu.bitcast(i_ref[...], np.int32)
        c_ref[...] = m.pltpu.bitcast(x_ref[...], np.int16)
    return lambda x, i8: m.pl.pallas_call(
        kernel, out_shape=(m.lib.ShapeDtypeStruct(x.shape, np.int32),
                           m.lib.ShapeDtypeStruct((2, 8), np.int32),
                           m.lib.ShapeDtypeStruct((4, 8), np.int16)),
        interpret=True)(x, i8)


def zero_initialized(m: Any) -> Callable[..., Any]:
    # JAX's TPU interpreter with uninitialized_memory="zero": unwritten outputs are 0.
    def kernel(x_ref: Any, o_ref: Any, p_ref: Any) -> None:
        o_ref[0] = x_ref[0]
    return lambda x: m.pl.pallas_call(
        kernel, out_shape=(m.lib.ShapeDtypeStruct(x.shape, x.dtype),
                           m.lib.ShapeDtypeStruct((3,), np.int32)),
        interpret=m.pltpu.InterpretParams(uninitialized_memory="zero"))(x)


def helpers(m: Any) -> Callable[..., Any]:
    # The helpers that change no value (hints), cdiv, broadcast_to and a static when.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        n = m.pl.cdiv(x_ref.shape[0], 3)
        start = m.pl.multiple_of(m.pl.program_id(0) * 0, 8)
        v = m.plt.max_contiguous(x_ref[m.pl.ds(start, 4)], 4)

        @m.pl.when(n == 2)
        def _() -> None:
            o_ref[...] = m.pl.broadcast_to(v[None, :], (2, 4)) * m.pl.num_programs(0)
    return lambda x: m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct(
        (2, 4), x.dtype), grid=(1,), interpret=True)(x)


def scoped_helpers(m: Any) -> Callable[..., Any]:
    # reciprocal, align_to and strides_from_shape, a with_scoped buffer (called with an
    # argument), and empty_like.
    def kernel(x_ref: Any, o_ref: Any) -> None:
        @m.pl.with_scoped(m.pltpu.VMEM((3,), np.float32))
        def scoped(scale: Any, tmp: Any) -> None:
            tmp[...] = m.pl.reciprocal(x_ref[...])
            n = m.pl.align_to(5, 4) + sum(m.pl.strides_from_shape((2, 3, 4)))
            o_ref[...] = tmp[...] * n * scale
            o_ref[0] = m.jnp.sum(m.pl.empty_like(x_ref[...]))
        scoped(2.0)
    return lambda x: m.pl.pallas_call(kernel, out_shape=m.lib.ShapeDtypeStruct(
        x.shape, x.dtype), interpret=True)(x)


def state(m: Any) -> Callable[..., Any]:
    # run_state outside a kernel: a function of Refs as a function of values.
    def body(refs: Any) -> None:
        a, b = refs["a"], refs["b"]
        a[...] = a[...] * 2 + b[...].sum()
        b[0] = 7.0
    return lambda a, b: (m.pl.run_state(body)({"a": a, "b": b}),
                         m.pl.empty_like({"a": a, "b": b.astype(np.int32)}))


CASES = [
    ("add_vectors", add_vectors, (_x(8), _x(8))),
    ("add_ints", add_vectors, (np.arange(6, dtype=np.int32), np.ones(6, np.int32))),
    ("iota", iota, ()),
    ("matmul", matmul, (_x(8, 8), _x(8, 16))),
    ("softmax", softmax, (_x(3, 11),)),
    ("masked_tail", masked_tail, (_x(10),)),
    ("row_sums", row_sums, (_x(2, 4, 6),)),
    ("ragged_blocks", ragged_blocks, (_x(10),)),
    ("aliased_update", aliased_update, ({"x": _x(5), "w": _x(5)[::-1].copy()},)),
    ("histogram", histogram, (np.array([0, 3, 3, 1, 4, 3, 0], np.int32),)),
    ("looped", looped, (_x(5, 3),)),
    ("triton_dot", triton_dot, (_x(4, 8), _x(6, 8))),
    ("structured", structured, (_x(4), _x(4) + 2)),
    ("helpers", helpers, (_x(5),)),
    ("scoped_helpers", scoped_helpers, (_x(3) + 3,)),
    ("state", state, (_x(3), _x(2))),
    ("tpu_matmul", tpu_matmul, (_x(8, 8), _x(8, 12))),
    ("prefetched_rows", prefetched_rows, (np.array([2, 0, 2, 1], np.int32), _x(3, 8))),
    ("manual_dma", manual_dma, (_x(6, 8),)),
    ("bitcasts", bitcasts, (_x(2, 8), (np.arange(64) * 37 % 256 - 128).astype(np.int8)
                            .reshape(8, 8))),
    ("zero_initialized", zero_initialized, (_x(4),)),
]


@pytest.mark.parametrize("make,args", [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_kernels_give_jaxs_outputs(make: Callable[[Any], Any], args: tuple[Any, ...]) -> None:
    _same(make, *args)


def test_calls_compose_with_jit_vmap_and_jvp_as_jaxs() -> None:
    x, y = _x(8, 8), _x(8, 16)
    _same(lambda m: m.lib.jit(matmul(m)), x, y)
    _same(lambda m: m.lib.vmap(matmul(m), in_axes=(0, None)), np.stack([x, x * 2]), y)
    _same(lambda m: m.lib.vmap(softmax(m)), np.stack([_x(3, 11), _x(3, 11) * 3]))
    _same(lambda m: lambda a, t: m.lib.jvp(add_vectors(m), (a, a), (t, t)), _x(8), _x(8) + 1)
    _same(lambda m: lambda a: m.lib.jit(lambda a: softmax(m)(a) * 2)(a), _x(2, 11))


def test_gradients_agree_with_the_function_written_without_pallas() -> None:
    # (JAX 0.10.2 cannot transpose pallas_call; plait's call is made of primitives.)
    x, y = _x(8, 8), _x(8, 16)
    got = plait.grad(lambda x, y: pjnp.sum(matmul(PLAIT)(x, y) ** 2), argnums=(0, 1))(x, y)
    want = jax.grad(lambda x, y: jjnp.sum((x @ y) ** 2), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)
    s = _x(3, 11)
    got_s = plait.grad(lambda s: pjnp.sum(softmax(PLAIT)(s)[:, 0]))(s)
    want_s = jax.grad(lambda s: jjnp.sum(jax.nn.softmax(s, axis=1)[:, 0]))(s)
    np.testing.assert_allclose(np.asarray(got_s), np.asarray(want_s), rtol=1e-5, atol=1e-7)


def test_a_call_is_a_jit_of_a_loop_over_the_grid() -> None:
    jaxpr = plait.make_jaxpr(matmul(PLAIT))(_x(8, 8), _x(8, 16))
    eqn, = jaxpr.jaxpr.eqns
    assert eqn.primitive.name == "jit" and eqn.params["name"] == "kernel"
    inner = [e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns]
    assert "scan" in inner or "while" in inner
    plait.ir.check_jaxpr(jaxpr.jaxpr)


@settings(deadline=None)
@given(st.data())
def test_blocked_copies_match_jaxs(data: st.DataObject) -> None:
    # A property: any 2-d shape, block shape and grid order (forward or reversed blocks)
    # gives JAX's outputs, padding included.
    shape = data.draw(st.tuples(st.integers(1, 9), st.integers(1, 9)))
    block = data.draw(st.tuples(st.integers(1, 4), st.integers(1, 4)))
    grid = tuple(-(-n // b) for n, b in zip(shape, block))
    flip = data.draw(st.booleans())

    def index_map(i: Any, j: Any) -> Any:
        return (grid[0] - 1 - i, j) if flip else (i, j)

    def make(m: Any) -> Callable[..., Any]:
        def kernel(x_ref: Any, o_ref: Any) -> None:
            o_ref[...] = x_ref[...] * 3 + m.pl.program_id(1)
        return lambda x: m.pl.pallas_call(
            kernel, out_shape=m.lib.ShapeDtypeStruct(x.shape, x.dtype), grid=grid,
            in_specs=[m.pl.BlockSpec(block, index_map)],
            out_specs=m.pl.BlockSpec(block, index_map), interpret=True)(x)
    _same(make, _x(*shape))


def test_scratch_buffers_persist_across_the_grid() -> None:
    # (A running sum kept in a scratch buffer; NumPy's cumsum of the block sums is the
    # oracle: JAX's CPU interpreter takes only TPU memory spaces as scratch shapes.)
    def kernel(x_ref: Any, o_ref: Any, acc_ref: Any) -> None:
        @ppl.when(ppl.program_id(0) == 0)
        def _() -> None:
            acc_ref[...] = pjnp.zeros((1,), np.float32)
        acc_ref[...] += pjnp.sum(x_ref[...], keepdims=True)
        o_ref[...] = acc_ref[...]
    x = _x(12)
    got = ppl.pallas_call(kernel, out_shape=plait.ShapeDtypeStruct((3,), np.float32),
                          grid=(3,), in_specs=[ppl.BlockSpec((4,), lambda i: (i,))],
                          out_specs=ppl.BlockSpec((1,), lambda i: (i,)),
                          scratch_shapes=[plait.ShapeDtypeStruct((1,), np.float32)],
                          interpret=True)(x)
    np.testing.assert_allclose(np.asarray(got), np.cumsum(x.reshape(3, 4).sum(1)), rtol=1e-6)


def _error(call: Callable[[], Any]) -> str:
    with pytest.raises(PallasError) as e:
        call()
    return str(e.value)


def test_bad_calls_raise_clear_errors() -> None:
    x = _x(8)
    S = plait.ShapeDtypeStruct

    def copy(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...]
    spec = ppl.BlockSpec((4,), lambda i: (i,))
    assert "expected `in_specs` to have the structure of `inputs`" in _error(
        lambda: ppl.pallas_call(copy, S((8,), np.float32), grid=(2,), in_specs=[spec, spec],
                                interpret=True)(x))
    assert ("expected the block shape of args[0] to have 1 dimensions, as its shape (8,) "
            "has, but got (4, 4)") in _error(
        lambda: ppl.pallas_call(copy, S((8,), np.float32), grid=(2,),
                                in_specs=[ppl.BlockSpec((4, 4), lambda i: (i,))],
                                interpret=True)(x))
    assert "expected the index map of args[0] to return 1 values" in _error(
        lambda: ppl.pallas_call(copy, S((8,), np.float32), grid=(2,),
                                in_specs=[ppl.BlockSpec((4,), lambda i: (i, 0))],
                                interpret=True)(x))
    assert ("input_output_aliases maps input 0 to output 0: expected input 0 to have output "
            "0's type float32[8], but got int32[8]") in _error(
        lambda: ppl.pallas_call(copy, S((8,), np.float32), input_output_aliases={0: 0},
                                interpret=True)(x.astype(np.int32)))
    assert "expected `in_specs` to be a tuple or a list" in _error(
        lambda: ppl.pallas_call(copy, S((8,), np.float32), in_specs=spec, interpret=True)(x))
    assert "program_id(0) is only meaningful inside a Pallas kernel" in _error(
        lambda: ppl.program_id(0))
    assert "expected a grid of static non-negative ints" in _error(
        lambda: ppl.pallas_call(copy, S((8,), np.float32), grid=(2.0,), interpret=True))
    with pytest.raises(ValueError, match="Only interpret mode is supported on CPU backend."):
        ppl.pallas_call(copy, S((8,), np.float32))(x)

    def bad_store(x_ref: Any, o_ref: Any) -> None:
        pplt.store(o_ref.at[ppl.ds(0, 4)], pjnp.ones(3), mask=pjnp.arange(4) < 2)
    with pytest.raises(plait.errors.RefError, match=r"expected the view's shape \(4,\), but "
                                                     r"got a value of shape \(3,\)"):
        ppl.pallas_call(bad_store, S((8,), np.float32), interpret=True)(x)
    with pytest.raises(ValueError, match="Only interpret mode is supported on CPU backend."):
        jpl.pallas_call(copy, jax.ShapeDtypeStruct((8,), np.float32))(x)
