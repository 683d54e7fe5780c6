"""Sharding rules: the sharding in an equation's result types, from its operands'.

When a mesh has ``Explicit`` axes, an array type may say how its dimensions are split
over them (``f32[8@X,4]``, :attr:`~plait.ir.ShapedArray.explicit_sharding`).  Every
primitive then needs a rule computing its results' shardings, as it has a typing rule
for their shapes.  A rule maps each result dimension to the operand dimensions it
comes from; where they disagree, or where a choice would hide communication (a
contraction over a split dimension, a reshape moving a split), the rule raises a
:class:`~plait.ir.errors.ShardingTypeError` asking for the result's sharding instead
(``out_sharding=``, ``reshard``).  That is JAX's "sharding in types" discipline.

Rules run only once some mesh with an ``Explicit`` axis exists
(:data:`~plait.ir.sharding.EXPLICIT`), and only for equations with a sharded operand
or a requested result sharding, so programs without explicit axes pay nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.builder import Builder
from plait.ir.errors import JaxprTypeError, ShardingTypeError
from plait.ir.jaxpr import Jaxpr
from plait.ir.params import Params
from plait.ir.primitive import PRIMITIVES, Primitive, set_sharding_hook
from plait.ir.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

__all__ = ["SHARDING_RULES", "ShardingRule", "Spec", "result_shardings", "retyped"]

Spec = tuple[Any, ...]
"""Per dimension: ``None`` (whole), a mesh axis name, or a tuple of them."""

ShardingRule = Callable[..., list[Spec]]
"""``rule(in_avals, out_avals, in_specs, **params) -> one spec per result``; ``in_specs``
holds each operand's spec (all ``None`` for an unsharded one)."""

SHARDING_RULES: Final[dict[Primitive, ShardingRule]] = {}
"""The sharding rule of each primitive that has one."""

_REQUESTED: Final = ("out_sharding", "sharding", "dst_sharding")

_REQUESTING: Final[set[Primitive]] = set()
"""The primitives with a param that may ask for a result sharding (see :func:`_register`)."""


def _spec(a: AbstractValue) -> Spec:
    if type(a) is not ShapedArray:
        return ()
    s = a.explicit_sharding
    return (None,) * len(a.shape) if s is None else tuple(s.spec)


def _requested(params: Params) -> NamedSharding | None:
    for k in _REQUESTED:
        v = params.get(k)
        if isinstance(v, NamedSharding):
            return v
    return None


def _mesh(prim: Primitive, shardings: Sequence[NamedSharding]) -> AbstractMesh:
    meshes = {s.mesh if isinstance(s.mesh, AbstractMesh) else s.mesh.abstract_mesh
              for s in shardings}
    if len(meshes) > 1:
        raise ShardingTypeError(
            f"{prim.name}: expected every operand's sharding over one mesh, but got "
            + ", ".join(sorted(map(str, meshes))))
    (mesh,) = meshes
    return mesh


def result_shardings(prim: Primitive, in_avals: Sequence[AbstractValue],
                     outs: tuple[AbstractValue, ...], params: Params
                     ) -> tuple[AbstractValue, ...]:
    """``outs`` (the typing rule's results) with the shardings ``prim``'s rule gives.

    Raises:
      ShardingTypeError: the operands are sharded (or a result sharding is requested)
        and ``prim`` has no rule, or its rule finds the result sharding ambiguous.
    """
    for a in in_avals:  # (the common case, first: no operand is sharded)
        if type(a) is ShapedArray and a.explicit_sharding is not None:
            break
    else:
        if prim not in _REQUESTING or _requested(params) is None:
            return outs
    shardings = [a.explicit_sharding for a in in_avals
                 if type(a) is ShapedArray and a.explicit_sharding is not None]
    requested = _requested(params)
    if requested is not None and isinstance(requested.mesh, Mesh) and not shardings:
        # A concrete mesh's sharding (a constraint over Auto axes) types nothing by itself.
        if not requested.mesh.abstract_mesh.explicit_axes:
            return outs
    if not shardings and requested is None:
        return outs
    rule = SHARDING_RULES.get(prim)
    if rule is None:
        raise ShardingTypeError(
            f"sharding rule for {prim.name!r} not implemented: its operands are sharded "
            f"over Explicit mesh axes ({', '.join(a.str_short() for a in in_avals)}). "
            "Reshard them to be replicated first (plait.reshard(x, P())), or run the "
            "operation with those axes Auto: plait.sharding.auto_axes(f, out_sharding=...)")
    if prim in _SELF_TYPED:
        return outs
    mesh = _mesh(prim, shardings + ([requested] if requested is not None else []))
    specs = rule(in_avals, outs, [_spec(a) for a in in_avals], **params)
    typed = []
    for out, spec in zip(outs, specs):
        if type(out) is not ShapedArray:
            typed.append(out)
            continue
        _check_unique(prim, spec)
        sharding = (NamedSharding(mesh, PartitionSpec(*spec))
                    if any(p is not None for p in spec) else None)
        typed.append(out.update(sharding=sharding))
    return tuple(typed)


