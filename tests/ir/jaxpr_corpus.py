"""Functions traced by both plait and JAX 0.10.2, for golden printer/parser tests.

Each case's function is written once against namespace parameters (``np_``
is ``plait.numpy`` or ``jax.numpy``, ``lax_`` is ``plait.lax`` or ``jax.lax``,
``jit_`` is ``plait.jit`` or ``jax.jit``), so the same source traces in both.
The oracle is ``str(jax.make_jaxpr(f)(*args))`` after merging the duplicate
pure equations JAX emits (plait hash-conses them at construction: the one
difference allowed between the two texts).

``KNOWN_DIFFERENCES`` are minimal functions where plait's *frontend* still
traces differently from JAX; they run as strict xfails so a fix shows up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
from jax._src import core as jcore

import plait
import plait.lax as plax
import plait.numpy as pjnp

Maker = Callable[[Any, Any, Any], Callable[..., Any]]


class Case(NamedTuple):
    name: str
    make: Maker
    args: tuple[Any, ...]


def f32(*shape: int) -> np.ndarray:
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)


def i32(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)


def bools(*shape: int) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 2 == 0).reshape(shape)


def typed(dtype: Any, *shape: int) -> np.ndarray:
    return np.ones(shape, dtype)


CASES: list[Case] = []
KNOWN_DIFFERENCES: list[tuple[Case, str]] = []


def case(*args: Any) -> Callable[[Maker], Maker]:
    def register(make: Maker) -> Maker:
        CASES.append(Case(make.__name__, make, args))
        return make
    return register


def known_difference(reason: str, *args: Any) -> Callable[[Maker], Maker]:
    def register(make: Maker) -> Maker:
        KNOWN_DIFFERENCES.append((Case(make.__name__, make, args), reason))
        return make
    return register


def trace_plait(c: Case) -> plait.ir.ClosedJaxpr:
    return plait.make_jaxpr(c.make(pjnp, plax, plait.jit))(*c.args)


def trace_jax(c: Case) -> Any:
    """JAX's jaxpr for ``c``, its NumPy integer params made Python ints (see
    :func:`plain_jaxpr`)."""
    closed = jax.make_jaxpr(c.make(jjnp, jax.lax, jax.jit))(*c.args)
    return closed.replace(jaxpr=plain_jaxpr(closed.jaxpr))


def _plain(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if type(v) is tuple:  # (not NamedTuples such as dimension numbers)
        return tuple(_plain(x) for x in v)
    return v


def plain_jaxpr(j: Any) -> Any:
    """JAX's jaxpr ``j`` with NumPy integers in params made Python ints: JAX prints those
    that ``jnp`` computed with NumPy (``split``'s sizes) as ``np.int64(2)``; plait's
    params hold Python ints, which print ``2``.  (An ``ffi_call``'s attributes keep their
    types in both: they are what its handler receives.)"""
    return j.replace(eqns=[e.replace(params={k: v if k == "attributes" else _plain(v)
                                             for k, v in e.params.items()})
                           for e in j.eqns])


# -- The oracle: JAX's jaxpr with duplicate pure equations merged ------------

def _atom_key(a: Any) -> Any:
    if isinstance(a, jcore.Literal):
        return ("lit", str(np.asarray(a.val).item()), a.aval)
    return ("var", id(a))


def _param_key(v: Any, memo: dict[int, Any]) -> Any:
    if isinstance(v, jcore.ClosedJaxpr):
        return ("jaxpr", id(merge_duplicates(v, memo).jaxpr))
    if isinstance(v, tuple):
        return tuple(_param_key(x, memo) for x in v)
    return repr(v)


def merge_duplicates(closed: Any, memo: dict[int, Any] | None = None) -> Any:
    """``closed`` (a JAX ClosedJaxpr) with each repeated pure equation
    ``(primitive, inputs, params)`` replaced by its first occurrence,
    recursively in nested jaxprs (a nested jaxpr object maps to one merged
    object, so JAX's shared ``let`` jaxprs stay shared)."""
    memo = {} if memo is None else memo
    if id(closed) in memo:
        return memo[id(closed)]
    jaxpr = closed.jaxpr
    subst: dict[Any, Any] = {}
    seen: dict[Any, list[Any]] = {}
    eqns = []
    for eqn in jaxpr.eqns:
        invars = [subst.get(a, a) if isinstance(a, jcore.Var) else a for a in eqn.invars]
        params = {k: merge_duplicates(v, memo) if isinstance(v, jcore.ClosedJaxpr) else v
                  for k, v in eqn.params.items()}
        key = (eqn.primitive, tuple(map(_atom_key, invars)),
               tuple(sorted((k, _param_key(v, memo)) for k, v in eqn.params.items())))
        if not eqn.effects and key in seen:
            subst.update(zip(eqn.outvars, seen[key]))
            continue
        seen[key] = eqn.outvars
        eqns.append(eqn.replace(invars=invars, params=params))
    outvars = [subst.get(a, a) if isinstance(a, jcore.Var) else a for a in jaxpr.outvars]
    merged = jcore.ClosedJaxpr(jaxpr.replace(eqns=eqns, outvars=outvars), closed.consts)
    memo[id(closed)] = merged
    return merged


def jax_oracle_text(c: Case) -> tuple[str, str]:
    """JAX's text for ``c``, as printed and with duplicate equations merged."""
    closed = trace_jax(c)
    return str(closed), str(merge_duplicates(closed))


# -- Seed 000 (jaxpr.rst) ------------------------------------------------------

@case(np.zeros(8, np.float32), np.ones(8, np.float32))
def func1(np_, lax_, jit_):
    def func1(first, second):
        temp = first + np_.sin(second) * 3.
        return np_.sum(temp)
    return func1


@case(np.zeros(8, np.float32), np.ones(8, np.float32))
def func3(np_, lax_, jit_):
    def func2(inner, first, second):
        temp = first + inner(second) * 3.
        return np_.sum(temp)

    def inner(second):
        if second.shape[0] > 4:
            return np_.sin(second)
        raise AssertionError("unreachable: the traced branch returns")

    def func3(first, second):
        return func2(inner, first, second)
    return func3


@case((np.zeros(8, np.float32), np.ones(8, np.float32)))
def func4(np_, lax_, jit_):
    def func4(arg):  # arg is a pair
        temp = arg[0] + np_.sin(arg[1]) * 3.
        return np_.sum(temp)
    return func4


@case(np.ones(8, np.float32))
def func6(np_, lax_, jit_):
    def func5(first, second):
        return first + np_.sin(second) * 3. - np_.ones(8)

    def func6(first):
        return func5(first, np_.ones(8))
    return func6


_CONST = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@case(f32(2, 3))
def closure_constvar(np_, lax_, jit_):
    return lambda x: x * _CONST + 1.0


@case(f32(3))
def closure_two_constvars(np_, lax_, jit_):
    return lambda x: (x + np.array([1.0, 2.0, 3.0], np.float32)) * np.float32(2) - np_.array([3.0, 2.0, 1.0])


# -- Seed 001 (custom interpreters) --------------------------------------------

@case(5)
def foo(np_, lax_, jit_):
    return lambda x: x + 1


@case(np.ones((5, 10), np.float32), np.ones(5, np.float32), np.ones(10, np.float32))
def bar(np_, lax_, jit_):
    return lambda w, b, x: (np_.dot(w, x) + b + np_.ones(5), x)


@case(np.ones(5, np.float32))
def exp_tanh(np_, lax_, jit_):
    return lambda x: np_.exp(np_.tanh(x))


# -- numpy-level functions -----------------------------------------------------

@case(f32(3), f32(3))
def elementwise_math(np_, lax_, jit_):
    return lambda x, y: np_.exp(x) * np_.tanh(y) - np_.log(x) / np_.sqrt(y) + np_.cos(x) ** 2


@case(f32(3))
def unary_math(np_, lax_, jit_):
    return lambda x: (np_.abs(x), -x, np_.sign(x), np_.floor(x), np_.ceil(x), np_.expm1(x),
                      np_.log1p(x), np_.tan(x), np_.arcsin(x), np_.arccos(x), np_.arctan(x),
                      np_.sinh(x), np_.cosh(x), np_.arcsinh(x), lax_.acosh(x), np_.arctanh(x),
                      lax_.rsqrt(x), np_.cbrt(x), lax_.logistic(x), lax_.is_finite(x),
                      lax_.round(x), lax_.exp2(x), x ** 3, np_.log2(x), np_.isnan(x))


@case(f32(3), f32(3))
def binary_math(np_, lax_, jit_):
    return lambda x, y: (np_.maximum(x, y), np_.minimum(x, y), np_.arctan2(x, y), lax_.pow(x, y),
                         lax_.rem(x, y), lax_.nextafter(x, y), np_.power(x, y), np_.power(x, 2),
                         x ** 0.5, np_.reciprocal(x))


@case(f32(2, 3), f32(3))
def broadcasting(np_, lax_, jit_):
    return lambda x, y: x + y


@case(f32(2, 1), f32(1, 3))
def broadcasting_both(np_, lax_, jit_):
    return lambda x, y: x * y


@case(f32(4))
def weak_add_int(np_, lax_, jit_):
    return lambda x: x + 2


@case(typed(np.float16, 3))
def f16_times_float(np_, lax_, jit_):
    return lambda x: x * 3.0


@case(i32(3))
def sin_of_int(np_, lax_, jit_):
    return lambda x: np_.sin(x)


@case(f32(3), f32(3))
def comparisons(np_, lax_, jit_):
    return lambda x, y: (x < y, x >= y, x == y, x != 1.0, np_.logical_and(x > 0, y <= 2),
                         np_.equal(x, y), np_.greater(x, 1), np_.less_equal(x, y))


@case(f32(2, 3, 4))
def reductions_axes(np_, lax_, jit_):
    return lambda x: (np_.sum(x, axis=(0, 2)), np_.max(x, axis=1), np_.min(x), np_.prod(x, axis=-1),
                      np_.mean(x, axis=0), np_.max(x, axis=1, keepdims=True),
                      np_.argmax(x, axis=1), np_.argmin(x))


@case(bools(2, 3))
def bool_reductions(np_, lax_, jit_):
    return lambda x: (np_.any(x), np_.all(x, axis=0), np_.sum(x))


@case(f32(2, 3))
def numpy_manipulation(np_, lax_, jit_):
    return lambda x: (np_.transpose(x), np_.reshape(x, (3, 2)), np_.expand_dims(x, 1), np_.ravel(x),
                      x.T, np_.swapaxes(x, 0, 1), np_.broadcast_to(x, (4, 2, 3)),
                      np_.moveaxis(x, 0, 1), np_.concatenate([x, x], axis=1))


@case(f32(4, 3))
def numpy_indexing(np_, lax_, jit_):
    return lambda x: (x[0], x[1:3], x[None], x[:, 1], x[-1])


@case(f32(2, 3))
def creation(np_, lax_, jit_):
    return lambda x: (np_.zeros_like(x), np_.ones_like(x), np_.full((2,), 3.0),
                      np_.zeros((2, 2), np_.int32), np_.arange(6), lax_.iota(np_.int32, 5),
                      lax_.broadcasted_iota(np_.float32, (2, 3), 1))


@case(i32(3), f32(3))
def promotion_int_float(np_, lax_, jit_):
    return lambda i, x: (i + x, i / 2, i * 2.5, x + np.float32(1))


@case(typed(np.uint8, 3), typed(np.int8, 3), typed(np.float16, 3))
def promotion_small_types(np_, lax_, jit_):
    return lambda u, s, h: (u + s, s + h, u * h, h + 1, u + 200)


@case(bools(3), i32(3))
def promotion_bool_int(np_, lax_, jit_):
    return lambda b, i: (b + i, b * 2, np_.logical_not(b))


@case(np.ones(3, np.float64), np.ones(3, np.int64))
def x64_inputs_canonicalized(np_, lax_, jit_):
    return lambda x, i: (x * 2, i + 1, x + i)


@case(f32(3), np.float32(2.0))
def scalar_argument(np_, lax_, jit_):
    return lambda x, s: x * s + s


@case(5.0, 3)
def python_scalar_arguments(np_, lax_, jit_):
    return lambda x, n: (x * 2, n + 1, x * n, n * 2.0, n / 2)


@case(True)
def bool_scalar_argument(np_, lax_, jit_):
    return lambda b: (b & True, np_.logical_not(b))


@case(i32(3), i32(3))
def int_ops(np_, lax_, jit_):
    return lambda x, y: (x & y, x | y, x ^ y, ~x, x + y * 2, -x, x / y, np_.sign(x), np_.abs(x))


@case(bools(3), bools(3))
def bool_ops(np_, lax_, jit_):
    return lambda x, y: (x & y, x | y, ~x, np_.logical_xor(x, y))


@case(typed(np.complex64, 3))
def complex_ops(np_, lax_, jit_):
    return lambda z: (np_.real(z), np_.imag(z), np_.abs(z), z * 2)


@case(f32(2, 3))
def astype(np_, lax_, jit_):
    return lambda x: (x.astype(np_.int32), x.astype(bool), x.astype(np_.float32), x.astype(np_.uint8))


@case(f32(3, 4), f32(4, 5))
def matmul(np_, lax_, jit_):
    return lambda a, b: (a @ b, np_.dot(a, b), np_.matmul(a, b))


@case(f32(3, 4), f32(4))
def vector_products(np_, lax_, jit_):
    return lambda a, v: (np_.dot(v, v), np_.inner(v, v), np_.tensordot(a, v, axes=1))


@case(f32(3))
def python_control_flow(np_, lax_, jit_):
    def f(x):
        for i in range(3):
            x = x * 2.0 if i % 2 else np_.sin(x)
        return x
    return f


@case({"a": f32(2), "b": (f32(3), f32(3))})
def pytree_argument(np_, lax_, jit_):
    return lambda d: {"s": np_.sum(d["a"]), "t": d["b"][0] * d["b"][1]}


# -- Literals ------------------------------------------------------------------

@case(typed(np.float16, 3))
def f16_literals(np_, lax_, jit_):
    return lambda x: (x * 0.1, x - 1e-8, x + 65504.0)


@case(typed(ml_dtypes.bfloat16, 3))
def bf16_literals(np_, lax_, jit_):
    return lambda x: (x * 0.1, x + 3.0)


@case(f32(3))
def f32_special_literals(np_, lax_, jit_):
    return lambda x: (x * float("inf"), x + float("nan"), x * -0.0, x - float("inf"), x + 0.5,
                      lax_.mul(x, 0.1), lax_.add(x, 1e20))


@case(typed(np.uint8, 3), typed(np.int8, 3))
def small_int_literals(np_, lax_, jit_):
    return lambda x, y: (x + 255, y * -3, x > 7)


@case(bools(3))
def bool_literals(np_, lax_, jit_):
    return lambda x: (x & True, x | False)


@case(typed(np.complex64, 3))
def complex_literals(np_, lax_, jit_):
    return lambda z: (z * 1j, z + (1.5 - 2j), z * 0.5, z - 1e-5j)


# -- lax-level functions -------------------------------------------------------

@case(f32(2, 3, 4))
def lax_reductions(np_, lax_, jit_):
    return lambda x: (lax_.reduce_sum(x, (1,)), lax_.reduce_max(x, (0, 2)), lax_.argmax(x, 1, np_.int32),
                      lax_.reduce_prod(x, (0,)), lax_.reduce_min(x, (1,)), lax_.argmin(x, 0, np_.int32))


@case(bools(3, 4), i32(3, 4))
def lax_bool_int_reductions(np_, lax_, jit_):
    return lambda b, i: (lax_.reduce_and(b, (1,)), lax_.reduce_or(b, (0,)), lax_.reduce_xor(i, (1,)),
                         lax_.reduce_max(i, (0, 1)))


@case(f32(2, 3, 4))
def lax_structural(np_, lax_, jit_):
    return lambda x: (lax_.reshape(x, (6, 4)), lax_.transpose(x, (2, 0, 1)),
                      lax_.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), lax_.rev(x, (1,)),
                      lax_.squeeze(lax_.slice(x, (0, 0, 0), (1, 3, 4)), (0,)),
                      lax_.reshape(x, (4, 6), (2, 1, 0)))


@case(f32(2, 3))
def lax_broadcasting(np_, lax_, jit_):
    return lambda x: (lax_.broadcast_in_dim(x, (4, 2, 3), (1, 2)), lax_.broadcast(x, (5,)),
                      lax_.expand_dims(x, (0,)), lax_.full((2, 3), 1.5), lax_.full((4,), 2, np_.int32),
                      lax_.broadcast(1.0, (3,)))


@case(f32(2, 3), f32(2, 3))
def lax_elementwise(np_, lax_, jit_):
    return lambda x, y: (lax_.add(x, y), lax_.sub(x, 1.0), lax_.mul(2.0, y), lax_.div(x, y),
                         lax_.max(x, y), lax_.min(x, 0.5), lax_.atan2(x, y), lax_.pow(x, 2.0),
                         lax_.expm1(x), lax_.log1p(x), lax_.tan(x))


@case(i32(2, 3))
def lax_int_elementwise(np_, lax_, jit_):
    return lambda i: (lax_.rem(i, 3), lax_.div(i, 2), lax_.bitwise_and(i, 7), lax_.bitwise_not(i),
                      lax_.neg(i), lax_.sign(i), lax_.integer_pow(i, 3),
                      lax_.convert_element_type(i, np_.float32))


@case(f32(3))
def lax_integer_pow(np_, lax_, jit_):
    return lambda x: (lax_.integer_pow(x, 3), lax_.integer_pow(x, -2), x * x)


@case(f32(2, 3), f32(2, 3))
def lax_select_clamp(np_, lax_, jit_):
    return lambda x, y: (lax_.select(x > y, x, y),
                         lax_.select_n(lax_.convert_element_type(x > 0, np_.int32), x, y),
                         lax_.clamp(0.0, x, 1.0))


@case(f32(3), f32(3))
def lax_comparisons(np_, lax_, jit_):
    return lambda x, y: (lax_.eq(x, y), lax_.ne(x, 0.0), lax_.lt(x, y), lax_.le(x, y), lax_.gt(x, y),
                         lax_.ge(x, 1.0))


@case(f32(3), f32(3))
def lax_complex(np_, lax_, jit_):
    return lambda x, y: (lax_.complex(x, y), lax_.real(lax_.complex(x, y)), lax_.imag(lax_.complex(x, y)))


@case(f32(2, 3))
def lax_rounding(np_, lax_, jit_):
    return lambda x: (lax_.round(x), lax_.round(x, lax_.RoundingMethod.TO_NEAREST_EVEN), lax_.floor(x),
                      lax_.ceil(x))


@case(f32(3))
def lax_convert(np_, lax_, jit_):
    return lambda x: (lax_.convert_element_type(x, np_.int32), lax_.convert_element_type(x, np_.float16),
                      lax_.convert_element_type(x, np_.bool_), lax_.convert_element_type(x, np_.int8))


@case(f32(3, 4), f32(4, 5))
def lax_dot(np_, lax_, jit_):
    return lambda a, b: (lax_.dot(a, b),
                         lax_.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np_.float32))


