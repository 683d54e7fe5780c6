"""The parser: round trips of plait's and JAX's texts, errors, and properties.

* every jaxpr of the golden corpus: ``parse(print(j)) == j`` and
  ``print(parse(s)) == s``; JAX's own text of each corpus function reads back
  to the same text;
* every primitive plait has: the text real JAX 0.10.2 prints for an equation
  using it reads back to the same text, with the params JAX bound;
* parse errors name the line and column;
* hypothesis: random well-typed programs built with the Builder round-trip;
  one-token changes of their text that still parse give unequal jaxprs;
  rebuilding a program gives an equal one; the Builder merges duplicates.
"""

from __future__ import annotations

import enum
import importlib
import random
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import hypothesis.strategies as st
import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from jax import lax
from jax._src import core as jcore
from jax._src.ad_util import add_jaxvals_p
from jax._src.lax import fft as jax_fft
from jax._src.lax import linalg as jax_linalg

from plait.errors import JaxprParseError, JaxprTypeError
from plait.ir import (
    PRIMITIVES,
    Builder,
    ClosedJaxpr,
    Effect,
    Jaxpr,
    Literal,
    Primitive,
    ShapedArray,
    Var,
    check_jaxpr,
    parse_jaxpr,
    shaped,
)
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import eval_jaxpr
from plait.ir.printer import var_name
from tests.ir.jaxpr_corpus import (
    CASES,
    KNOWN_DIFFERENCES,
    Case,
    plain_jaxpr,
    trace_jax,
    trace_plait,
)


@pytest.fixture(autouse=True)
def _quiet_numpy() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)  # JAX's own overflow warnings


def roundtrip(j: Jaxpr) -> Jaxpr:
    """Print and parse ``j``, checking both directions and the result's types."""
    s = str(j)
    parsed = parse_jaxpr(s)
    check_jaxpr(parsed)
    assert str(parsed) == s
    assert parsed == j and hash(parsed) == hash(j)
    return parsed


# -- (a) the golden corpus -----------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_roundtrips(case: Case) -> None:
    closed = trace_plait(case)
    parsed = roundtrip(closed.jaxpr)
    assert ClosedJaxpr(parsed, closed.consts) == closed


def _jax_primitives(j: Any) -> Iterator[str]:
    for e in j.eqns:
        yield e.primitive.name
        for sub in jcore.jaxprs_in_params(e.params):
            yield from _jax_primitives(sub)


# Cases whose JAX text plait cannot read back: strict xfails, so that a fix shows up.
_JAX_TEXT_DIFFERS: dict[str, str] = {}
_JAX_TEXT_CASES = [
    pytest.param(c, id=c.name, marks=[pytest.mark.xfail(
        strict=True, raises=JaxprParseError, reason=_JAX_TEXT_DIFFERS[c.name])]
        if c.name in _JAX_TEXT_DIFFERS else [])
    for c in CASES + [c for c, _ in KNOWN_DIFFERENCES]]


@pytest.mark.parametrize("case", _JAX_TEXT_CASES)
def test_jax_corpus_text_roundtrips(case: Case) -> None:
    closed = trace_jax(case)
    assert set(_jax_primitives(closed.jaxpr)) <= set(PRIMITIVES) or case.name in _JAX_TEXT_DIFFERS
    text = str(closed)
    parsed = parse_jaxpr(text)
    check_jaxpr(parsed)
    assert str(parsed) == text


def test_independent_traces_are_equal() -> None:
    for case in CASES:
        a, b = trace_plait(case), trace_plait(case)
        assert a.jaxpr is not b.jaxpr
        assert a == b and a.jaxpr == b.jaxpr and hash(a.jaxpr) == hash(b.jaxpr), case.name


def test_different_traces_are_unequal() -> None:
    jaxprs = [trace_plait(c).jaxpr for c in CASES]
    distinct = {str(j): j for j in jaxprs}
    assert len(set(distinct.values())) == len(distinct)


# -- (b) JAX's text for every primitive plait has ------------------------------

def _f32(*s: int) -> np.ndarray:
    return np.ones(s, np.float32)


def _i32(*s: int) -> np.ndarray:
    return np.ones(s, np.int32)


def _bool(*s: int) -> np.ndarray:
    return np.ones(s, np.bool_)


def _c64(*s: int) -> np.ndarray:
    return np.ones(s, np.complex64)


Example = tuple[Any, ...]  # (function, args) or (function, args, why plait's text differs)


def _un(fn: Callable[..., Any], x: Any = None) -> list[Example]:
    return [(fn, (_f32(3) if x is None else x,))]


def _bin(fn: Callable[..., Any], x: Any = None, y: Any = None) -> list[Example]:
    x = _f32(2, 3) if x is None else x
    return [(fn, (x, x if y is None else y)), (lambda a: fn(a, a.ravel()[0]), (x,))]


def _inner(a: Any, b: Any) -> Any:
    return jnp.sin(a) * b


def _long(c: Any) -> Any:
    for i in range(11):
        c = c * 1.5 + i
    return c


@jax.custom_jvp
def _custom_jvp(x: Any) -> Any:
    return jnp.sin(x)


_custom_jvp.defjvp(lambda p, t: (_custom_jvp(p[0]), jnp.cos(p[0]) * t[0]))


@jax.custom_vjp
def _custom_vjp(x: Any) -> Any:
    return jnp.sin(x)


_custom_vjp.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (r * g,))

_CALLABLE_PARAMS = ("JAX prints Python callables as params (jvp=f, bwd=<lambda>, "
                    "policy=<function ...>), which no text can restore; plait holds jaxprs instead")


_GDN = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_SDN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
_IDX = np.array([[0], [2]], np.int32)


def _scatter_example(fn: Any) -> list[Example]:
    return [(lambda x, u: fn(x, _IDX, u, _SDN), (_f32(3, 4), _f32(2, 4))),
            (lambda x, u: fn(x, _IDX, u, _SDN, mode="clip", unique_indices=True), (_f32(3, 4), _f32(2, 4)))]