def _names(entry: Any) -> tuple[str, ...]:
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _check_unique(prim: Primitive, spec: Spec) -> None:
    names = [n for p in spec for n in _names(p)]
    if len(set(names)) != len(names):
        raise ShardingTypeError(
            f"{prim.name}: the result would be split over a mesh axis twice, {spec}: pass "
            "the result's sharding (out_sharding=...) or reshard an operand first")


def _axis_size(in_avals: Sequence[AbstractValue], entry: Any) -> int:
    for a in in_avals:
        if type(a) is ShapedArray and a.explicit_sharding is not None:
            mesh = a.explicit_sharding.mesh
            return math.prod(mesh.shape[n] for n in _names(entry))
    return 1


# --- families ---------------------------------------------------------------------


def _elementwise_spec(name: str, in_specs: Sequence[Spec], rank: int) -> Spec:
    out: list[Any] = [None] * rank
    full = [s for s in in_specs if len(s) == rank]
    for d in range(rank):
        parts = {s[d] for s in full if s[d] is not None}
        if len(parts) > 1:
            raise ShardingTypeError(
                f"{name} got incompatible shardings for broadcasting: "
                + ", ".join(str(tuple(s)) for s in full if s[d] is not None) + ".")
        if parts:
            out[d] = parts.pop()
    return tuple(out)


def defelementwise(prim: Primitive) -> None:
    """Operands of the result's rank line up dimension by dimension (rank-0 operands
    broadcast): a dimension split by one operand is split the same in the result;
    two operands splitting it differently is an error."""
    def rule(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **params: Any) -> list[Spec]:
        requested = _requested(Params(params)) if params else None
        return [tuple(requested.spec.padded(len(_spec(o))))
                if requested is not None and not isinstance(requested.mesh, Mesh)
                else _elementwise_spec(prim.name, in_specs, len(_spec(o))) for o in outs]
    SHARDING_RULES[prim] = rule


def defper_operand(prim: Primitive) -> None:
    """Each result has its operand's sharding (``optimization_barrier``)."""
    SHARDING_RULES[prim] = lambda in_avals, outs, in_specs, **_: list(in_specs)


_SELF_TYPED: Final[set[Primitive]] = set()


def defkeep(prim: Primitive) -> None:
    """The typing rule's results already carry shardings (calls and control flow, whose
    result types are their bodies'; ``reshard``, whose type is its param's)."""
    SHARDING_RULES[prim] = lambda in_avals, outs, in_specs, **_: [_spec(o) for o in outs]
    _SELF_TYPED.add(prim)


def _requested_or(default: Callable[..., Spec]) -> ShardingRule:
    # A result sharding asked for by the equation's param wins over the default rule.
    def rule(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **params: Any) -> list[Spec]:
        requested = _requested(Params(params))
        if requested is not None and not isinstance(requested.mesh, Mesh):
            return [tuple(requested.spec.padded(len(_spec(outs[0]))))] * len(outs)
        return [default(in_avals, outs, in_specs, **params)] * len(outs)
    return rule


def _drop(spec: Spec, axes: Sequence[int]) -> Spec:
    gone = {a % len(spec) for a in axes} if spec else set()
    return tuple(p for d, p in enumerate(spec) if d not in gone)


def defreduction(prim: Primitive, param: str = "axes") -> None:
    """The reduced dimensions go; the others keep their sharding."""
    def rule(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **params: Any) -> Spec:
        return _drop(in_specs[0], params[param])
    SHARDING_RULES[prim] = _requested_or(rule)