@case(f32(2, 3, 4), f32(2, 4, 5))
def lax_batched_dot(np_, lax_, jit_):
    return lambda a, b: lax_.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))


@case(typed(np.int8, 2, 3), typed(np.int8, 3, 4))
def lax_dot_int8_to_int32(np_, lax_, jit_):
    return lambda a, b: lax_.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np_.int32)


@case(f32(3, 4))
def lax_pad(np_, lax_, jit_):
    return lambda x: (lax_.pad(x, 0.0, ((1, 2, 0), (0, -1, 1))), lax_.pad(x, np.float32(-1), ((0, 0, 2), (1, 1, 0))))


@case(f32(3, 4), i32(3, 4))
def lax_sort(np_, lax_, jit_):
    return lambda x, y: (lax_.sort(x), lax_.sort((x, y), dimension=0, num_keys=1),
                         lax_.sort(x, is_stable=False), lax_.sort_key_val(x, y),
                         lax_.sort((y, x), num_keys=2))


@case(f32(3), f32(3))
def sort_unused_result(np_, lax_, jit_):
    return lambda x, y: lax_.sort((x, y), num_keys=1)[1]


@case(f32(3, 4))
def lax_cumulative(np_, lax_, jit_):
    return lambda x: (lax_.cumsum(x, axis=1), lax_.cumprod(x, axis=0, reverse=True), lax_.cummax(x, axis=1),
                      lax_.cummin(x, axis=0), lax_.cumsum(x, axis=1, reverse=True))


