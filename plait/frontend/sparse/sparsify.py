"""The sparsify interpreter: run a function written for dense arrays on BCOO arrays.

The function is traced to a jaxpr with a dense stand-in (same shape and dtype) for
each sparse argument; the interpreter then evaluates the jaxpr equation by equation.
An equation whose operands are all dense is applied as it is (``primitive.bind``, so
the evaluation itself composes with ``jit``, ``vmap`` and ``grad``); one with a sparse
operand goes to its rule in :data:`sparse_rules`, which computes on the BCOO buffers.
A primitive without a rule raises ``NotImplementedError`` naming it, as JAX does.

Values in the interpreter are dense arrays or :class:`SparseValue`\\ s.  A sparse value
records which buffer its indices are (``indices_ref``, as JAX's), so that an
elementwise operation of two values with the very same indices works on the data
alone.  ``todense_p`` marks ``sparse.todense`` in a traced function: the identity on
dense arrays, and the conversion of a sparse value.

Other formats (BCSR) take part as their array objects: a format registers its class and
its own rule table in :data:`format_rules` (JAX's ``sparse_rules_bcsr``), and an
equation with an operand of that format takes its rule from that table, whatever its
other operands are.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.api.user_lowering import lower_fun, register_lowering
from plait.frontend.api.user_primitives import Primitive, deflinear, defvectorized
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tree_util import PyTreeDef
from plait.frontend.sparse.base import JAXSparse
from plait.frontend.sparse.convert import sum_duplicates, todense
from plait.frontend.sparse.layout import SparseBuffers, SparseInfo
from plait.frontend.sparse.products import (
    dot_general,
    multiply_dense,
    multiply_sparse,
    rdot_general,
    spdot_general,
)
from plait.frontend.sparse.restructure import (
    broadcast_in_dim,
    concatenate,
    reduce_sum,
    reshape,
    slice_,
    squeeze,
    transpose,
)
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import ShapedArray
from plait.ir.interpreter import impl_rules
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitive import Primitive as IRPrimitive

__all__ = ["SparseValue", "SparseRule", "sparse_rules", "format_rules", "fresh", "todense_p",
           "eval_sparse", "sparsify_flat", "refuse_dense_power", "ZERO_PRESERVING_UNARY",
           "ZERO_PRESERVING_LINEAR"]

SparseRule = Callable[..., Sequence[Any]]
"""``rule(*operands, **params)``: the results of an equation with a sparse operand
(operands and results dense arrays or :class:`SparseValue`\\ s)."""

_refs = itertools.count()


class SparseValue(NamedTuple):
    """A sparse value of the interpreter: its buffers, and which buffer its indices are."""

    buffers: SparseBuffers
    indices_ref: int


def fresh(m: SparseBuffers) -> SparseValue:
    """A sparse value of new buffers (its indices a buffer of its own)."""
    return SparseValue(m, next(_refs))


def _with_data(x: SparseValue, data: Array) -> SparseValue:
    """``x``'s indices (the same buffer) with new data."""
    return SparseValue(x.buffers._replace(data=data), x.indices_ref)


sparse_rules: dict[IRPrimitive, SparseRule] = {}

format_rules: dict[type[JAXSparse], dict[IRPrimitive, SparseRule]] = {}
"""The rules of the formats other than BCOO, by array class; their values in the
interpreter are the array objects themselves."""

# -- the todense marker -------------------------------------------------------------------

todense_p = Primitive("todense")
todense_p.def_impl(lambda x: x)
todense_p.def_abstract_eval(lambda x: x)
deflinear(todense_p, lambda ct: [ct])
defvectorized(todense_p)
register_lowering(todense_p, lower_fun(lambda x: x, multiple_results=False))
impl_rules[todense_p] = lambda x: [np.asarray(x)]  # (the reference interpreter's)

# -- the interpreter ----------------------------------------------------------------------

# Primitives whose result at a zero operand is nonzero: JAX's message tells to densify.
_DENSIFYING = {P.acos_p, P.acosh_p, P.bessel_i0e_p, P.cos_p, P.cosh_p, P.eq_p, P.exp_p,
               P.ge_p, P.gt_p, P.le_p, P.lt_p, P.log_p, P.ne_p, P.xor_p}