def _unsplit(name: str, aval: AbstractValue, spec: Spec, dims: Sequence[int], what: str) -> None:
    for d in dims:
        if spec[d] is not None:
            raise ShardingTypeError(
                f"{name}: expected the {what} dimension {d} unsharded, but got operand type "
                f"{aval.str_short()}: reshard it first (plait.reshard(x, P(...)))")


def defalong_axis(prim: Primitive, param: str, what: str) -> None:
    """The dimension the operation runs along (``axis``/``dimension``) must be whole;
    the results keep the operands' sharding elsewhere."""
    def rule(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **params: Any) -> list[Spec]:
        rank = len(in_specs[0])
        axis = params[param] % rank if rank else 0
        for a, s in zip(in_avals, in_specs):
            if len(s) == rank:
                _unsplit(prim.name, a, s, [axis], what)
        spec = _elementwise_spec(prim.name, in_specs, rank)
        return [spec if len(_spec(o)) == rank else spec[:len(_spec(o))] for o in outs]
    SHARDING_RULES[prim] = rule


# --- single primitives --------------------------------------------------------------


def _broadcast_in_dim(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
                      in_specs: Sequence[Spec], *, shape: tuple[int, ...],
                      broadcast_dimensions: tuple[int, ...], **_: Any) -> Spec:
    out: list[Any] = [None] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        out[dst] = in_specs[0][src]
    return tuple(out)


def _transpose(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
               in_specs: Sequence[Spec], *, permutation: tuple[int, ...]) -> list[Spec]:
    return [tuple(in_specs[0][p] for p in permutation)]


def _squeeze(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], *, dimensions: tuple[int, ...]) -> list[Spec]:
    return [_drop(in_specs[0], dimensions)]


def _reshape(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], *, new_sizes: tuple[int, ...], **_: Any) -> Spec:
    """Split and merged dimensions: a split dimension's sharding goes to the first of its
    parts if that part divides; merged dimensions take the sharding of all of them
    together when only the leading ones are split.  Anything else is ambiguous."""
    aval = in_avals[0]
    assert type(aval) is ShapedArray
    old, spec = aval.shape, in_specs[0]
    out: list[Any] = [None] * len(new_sizes)
    i = j = 0
    while i < len(old) or j < len(new_sizes):
        # the shortest groups old[i:i2], new[j:j2] with equal products
        i2, j2 = i, j
        a = b = 1
        while True:
            if a == b and (i2 > i or j2 > j) and (a != 1 or i2 == len(old) or j2 == len(new_sizes)
                                                  or (old[i2] != 1 and new_sizes[j2] != 1)):
                break
            if a <= b and i2 < len(old):
                a *= old[i2]
                i2 += 1
            elif j2 < len(new_sizes):
                b *= new_sizes[j2]
                j2 += 1
            else:
                break
        names = [n for p in spec[i:i2] for n in _names(p)]
        if names:
            out_entry = _group(aval, spec[i:i2], old[i:i2], new_sizes[j:j2], in_avals)
            if out_entry is None:
                raise ShardingTypeError(
                    "This reshape is not supported. Please specify the sharding of the output "
                    "via the `out_sharding` argument of plait.lax.reshape. Got operand type: "
                    f"{aval.str_short(False)}, new sizes: {tuple(new_sizes)}")
            out[j] = out_entry
        i, j = i2, j2
    return tuple(out)


def _group(aval: ShapedArray, spec: Spec, old: Sequence[int], new: Sequence[int],
           in_avals: Sequence[AbstractValue]) -> Any:
    """The sharding of the first new dimension of a group, or ``None`` if ambiguous."""
    if len(old) == 1:  # one dimension split into several: its sharding goes to the first
        size = _axis_size(in_avals, spec[0])
        return spec[0] if new and new[0] % size == 0 else None
    # several merged into one: the split ones must lead, the others be whole
    split = [d for d, p in enumerate(spec) if p is not None]
    if len(new) != 1 or split != list(range(len(split))):
        return None
    names = tuple(n for p in spec for n in _names(p))
    return names[0] if len(names) == 1 else names