JAX_EXAMPLES: dict[str, list[Example]] = {
    # (vmap with an axis name leaves the reductions naming array dimensions.)
    "psum": [(jax.vmap(lambda x: lax.psum(x, "i"), axis_name="i"), (_f32(2, 3),))],
    "pmax": [(jax.vmap(lambda x: lax.pmax(x, "i"), axis_name="i"), (_f32(2, 3),))],
    "pmin": [(jax.vmap(lambda x: lax.pmin(x, "i"), axis_name="i"), (_i32(2, 3),))],
    "abs": _un(lax.abs) + _un(lax.abs, _c64(2)), "acos": _un(lax.acos), "acosh": _un(lax.acosh),
    "add": _bin(lax.add), "add_any": [(lambda x: add_jaxvals_p.bind(x, x), (_f32(2, 3),))],
    "and": _bin(lax.bitwise_and, _i32(3)) + _bin(lax.bitwise_and, _bool(3)),
    "argmax": [(lambda x: lax.argmax(x, 1, jnp.int32), (_f32(2, 3),))],
    "argmin": [(lambda x: lax.argmin(x, 0, jnp.int8), (_i32(2, 3),))],
    "asin": _un(lax.asin), "asinh": _un(lax.asinh), "atan": _un(lax.atan), "atan2": _bin(lax.atan2),
    "atanh": _un(lax.atanh),
    "broadcast_in_dim": [(lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), (_f32(3),)),
                         (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), (np.float32(1),)),
                         (lambda x: lax.broadcast_in_dim(x, (4, 3), (0, 1)), (_f32(1, 3),))],
    "cbrt": _un(lax.cbrt), "ceil": _un(lax.ceil),
    "clamp": [(lax.clamp, (np.float32(0), _f32(3), np.float32(1))), (lax.clamp, (_i32(3),) * 3)],
    "complex": _bin(lax.complex),
    "concatenate": [(lambda x, y: lax.concatenate([x, y, x], 0), (_f32(2), _f32(3))),
                    (lambda x, y: lax.concatenate([x, y], 1), (_i32(2, 2), _i32(2, 1)))],
    "conj": [(lax.conj, (_c64(3),)), (lax.conj, (np.complex64(1j),))],
    "convert_element_type": [(lambda x: lax.convert_element_type(x, jnp.int32), (_f32(3),)),
                             (lambda x: lax.convert_element_type(x, jnp.bfloat16), (_bool(3),)),
                             (lambda x: x + 1.5, (_i32(3),))],
    "copy": _un(lax.copy_p.bind),
    "name": [(lambda x: jax.ad_checkpoint.checkpoint_name(x, "h1"), (_f32(3),))],
    "cos": _un(lax.cos), "cosh": _un(lax.cosh),
    "cummax": [(lambda x: lax.cummax(x, 1), (_f32(2, 3),))],
    "cummin": [(lambda x: lax.cummin(x, 0, reverse=True), (_i32(2, 3),))],
    "cumprod": [(lambda x: lax.cumprod(x, 1), (_f32(2, 3),))],
    "cumsum": [(lambda x: lax.cumsum(x, 0), (_f32(2, 3),)),
               (lambda x: lax.cumsum(x, 1, reverse=True), (_i32(2, 3),))],
    "div": _bin(lax.div) + _bin(lax.div, _i32(3)),
    "dot_general": [
        (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), (_f32(2, 3), _f32(3, 4))),
        (lambda a, b: lax.dot(a, b, precision=("highest", "bfloat16")), (_f32(2, 3), _f32(3, 4))),
        (lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (_f32(5, 2, 3), _f32(5, 3, 4))),
        (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32),
         (np.ones((2, 3), np.int8), np.ones((3, 4), np.int8))),
        (lambda a, b: jnp.dot(a, b), (_f32(2, 3), _f32(3)))],
    "dynamic_slice": [(lambda x, i: lax.dynamic_slice_p.bind(x, i, i, slice_sizes=(1, 2)),
                       (_f32(3, 4), np.int32(0))),
                      (lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), (_f32(3, 4),))],
    "dynamic_update_slice": [(lambda x, u, i: lax.dynamic_update_slice_p.bind(x, u, i, i),
                              (_f32(3, 4), _f32(1, 2), np.int32(0))),
                             (lambda x, u: lax.dynamic_update_slice(x, u, (1, 0)), (_f32(3, 4), _f32(1, 4)))],
    "eq": _bin(lax.eq), "exp": _un(lax.exp), "exp2": _un(lax.exp2), "expm1": _un(lax.expm1),
    "floor": _un(lax.floor), "ge": _bin(lax.ge), "gt": _bin(lax.gt, _i32(3)),
    "imag": _un(lax.imag, _c64(3)),
    "integer_pow": _un(lambda x: lax.integer_pow(x, 3)) + _un(lambda x: lax.integer_pow(x, -2)),
    "platform_index": [
        (lambda x: lax.platform_dependent(x, cpu=jnp.sin, default=jnp.cos), (_f32(3),)),
        (lambda x: lax.platform_dependent(x, tpu=jnp.sin, cuda=jnp.cos, rocm=jnp.cos), (_f32(3),))],
    # lax.fft is a jit in JAX: the examples bind the primitive.
    "fft": [(lambda x: jax_fft.fft_p.bind(x, fft_type=lax.FftType.FFT, fft_lengths=(3,)),
             (_c64(2, 3),)),
            (lambda x: jax_fft.fft_p.bind(x, fft_type=lax.FftType.RFFT, fft_lengths=(2, 4)),
             (_f32(2, 4),)),
            (lambda x: jax_fft.fft_p.bind(x, fft_type=lax.FftType.IRFFT, fft_lengths=(2, 6)),
             (_c64(2, 4),))],
    "cholesky": [(lax.linalg.cholesky, (_f32(3, 3),)),
                 (lambda x: lax.linalg.cholesky(x, symmetrize_input=False), (_c64(2, 3, 3),))],
    "triangular_solve": [
        (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
         (_f32(3, 3), _f32(3, 2))),
        (lambda a, b: lax.linalg.triangular_solve(a, b, transpose_a=True, conjugate_a=True,
                                                  unit_diagonal=True),
         (_c64(2, 3, 3), _c64(2, 4, 3)))],
    "lu": [(lax.linalg.lu, (_f32(3, 3),)), (lax.linalg.lu, (_c64(2, 4, 3),))],
    "lu_pivots_to_permutation": [
        (lambda p: lax.linalg.lu_pivots_to_permutation(p, 5), (np.array([[2, 2, 3]], np.int32),))],
    "geqrf": [(jax_linalg.geqrf, (_f32(4, 3),)), (jax_linalg.geqrf, (_c64(2, 3, 4),))],
    "householder_product": [(lax.linalg.householder_product, (_f32(4, 3), _f32(3))),
                            (lax.linalg.householder_product, (_c64(2, 4, 3), _c64(2, 2)))],
    "ormqr": [(lax.linalg.ormqr, (_f32(4, 3), _f32(3), _f32(4, 2))),
              (lambda a, t, c: lax.linalg.ormqr(a, t, c, left=False, transpose=True),
               (_c64(2, 4, 3), _c64(2, 2), _c64(2, 5, 4)))],
    "geqp3": [(jax_linalg.geqp3, (_f32(4, 3), np.zeros(3, np.int32))),
              (lambda a, j: jax_linalg.geqp3(a, j, use_magma=True),
               (_c64(2, 3, 4), np.array([[0, 1, 0, 0], [1, 0, 0, 1]], np.int32)))],
    "qr": [(lax.linalg.qr, (_f32(4, 3),)),
           (lambda x: lax.linalg.qr(x, full_matrices=False), (_c64(2, 3, 4),)),
           (lambda x: lax.linalg.qr(x, pivoting=True, full_matrices=False), (_f32(2, 3, 4),))],
    "eigh": [(lax.linalg.eigh, (_f32(3, 3),)),
             (lambda x: lax.linalg.eigh(x, lower=False, symmetrize_input=False,
                                        sort_eigenvalues=False, subset_by_index=(0, 2),
                                        implementation=lax.linalg.EighImplementation.QR),
              (_f32(2, 3, 3),))],
    "svd": [(lax.linalg.svd, (_f32(4, 3),)),
            (lambda x: lax.linalg.svd(x, compute_uv=False), (_c64(3, 4),)),
            (lambda x: lax.linalg.svd(x, full_matrices=False, subset_by_index=(0, 2),
                                      algorithm=lax.linalg.SvdAlgorithm.QR), (_f32(2, 4, 3),))],
    "eig": [(lax.linalg.eig, (_f32(3, 3),)),
            (lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False), (_c64(2, 3, 3),)),
            (lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False, enable_eigvec_derivs=True, implementation=lax.linalg.EigImplementation.LAPACK), (_f32(3, 3),))],
    "tridiagonal_solve": [(lax.linalg.tridiagonal_solve, (_f32(4), _f32(4), _f32(4), _f32(4, 2))),
                          (lambda *a: lax.linalg.tridiagonal_solve(*a, perturb_singular=True), (_c64(2, 3), _c64(2, 3), _c64(2, 3), _c64(2, 3, 1)))],
    "hessenberg": [(lax.linalg.hessenberg, (_f32(3, 3),)), (lax.linalg.hessenberg, (_c64(2, 4, 4),))],
    "tridiagonal": [(lax.linalg.tridiagonal, (_f32(3, 3),)),
                    (lambda x: lax.linalg.tridiagonal(x, lower=False), (_c64(2, 4, 4),))],
    "schur": [(lax.linalg.schur, (_f32(3, 3),)),
              (lambda x: lax.linalg.schur(x, compute_schur_vectors=False), (_c64(2, 4, 4),)),
              (lambda x: lax.linalg.schur(x, select_callable=lambda w: w), (_f32(3, 3),),
               _CALLABLE_PARAMS)],
    "empty": [(lambda: lax.empty((2, 3), np.dtype(np.float32)), ()),
              (lambda: lax.empty((), np.dtype(np.bool_)), ())],
    "iota": [(lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 1), ()),
             (lambda: lax.iota(jnp.float32, 4), ())],
    "is_finite": _un(lax.is_finite), "le": _bin(lax.le), "log": _un(lax.log),
    "log1p": _un(lax.log1p), "logistic": _un(lax.logistic), "lt": _bin(lax.lt),
    "max": _bin(lax.max), "min": _bin(lax.min, _i32(3)),
    "mul": _bin(lax.mul), "ne": _bin(lax.ne, _bool(3)), "neg": _un(lax.neg), "nextafter": _bin(lax.nextafter),
    "not": _un(lax.bitwise_not, _bool(3)) + _un(lax.bitwise_not, np.ones(3, np.uint8)),
    "or": _bin(lax.bitwise_or, _bool(3)),
    "pad": [(lambda x: lax.pad(x, 0.0, ((1, 2, 0), (0, -1, 1))), (_f32(3, 4),)),
            (lambda x, v: lax.pad(x, v, ((0, 0, 3),)), (_i32(3), np.int32(7)))],
    "pow": _bin(lax.pow) + [(lambda x, y: lax.pow(x, y), (_f32(3), _i32(3)))],
    "real": _un(lax.real, _c64(3)),
    "reduce_and": [(lambda x: lax.reduce_and_p.bind(x, axes=(0,)), (_bool(2, 3),))],
    "reduce_max": [(lambda x: lax.reduce_max(x, (1,)), (_f32(2, 3),))],
    "reduce_min": [(lambda x: lax.reduce_min(x, (0, 1)), (_i32(2, 3),))],
    "reduce_or": [(lambda x: lax.reduce_or_p.bind(x, axes=(1,)), (_bool(2, 3),))],
    "reduce_prod": [(lambda x: lax.reduce_prod(x, (1,)), (_f32(2, 3),))],
    "reduce_sum": [(lambda x: lax.reduce_sum(x, (0,)), (_f32(2, 3),)),
                   (lambda x: lax.reduce_sum(x, ()), (_i32(2, 3),))],
    "reduce_xor": [(lambda x: lax.reduce_xor_p.bind(x, axes=(1,)), (_i32(2, 3),))],
    "rem": _bin(lax.rem) + _bin(lax.rem, _i32(3)),
    "reshape": [(lambda x: lax.reshape(x, (3, 2)), (_f32(2, 3),)),
                (lambda x: lax.reshape(x, (3, 2), (1, 0)), (_f32(2, 3),)),
                (lambda x: lax.reshape(x, ()), (_f32(1, 1),))],
    "rev": [(lambda x: lax.rev(x, (0,)), (_f32(2, 3),))],
    "round": _un(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)) + _un(lax.round),
    "rsqrt": _un(lax.rsqrt),
    "select_n": [(lax.select_n, (_bool(3), _f32(3), _f32(3))),
                 (lax.select_n, (_i32(3), _f32(3), _f32(3), _f32(3))),
                 (lax.select_n, (np.bool_(True), _i32(2)))],
    "sign": _un(lax.sign), "sin": _un(lax.sin), "sinh": _un(lax.sinh),
    "slice": [(lambda x: lax.slice(x, (0, 1), (2, 3)), (_f32(2, 3),)),
              (lambda x: lax.slice(x, (0, 1), (2, 3), (2, 1)), (_f32(2, 3),))],
    "sort": [(lambda x, y: lax.sort((x, y), dimension=0, num_keys=1), (_f32(2, 3), _i32(2, 3))),
             (lambda x: lax.sort(x, is_stable=False), (_f32(4),)),
             (lambda x, y: lax.sort((x, y), num_keys=2), (_i32(4), _f32(4)))],
    "sqrt": _un(lax.sqrt),
    "squeeze": [(lambda x: lax.squeeze(x, (0, 2)), (_f32(1, 3, 1),))],
    "sub": _bin(lax.sub), "tan": _un(lax.tan), "tanh": _un(lax.tanh),
    "transpose": [(lambda x: lax.transpose(x, (1, 0)), (_f32(2, 3),))],
    "xor": _bin(lax.bitwise_xor, _i32(3)),
    "composite": [
        (lambda x: lax.composite(jnp.sin, name="my.sin")(x), (_f32(3),)),
        (lambda x, y: lax.composite(lambda a, b, **kw: (a * b, a), name="my.f", version=2)(
            x, y, k=2.0, v=np.array([1, 2], np.int32), t=(1, "s"), d={"a": None}),
         (_f32(3), _f32(3)))],
    "jit": [(lambda x: jax.jit(_inner)(x, x), (_f32(3),)),
            (lambda x: jax.jit(_inner)(x, x) + jax.jit(_inner)(x, 2 * x), (_f32(3),)),
            (lambda x: jax.jit(lambda y: (y, jnp.sin(y)))(x)[1], (_f32(3),)),
            (lambda x: jax.jit(lambda y: jax.jit(_inner)(y, y))(x), (_f32(3),)),
            # A callee result unused by the caller is named ``_`` and referenced as such.
            (lambda x: jax.jit(lambda y: (y, -jnp.sin(y)))(x)[0], (_f32(3),)),
            (lambda x: jax.jit(lambda y: (jnp.sin(y), y))(x)[1], (_f32(3),))],
    "cond": [(lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x), (_f32(3),)),
             (lambda x: lax.switch(1, [jnp.sin, jnp.cos, lambda y: y * 2.0], x), (_f32(3),)),
             (lambda p, x: lax.cond(p, lambda y: (y, 1.0), lambda y: (y * y, 2.0), x), (True, _f32(3)))],
    "while": [(lambda x: lax.while_loop(lambda c: c[0] < 10.0, lambda c: c * 2.0, x), (_f32(3),)),
              (lambda x, n: lax.fori_loop(0, n, lambda i, c: c * i.astype(jnp.float32), x),
               (_f32(3), np.int32(3))),
              (lambda x: lax.while_loop(lambda c: _long(c)[0] < 10.0, _long, x), (_f32(3),))],
    "scan": [(lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x), (_f32(3),)),
             (lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x, reverse=True, unroll=2), (_f32(3),)),
             (lambda x: lax.fori_loop(0, 3, lambda i, c: c + i, x), (_f32(3),))],
    "gather": [(lambda x, i: x[i], (_f32(3, 4), _IDX[:, 0])),
               (lambda x: lax.gather(x, _IDX, _GDN, (1, 4), mode="fill", fill_value=-1.0), (_f32(3, 4),)),
               (lambda x: lax.gather(x, _IDX, _GDN, (1, 4), mode="clip", indices_are_sorted=True), (_f32(3, 4),)),
               (lambda x: jax.vmap(lambda r, i: r[i])(x, _IDX), (_f32(2, 4),),
                "JAX prints the dimension numbers vmap makes with np.int64(...) entries")],
    "scatter": _scatter_example(lax.scatter) + [
        (lambda x: x.at[_IDX[:, 0]].apply(jnp.sin), (_f32(3, 4),))],
    "scatter-add": _scatter_example(lax.scatter_add) + [(lambda x: x.at[_IDX[:, 0]].add(1.0), (_f32(3, 4),))],
    "scatter-sub": _scatter_example(lax.scatter_sub),
    "scatter-mul": _scatter_example(lax.scatter_mul),
    "scatter-min": _scatter_example(lax.scatter_min),
    "scatter-max": _scatter_example(lax.scatter_max) + [(lambda x: x.at[1].max(2), (_i32(3),))],
    "shift_left": _bin(lax.shift_left, _i32(3)),
    "shift_right_arithmetic": _bin(lax.shift_right_arithmetic, _i32(3)),
    "shift_right_logical": _bin(lax.shift_right_logical, _i32(3)),
    "population_count": _un(lax.population_count, _i32(3)), "clz": _un(lax.clz, _i32(3)),
    "stop_gradient": _un(lax.stop_gradient),
    "erf": _un(lax.erf), "erfc": _un(lax.erfc), "erf_inv": _un(lax.erf_inv),
    "lgamma": _un(lax.lgamma), "digamma": _un(lax.digamma), "polygamma": _bin(lax.polygamma),
    "zeta": _bin(lax.zeta),
    "conv_general_dilated": [
        (lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (_f32(2, 8, 8, 3), _f32(3, 3, 3, 4))),
        (lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 0),), (2,), (1,), feature_group_count=2),
         (_f32(1, 4, 5), _f32(2, 2, 2)))],
    "top_k": [(lambda x: lax.top_k(x, 2), (_f32(2, 3),)), (lambda x: lax.top_k(x, 1, axis=0), (_i32(2, 3),))],
    "approx_top_k": [(lambda x: lax.approx_max_k(x, 2), (_f32(2, 3),)),
                     (lambda x: lax.approx_min_k(x, 1, reduction_dimension=0, recall_target=0.5),
                      (_f32(2, 3),))],
    "reduce_window_sum": [(lambda x: lax.reduce_window(x, 0., lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                           (_f32(2, 6, 6, 3),))],
    "reduce_window_max": [(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), "VALID",
                                                       (1, 2), (2, 1)), (_f32(5, 4),))],
    "reduce_window_min": [(lambda x: lax.reduce_window(x, jnp.iinfo(jnp.int32).max, lax.min, (2,), (1,)),
                           (_i32(5),))],
    "reduce_window": [(lambda x: lax.reduce_window(x, 1., lax.mul, (2, 2), (1, 1), "SAME"), (_f32(4, 4),)),
                      (lambda x, y: lax.reduce_window((x, y), (0., 0), lambda a, b: (a[0] + b[0], a[1] + b[1]),
                                                      (2,), (1,)), (_f32(4), _i32(4)))],
    "select_and_gather_add": [(lambda x: jax.jvp(lambda y: lax.reduce_window(y, -jnp.inf, lax.max, (2, 2), (2, 2),
                                                                              "SAME"), (x,), (x,))[1],
                               (_f32(5, 4),))],
    "select_and_scatter_add": [(lambda x: jax.grad(lambda y: lax.reduce_window(y, jnp.inf, lax.min, (2, 2),
                                                                                (1, 2), "SAME").sum())(x),
                                (_f32(5, 4),))],
    "igamma": [(lambda a, x: lax.igamma(a, x), (_f32(3), _f32(3)))],
    "igammac": [(lambda a, x: lax.igammac(a, x), (_f32(3), _f32(3)))],
    "igamma_grad_a": [(lambda a, x: lax.igamma_grad_a(a, x), (_f32(3), _f32(3)))],
    "regularized_incomplete_beta": [(lambda a, b, x: lax.betainc(a, b, x),
                                     (_f32(3), _f32(3), _f32(3)))],
    "bessel_i0e": [(lambda x: lax.bessel_i0e(x), (_f32(3),))],
    "bessel_i1e": [(lambda x: lax.bessel_i1e(x), (_f32(3),))],
    "square": [(lambda x: lax.square(x), (_f32(2, 3),)), (lambda x: jnp.square(x), (_i32(3),))],
    "split": [(lambda x: jnp.split(x, [1, 3]), (_f32(5, 2),)), (lambda x: lax.split(x, (2, 1), 1), (_f32(2, 3),))],
    "stack": [(lambda x: jnp.stack([x, x], -1), (_f32(2, 3),))],
    "unstack": [(lambda x: lax.unstack(x, 1), (_f32(2, 3),))],
    "tile": [(lambda x: jnp.tile(x, (2, 1, 3)), (_f32(2, 3),))],
    "bitcast_convert_type": [(lambda x: lax.bitcast_convert_type(x, jnp.int32), (_f32(2, 3),)),
                             (lambda x: lax.bitcast_convert_type(x, jnp.uint8), (_f32(3),)),
                             (lambda x: lax.bitcast_convert_type(x, jnp.float32), (np.ones((3, 4), np.uint8),))],
    "reduce_precision": [(lambda x: lax.reduce_precision(x, 5, 10), (_f32(3),))],
    "mulhi": _bin(lax.mulhi, _i32(3)),
    "optimization_barrier": [(lambda x, y: lax.optimization_barrier((x, y)), (_f32(3), _i32(2)))],
    "create_token": [(lambda: lax.create_token(), ())],
    "after_all": [(lambda: lax.after_all(lax.create_token()), ())],
    "rng_bit_generator": [(lambda k: lax.rng_bit_generator(k, (2, 3)), (np.ones(4, np.uint32),)),
                          (lambda k: lax.rng_bit_generator(k, (5,), jnp.uint8, lax.RandomAlgorithm.RNG_THREE_FRY),
                           (np.ones(4, np.uint32),))],
    "rng_uniform": [(lambda a, b: lax.rng_uniform(a, b, (2, 3)), (np.float32(0), np.float32(1)))],
    "cumlogsumexp": [(lambda x: lax.cumlogsumexp(x, axis=1, reverse=True), (_f32(2, 3),))],
    "reduce": [(lambda x: lax.reduce(x, 1., lambda a, b: a * b + 1, (1,)), (_f32(2, 3),), _CALLABLE_PARAMS)],
    "custom_jvp_call": [(lambda x: _custom_jvp(x), (_f32(3),), _CALLABLE_PARAMS)],
    "custom_vjp_call": [(lambda x: _custom_vjp(x), (_f32(3),), _CALLABLE_PARAMS)],
    "custom_lin": [(lambda x: jax.linearize(_custom_vjp, x)[1](x), (_f32(3),), _CALLABLE_PARAMS)],
    "custom_linear_solve": [
        (lambda a, b: lax.custom_linear_solve(lambda x: a * x, b, lambda mv, b: b / a,
                                              lambda vm, b: b / a), (_f32(3), _f32(3))),
        (lambda a, b: lax.custom_linear_solve(lambda x: a * x, b, lambda mv, b: b / a,
                                              symmetric=True), (_f32(3), _f32(3)),
         "JAX hoists a jaxpr used twice by identity (matvec as vecmat) into a top-level let "
         "that nothing refers to; plait's interned jaxprs have no identity apart from "
         "their structure"),
        (lambda a, b: lax.custom_linear_solve(lambda x: a * x, b, lambda mv, b: b / a),
         (_f32(3), _f32(3)))],
    "remat2": [(lambda x: jax.checkpoint(jnp.sin)(x), (_f32(3),)),
               (lambda x: jax.grad(lambda y: jax.checkpoint(jnp.sin)(y).sum())(x), (_f32(3),)),
               (lambda x: jax.checkpoint(jnp.sin, policy=jax.checkpoint_policies.nothing_saveable)(x),
                (_f32(3),), _CALLABLE_PARAMS)],
}