@case(f32(5, 6), f32(2, 3))
def lax_dynamic_slicing_static_indices(np_, lax_, jit_):
    return lambda x, u: (lax_.dynamic_slice(x, (1, 2), (2, 3)), lax_.dynamic_update_slice(x, u, (0, 3)),
                         lax_.dynamic_slice_in_dim(x, 1, 2, axis=1),
                         lax_.dynamic_update_slice_in_dim(x, u[:1], 2, axis=0))


@case(f32(4, 5))
def lax_slicing_helpers(np_, lax_, jit_):
    return lambda x: (lax_.slice_in_dim(x, 1, 3, axis=1), lax_.collapse(x, 0, 2),
                      lax_.squeeze(lax_.expand_dims(x, (0,)), (0,)))


@case(*[f32(3)] * 12)
def many_inputs_wrap(np_, lax_, jit_):
    return lambda *xs: lax_.concatenate(xs, 0)


@case(*[f32(2)] * 40)
def very_many_inputs_wrap(np_, lax_, jit_):
    return lambda *xs: (lax_.concatenate(xs, 0), lax_.concatenate(xs[::-1], 0))


@case(*[f32(2, 3)] * 9)
def many_binders_wrap(np_, lax_, jit_):
    return lambda *xs: lax_.sort(xs, dimension=1, num_keys=3)