def _dot_general(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
                 in_specs: Sequence[Spec], *, dimension_numbers: Any, **_: Any) -> Spec:
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = in_specs
    for i, j in zip(lb, rb):
        if ls[i] != rs[j]:
            raise ShardingTypeError(
                f"dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the consistent sharding, got {tuple(ls[d] for d in lb)} and "
                f"{tuple(rs[d] for d in rb)}.")
    lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
    if any(p is not None for p in lcs + rcs):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. "
            f"Got lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}")
    free_l = [ls[d] for d in range(len(ls)) if d not in lc and d not in lb]
    free_r = [rs[d] for d in range(len(rs)) if d not in rc and d not in rb]
    return tuple([ls[d] for d in lb] + free_l + free_r)


def _nullary(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **params: Any) -> Spec:
    return (None,) * len(_spec(outs[0]))


def _windowed(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
              in_specs: Sequence[Spec], what: str, name: str,
              sizes: Sequence[tuple[int, int]]) -> list[Spec]:
    """Slices and pads: a dimension whose size changes keeps its sharding only if the
    new size still divides evenly."""
    spec = in_specs[0]
    aval = in_avals[0]
    for d, (old, new) in enumerate(sizes):
        if spec[d] is not None and old != new and new % _axis_size(in_avals, spec[d]):
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({new}) is not divisible by mesh axes "
                f"({_axis_size(in_avals, spec[d])}) with spec ({spec[d]}) is not implemented. "
                f"Got input type={aval.str_short()} and output shape={tuple(n for _, n in sizes)}"
                f"; {what}")
    return [spec]


def _resizing(name: str) -> ShardingRule:
    """The rule of ``slice``, ``dynamic_slice`` or ``pad``: dimensions keep their split
    while their new size still divides evenly."""
    def rule(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **params: Any) -> list[Spec]:
        a, o = in_avals[0], outs[0]
        assert type(a) is ShapedArray and type(o) is ShapedArray
        return _windowed(in_avals, outs, in_specs[:1], "reshard the operand first", name,
                         list(zip(a.shape, o.shape)))
    return rule


def _concatenate(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
                 in_specs: Sequence[Spec], *, dimension: int) -> list[Spec]:
    if len(set(in_specs)) > 1:
        raise ShardingTypeError(
            "All operands should have the same sharding for concatenate. Got "
            + ", ".join(a.str_short() for a in in_avals)
            + ": reshard them to one sharding first")
    return [in_specs[0]]


def _first_operand(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
                   in_specs: Sequence[Spec], **params: Any) -> list[Spec]:
    return [in_specs[0]] * len(outs)


def _select_n(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
              in_specs: Sequence[Spec], **params: Any) -> list[Spec]:
    # The cases line up as an elementwise operation's operands; the predicate is a
    # scalar or lines up with them too.  (JAX asks the cases to be split exactly alike;
    # plait, as for binary operations, lets an unsplit case take the others' split.)
    return [_elementwise_spec("select_n", in_specs, len(_spec(outs[0])))]


def _stack(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
           in_specs: Sequence[Spec], *, axis: int) -> list[Spec]:
    spec = _elementwise_spec("stack", in_specs, len(in_specs[0]))
    rank = len(spec) + 1
    axis %= rank
    return [spec[:axis] + (None,) + spec[axis:]]


def _unstack(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], *, axis: int) -> list[Spec]:
    _unsplit("unstack", in_avals[0], in_specs[0], [axis % len(in_specs[0])], "unstacked")
    return [_drop(in_specs[0], [axis])] * len(outs)