_KEY = jax.random.key(0)
_THREEFRY = importlib.import_module("jax._src.random.threefry2x32")
_KEYS = jax.random.split(_KEY, 3)
JAX_EXAMPLES.update({
    "random_seed": [(lambda s: jax.random.key(s), (np.int32(3),))],
    "random_wrap": [(lambda d: jax.random.wrap_key_data(d), (np.zeros((3, 2), np.uint32),))],
    "random_unwrap": [(lambda k: jax.random.key_data(k), (_KEYS,))],
    "random_split": [(lambda k: jax.random.split(k, (2, 3)), (_KEY,))],
    "random_fold_in": [(lambda k: jax.random.fold_in(k, 7), (_KEY,))],
    "random_bits": [(lambda k: jax.random.bits(k, (2,), jnp.uint16), (_KEY,))],
    "random_clone": [(lambda k: jax.random.clone(k), (_KEYS,))],
    "threefry2x32": [(lambda a, b: _THREEFRY.threefry2x32_p.bind(a, a, b, b),
                      (np.uint32(1), np.ones(4, np.uint32)))],
})
# Shape-polymorphic programs: symbolic dimensions in types and parameters.
_B3 = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 3"), np.float32)
JAX_EXAMPLES.update({
    "dim_as_value": [(lambda x: x.shape[0] * 2, (_B3,)),
                     (lambda x: (x.shape[0] + 1, x.reshape(-1), jnp.mean(x, axis=0)), (_B3,)),
                     (lambda x: (x * 2, x.shape[1] * x.shape[0]), (jax.ShapeDtypeStruct(
                         jax.export.symbolic_shape("2*b + 1, floordiv(b, 2)"), np.float32),))],
    # (A dict attribute prints as FrozenDict({...}), which does not parse back.)
    "ffi_call": [(lambda m: jax.ffi.ffi_call(
        "lapack_spotrf_ffi", (jax.ShapeDtypeStruct((3, 3), np.float32),
                              jax.ShapeDtypeStruct((), np.int32)), vmap_method="sequential",
        input_output_aliases={0: 0})(m, uplo=np.uint8(76), n=3, s="hi", w=1.5, b=True,
                                     ints=np.arange(3), fs=np.ones(2, np.float32)),
        (_f32(3, 3),))],
})