@case(f32(3))
def long_outputs_wrap(np_, lax_, jit_):
    return lambda x: tuple(np_.sin(x) + i for i in range(30))


@case(f32(1000, 2000), f32(2000, 3000))
def long_types_wrap(np_, lax_, jit_):
    return lambda a, b: (a @ b, lax_.transpose(a, (1, 0)), a[:, :1500])


# -- jit -----------------------------------------------------------------------

@case(f32(3))
def jit_shared_callee(np_, lax_, jit_):
    def inner(a, b):
        return np_.sin(a) * b
    return lambda x: jit_(inner)(x, x) + jit_(inner)(x, 2 * x)


@case(f32(3))
def jit_unused_output(np_, lax_, jit_):
    return lambda x: jit_(lambda y: (y, np_.sin(y)))(x)[1]


@case(f32(3))
def jit_nested(np_, lax_, jit_):
    def inner(a, b):
        return np_.sin(a) * b

    def outer(y):
        return jit_(inner)(y, y) * 2
    return jit_(outer)


@case(f32(3))
def jit_long_callee_shared(np_, lax_, jit_):
    def body(y):
        for i in range(12):
            y = np_.sin(y) + i
        return y
    return lambda x: jit_(body)(x) * 2


# -- Control flow ----------------------------------------------------------------