def _register() -> None:
    for p in (P.neg_p, P.sign_p, P.floor_p, P.ceil_p, P.round_p, P.is_finite_p, P.exp_p,
              P.exp2_p, P.log_p, P.log1p_p, P.expm1_p, P.tanh_p, P.logistic_p, P.sin_p,
              P.cos_p, P.tan_p, P.asin_p, P.acos_p, P.atan_p, P.sinh_p, P.cosh_p, P.asinh_p,
              P.acosh_p, P.atanh_p, P.sqrt_p, P.rsqrt_p, P.cbrt_p, P.abs_p, P.not_p, P.copy_p,
              P.real_p, P.imag_p, P.conj_p, P.integer_pow_p, P.convert_element_type_p,
              P.erf_p, P.erfc_p, P.erf_inv_p, P.lgamma_p, P.digamma_p, P.population_count_p,
              P.clz_p, P.stop_gradient_p, P.square_p, P.bessel_i0e_p, P.bessel_i1e_p,
              P.add_p, P.sub_p, P.mul_p, P.div_p, P.rem_p, P.pow_p, P.max_p, P.min_p,
              P.atan2_p, P.nextafter_p, P.and_p, P.or_p, P.xor_p, P.eq_p, P.ne_p, P.lt_p,
              P.le_p, P.gt_p, P.ge_p, P.complex_p, P.polygamma_p, P.zeta_p, P.shift_left_p,
              P.shift_right_arithmetic_p, P.shift_right_logical_p, P.igamma_p, P.igammac_p,
              P.igamma_grad_a_p, P.regularized_incomplete_beta_p, P.add_any_p, P.clamp_p,
              P.reduce_precision_p, P.mulhi_p, P.sharding_constraint_p, P.threefry2x32_p):
        defelementwise(p)
    for p in (P.reduce_sum_p, P.reduce_max_p, P.reduce_min_p, P.reduce_prod_p,
              P.reduce_and_p, P.reduce_or_p, P.reduce_xor_p, P.argmax_p, P.argmin_p):
        defreduction(p)
    defreduction(P.reduce_p, "dimensions")
    for p in (P.cumsum_p, P.cumprod_p, P.cummax_p, P.cummin_p, P.cumlogsumexp_p):
        defalong_axis(p, "axis", "accumulated")
    defalong_axis(P.sort_p, "dimension", "sorted")
    defalong_axis(P.top_k_p, "axis", "top_k")
    defalong_axis(P.split_p, "axis", "split")
    defper_operand(P.optimization_barrier_p)
    for p in (P.jit_p, P.cond_p, P.while_p, P.custom_jvp_call_p, P.custom_vjp_call_p,
              P.remat_p, P.pure_callback_p, P.io_callback_p, P.debug_callback_p, P.check_p,
              P.ffi_call_p,
              P.scan_p, P.reshard_p, P.shard_map_p, P.name_p, P.composite_p,
              P.custom_lin_p, P.custom_linear_solve_p, P.custom_vmap_call_p,
              P.call_exported_p):
        defkeep(p)
    SHARDING_RULES[P.broadcast_in_dim_p] = _requested_or(_broadcast_in_dim)
    SHARDING_RULES[P.reshape_p] = _requested_or(_reshape)
    SHARDING_RULES[P.dot_general_p] = _requested_or(_dot_general)
    for p in (P.iota_p, P.empty_p):
        SHARDING_RULES[p] = _requested_or(_nullary)
    SHARDING_RULES[P.transpose_p] = _transpose
    SHARDING_RULES[P.squeeze_p] = _squeeze
    SHARDING_RULES[P.slice_p] = _resizing("slice")
    SHARDING_RULES[P.dynamic_slice_p] = _resizing("dynamic_slice")
    SHARDING_RULES[P.pad_p] = _resizing("padding")
    SHARDING_RULES[P.rev_p] = _first_operand
    SHARDING_RULES[P.dynamic_update_slice_p] = _first_operand
    SHARDING_RULES[P.concatenate_p] = _concatenate
    SHARDING_RULES[P.select_n_p] = _select_n
    SHARDING_RULES[P.stack_p] = _stack
    SHARDING_RULES[P.unstack_p] = _unstack


_register()
_REQUESTING.update(p for p in PRIMITIVES.values()
                   if any(k in p.params_by_name for k in _REQUESTED))
set_sharding_hook(result_shardings)


def retyped(jaxpr: Jaxpr, in_avals: Sequence[AbstractValue]) -> Jaxpr:
    """``jaxpr`` with its inputs of types ``in_avals`` (which differ from its own only in
    their shardings) and every result typed again: a program traced or transformed at
    unsharded types, applied to sharded arrays (a ``vmap`` outside ``jit``), gets the
    result shardings JAX gives it.  The jaxpr itself where retyping fails (a body whose
    types are fixed, say).
    """
    b = Builder()
    invars = [Var(a) for a in in_avals]
    env: dict[Atom, Atom] = dict(zip(jaxpr.invars, invars))
    try:
        for e in jaxpr.eqns:
            outs = b.bind(e.primitive, tuple(env.get(a, a) for a in e.invars), e.params,
                          e.source_info)
            env.update(zip(e.outvars, outs))
    except (JaxprTypeError, ShardingTypeError):
        return jaxpr
    return b.build(invars, [env.get(a, a) for a in jaxpr.outvars],
                   debug_info=jaxpr.debug_info)