# An exported function's text omits its module's bytes, and a host callback's its Python
# function, so they cannot parse back; tests/frontend/test_export.py and
# tests/frontend/test_callbacks.py test the refusals.
_UNPARSEABLE = {"call_exported", "call_exported_lin", "pure_callback", "io_callback",
                "debug_callback",
                # JAX's sparse.todense marker carries its operand's PyTreeDef, which no
                # text holds; plait's has no parameters (tests/frontend/test_sparse_bcoo.py).
                "todense",
                # A custom_vmap rule is a Python function, not in the text.
                "custom_vmap_call",
                # A check's formatting structure is not in the text, and JAX refuses to
                # stage a check (tests/frontend/test_checkify.py tests both).
                "check",
                # A mesh's devices are not in the text; the collectives JAX prints only
                # inside shard_map (tests/frontend/test_multi_device.py parses plait's
                # printed shard_map bodies back).
                "shard_map", "sharding_constraint", "all_gather", "reduce_scatter",
                "ppermute", "axis_index", "all_to_all", "pbroadcast", "pvary",
                # A sharded type names its mesh's axes, not the mesh: parsed back under
                # the abstract mesh in tests/frontend/test_explicit_sharding.py.
                "reshard"}


def test_every_primitive_has_a_jax_example() -> None:
    # Primitives plait defines (not ones a test registers for a while).
    ours = {n for n, p in PRIMITIVES.items() if getattr(p.typing_rule, "__module__", "").startswith("plait.")}
    assert sorted(ours - set(JAX_EXAMPLES) - _UNPARSEABLE) == []


def _normalize(v: Any) -> Any:
    if isinstance(v, ClosedJaxpr | Jaxpr | jcore.ClosedJaxpr | jcore.Jaxpr):
        return str(v)
    if isinstance(v, P.PRNGImpl) or type(v).__name__ == "PRNGImpl":  # plait's, JAX's
        return str(v) if isinstance(v, P.PRNGImpl) else v.tag
    if isinstance(v, enum.Enum):
        return v.name if isinstance(v.value, str) else int(v.value)
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, Primitive | jcore.Primitive):  # select_and_*'s select_prim
        return v.name
    if type(v).__name__ in ("PyTreeDef", "AttributeTree", "HashableArray"):  # composite
        return repr(v)
    if type(v).__name__ in ("DimExpr", "_DimExpr"):  # plait's, JAX's symbolic dimensions
        return str(v)
    if type(v).__name__ == "ShapedArray":  # plait's, JAX's (an ffi_call's result types)
        return repr(v)
    if isinstance(v, tuple | list):
        return tuple(map(_normalize, v))
    return v


@pytest.mark.parametrize("name, index", [
    pytest.param(n, i, marks=[pytest.mark.xfail(strict=True, reason=ex[2])] if len(ex) > 2 else [])
    for n in sorted(JAX_EXAMPLES) for i, ex in enumerate(JAX_EXAMPLES[n])])