def _unimplemented(prim: IRPrimitive) -> NotImplementedError:
    if prim in _DENSIFYING:
        return NotImplementedError(
            f"sparse rule for {prim.name} is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to dense matrices.")
    return NotImplementedError(f"sparse rule for {prim.name} is not implemented.")


def _literal(lit: Literal) -> Array:
    return ArrayImpl.from_numpy(np.asarray(lit.val, lit.aval.dtype), lit.aval.weak_type)


def eval_sparse(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` on dense arrays and :class:`SparseValue`\\ s.

    Raises:
      NotImplementedError: an equation with a sparse operand has no sparse rule.
    """
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(a: Atom) -> Any:
        return a if type(a) is Literal else env[a]  # (bind takes literals as they are)

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        rules = _rules_for(ins)
        if rules is not None:
            rule = rules.get(eqn.primitive)
            if rule is None:
                raise _unimplemented(eqn.primitive)
            ins = [_literal(x) if type(x) is Literal else x for x in ins]
            outs = list(rule(*ins, **eqn.params))
        else:
            out = eqn.primitive.bind(*ins, **eqn.params)
            outs = list(out) if eqn.primitive.multiple_results else [out]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [_literal(a) if type(a) is Literal else env[a] for a in jaxpr.outvars]


def _rules_for(ins: Sequence[Any]) -> dict[IRPrimitive, SparseRule] | None:
    """The rule table of an equation's operands: that of their first format other than
    BCOO, else BCOO's if one is sparse, else none (the equation is dense)."""
    for x in ins:
        if isinstance(x, JAXSparse):
            return format_rules[type(x)]
    if any(type(x) is SparseValue for x in ins):
        return sparse_rules
    return None


def stand_in(m: SparseBuffers | JAXSparse) -> ShapedArray:
    """The dense type a sparse argument is traced as."""
    return ShapedArray(m.shape, m.data.dtype, m.data.aval.weak_type)


def sparsify_flat(fun: Callable[..., Any], in_tree: PyTreeDef, args: Sequence[Any]
                  ) -> tuple[list[Any], PyTreeDef]:
    """``fun`` on the arguments ``in_tree`` arranges ``args`` (dense arrays,
    :class:`SparseBuffers`, and arrays of the :data:`format_rules` formats) into: its flat
    results (the same kinds) and their structure."""
    values = [fresh(a) if type(a) is SparseBuffers else a for a in args]
    avals = [stand_in(a) if type(a) is SparseBuffers or isinstance(a, JAXSparse) else a.aval
             for a in args]
    traced = trace_to_jaxpr(fun, in_tree, avals, "sparsify")
    outs = eval_sparse(traced.closed.jaxpr, traced.closed.consts, values)
    return [o.buffers if type(o) is SparseValue else o for o in outs], traced.out_tree


# -- rules: elementwise -------------------------------------------------------------------

def _unique(x: SparseValue) -> SparseValue:
    """``x`` with distinct indices: a nonlinear function of the data of duplicates is not
    the function of their sum."""
    if x.buffers.info.unique_indices:
        return x
    return fresh(sum_duplicates(x.buffers, x.buffers.layout.nse))


def _unary(prim: IRPrimitive, linear: bool) -> SparseRule:
    def rule(x: SparseValue, **params: Any) -> list[Any]:
        x = x if linear else _unique(x)
        return [_with_data(x, prim.bind(x.buffers.data, **params))]
    return rule


ZERO_PRESERVING_UNARY = (P.abs_p, P.asin_p, P.asinh_p, P.atan_p, P.atanh_p, P.bessel_i1e_p,
                         P.expm1_p, P.log1p_p, P.sign_p, P.sin_p, P.sinh_p, P.sqrt_p,
                         P.square_p, P.tan_p, P.tanh_p, P.convert_element_type_p)
"""The nonlinear unary primitives that map zero to zero: applied to the stored values once
duplicate entries are summed."""
ZERO_PRESERVING_LINEAR = (P.conj_p, P.copy_p, P.imag_p, P.neg_p, P.real_p)
"""The linear ones: applied to the stored values as they are."""

for _p in ZERO_PRESERVING_UNARY:
    sparse_rules[_p] = _unary(_p, linear=False)
for _p in ZERO_PRESERVING_LINEAR:
    sparse_rules[_p] = _unary(_p, linear=True)


def refuse_dense_power(y: int) -> None:
    """Raise for ``x ** y`` of a sparse ``x`` unless ``y > 0`` (else zeros map to
    nonzeros: the result would be dense)."""
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array.")


def _integer_pow(x: SparseValue, *, y: int) -> Sequence[Any]:
    refuse_dense_power(y)
    return _unary(P.integer_pow_p, linear=False)(x, y=y)


sparse_rules[P.integer_pow_p] = _integer_pow


def _add(x: Any, y: Any) -> list[Any]:
    out_shape = lax.broadcast_shapes(_shape(x), _shape(y))
    if type(x) is SparseValue and type(y) is SparseValue:
        if x.buffers.shape != y.buffers.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if x.indices_ref == y.indices_ref:
            return [_with_data(x, lax.add(x.buffers.data, y.buffers.data))]
        if (x.buffers.indices.ndim != y.buffers.indices.ndim
                or x.buffers.data.ndim != y.buffers.data.ndim):
            raise NotImplementedError("Addition between sparse matrices with different "
                                      "batch/dense dimensions.")
        axis = x.buffers.indices.ndim - 2
        return [fresh(SparseBuffers(
            lax.concatenate([x.buffers.data, y.buffers.data], axis),
            lax.concatenate([x.buffers.indices, y.buffers.indices], axis),
            SparseInfo(x.buffers.shape)))]
    sp, dense = (x, y) if type(x) is SparseValue else (y, x)
    if tuple(dense.shape) != tuple(out_shape):
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent "
            "densification of a large sparse array. If this is your intent, you can "
            "explicitly cast the sparse array to a dense matrix.")
    return [todense(sp.buffers) + dense]


def _shape(x: Any) -> tuple[int, ...]:
    return x.buffers.shape if type(x) is SparseValue else tuple(x.shape)


def _sub(x: Any, y: Any) -> list[Any]:
    if type(x) is SparseValue and type(y) is SparseValue:
        return _add(x, *_unary(P.neg_p, linear=True)(y))
    raise NotImplementedError("Subtraction between sparse and dense array.")


def _mul(x: Any, y: Any, *, out_dtype: Any = None) -> list[Any]:
    if out_dtype is not None:
        x, y = (_astype(v, out_dtype) for v in (x, y))
    if type(x) is SparseValue and type(y) is SparseValue:
        if x.indices_ref == y.indices_ref and x.buffers.info.unique_indices:
            return [_with_data(x, lax.mul(x.buffers.data, y.buffers.data))]
        return [fresh(multiply_sparse(x.buffers, y.buffers))]
    sp, dense = (x, y) if type(x) is SparseValue else (y, x)
    return [_with_data(sp, multiply_dense(sp.buffers, dense))]


def _astype(x: Any, dtype: Any) -> Any:
    if type(x) is SparseValue:
        return _with_data(x, x.buffers.data.astype(dtype))
    return pnp.asarray(x).astype(dtype)


def _div(x: Any, y: Any) -> list[Any]:
    if type(y) is SparseValue:
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to a dense array.")
    return [_with_data(x, multiply_dense(x.buffers, 1. / pnp.asarray(y)))]


sparse_rules[P.add_p] = _add
sparse_rules[P.sub_p] = _sub
sparse_rules[P.mul_p] = _mul
sparse_rules[P.div_p] = _div

# -- rules: structure and products --------------------------------------------------------


def _reduce_sum(x: SparseValue, *, axes: Sequence[int], **params: Any) -> list[Any]:
    out = reduce_sum(x.buffers, axes)
    if out.shape == ():
        return [pnp.sum(out.data)]
    return [fresh(out)]


def _transpose(x: SparseValue, *, permutation: Sequence[int]) -> list[Any]:
    return [fresh(transpose(x.buffers, permutation))]


def _dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any = None,
                 preferred_element_type: Any = None, **params: Any) -> list[Any]:
    if type(lhs) is SparseValue and type(rhs) is SparseValue:
        return [fresh(spdot_general(lhs.buffers, rhs.buffers, dimension_numbers,
                                     preferred_element_type))]
    if type(lhs) is SparseValue:
        return [dot_general(lhs.buffers, rhs, dimension_numbers, preferred_element_type)]
    return [rdot_general(lhs, rhs.buffers, dimension_numbers, preferred_element_type)]


def _all_sparse(xs: Sequence[Any], what: str) -> list[SparseBuffers]:
    if not all(type(x) is SparseValue for x in xs):
        raise ValueError(f"{what}: expected operands to be a sequence of BCOO arrays, but "
                         "got a mix of sparse and dense arrays")
    return [x.buffers for x in xs]


def _concatenate(*xs: Any, dimension: int) -> list[Any]:
    return [fresh(concatenate(_all_sparse(xs, "bcoo_concatenate"), dimension))]


def _stack(*xs: Any, axis: int) -> list[Any]:
    ms = _all_sparse(xs, "bcoo_concatenate")
    base = ms[0].shape
    new_shape = (*base[:axis], 1, *base[axis:])
    dims = [d if d < axis else d + 1 for d in range(len(base))]
    return [fresh(concatenate([broadcast_in_dim(m, new_shape, dims) for m in ms], axis))]


def _broadcast_in_dim(x: SparseValue, *, shape: Sequence[int],
                      broadcast_dimensions: Sequence[int], **params: Any) -> list[Any]:
    return [fresh(broadcast_in_dim(x.buffers, tuple(shape), broadcast_dimensions))]


def _reshape(x: SparseValue, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None,
             **params: Any) -> list[Any]:
    return [fresh(reshape(x.buffers, new_sizes, dimensions))]


def _squeeze(x: SparseValue, *, dimensions: Sequence[int]) -> list[Any]:
    return [fresh(squeeze(x.buffers, dimensions))]


def _slice(x: SparseValue, *, start_indices: Sequence[int], limit_indices: Sequence[int],
           strides: Sequence[int] | None) -> list[Any]:
    return [fresh(slice_(x.buffers, start_indices, limit_indices, strides))]


def _todense(x: SparseValue) -> list[Any]:
    return [todense(x.buffers)]


sparse_rules[P.reduce_sum_p] = _reduce_sum
sparse_rules[P.transpose_p] = _transpose
sparse_rules[P.dot_general_p] = _dot_general
sparse_rules[P.concatenate_p] = _concatenate
sparse_rules[P.stack_p] = _stack
sparse_rules[P.broadcast_in_dim_p] = _broadcast_in_dim
sparse_rules[P.reshape_p] = _reshape
sparse_rules[P.squeeze_p] = _squeeze
sparse_rules[P.slice_p] = _slice
sparse_rules[todense_p] = _todense

# -- rules: calls -------------------------------------------------------------------------


def _jit(*args: Any, jaxpr: ClosedJaxpr, name: str, donated_invars: Sequence[bool],
         **params: Any) -> list[Any]:
    """A sparse call stays a call: of its body sparsified, over the buffers."""
    if any(donated_invars):
        raise NotImplementedError("sparse xla_call with donated_invars")
    flat: list[Any] = []
    for a in args:
        flat.extend((a.buffers.data, a.buffers.indices) if type(a) is SparseValue else (a,))
    out_infos: list[SparseInfo | None] = []

    def body(*bufs: Any) -> list[Any]:
        it = iter(bufs)
        ins = [SparseValue(SparseBuffers(next(it), next(it), a.buffers.info), a.indices_ref)
               if type(a) is SparseValue else next(it) for a in args]
        outs = eval_sparse(jaxpr.jaxpr, jaxpr.consts, ins)
        out_infos[:] = [o.buffers.info if type(o) is SparseValue else None for o in outs]
        return [b for o in outs
                for b in ((o.buffers.data, o.buffers.indices) if type(o) is SparseValue
                          else (o,))]
    body.__name__ = name
    it = iter(jit(body)(*flat))
    return [fresh(SparseBuffers(next(it), next(it), info)) if info is not None else next(it)
            for info in out_infos]


sparse_rules[P.jit_p] = _jit
