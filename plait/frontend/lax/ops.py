"""Thin wrappers over the non-indexing primitives, with ``jax.lax``'s signatures.

Unlike :mod:`plait.numpy`, these do no implicit promotion between arrays:
operands must share a dtype.  Python scalars are accepted and take the
dtype of the array operands, weakly typed, as in JAX.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any, Protocol, overload

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import scalar_literal, value_aval
from plait.frontend.core.promotion import dtype_and_weak
from plait.frontend.core.tracing import bind1, bind_n
from plait.frontend.core.tree_util import tree_map
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray
from plait.ir.config import values as _config
from plait.ir.dims import as_dims, broadcast_dims, is_symbolic
from plait.ir.errors import ArgumentError
from plait.ir.primitive import Primitive
from plait.ir.primitives import RoundingMethod
from plait.ir.primitives.linalg import PrecisionParam, as_dot_algorithm
from plait.ir.sharding import NamedSharding, PartitionSpec, type_sharding_of

__all__ = [
    "neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log", "log1p",
    "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "bitwise_not", "add", "sub",
    "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "bitwise_and",
    "bitwise_or", "bitwise_xor", "integer_pow", "eq", "ne", "lt", "le", "gt", "ge",
    "select_n", "select", "clamp", "convert_element_type", "reduce_sum", "reduce_prod",
    "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin",
    "broadcast_in_dim", "broadcast", "broadcast_shapes", "broadcast_to_rank", "batch_matmul",
    "reshape", "transpose", "squeeze", "expand_dims",
    "concatenate", "pad", "slice", "dynamic_slice", "dynamic_update_slice", "rev", "iota", "empty",
    "broadcasted_iota", "dot_general", "dot", "cumsum", "cumprod", "cummax", "cummin", "sort",
    "cumlogsumexp", "split", "stack", "unstack", "tile", "sort_key_val", "full", "full_like",
    "square", "reciprocal", "RoundingMethod", "copy", "dynamic_index_in_dim", "index_in_dim",
    "slice_in_dim", "dynamic_slice_in_dim",
    "dynamic_update_slice_in_dim", "collapse", "real", "imag", "conj", "complex",
    "erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "zeta", "bessel_i0e",
    "bessel_i1e", "igamma", "igammac", "igamma_grad_a", "betainc",
    "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "population_count", "clz",
    "stop_gradient", "stage",
]


def _aval(x: Any) -> Any:
    # Only plait's own values: other libraries' arrays (jax's) have an ``aval`` too.
    return x.aval if isinstance(x, Array) or type(x) is Literal else None


def _operands(name: str, *args: Any) -> list[Any]:
    """Give Python scalars the dtype of the array operands (weakly)."""
    dtype = None
    for a in args:
        av = _aval(a)
        if av is not None:
            dtype = av.dtype
            break
        if isinstance(a, np.ndarray | np.generic):
            dtype = dt.canonicalize(a.dtype)
            break
    out = []
    for a in args:
        if isinstance(a, bool | int | float | builtins.complex) and not isinstance(a, np.generic):
            out.append(scalar_literal(a, dtype) if dtype is not None else scalar_literal(a))
        else:
            out.append(a)
    return out


class _UnaryOp(Protocol):
    def __call__(self, x: Any, **params: Any) -> Array: ...


class _BinaryOp(Protocol):
    def __call__(self, x: Any, y: Any) -> Array: ...


class _CumulativeOp(Protocol):
    def __call__(self, operand: Any, axis: int = 0, reverse: bool = False) -> Array: ...


def _unary(prim: Primitive) -> _UnaryOp:
    def op(x: Any, **params: Any) -> Array:
        return bind1(prim, *_operands(prim.name, x), **params)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise ``{prim.name}`` (the ``{prim.name}`` primitive)."
    return op


def _binary(prim: Primitive) -> _BinaryOp:
    def op(x: Any, y: Any) -> Array:
        return bind1(prim, *_operands(prim.name, x, y))
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise ``{prim.name}`` of two operands of one dtype."
    return op


neg = _unary(P.neg_p)
sign = _unary(P.sign_p)
floor = _unary(P.floor_p)
ceil = _unary(P.ceil_p)
is_finite = _unary(P.is_finite_p)
exp = _unary(P.exp_p)
exp2 = _unary(P.exp2_p)
log = _unary(P.log_p)
log1p = _unary(P.log1p_p)
expm1 = _unary(P.expm1_p)
tanh = _unary(P.tanh_p)
logistic = _unary(P.logistic_p)
sin = _unary(P.sin_p)
cos = _unary(P.cos_p)
tan = _unary(P.tan_p)
erf = _unary(P.erf_p)
erfc = _unary(P.erfc_p)
erf_inv = _unary(P.erf_inv_p)
lgamma = _unary(P.lgamma_p)
digamma = _unary(P.digamma_p)
bessel_i0e = _unary(P.bessel_i0e_p)
bessel_i1e = _unary(P.bessel_i1e_p)
population_count = _unary(P.population_count_p)
clz = _unary(P.clz_p)


def stop_gradient(x: Any) -> Any:
    """``x`` (any pytree of arrays), as a constant to differentiation: its derivative is
    zero.  Integer and boolean leaves pass through unchanged."""
    def leaf(v: Any) -> Any:
        aval = _aval(v)
        d = aval.dtype if aval is not None else dt.canonicalize(np.result_type(v))
        return bind1(P.stop_gradient_p, v) if dt.is_inexact(d) else v
    return tree_map(leaf, x)
asin = _unary(P.asin_p)
acos = _unary(P.acos_p)
atan = _unary(P.atan_p)
sinh = _unary(P.sinh_p)
cosh = _unary(P.cosh_p)
asinh = _unary(P.asinh_p)
acosh = _unary(P.acosh_p)
atanh = _unary(P.atanh_p)
sqrt = _unary(P.sqrt_p)
rsqrt = _unary(P.rsqrt_p)
cbrt = _unary(P.cbrt_p)
abs = _unary(P.abs_p)
bitwise_not = _unary(P.not_p)
copy = _unary(P.copy_p)
real = _unary(P.real_p)
imag = _unary(P.imag_p)


def conj(x: Any) -> Array:
    """Elementwise ``conj`` (the ``conj`` primitive, ``input_dtype`` the operand's)."""
    operand, = _operands("conj", x)
    av = _aval(operand)
    d = av.dtype if av is not None else dt.canonicalize(np.asarray(operand).dtype)
    return bind1(P.conj_p, operand, input_dtype=d)

add = _binary(P.add_p)
sub = _binary(P.sub_p)
div = _binary(P.div_p)
rem = _binary(P.rem_p)
pow = _binary(P.pow_p)
max = _binary(P.max_p)
min = _binary(P.min_p)
atan2 = _binary(P.atan2_p)
shift_left = _binary(P.shift_left_p)
shift_right_arithmetic = _binary(P.shift_right_arithmetic_p)
shift_right_logical = _binary(P.shift_right_logical_p)


# (JAX's parameter names, which callers pass by keyword.)
def nextafter(x1: Any, x2: Any) -> Array:
    """The next representable value after ``x1`` in the direction of ``x2``."""
    return bind1(P.nextafter_p, *_operands("nextafter", x1, x2))


def polygamma(m: Any, x: Any) -> Array:
    """The ``m``-th derivative of the digamma function at ``x``."""
    return bind1(P.polygamma_p, *_operands("polygamma", m, x))


def zeta(x: Any, q: Any) -> Array:
    """The Hurwitz zeta function ``sum((n + q) ** -x)``."""
    return bind1(P.zeta_p, *_operands("zeta", x, q))


def igamma(a: Any, x: Any) -> Array:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    return bind1(P.igamma_p, *_operands("igamma", a, x))


def igammac(a: Any, x: Any) -> Array:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return bind1(P.igammac_p, *_operands("igammac", a, x))


def igamma_grad_a(a: Any, x: Any) -> Array:
    """The derivative of ``igamma(a, x)`` with respect to ``a``."""
    return bind1(P.igamma_grad_a_p, *_operands("igamma_grad_a", a, x))


def betainc(a: Any, b: Any, x: Any) -> Array:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    return bind1(P.regularized_incomplete_beta_p, *_operands("betainc", a, b, x))
complex = _binary(P.complex_p)
bitwise_and = _binary(P.and_p)
bitwise_or = _binary(P.or_p)
bitwise_xor = _binary(P.xor_p)
eq = _binary(P.eq_p)
ne = _binary(P.ne_p)
lt = _binary(P.lt_p)
le = _binary(P.le_p)
gt = _binary(P.gt_p)
ge = _binary(P.ge_p)


def mul(x: Any, y: Any, *, out_dtype: Any = None) -> Array:
    """Elementwise product of two operands of one dtype; with ``out_dtype``, computed in
    that dtype (the operands converted to it)."""
    if out_dtype is None:
        return bind1(P.mul_p, *_operands("mul", x, y))
    return bind1(P.mul_p, *_operands("mul", x, y), out_dtype=dt.canonicalize(out_dtype))


def round(x: Any, rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO) -> Array:
    """Round to the nearest integer; ties away from zero (or to even)."""
    return bind1(P.round_p, x, rounding_method=RoundingMethod(rounding_method))


def integer_pow(x: Any, y: int) -> Array:
    """``x ** y`` for a static integer ``y``."""
    return bind1(P.integer_pow_p, x, y=int(y))


def square(x: Any) -> Array:
    """``x * x`` (the ``square`` primitive, as in JAX)."""
    return bind1(P.square_p, x)


def reciprocal(x: Any) -> Array:
    """``1 / x``."""
    return integer_pow(x, -1)


def select_n(which: Any, *cases: Any) -> Array:
    """``cases[which]`` elementwise; ``which`` is bool (two cases) or int."""
    return bind1(P.select_n_p, which, *_operands("select_n", *cases))


def select(pred: Any, on_true: Any, on_false: Any) -> Array:
    """``on_true`` where ``pred`` else ``on_false``."""
    return select_n(pred, on_false, on_true)


def clamp(min: Any, x: Any, max: Any) -> Array:
    """``x`` clipped to ``[min, max]``."""
    x_, lo, hi = _operands("clamp", x, min, max)
    return bind1(P.clamp_p, lo, x_, hi)


def convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Array:
    """``operand`` cast to ``new_dtype`` (canonicalized).

    As in JAX, an array that already has the type is returned as it is, and a
    constant (a Python or NumPy scalar, a NumPy array, a Literal) is converted
    on the host: no equation is staged for it.
    """
    d = dt.canonicalize(new_dtype)
    weak = bool(weak_type)
    if is_symbolic(operand):  # a symbolic size: its value, computed when the program runs
        operand = bind1(P.dim_as_value_p, dim=operand)
    av = _aval(operand)
    if av is not None and type(operand) is not Literal:
        if av.dtype == d and av.weak_type == weak and isinstance(operand, Array):
            return operand
        return bind1(P.convert_element_type_p, operand, new_dtype=d, weak_type=weak,
                     sharding=None)
    return _convert_constant(operand, d, weak)


def stage(x: Any, /) -> Array:
    """``x`` (an array, a NumPy array or a Python scalar) as an array of its own type: the
    identity, which lifts a constant into the current trace (a literal or a constant of
    the jaxpr) and, outside any trace, makes it a plait ``Array`` (as ``jax.lax.stage``).

    Raises:
      TypeError: ``x`` is not an array or a scalar.
    """
    if isinstance(x, Array):
        return x
    value_aval(x)  # (the check: an array or a scalar of a supported dtype)
    return convert_element_type(x, *dtype_and_weak(x))


def _convert_constant(x: Any, d: np.dtype[Any], weak: bool) -> Array:
    if type(x) is Literal:
        value = np.asarray(x.val, x.aval.dtype)
    elif isinstance(x, np.ndarray | np.generic):
        value = np.asarray(x)
    elif isinstance(x, bool | int | float | builtins.complex):
        value = np.asarray(scalar_literal(x).val if type(x) is int else x)
    else:
        raise TypeError(f"convert_element_type: expected an array or a scalar, but got "
                        f"{type(x).__name__}")
    if value.dtype == object or value.dtype not in dt.SUPPORTED:
        raise TypeError(f"convert_element_type: unsupported dtype {value.dtype}")
    if dt.is_complex(value.dtype) and not dt.is_complex(d):
        value = value.real
    with np.errstate(all="ignore"):
        if dt.is_integer(d) and dt.is_inexact(value.dtype):
            # As XLA converts: toward zero, saturating, NaN to 0.
            lo, hi = dt.int_range(d)
            f = np.nan_to_num(np.trunc(value.astype(np.float64)), nan=0.0)
            out = np.clip(f, lo, hi).astype(d)
        else:
            out = value.astype(d)
    return ArrayImpl.from_numpy(out, weak)


def _axes(axes: Any) -> tuple[int, ...]:
    return tuple(int(a) for a in axes)


def reduce_sum(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """Sum over ``axes`` (the result's type sharded by ``out_sharding`` if given)."""
    ax = _axes(axes)
    return bind1(P.reduce_sum_p, operand, axes=ax,
                 out_sharding=_out_sharding(out_sharding, "reduce_sum",
                                            len(_shape_of(operand)) - len(ax)))


def reduce_prod(operand: Any, axes: Sequence[int]) -> Array:
    """Product over ``axes``."""
    return bind1(P.reduce_prod_p, operand, axes=_axes(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Array:
    """Maximum over ``axes``."""
    return bind1(P.reduce_max_p, operand, axes=_axes(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Array:
    """Minimum over ``axes``."""
    return bind1(P.reduce_min_p, operand, axes=_axes(axes))


def reduce_and(operand: Any, axes: Sequence[int]) -> Array:
    """Logical/bitwise and over ``axes``."""
    return bind1(P.reduce_and_p, operand, axes=_axes(axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Array:
    """Logical/bitwise or over ``axes``."""
    return bind1(P.reduce_or_p, operand, axes=_axes(axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Array:
    """Logical/bitwise xor over ``axes``."""
    return bind1(P.reduce_xor_p, operand, axes=_axes(axes))


def argmax(operand: Any, axis: int, index_dtype: Any) -> Array:
    """Index of the maximum along ``axis`` (first one on ties)."""
    return bind1(P.argmax_p, operand, axes=(int(axis),), index_dtype=dt.canonicalize(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Array:
    """Index of the minimum along ``axis`` (first one on ties)."""
    return bind1(P.argmin_p, operand, axes=(int(axis),), index_dtype=dt.canonicalize(index_dtype))


def _shape(shape: Any) -> tuple[int, ...]:
    try:
        return as_dims(shape)  # type: ignore[return-value]  # (symbolic dims behave as ints)
    except TypeError:
        raise ArgumentError(f"expected a shape (a sequence of ints), but got {shape!r}") from None


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     *, out_sharding: Any = None) -> Array:
    """``operand`` broadcast to ``shape``, its dimension ``i`` mapped to
    ``broadcast_dimensions[i]`` (the result's type sharded by ``out_sharding`` if given)."""
    return bind1(P.broadcast_in_dim_p, *_operands("broadcast_in_dim", operand), shape=_shape(shape),
                 broadcast_dimensions=_axes(broadcast_dimensions),
                 sharding=_out_sharding(out_sharding, "broadcast_in_dim", len(shape)))


def _out_sharding(sharding: Any, what: str, ndim: int) -> NamedSharding | None:
    """An ``out_sharding=`` argument as the equation's param, its spec one entry per
    dimension of the result (``None`` if not given)."""
    if sharding is None:
        return None
    s = type_sharding_of(sharding, what)
    try:
        return NamedSharding(s.mesh, PartitionSpec(*s.spec.padded(ndim)))
    except ValueError as e:
        raise ValueError(f"{what}: out_sharding: {e}") from None


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives ``shapes`` together.

    Raises:
      ValueError: incompatible shapes.
    """
    if any(is_symbolic(d) for s in shapes for d in s):
        return broadcast_dims(*shapes)  # type: ignore[return-value]  # (as above)
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def broadcast_to_rank(x: Any, rank: int) -> Array:
    """``x`` with leading dimensions of size 1 up to ``rank``."""
    shape = _shape_of(x)
    if len(shape) == rank:
        return x if isinstance(x, Array) else bind1(P.copy_p, *_operands("broadcast_to_rank", x))
    return broadcast(x, (1,) * (rank - len(shape)))


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Array:
    """Matrix products of the last two dimensions, batched over the leading ones."""
    nl, nr = len(_shape_of(lhs)), len(_shape_of(rhs))
    if nl != nr:
        raise ValueError(f"batch_matmul requires arguments to have the same number of "
                         f"dimensions, got {nl} and {nr}")
    if nl < 2:
        raise ValueError(f"batch_matmul requires arguments of rank 2 or more, got {nl}")
    batch = tuple(range(nl - 2))
    return dot_general(lhs, rhs, (((nl - 1,), (nl - 2,)), (batch, batch)), precision)


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """``operand`` with leading dimensions ``sizes`` added (its type sharded by
    ``out_sharding`` if given)."""
    x_shape = tuple(np.shape(operand)) if _aval(operand) is None else _aval(operand).shape
    sizes = _shape(sizes)
    n = len(sizes)
    return broadcast_in_dim(operand, sizes + x_shape, tuple(range(n, n + len(x_shape))),
                            out_sharding=out_sharding)


def reshape(operand: Any, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None, *, out_sharding: Any = None) -> Array:
    """``operand`` with shape ``new_sizes`` (after transposing by ``dimensions``; its type
    sharded by ``out_sharding`` if given)."""
    dims = None if dimensions is None else _axes(dimensions)
    shape = _shape(new_sizes)
    return bind1(P.reshape_p, operand, new_sizes=shape, dimensions=dims,
                 sharding=_out_sharding(out_sharding, "reshape", len(shape)))


def transpose(operand: Any, permutation: Sequence[int]) -> Array:
    """Permute the dimensions."""
    return bind1(P.transpose_p, operand, permutation=_axes(permutation))


def squeeze(array: Any, dimensions: Sequence[int]) -> Array:
    """Remove the given size-1 dimensions."""
    return bind1(P.squeeze_p, array, dimensions=_axes(dimensions))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Array:
    """Insert size-1 dimensions (a ``broadcast_in_dim``, as in JAX)."""
    shape = list(_aval(array).shape if _aval(array) is not None else np.shape(array))
    ndim_out = len(shape) + len(dimensions)
    dims = sorted(d % ndim_out for d in dimensions)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in dims]
    return broadcast_in_dim(array, shape, kept)


def concatenate(operands: Sequence[Any], dimension: int) -> Array:
    """Join ``operands`` along ``dimension``."""
    return bind1(P.concatenate_p, *_operands("concatenate", *operands), dimension=int(dimension))


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """``operand`` cut along ``axis`` into consecutive pieces of the given ``sizes``."""
    shape = _shape_of(operand)
    ax = _axis(axis, len(shape))
    sizes = tuple(operator.index(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if sum(sizes) != shape[ax]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {ax} of the "
                         f"operand shape {list(shape)}")
    return list(bind_n(P.split_p, operand, sizes=sizes, axis=ax))


def stack(operands: Sequence[Any], axis: int = 0) -> Array:
    """Equally shaped ``operands`` joined along a new ``axis``."""
    xs = _operands("stack", *operands)
    if not xs:
        raise ValueError("stack requires at least one operand")
    shapes = [_shape_of(x) for x in xs]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"All input arrays must have the same shape. Got "
                         f"{', '.join(str(s) for s in shapes)}.")
    dtypes = [_aval(x).dtype if _aval(x) is not None else dt.canonicalize(np.result_type(x))
              for x in xs]
    if any(d != dtypes[0] for d in dtypes):
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got "
                        f"{', '.join(d.name for d in dtypes)}.")
    return bind1(P.stack_p, *xs, axis=_axis(axis, len(shapes[0]) + 1))


def unstack(x: Any, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, that dimension removed."""
    return tuple(bind_n(P.unstack_p, x, axis=_axis(axis, len(_shape_of(x)))))


def tile(operand: Any, reps: Sequence[int]) -> Array:
    """``operand`` repeated ``reps[i]`` times along each dimension ``i``."""
    reps = tuple(operator.index(r) for r in reps)
    ndim = len(_shape_of(operand))
    if len(reps) != ndim:
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)="
                        f"{len(reps)} and x.ndim={ndim}.")
    return bind1(P.tile_p, operand, reps=reps)


def _axis(axis: int, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pad with ``(low, high, interior)`` per dimension (negative low/high crop)."""
    x, v = _operands("pad", operand, padding_value)
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return bind1(P.pad_p, x, v, padding_config=config)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Array:
    """The static slice ``[start:limit:stride]`` in each dimension."""
    return bind1(P.slice_p, operand, start_indices=_axes(start_indices),
                 limit_indices=_axes(limit_indices),
                 strides=None if strides is None else _axes(strides))


_I32 = ShapedArray((), dt.int32)


def _index_operands(indices: Sequence[Any], shape: Sequence[int],
                    allow_negative: bool | Sequence[bool] = True) -> list[Literal | Array]:
    """Start indices as operands, a negative index counting from the end as in JAX
    (where ``allow_negative``, one flag or one per dimension, says so): static ones are
    wrapped here, traced ones by a ``select_n`` on their sign."""
    if len(indices) != len(shape):
        raise TypeError(f"expected {len(shape)} start indices for an operand of shape "
                        f"{tuple(shape)}, but got {len(indices)}")
    wraps = ([bool(allow_negative)] * len(shape) if isinstance(allow_negative, bool | np.bool_)
             else [bool(w) for w in allow_negative])
    if len(wraps) != len(shape):
        raise TypeError(f"expected allow_negative_indices to be a bool or {len(shape)} bools "
                        f"(one per dimension), but got {allow_negative!r}")
    out: list[Literal | Array] = []
    for i, d, wrap in zip(indices, shape, wraps):
        if isinstance(i, int | np.integer) and not isinstance(i, bool):
            i = int(i)
            if i < 0 and not wrap:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            out.append(Literal(i + d if i < 0 else i, _I32))
        else:
            i, av = _start_index(i)
            out.append(select_n(lt(i, 0), i, add(convert_element_type(i, av.dtype), d))
                       if wrap else i)
    return out


def _start_index(i: Any) -> tuple[Any, ShapedArray]:
    """A traced start index and its type, checked to be a scalar integer."""
    av = _aval(i)
    if av is None:
        i = np.asarray(i)
        av = ShapedArray(i.shape, i.dtype)
    if not dt.is_integer(av.dtype) or av.shape:
        raise TypeError("expected a scalar integer start index, but got "
                        f"{av.str_short(short_dtypes=False)}")
    return i, av


def _shape_of(x: Any) -> tuple[int, ...]:
    av = _aval(x)
    return tuple(av.shape) if av is not None else np.shape(x)


def _dtype_of(x: Any) -> np.dtype[Any]:
    # (Host data's canonical dtype: int64 NumPy data is int32 outside x64 mode.)
    av = _aval(x)
    return np.dtype(av.dtype) if av is not None else dt.canonicalize(np.result_type(x))


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """A slice of static size ``slice_sizes`` at traced ``start_indices`` (negative ones
    count from the end, unless ``allow_negative_indices`` is false for their dimension;
    the slice is then clamped into bounds)."""
    return bind_dynamic_slice(operand, _index_operands(start_indices, _shape_of(operand),
                                                       allow_negative_indices), slice_sizes)


def bind_dynamic_slice(operand: Any, start_indices: Sequence[Any],
                       slice_sizes: Sequence[int]) -> Array:
    """``dynamic_slice`` of indices already in range (no wrapping of negative ones)."""
    starts = [Literal(int(i), _I32) if isinstance(i, int | np.integer) else i
              for i in start_indices]
    return bind1(P.dynamic_slice_p, operand, *starts, slice_sizes=_shape(slice_sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """``operand`` with ``update`` written at ``start_indices`` (negative ones count from
    the end, unless ``allow_negative_indices`` is false for their dimension; the window
    is then clamped into bounds)."""
    return bind1(P.dynamic_update_slice_p, operand, update,
                 *_index_operands(start_indices, _shape_of(operand), allow_negative_indices))


def rev(operand: Any, dimensions: Sequence[int]) -> Array:
    """Reverse the order of elements along ``dimensions``."""
    return bind1(P.rev_p, operand, dimensions=_axes(dimensions))


def iota(dtype: Any, size: int) -> Array:
    """``[0, 1, ..., size - 1]``."""
    return bind1(P.iota_p, dtype=dt.canonicalize(dtype), shape=(int(size),), dimension=0,
                 sharding=None)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: None = None) -> Array:
    """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros today),
    to be overwritten."""
    if out_sharding is not None:
        raise NotImplementedError("empty: out_sharding must be None (sharding is not "
                                  "supported yet)")
    return bind1(P.empty_p, dtype=dt.canonicalize(dtype), out_sharding=None, shape=_shape(shape))


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, *,
                     out_sharding: Any = None) -> Array:
    """Indices along ``dimension`` of an array of ``shape`` (its type sharded by
    ``out_sharding`` if given)."""
    dims = _shape(shape)
    return bind1(P.iota_p, dtype=dt.canonicalize(dtype), shape=dims, dimension=int(dimension),
                 sharding=_out_sharding(out_sharding, "broadcasted_iota", len(dims)))


_PRECISION_NAMES = {"highest": P.Precision.HIGHEST, "float32": P.Precision.HIGHEST,
                    "high": P.Precision.HIGH, "bfloat16_3x": P.Precision.HIGH,
                    "tensorfloat32": P.Precision.HIGH, "default": P.Precision.DEFAULT,
                    "bfloat16": P.Precision.DEFAULT, "fastest": P.Precision.DEFAULT}


def canonicalize_precision(precision: Any) -> PrecisionParam:
    """``precision`` as the param of a contraction: ``None``, one :class:`Precision` per
    operand, or a dot algorithm; from ``None``, a ``Precision``, a name (``'highest'``,
    ``'float32'``, ...), a pair of those, a :class:`DotAlgorithmPreset` or its name
    (``'F32_F32_F32'``), or a :class:`DotAlgorithm`.  (On CPU the precisions all compute
    in full precision; the algorithms XLA:CPU cannot carry out fail when compiled.)

    Raises:
      ValueError: anything else (JAX's message).
    """
    def one(p: Any) -> P.Precision | None:
        if isinstance(p, P.Precision):
            return p
        if type(p).__name__ == "Precision" and getattr(p, "name", None) in P.Precision.__members__:
            return P.Precision[p.name]  # another library's (jax's) enum, by name
        if isinstance(p, str):
            return _PRECISION_NAMES.get(p)  # (case matters, as in JAX: "DEFAULT" is a preset)
        return None

    if precision is None:
        default = _config.default_matmul_precision
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(
                "jax_default_matmul_precision flag must be set to None, a value in "
                f"{list(_PRECISION_NAMES)}, or the name of a lax.DotAlgorithmPreset, but got "
                f"{default}") from None
    single = one(precision)
    if single is not None:
        return (single, single)
    if isinstance(precision, P.DotAlgorithmPreset):
        return precision
    if isinstance(precision, str) and precision in P.DotAlgorithmPreset.__members__:
        return P.DotAlgorithmPreset[precision]
    kind = type(precision).__name__
    if kind == "DotAlgorithmPreset" and getattr(precision, "name", None) in (
            P.DotAlgorithmPreset.__members__):
        return P.DotAlgorithmPreset[precision.name]  # another library's (jax's), by name
    if kind == "DotAlgorithm" and isinstance(precision, tuple):
        return as_dot_algorithm(precision)
    if isinstance(precision, tuple | list) and len(precision) == 2 and (
            all(isinstance(p, str) for p in precision) or not any(
                isinstance(p, str) for p in precision)):
        pair = one(precision[0]), one(precision[1])
        if pair[0] is not None and pair[1] is not None:
            return (pair[0], pair[1])
        if isinstance(precision[0], str):  # JAX reports the string it cannot read
            bad = precision[0] if pair[0] is None else precision[1]
            if bad not in P.DotAlgorithmPreset.__members__:
                canonicalize_precision(bad)  # (raises, naming it)
    raise ValueError(
        "Precision argument must be one of:\n- None,\n- a string in "
        f"{[*_PRECISION_NAMES, None]},\n- a lax.Precision value,\n- a tuple of two "
        "lax.Precision values or strings,\n- a lax.DotAlgorithmPreset or the name of one "
        f"of these presets, or\n- a lax.DotAlgorithm value;\nbut got {precision}.")


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Array:
    """Contract ``lhs`` and ``rhs``: ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``
    (``precision``: see :func:`canonicalize_precision`; ``out_sharding``: the sharding
    of the result's type, needed when a contracted dimension is sharded)."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_axes(lc), _axes(rc)), (_axes(lb), _axes(rb)))
    pet = None if preferred_element_type is None else dt.canonicalize(preferred_element_type)
    return bind1(P.dot_general_p, lhs, rhs, dimension_numbers=dn,
                 precision=canonicalize_precision(precision), preferred_element_type=pet,
                 out_sharding=_out_sharding(out_sharding, "dot_general",
                                            _ndim(lhs) + _ndim(rhs) - 2 * len(dn[0][0])
                                            - len(dn[1][0])))


def _ndim(x: Any) -> int:
    a = _aval(x)
    return a.ndim if a is not None else int(np.ndim(x))


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None, *,
        dimension_numbers: Any = None, out_sharding: Any = None) -> Array:
    """Vector/matrix product of rank-1 or rank-2 operands, or with ``dimension_numbers``
    (``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``) :func:`dot_general`."""
    if dimension_numbers is None:
        lhs_nd = _aval(lhs).ndim if _aval(lhs) is not None else np.ndim(lhs)
        dimension_numbers = (((lhs_nd - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                       out_sharding=out_sharding)


def _cumulative(prim: Primitive) -> _CumulativeOp:
    def op(operand: Any, axis: int = 0, reverse: bool = False) -> Array:
        nd = _aval(operand).ndim if _aval(operand) is not None else np.ndim(operand)
        return bind1(prim, operand, axis=int(axis) % builtins.max(nd, 1), reverse=bool(reverse))
    op.__name__ = prim.name
    op.__doc__ = f"Cumulative ``{prim.name[3:]}`` along ``axis`` (from the end if ``reverse``)."
    return op


cumsum = _cumulative(P.cumsum_p)
cumprod = _cumulative(P.cumprod_p)
cummax = _cumulative(P.cummax_p)
cummin = _cumulative(P.cummin_p)
cumlogsumexp = _cumulative(P.cumlogsumexp_p)


@overload
def sort(operand: tuple[Any, ...] | list[Any], dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> tuple[Array, ...]: ...
@overload
def sort(operand: Any, dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Array: ...
def sort(operand: Any, dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Array | tuple[Array, ...]:
    """Sort ``operand`` (or a sequence of operands, keyed by the first ``num_keys``)."""
    ops = list(operand) if isinstance(operand, tuple | list) else [operand]
    nd = _aval(ops[0]).ndim if _aval(ops[0]) is not None else np.ndim(ops[0])
    outs = bind_n(P.sort_p, *ops, dimension=int(dimension) % builtins.max(nd, 1),
                  is_stable=bool(is_stable), num_keys=int(num_keys))
    return tuple(outs) if isinstance(operand, tuple | list) else outs[0]


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Array, Array]:
    """Sort ``keys`` and permute ``values`` alike."""
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Array:
    """An array of ``shape`` filled with the scalar ``fill_value`` (its type sharded by
    ``sharding`` if given).

    Without ``dtype`` the result has the dtype of ``fill_value`` (weakly typed
    for a Python scalar), as in JAX.

    Raises:
      TypeError: ``fill_value`` is not a scalar.
    """
    dims = _shape(shape)
    fill_shape = np.shape(fill_value) if _aval(fill_value) is None else _aval(fill_value).shape
    if fill_shape != ():
        raise TypeError(f"full must be called with scalar fill_value, but got fill_value.shape "
                        f"{tuple(fill_shape)}")
    d, weak = dtype_and_weak(fill_value)
    if dtype is not None:
        d, weak = dt.canonicalize(dtype), False
    return broadcast(convert_element_type(fill_value, d, weak), dims, out_sharding=sharding)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Array:
    """An array like ``x`` (its shape and dtype, unless given) filled with ``fill_value``
    (its type sharded by ``sharding`` if given).

    The result is weakly typed when ``x`` is and no ``dtype`` is given, as in JAX.
    """
    d, weak = dtype_and_weak(x)
    x_shape = tuple(np.shape(x)) if _aval(x) is None else _aval(x).shape
    if dtype is not None:
        d, weak = dt.canonicalize(dtype), False
    dims = x_shape if shape is None else _shape(shape)
    val = broadcast(convert_element_type(fill_value, d, weak), dims, out_sharding=sharding)
    return placed_like(val, x, sharding)


def placed_like(val: Array, x: Any, sharding: Any = None) -> Array:
    """``val`` (made like ``x``) laid out, outside a trace, by ``sharding``, or when
    none is given as ``x`` is if ``x`` is a committed, strongly typed Array of ``val``'s
    shape or replicated, as JAX's ``full_like`` lays it out (optax's ``zeros_like`` of
    sharded parameters)."""
    if type(val) is not ArrayImpl:
        return val
    if sharding is None and type(x) is ArrayImpl and x.committed and not val.weak_type and (
            x.shape == val.shape or x.is_fully_replicated):
        sharding = x.sharding
    if isinstance(sharding, NamedSharding) and val.sharding != sharding:
        return ArrayImpl.from_numpy(np.asarray(val), val.weak_type, sharding)
    return val


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """The static ``index`` along ``axis`` (a unit-stride slice, as JAX's)."""
    n = _shape_of(operand)[axis]
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    i = i + n if i < 0 else i
    out = slice_in_dim(operand, i, i + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """``operand[start:limit:stride]`` along ``axis`` (``None`` for either end; negative
    indices count from the end, once, as in JAX)."""
    shape = _shape_of(operand)
    n = shape[axis]
    lo = 0 if start_index is None else operator.index(start_index)
    hi = n if limit_index is None else operator.index(limit_index)
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    start[axis] = lo + n if lo < 0 else lo
    limit[axis] = hi + n if hi < 0 else hi
    strides[axis] = stride
    return slice(operand, start, limit, strides)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Array:
    """A dynamic slice of ``slice_size`` along ``axis``."""
    shape = _shape_of(operand)
    starts: list[Any] = [0] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Array:
    """The traced ``index`` along ``axis``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Array:
    """Write ``update`` at ``start_index`` along ``axis``."""
    starts: list[Any] = [0] * len(_shape_of(operand))
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """Merge dimensions ``[start, stop)`` into one."""
    shape = _aval(operand).shape
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = int(np.prod(shape[start_dimension:stop]))
    return reshape(operand, shape[:start_dimension] + (size,) + shape[stop:])