def test_jax_text_of_each_primitive_roundtrips(name: str, index: int) -> None:
    fn, args = JAX_EXAMPLES[name][index][:2]
    closed = jax.make_jaxpr(fn)(*args)
    jax_eqns = [e for e in closed.jaxpr.eqns if e.primitive.name == name]
    assert jax_eqns, f"the example binds no {name}: {closed}"
    text = str(closed)
    parsed = parse_jaxpr(text)
    check_jaxpr(parsed)
    assert str(parsed) == str(closed.replace(jaxpr=plain_jaxpr(closed.jaxpr)))
    # The params elided from the text were restored to the values JAX bound.
    eqns = [e for e in parsed.eqns if e.primitive.name == name]
    assert len(eqns) == len(jax_eqns)
    for mine, theirs in zip(eqns, jax_eqns):
        common = set(mine.params) & set(theirs.params)
        assert {k: _normalize(mine.params[k]) for k in common} == \
            {k: _normalize(theirs.params[k]) for k in common}


# -- Regressions and edge cases of the syntax ---------------------------------

def test_special_literal_at_end_of_a_broken_equation() -> None:
    # ``inf:f32[]`` ends an operand list and the next line starts with binders.
    text = str(jax.make_jaxpr(lambda x: (x * np.inf, x + np.nan, x > -np.inf, x + 1.0, jnp.sin(x),
                                         jnp.cos(x), x - 2.0, x * 3.0, x * 5.0))(_f32(3)))
    assert "\n    c:f32[3] = add a nan:f32[]\n" in text
    assert str(parse_jaxpr(text)) == text


def _chain(n: int) -> Jaxpr:
    b = Builder()
    x = Var(ShapedArray((), dt.float32))
    ys = [x, b.bind1(P.neg_p, x)]
    for _ in range(n):
        ys.append(b.bind1(P.add_p, ys[-1], ys[-2]))
    return b.build([x], ys[-2:])


def test_variables_named_like_keywords_and_primitives() -> None:
    names = [var_name(i) for i in range(400)]
    assert {"eq", "ge", "gt", "in", "le", "lt", "ne", "or"} <= set(names)
    text = str(_chain(400))
    assert "\n    eq:f32[] = add ep eo\n" in text and "in:f32[] = add im il" in text
    assert "\n    et:f32[] = add es er\n    eu:f32[] = add et es\n" in text
    roundtrip(_chain(400))


def test_variables_named_inf_and_nan() -> None:
    j = _chain(4)
    text = re.sub(r"\bc\b", "inf", re.sub(r"\bd\b", "nan", str(j)))
    assert "\n    b:f32[] = neg a\n    inf:f32[] = add b a\n    nan:f32[] = add inf b\n" in text
    assert parse_jaxpr(text) == j
    # After a literal operand too, ``inf:f32[] =`` starts the next equation.
    text = re.sub(r"\bc\b", "inf", str(j).replace("neg a", "add a 1.0:f32[]"))
    assert "= add a 1.0:f32[]\n    inf:f32[] = add b a\n    d:f32[] = add inf b\n" in text
    parsed = parse_jaxpr(text)
    assert [e.primitive.name for e in parsed.eqns] == ["add"] * 5 and str(parsed) == text.replace("inf", "c")


@pytest.mark.slow
def test_variables_named_like_literals() -> None:
    # Variable 5751 is named ``inf`` and 8801 ``nan``, as in JAX.
    assert var_name(5751) == "inf" and var_name(8801) == "nan"
    j = _chain(8900)
    text = str(j)
    assert "\n    inf:f32[] = add ine ind\n    ing:f32[] = add inf ine\n" in text
    assert "nan:f32[] = add" in text
    roundtrip(j)


@pytest.mark.parametrize("value", [1j, -1j, 1e-05j, complex(0, float("inf")), complex(0, float("nan")),
                                   complex(float("nan"), float("nan")), complex(-0.0, -1.0),
                                   complex(1e20, -1e-20), complex(float("-inf"), 2.5), 0j])
def test_complex_literals_roundtrip(value: complex) -> None:
    b = Builder()
    x = Var(ShapedArray((3,), dt.complex64))
    y = b.bind1(P.mul_p, x, Literal(value, ShapedArray((), dt.complex64)))
    roundtrip(b.build([x], [y, Literal(value, ShapedArray((), dt.complex64))]))


@pytest.mark.parametrize("value", [0.1, -0.0, 1e-45, 3.4028234663852886e+38, float("inf"),
                                   float("-inf"), float("nan"), 123456789.0, 1e20])
def test_float_literals_roundtrip(value: float) -> None:
    b = Builder()
    x = Var(ShapedArray((3,), dt.float32))
    y = b.bind1(P.add_p, Literal(value, ShapedArray((), dt.float32)), x)
    roundtrip(b.build([x], [y]))


def test_float0_literals_roundtrip_and_evaluate() -> None:
    # float0's one value (False), as a batching rule's program holds its float0 constants.
    zero = Literal(False, ShapedArray((), dt.float0))
    b = Builder()
    x = Var(ShapedArray((3,), dt.float32))
    y = b.bind1(P.broadcast_in_dim_p, zero, shape=(3,), broadcast_dimensions=(),
                sharding=None)
    j = b.build([x], [y, x])
    check_jaxpr(j)
    assert "False:float0[]" in str(j)
    roundtrip(j)
    out, _ = eval_jaxpr(j, [], np.ones(3, np.float32))
    assert out.dtype == dt.float0 and out.shape == (3,)


def test_jaxpr_parameters_named_like_shared_jaxprs() -> None:
    # JAX names a shared jaxpr after the call's ``name`` param: ``jit[name=f jaxpr=f]``.
    def f(a: Any) -> Any:
        return jnp.sin(a) * 2

    def jaxpr(a: Any) -> Any:
        return jnp.cos(a)
    text = str(jax.make_jaxpr(lambda x: (jax.jit(f)(x), jax.jit(f)(x + 1), jax.jit(jaxpr)(x),
                                         jax.jit(jaxpr)(x * 2)))(_f32(3)))
    assert "let f = {" in text and "jit[name=f jaxpr=f]" in text and "let jaxpr = {" in text
    parsed = parse_jaxpr(text)
    assert str(parsed) == text
    assert parsed.eqns[0].params["name"] == "f"
    assert isinstance(parsed.eqns[0].params["jaxpr"], ClosedJaxpr)


# -- (c) errors ----------------------------------------------------------------

_OK = ("{ lambda ; a:f32[3] b:i32[]. let\n    c:f32[3] = sin a\n"
       "    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n  in (d,) }")


@pytest.mark.parametrize("old, new, message, line, column", [
    ("sin a", "sine a", "unknown primitive 'sine'", 2, 16),
    ("sin a", "sin z", "variable 'z' is not defined", 2, 20),
    ("in (d,)", "in (e,)", "variable 'e' is not defined", 4, 7),
    ("c:f32[3] = sin", "c:i32[3] = sin", "sin: expected binder 'c' of type f32[3], but got i32[3]", 2, 5),
    ("[axes=(0,) out_sharding=None]", "", "reduce_sum: expected parameter 'axes', but it is missing", 3, 15),
    ("axes=(0,)", "axes=(0,) axes=(0,)", "reduce_sum: parameter 'axes' is given twice", 3, 36),
    ("axes=(0,)", "axis=(0,)", "reduce_sum: expected a parameter among (axes, out_sharding), but got 'axis'",
     3, 26),
    ("axes=(0,)", "axes=zero", "reduce_sum: parameter axes: expected a tuple of ints, but got 'zero'", 3, 26),
    ("axes=(0,)", "axes=(1,)", "reduce_sum: expected axes in [0, 1), but got (1,)", 3, 15),
    ("sin a", "sin a $", "unexpected character '$'", 2, 22),
    ("sin a", "sin a b", "sin: expected 1 operand, but got 2", 2, 16),
    ("sin a", "add a", "add: expected 2 operands, but got 1", 2, 16),
    ("c:f32[3] = sin", "c:f32[3] e:f32[3] = sin", "sin: expected 1 binder, but got 2", 2, 25),
    ("a:f32[3] b", "a:f33[3] b", "expected a dtype such as f32, but got 'f33'", 1, 14),
    ("b:i32[]", "a:i32[]", "variable 'a' is bound twice", 1, 21),
    ("sin a", "sin a 1.5:i32[]", "invalid literal 1.5:i32[]: invalid literal for int() with base 10: '1.5'",
     2, 22),
    (" }", "", "expected '}', but got 'end of input'", 4, 10),
    ("lambda ;", "lambda", "expected a variable name or ';', but got '.'", 1, 26),
])
def test_parse_errors(old: str, new: str, message: str, line: int, column: int) -> None:
    assert old in _OK
    parse_jaxpr(_OK)
    with pytest.raises(JaxprParseError) as info:
        parse_jaxpr(_OK.replace(old, new, 1))
    assert (str(info.value), info.value.line, info.value.column) == \
        (f"{message} (line {line}, column {column})", line, column)