@case(f32(3))
def cond(np_, lax_, jit_):
    return lambda x: lax_.cond(x[0] > 0, np_.sin, np_.cos, x)


@case(f32(3))
def cond_with_constant(np_, lax_, jit_):
    return lambda x: lax_.cond(x[0] > 0, lambda y: y + np.arange(3, dtype=np.float32), lambda y: y, x)


@case(f32(3))
def while_loop(np_, lax_, jit_):
    return lambda x: lax_.while_loop(lambda c: c[0] < 10.0, lambda c: c * 2.0, x)


@case(f32(3))
def while_loop_closure(np_, lax_, jit_):
    return lambda x: lax_.while_loop(lambda c: c[0] < x[1], lambda c: c + x, x)


@case(f32(3), np.int32(4))
def fori_loop_traced_bound(np_, lax_, jit_):
    return lambda x, n: lax_.fori_loop(0, n, lambda i, c: c + i, x)


@case(f32(3))
def fori_loop_static_bound(np_, lax_, jit_):
    return lambda x: lax_.fori_loop(0, 3, lambda i, c: c * 2.0, x)


@case(f32(4, 3))
def scan(np_, lax_, jit_):
    return lambda xs: (lax_.scan(lambda c, x: (c + x, np_.sin(c)), np_.zeros(3), xs),
                       lax_.scan(lambda c, x: (c * x, c), np_.ones(3), xs, reverse=True))