def test_nested_jaxpr_with_constvars_is_an_error() -> None:
    text = ("{ lambda ; a:f32[3]. let\n    b:f32[3] = jit[\n      name=f\n"
            "      jaxpr={ lambda c:f32[3]; d:f32[3]. let  in (d,) }\n    ] a\n  in (b,) }")
    with pytest.raises(JaxprParseError, match=r"without constvars .*\(line 4, column 13\)"):
        parse_jaxpr(text)


# -- (d) properties of random programs -----------------------------------------

class _Skip(Exception):
    """The drawn operation does not apply to the values at hand."""


_DTYPES = [dt.float32, dt.float16, dt.bfloat16, dt.int32, dt.int8, dt.uint8, dt.bool_, dt.complex64]
_FLOATS = {dt.float32, dt.float16, dt.bfloat16}
_INTS = {dt.int32, dt.int8, dt.uint8}
_ORDERED = _FLOATS | _INTS | {dt.bool_}
_NUM = _FLOATS | _INTS | {dt.complex64}
_INEXACT = _FLOATS | {dt.complex64}

_UNARY = [(P.neg_p, _NUM), (P.sign_p, _NUM), (P.floor_p, _FLOATS), (P.ceil_p, _FLOATS),
          (P.is_finite_p, _FLOATS), (P.exp_p, _INEXACT), (P.log_p, _INEXACT), (P.sin_p, _INEXACT),
          (P.cos_p, _INEXACT), (P.tanh_p, _INEXACT), (P.sqrt_p, _INEXACT), (P.logistic_p, _INEXACT),
          (P.abs_p, _INEXACT | {dt.int32, dt.int8}), (P.not_p, _INTS | {dt.bool_}),
          (P.real_p, {dt.complex64}), (P.imag_p, {dt.complex64}), (P.conj_p, {dt.complex64}),
          (P.copy_p, set(_DTYPES)), (P.cbrt_p, _FLOATS), (P.exp2_p, _INEXACT)]
_BINARY = [(P.add_p, _NUM), (P.sub_p, _NUM), (P.mul_p, _NUM), (P.div_p, _NUM), (P.max_p, _ORDERED),
           (P.min_p, _ORDERED), (P.rem_p, _FLOATS | _INTS), (P.atan2_p, _FLOATS), (P.pow_p, _FLOATS),
           (P.and_p, _INTS | {dt.bool_}), (P.or_p, _INTS | {dt.bool_}), (P.xor_p, _INTS | {dt.bool_}),
           (P.nextafter_p, _FLOATS)]
_COMPARE = [(P.eq_p, set(_DTYPES)), (P.ne_p, set(_DTYPES)), (P.lt_p, _ORDERED), (P.le_p, _ORDERED),
            (P.gt_p, _ORDERED), (P.ge_p, _ORDERED)]
_REDUCE = [(P.reduce_sum_p, _NUM), (P.reduce_prod_p, _NUM), (P.reduce_max_p, _ORDERED),
           (P.reduce_min_p, _ORDERED), (P.reduce_and_p, _INTS | {dt.bool_}),
           (P.reduce_or_p, _INTS | {dt.bool_}), (P.reduce_xor_p, _INTS | {dt.bool_})]
_CUMULATIVE = [(P.cumsum_p, _NUM), (P.cumprod_p, _NUM), (P.cummax_p, _FLOATS | _INTS),
               (P.cummin_p, _FLOATS | _INTS)]

Draw = Callable[[st.SearchStrategy[Any]], Any]


def _avals() -> st.SearchStrategy[ShapedArray]:
    return st.builds(ShapedArray, st.lists(st.integers(1, 4), max_size=3).map(tuple),
                     st.sampled_from(_DTYPES))


def _scalar(draw: Draw, dtype: np.dtype[Any]) -> Any:
    if dtype == dt.bool_:
        return draw(st.booleans())
    if dtype in _INTS:
        info = np.iinfo(dtype)
        return draw(st.integers(int(info.min), int(info.max)))
    if dtype == dt.complex64:
        return draw(st.complex_numbers(width=64))
    v = draw(st.floats(width=16) if dtype == dt.float16 else st.floats(width=32))
    return float(np.asarray(v, ml_dtypes.bfloat16)) if dtype == dt.bfloat16 else v


def _literal(draw: Draw, dtype: np.dtype[Any]) -> Literal:
    weak = dtype != dt.bool_ and draw(st.booleans())
    return Literal(_scalar(draw, dtype), ShapedArray((), dtype, weak))


def _pick(draw: Draw, pool: Sequence[Var], ok: Callable[[ShapedArray], bool]) -> Var:
    candidates = [v for v in pool if ok(shaped(v.aval))]
    if not candidates:
        raise _Skip
    return draw(st.sampled_from(candidates))


def _same_or_scalar(draw: Draw, pool: Sequence[Var], x: Var) -> Any:
    """A second operand for ``x``: a variable of its type, or a scalar of its dtype."""
    a = shaped(x.aval)
    same = [v for v in pool
            if shaped(v.aval).dtype == a.dtype and shaped(v.aval).shape in (a.shape, ())]
    if same and draw(st.booleans()):
        return draw(st.sampled_from(same))
    return _literal(draw, a.dtype)


def _subset(draw: Draw, n: int) -> tuple[int, ...]:
    return tuple(sorted(draw(st.sets(st.integers(0, n - 1), max_size=n)))) if n else ()


def _emit(draw: Draw, b: Builder, pool: list[Var], depth: int) -> Sequence[Var]:
    kind = draw(st.sampled_from(["unary", "binary", "compare", "select", "convert", "reduce",
                                 "argminmax", "cumulative", "broadcast", "reshape", "transpose",
                                 "slice", "pad", "concatenate", "dot", "iota", "sort", "rev",
                                 "squeeze", "dynamic_slice", "dynamic_update_slice", "clamp",
                                 "integer_pow", "round", "complex", "jit", "cond", "while",
                                 "scan"]))
    def any_aval(a: ShapedArray) -> bool:
        return True
    if kind == "unary":
        prim, ok = draw(st.sampled_from(_UNARY))
        return b.bind(prim, (_pick(draw, pool, lambda a: a.dtype in ok),))
    if kind in ("binary", "compare"):
        prim, ok = draw(st.sampled_from(_BINARY if kind == "binary" else _COMPARE))
        x = _pick(draw, pool, lambda a: a.dtype in ok)
        y = _same_or_scalar(draw, pool, x)
        return b.bind(prim, (y, x) if draw(st.booleans()) else (x, y))
    if kind == "select":
        x = _pick(draw, pool, any_aval)
        preds = [v for v in pool if shaped(v.aval).dtype == dt.bool_ and shaped(v.aval).shape in (shaped(x.aval).shape, ())]
        pred = draw(st.sampled_from(preds)) if preds else Literal(draw(st.booleans()), ShapedArray((), dt.bool_))
        return b.bind(P.select_n_p, (pred, x, _pick(draw, pool, lambda a: a is x.aval)))
    if kind == "convert":
        x = _pick(draw, pool, any_aval)
        return b.bind(P.convert_element_type_p, (x,), dict(
            new_dtype=draw(st.sampled_from(_DTYPES)), weak_type=draw(st.booleans()), sharding=None))
    if kind == "reduce":
        prim, ok = draw(st.sampled_from(_REDUCE))
        x = _pick(draw, pool, lambda a: a.dtype in ok)
        axes = list(_subset(draw, shaped(x.aval).ndim))
        random.Random(draw(st.integers(0, 9))).shuffle(axes)
        params: dict[str, Any] = {"axes": tuple(axes)}
        if prim is P.reduce_sum_p:
            params["out_sharding"] = None
        return b.bind(prim, (x,), params)
    if kind == "argminmax":
        x = _pick(draw, pool, lambda a: a.dtype in _FLOATS | _INTS and a.ndim > 0)
        return b.bind(draw(st.sampled_from([P.argmax_p, P.argmin_p])), (x,), dict(
            axes=(draw(st.integers(0, shaped(x.aval).ndim - 1)),),
            index_dtype=draw(st.sampled_from([dt.int32, dt.int8]))))
    if kind == "cumulative":
        prim, ok = draw(st.sampled_from(_CUMULATIVE))
        x = _pick(draw, pool, lambda a: a.dtype in ok and a.ndim > 0)
        return b.bind(prim, (x,), dict(axis=draw(st.integers(0, shaped(x.aval).ndim - 1)),
                                       reverse=draw(st.booleans())))
    x = _pick(draw, pool, any_aval)
    a = shaped(x.aval)
    if kind == "broadcast":
        out_ndim = a.ndim + draw(st.integers(0, 2))
        dims = tuple(sorted(draw(st.sets(st.integers(0, max(out_ndim - 1, 0)), min_size=a.ndim,
                                         max_size=a.ndim)))) if out_ndim else ()
        shape = [draw(st.integers(1, 3)) for _ in range(out_ndim)]
        for i, d in enumerate(dims):
            shape[d] = a.shape[i] if a.shape[i] != 1 else draw(st.integers(1, 3))
        return b.bind(P.broadcast_in_dim_p, (x,), dict(shape=tuple(shape), broadcast_dimensions=dims,
                                                       sharding=None))
    if kind == "reshape":
        sizes: list[int] = []
        n = a.size
        while n > 1 and len(sizes) < 3:
            d = draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
            sizes.append(d)
            n //= d
        sizes.append(n)
        perm = draw(st.none() | st.permutations(range(a.ndim)).map(tuple))
        return b.bind(P.reshape_p, (x,), dict(new_sizes=tuple(sizes), dimensions=perm, sharding=None))
    if kind == "transpose":
        return b.bind(P.transpose_p, (x,), dict(permutation=tuple(draw(st.permutations(range(a.ndim))))))
    if kind == "rev":
        return b.bind(P.rev_p, (x,), dict(dimensions=_subset(draw, a.ndim)))
    if kind == "squeeze":
        ones = [i for i, d in enumerate(a.shape) if d == 1]
        return b.bind(P.squeeze_p, (x,), dict(dimensions=tuple(sorted(draw(st.sets(st.sampled_from(ones))))
                                                             if ones else ())))
    if kind == "slice":
        starts = [draw(st.integers(0, d)) for d in a.shape]
        limits = [draw(st.integers(s, d)) for s, d in zip(starts, a.shape)]
        strides = draw(st.none() | st.tuples(*[st.integers(1, 3)] * a.ndim))
        return b.bind(P.slice_p, (x,), dict(start_indices=tuple(starts), limit_indices=tuple(limits),
                                            strides=strides))
    if kind == "pad":
        config = tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2)), draw(st.integers(0, 2)))
                       for _ in a.shape)
        return b.bind(P.pad_p, (x, _same_or_scalar(draw, [v for v in pool if not shaped(v.aval).shape], x)),
                      dict(padding_config=config))
    if kind == "concatenate":
        if not a.ndim:
            raise _Skip
        dim = draw(st.integers(0, a.ndim - 1))
        others = [v for v in pool if shaped(v.aval).dtype == a.dtype and shaped(v.aval).ndim == a.ndim and all(
            p == q for i, (p, q) in enumerate(zip(shaped(v.aval).shape, a.shape)) if i != dim)]
        return b.bind(P.concatenate_p, (x, *draw(st.lists(st.sampled_from(others), max_size=3))),
                      dict(dimension=dim))
    if kind == "dot":
        y = _pick(draw, pool, lambda c: c.dtype == a.dtype and a.dtype in _NUM)
        pairs = [(i, j) for i, p in enumerate(a.shape) for j, q in enumerate(shaped(y.aval).shape) if p == q]
        chosen = draw(st.lists(st.sampled_from(pairs), unique_by=(lambda p: p[0], lambda p: p[1]),
                               max_size=3)) if pairs else []
        n_batch = draw(st.integers(0, len(chosen)))
        batch, contract = chosen[:n_batch], chosen[n_batch:]
        dn = ((tuple(i for i, _ in contract), tuple(j for _, j in contract)),
              (tuple(i for i, _ in batch), tuple(j for _, j in batch)))
        return b.bind(P.dot_general_p, (x, y), dict(
            dimension_numbers=dn, precision=None, out_sharding=None,
            preferred_element_type=draw(st.sampled_from([None, a.dtype]))))
    if kind == "iota":
        iota_shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
        return b.bind(P.iota_p, (), dict(dtype=draw(st.sampled_from([dt.int32, dt.float32, dt.uint8])),
                                          shape=iota_shape,
                                          dimension=draw(st.integers(0, len(iota_shape) - 1)),
                                          sharding=None))
    if kind == "sort":
        if not a.ndim or a.dtype not in _ORDERED:
            raise _Skip
        ops = [x, *draw(st.lists(st.sampled_from([v for v in pool if shaped(v.aval).shape == a.shape]),
                                 max_size=2))]
        keys = 1
        while keys < len(ops) and ops[keys].aval.dtype in _ORDERED and draw(st.booleans()):
            keys += 1
        return b.bind(P.sort_p, tuple(ops), dict(dimension=draw(st.integers(0, a.ndim - 1)),
                                                 is_stable=draw(st.booleans()), num_keys=keys))
    if kind in ("dynamic_slice", "dynamic_update_slice"):
        ints = [v for v in pool if shaped(v.aval).shape == () and shaped(v.aval).dtype in _INTS]
        idx = tuple(draw(st.sampled_from(ints)) if ints and draw(st.booleans())
                    else Literal(draw(st.integers(-3, 3)), ShapedArray((), dt.int32)) for _ in a.shape)
        if kind == "dynamic_slice":
            slice_sizes = tuple(draw(st.integers(0, d)) for d in a.shape)
            return b.bind(P.dynamic_slice_p, (x, *idx), dict(slice_sizes=slice_sizes))
        return b.bind(P.dynamic_update_slice_p, (x, _pick(draw, pool, lambda c: c is a), *idx))
    if kind == "clamp":
        if a.dtype not in _ORDERED:
            raise _Skip
        return b.bind(P.clamp_p, (_literal(draw, a.dtype), x, _same_or_scalar(draw, pool, x)))
    if kind == "integer_pow":
        if a.dtype not in _NUM:
            raise _Skip
        return b.bind(P.integer_pow_p, (x,), dict(y=draw(st.integers(0 if a.dtype in _INTS else -3, 3))))
    if kind == "round":
        if a.dtype not in _FLOATS:
            raise _Skip
        return b.bind(P.round_p, (x,), dict(rounding_method=draw(st.sampled_from(P.RoundingMethod))))
    if kind == "complex":
        if a.dtype != dt.float32:
            raise _Skip
        return b.bind(P.complex_p, (x, _same_or_scalar(draw, pool, x)))
    if depth > 0 or kind not in PRIMITIVES:
        raise _Skip
    prim = PRIMITIVES[kind]
    if kind == "jit":
        args = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
        callee = _build(draw, [v.aval for v in args], depth + 1)
        return b.bind(prim, tuple(args), dict(
            name=draw(st.sampled_from(["f", "inner", "<lambda>", "jaxpr", "lambda"])),
            jaxpr=ClosedJaxpr(callee), donated_invars=(False,) * len(args), keep_unused=False,
            inline=False))
    if kind == "cond":
        ints = [v for v in pool if shaped(v.aval).shape == () and shaped(v.aval).dtype == dt.int32]
        index = draw(st.sampled_from(ints)) if ints else Literal(draw(st.integers(-1, 3)), ShapedArray((), dt.int32))
        ops = draw(st.lists(st.sampled_from(pool), max_size=3))
        first = _build(draw, [v.aval for v in ops], depth + 1)
        branches = [first]
        for _ in range(draw(st.integers(0, 2))):
            other = _build(draw, [v.aval for v in ops], depth + 1,
                           [shaped(a) for a in first.out_avals])
            branches.append(draw(st.sampled_from([other, first])))
        return b.bind(prim, (index, *ops), dict(branches=tuple(map(ClosedJaxpr, branches))))
    if kind == "while":
        carry = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
        avals = [v.aval for v in carry]
        cond = _build(draw, avals, depth + 1, [ShapedArray((), dt.bool_)])
        body = _build(draw, avals, depth + 1, avals)
        return b.bind(prim, tuple(carry), dict(cond_jaxpr=ClosedJaxpr(cond), body_jaxpr=ClosedJaxpr(body),
                                               cond_nconsts=0, body_nconsts=0))
    assert kind == "scan"
    xs = [v for v in pool if shaped(v.aval).ndim and shaped(v.aval).shape[0] == a.shape[0]] if a.ndim else []
    xs = draw(st.lists(st.sampled_from(xs), max_size=2)) if xs else []
    consts = draw(st.lists(st.sampled_from(pool), max_size=2))
    carry = draw(st.lists(st.sampled_from(pool), max_size=2))
    in_avals = [v.aval for v in consts + carry] + [shaped(x.aval).update(shape=shaped(x.aval).shape[1:]) for x in xs]
    body = _build(draw, in_avals, depth + 1, [v.aval for v in carry])
    return b.bind(prim, (*consts, *carry, *xs), dict(
        jaxpr=ClosedJaxpr(body), length=a.shape[0] if xs else draw(st.integers(0, 3)),
        num_consts=len(consts), num_carry=len(carry), reverse=draw(st.booleans()),
        unroll=draw(st.sampled_from([1, 2, True]))))