@case(f32(4, 3))
def lax_map(np_, lax_, jit_):
    return lambda xs: lax_.map(np_.sin, xs)


@case(np.int32(1), f32(3))
def switch_index(np_, lax_, jit_):
    return lambda i, x: lax_.switch(i, [np_.sin, np_.cos, lambda y: y * 2.0], x)


def _long(c):
    for i in range(11):
        c = c * 1.5 + i
    return c


@case(f32(3))
def while_long_bodies(np_, lax_, jit_):
    # Bodies long enough to be printed once as shared ``let`` jaxprs: JAX names
    # cond_jaxpr before body_jaxpr (its bind order).
    return lambda x: lax_.while_loop(lambda c: _long(c)[0] < 10.0, _long, x)


# -- Where plait's frontend differs from JAX (strict xfails) ------------------

@case(f32(3))
def f32_literal_rounding(np_, lax_, jit_):
    # numpy-level ops round a Python float to float32 (0.10000000149011612:f32[]); lax and
    # fill values keep it exact.
    return lambda x: (x * 0.1, np_.log10(x), np_.deg2rad(x), 0.3 - x, x > 0.7, x ** 2.2,
                      np_.maximum(x, 1.67), lax_.mul(x, 0.1), lax_.add(x, 1e-8),
                      np_.full(2, 0.1), np_.full_like(x, 0.7))