def _build(draw: Draw, in_avals: Sequence[ShapedArray], depth: int = 0,
           returns: Sequence[ShapedArray] | None = None) -> Jaxpr:
    """A random program; with ``returns``, its first results have those types."""
    b = Builder()
    invars = [Var(a) for a in in_avals]
    pool = list(invars)
    for _ in range(draw(st.integers(0, 14 if depth == 0 else 4))):
        try:
            pool.extend(_emit(draw, b, pool, depth))
        except (_Skip, JaxprTypeError):  # the drawn op does not apply here
            pass
    outs: list[Any] = []
    for aval in returns or ():
        same = [v for v in pool if shaped(v.aval).strip_weak_type() is aval.strip_weak_type()]
        if same:
            outs.append(draw(st.sampled_from(same)))
        elif aval.shape == ():
            outs.append(_literal(draw, aval.dtype))
        else:
            outs.append(b.bind1(P.broadcast_in_dim_p, _literal(draw, aval.dtype), shape=aval.shape,
                                broadcast_dimensions=(), sharding=None))
    if pool and (returns is None or draw(st.booleans())):
        outs += draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    if not outs or draw(st.booleans()):
        outs.append(_literal(draw, draw(st.sampled_from(_DTYPES))))
    return b.build(invars, outs)


@st.composite
def programs(draw: Draw) -> Jaxpr:
    """Random well-typed jaxprs built with the Builder from many primitives."""
    in_avals = draw(st.lists(_avals(), min_size=1, max_size=4))
    n_const = draw(st.integers(0, min(2, len(in_avals) - 1)))
    j = _build(draw, in_avals)
    return j.replace(constvars=j.invars[:n_const], invars=j.invars[n_const:])


@given(programs())
def test_random_programs_roundtrip(j: Jaxpr) -> None:
    check_jaxpr(j)
    roundtrip(j)


def _rebuild(j: Jaxpr) -> Jaxpr:
    """The same program emitted again into a fresh Builder with fresh variables."""
    env: dict[Var, Any] = {}
    b = Builder()

    def read(a: Any) -> Any:
        return env.get(a, a) if type(a) is Var else a
    constvars = [env.setdefault(v, Var(v.aval)) for v in j.constvars]
    invars = [env.setdefault(v, Var(v.aval)) for v in j.invars]
    for eqn in j.eqns:
        outs = b.bind(eqn.primitive, tuple(map(read, eqn.invars)), dict(eqn.params))
        env.update(zip(eqn.outvars, outs))
    return b.build(invars, [read(a) for a in j.outvars], constvars)


@given(programs())
def test_rebuilt_programs_are_equal_and_duplicates_merge(j: Jaxpr) -> None:
    again = _rebuild(j)
    assert again is not j and again == j and hash(again) == hash(j)
    # Emitting every equation a second time into the same builder adds nothing.
    b = Builder()
    env = {v: v for v in j.constvars + j.invars}
    for eqn in j.eqns:
        ins = tuple(env.get(a, a) if type(a) is Var else a for a in eqn.invars)
        first = b.bind(eqn.primitive, ins, eqn.params)
        n = len(b.eqns)
        assert b.bind(eqn.primitive, ins, dict(eqn.params)) == first
        assert len(b.eqns) == n
        env.update(zip(eqn.outvars, first))


_TOKEN = re.compile(r"\([-+0-9.eEinfa]*j\)|-?(?:\d[\d.]*(?:e[-+]?\d+)?|inf|nan)j(?!\w)|-?\d[\w.+-]*|<\w+>|\w+|\S")
_SHORT_DTYPES = ["f32", "f16", "bf16", "f64", "i32", "i8", "u8", "i64", "bool", "c64"]
_LONG_DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int8", "uint8", "int64", "bool", "complex64"]
_PRIM_GROUPS = [[p.name for p, _ in _UNARY], [p.name for p, _ in _BINARY], [p.name for p, _ in _COMPARE],
                [p.name for p, _ in _REDUCE], [p.name for p, _ in _CUMULATIVE], ["argmax", "argmin"]]


def _mutants(text: str) -> Iterator[tuple[str, str]]:
    """Every one-token change of ``text`` that changes a literal, a param, a
    primitive, an operand or a dtype (never a binder's name), with its kind."""
    toks = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
    names = sorted({t for i, (_, _, t) in enumerate(toks)
                    if i + 1 < len(toks) and toks[i + 1][2] == ":" and t.isalpha() and t.islower()})
    for i, (start, end, t) in enumerate(toks):
        nxt = toks[i + 1][2] if i + 1 < len(toks) else ""
        prev = toks[i - 1][2] if i else ""
        kind = "param" if prev == "=" else "literal"
        if re.fullmatch(r"-?\d+", t):
            subs = [str(int(t) + 1)]
        elif re.fullmatch(r"-?\d[\w.+-]*", t) and not t.endswith("j"):
            v = float(t)
            subs = [repr(v + 1.0 if abs(v) < 1e15 else v * 2)]
        elif t.endswith("j") and re.fullmatch(r"\(.*\)|-?[\d.]\S*|-?infj|-?nanj", t):
            subs = ["(7+7j)" if t != "(7+7j)" else "(8+8j)"]
        elif t in ("True", "False"):
            subs = ["False" if t == "True" else "True"]
        elif t in ("inf", "nan") and nxt == ":":
            subs = ["nan" if t == "inf" else "inf"]
        elif t in _SHORT_DTYPES and nxt == "[":
            kind, subs = "dtype", [d for d in _SHORT_DTYPES if d != t]
        elif t in _LONG_DTYPES and prev == "=":
            subs = [d for d in _LONG_DTYPES if d != t]
        elif prev == "=" and t in PRIMITIVES:
            kind, subs = "primitive", [p for g in _PRIM_GROUPS if t in g for p in g if p != t]
        elif t in names and nxt not in (":", "="):
            kind, subs = "operand", [n for n in names if n != t]
        else:
            continue
        for sub in subs:
            yield kind, text[:start] + sub + text[end:]


@given(programs(), st.randoms(use_true_random=False))
def test_one_token_changes_that_parse_are_unequal(j: Jaxpr, rng: random.Random) -> None:
    text = str(j)
    mutants = [m for _, m in _mutants(text)]
    rng.shuffle(mutants)
    for m in mutants[:40]:
        assert m != text
        try:
            other = parse_jaxpr(m)
        except JaxprParseError:
            continue
        assert other != j, f"{text}\n  ~~~>\n{m}"


def test_mutants_cover_each_kind_of_token() -> None:
    text = ("{ lambda ; a:f32[3] b:i32[]. let\n    c:f32[3] = sin a\n    d:f32[3] = mul c 2.0:f32[]\n"
            "    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
            "    f:bool[3] = lt c d\n    g:f32[3] = select_n f d c\n"
            "    h:f32[3] = cumsum[axis=0 reverse=False] g\n  in (h, e, 1:i32[]) }")
    j = parse_jaxpr(text)
    kinds = set()
    for kind, m in _mutants(text):
        try:
            other = parse_jaxpr(m)
        except JaxprParseError:
            continue
        assert other != j, m
        kinds.add(kind)
    assert kinds == {"literal", "param", "dtype", "primitive", "operand"}


# -- Hash-consing ---------------------------------------------------------------

def test_builder_merges_duplicate_pure_equations() -> None:
    b = Builder()
    x = Var(ShapedArray((3,), dt.float32))
    y = b.bind1(P.sin_p, x)
    assert b.bind1(P.sin_p, x) is y and len(b.eqns) == 1
    two = Literal(2.0, ShapedArray((), dt.float32, True))
    z = b.bind1(P.mul_p, y, two)
    assert b.bind(P.mul_p, (y, Literal(2.0, ShapedArray((), dt.float32, True))), {}) == (z,)
    assert b.bind1(P.mul_p, y, Literal(2.0, ShapedArray((), dt.float32))) is not z  # a strong literal differs
    assert b.bind1(P.mul_p, two, y) is not z  # operand order matters
    s1 = b.bind(P.sort_p, (x, y), dict(dimension=0, is_stable=True, num_keys=1))
    assert b.bind(P.sort_p, (x, y), dict(dimension=0)) == s1  # defaults filled before lookup
    assert len(b.eqns) == 5


def test_builder_never_merges_effectful_equations() -> None:
    io = Effect("IO")
    prim = Primitive("_test_effectful_print", lambda x: (x,), effects_rule=lambda params: frozenset({io}))
    try:
        b = Builder()
        x = Var(ShapedArray((), dt.float32))
        y1, y2 = b.bind1(prim, x), b.bind1(prim, x)
        assert y1 is not y2 and len(b.eqns) == 2
        j = b.build([x], [y2])
        assert j.effects == frozenset({io}) and all(e.effects for e in j.eqns)
    finally:
        del PRIMITIVES["_test_effectful_print"]


def test_typing_errors_are_raised_by_the_builder() -> None:
    b = Builder()
    x = Var(ShapedArray((3,), dt.float32))
    with pytest.raises(JaxprTypeError, match="^add: expected operands of equal dtypes"):
        b.bind(P.add_p, (x, Var(ShapedArray((3,), dt.int32))))
    assert not b.eqns