@case(f32(5, 6), np.int32(1))
def dynamic_slice_traced_index(np_, lax_, jit_):
    return lambda x, i: (lax_.dynamic_slice(x, (i, 2), (2, 3)),
                         lax_.dynamic_update_slice(x, x[:2, :3], (i, 0)))


@case(f32(3))
def square_primitive(np_, lax_, jit_):
    return lambda x: (lax_.square(x), np_.square(x))


@case(typed(np.complex64, 3))
def conj_input_dtype(np_, lax_, jit_):
    return lambda z: (np_.conj(z), lax_.conj(z), np_.vdot(z, z))


@case(f32(3), i32(3))
def array_of_traced_elements(np_, lax_, jit_):
    # JAX's jnp.array of a list holding tracers: a leading axis for each element, then
    # concatenations (in a tree of 16 for long lists).
    return lambda x, i: (np_.array([x[0], x[1], 2.0]), np_.array([[x, x], [x, x * 2]]),
                         np_.array([i[0], 3, i[2]]), np_.array([x[k % 3] for k in range(20)]),
                         np_.asarray((x[0], x[1]), np_.int32))


@case(f32(3), i32(3))
def weak_scalar_constants_fold(np_, lax_, jit_):
    # A weakly typed scalar Array joining a strong operand: its conversion is folded into
    # the literal, as JAX folds it.
    return lambda x, i: (np_.array(0.1) + x, x * np_.asarray(2), np_.float32(3) - x,
                         i + np_.array(7), x.astype(np_.int32) + np_.array(True))


@case(f32(5, 3))
def strided_index_limit(np_, lax_, jit_):
    # JAX's bounds: the limit at the stop (not at the last element taken), and its start of
    # a reversed strided slice.
    return lambda x: (x[::2], x[1::2], x[1:4:2], x[::-2], x[3:0:-2], x[4:1], x[1:3:-1],
                      x[::-1, ::2], x[-2:])


@case(f32(3, 4), f32(4))
def matvec(np_, lax_, jit_):
    return lambda a, v: a @ v


@case(f32(4), f32(2, 3))
def outer(np_, lax_, jit_):
    return lambda v, m: (np_.outer(v, v), np_.outer(m, v))


@case(f32(4, 5))
def index_in_dim_strides(np_, lax_, jit_):
    return lambda x: lax_.index_in_dim(x, 2, axis=0, keepdims=False)


@case(f32(3))
def convert_python_scalar(np_, lax_, jit_):
    return lambda x: (x, lax_.convert_element_type(2.0, np_.float32))


@case(f32(3))
def arange_float(np_, lax_, jit_):
    return lambda x: x + np_.arange(1.0, 4.0)


@case(f32(3))
def eye(np_, lax_, jit_):
    # JAX adds the diagonal offset even when it is 0 (add f 0:i32[]).
    return lambda x: (x, np_.eye(3), np_.eye(2, 4, k=-1), np_.identity(2, np_.int32))


@case(f32(6))
def split_tile_stack(np_, lax_, jit_):
    return lambda x: (np_.split(x, 3), np_.tile(x, 2), np_.stack([x, x]))


@known_difference("jnp functions JAX wraps in a nested jit (where, clip, arccosh, cumsum, flip, "
                  "round, ...): plait inlines them", f32(3))
def jnp_nested_jit(np_, lax_, jit_):
    return lambda x: (np_.where(x > 0, x, 0.0), np_.clip(x, 0.0, 1.0), np_.arccosh(x), np_.cumsum(x))


@case(typed(np.uint8, 3))
def uint8_overflowing_literal(np_, lax_, jit_):
    return lambda u: u + 300
