"""Automatic differentiation at the API level: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad``, ``linear_transpose`` (the Jacobians are in
:mod:`plait.frontend.api.jacobians`).

Each traces the function once, rewrites the jaxpr (:mod:`plait.transforms`),
and applies the result: inlined into an enclosing trace, or compiled and run.
On concrete arguments the tracers know their values on demand, so Python control
flow on values works, as with JAX's autodiff tracers; under ``jit`` it is an
error, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, ParamSpec, TypeVar, overload

import attrs

from plait.frontend.api.aux_values import AuxPassThrough
from plait.frontend.api.pullback import (
    DontWant,
    Linearized,
    Pullback,
    PullbackSpec,
    float0_zeros,
    leaf_routes,
    zeros_for,
)
from plait.frontend.api.refs import pure_with_refs, with_finals, write_finals
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify, wraps
from plait.frontend.core.array_impl import ArrayImpl, device_buffer, wrap_output
from plait.frontend.core.refs import Ref, carrying_refs, check_distinct, read, ref_leaves
from plait.frontend.core.trace_to_jaxpr import TracedFunction, flatten_call, trace_function
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_nodes import Partial
from plait.frontend.core.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_structure,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped
from plait.ir.errors import ArgumentError, RefError
from plait.ir.jaxpr import Jaxpr, consts_as_invars
from plait.transforms.ad import (
    linearize_jaxpr,
    split_forwarded,
    value_and_grad_jaxpr,
    vjp_jaxprs,
)
from plait.transforms.jvp import jvp_jaxpr
from plait.transforms.transpose import transpose_jaxpr

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "linear_transpose"]

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A")


def _trace(fun: Callable[..., Any], args: Sequence[Any], purpose: str, concrete: bool = True,
           refs: object = None) -> tuple[TracedFunction, Jaxpr, tuple[Any, ...]]:
    """Trace ``fun`` on ``args``; its constants become leading inputs.  Concrete arguments
    make a trace whose values Python may branch on (as JAX's autodiff tracers carry their
    primal values), unless ``concrete`` is false."""
    call = flatten_call(fun, tuple(args), {}, (), ())
    traced = trace_function(fun, call, purpose, concrete, refs)
    closed, consts = consts_as_invars(traced.closed)
    return traced, closed.jaxpr, consts


def _is_float0(x: Any) -> bool:
    return getattr(x, "dtype", None) == dt.float0


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, int):
        return (argnums,), True
    return tuple(argnums), False


@overload
def jvp(fun: Callable[..., R], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: Literal[False] = False) -> tuple[R, R]: ...
@overload
def jvp(fun: Callable[..., tuple[R, A]], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: Literal[True]) -> tuple[R, R, A]: ...
@overload
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool) -> Any: ...
@api_boundary
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> Any:
    """``(fun(*primals), J(primals) @ tangents)``: a Jacobian-vector product.

    ``primals`` and ``tangents`` are tuples of pytrees of the same structure;
    integer and boolean primals take ``float0`` tangents.
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise ArgumentError("jvp: primals and tangents must be tuples or lists, but got "
                            f"{type(primals).__name__} and {type(tangents).__name__}")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ArgumentError(f"jvp: primal and tangent arguments must have equal structures, "
                            f"but got {p_tree} and {t_tree}")

    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        if not refs:
            return _jvp(fun, primals, p_leaves, t_leaves, has_aux, token)
        out, t_out, aux = _jvp(with_finals(fun, refs, has_aux), primals, p_leaves, t_leaves,
                               True, token)
        user_aux = write_finals(refs, aux, has_aux)
        return (out, t_out, user_aux) if has_aux else (out, t_out)
    return carrying_refs(attempt)


def _jvp(fun: Callable[..., Any], primals: Sequence[Any], p_leaves: list[Any],
         t_leaves: list[Any], has_aux: bool, token: object) -> Any:
    traced, jaxpr, consts = _trace(fun, primals, "jvp", refs=token)
    n_c = len(consts)
    nonzeros = []
    tangent_args = []
    for i, (t, aval) in enumerate(zip(t_leaves, traced.in_avals)):
        ta = abstractify(t, f"tangents[{i}]", "jvp")
        if dt.is_inexact(aval.dtype):
            if ta.shape != aval.shape or ta.dtype != aval.dtype:
                raise ArgumentError(
                    f"jvp: expected a tangent of type {aval.str_short(short_dtypes=False)} for "
                    f"primal {i}, but got "
                    f"{ta.str_short(short_dtypes=False)}")
            nonzeros.append(True)
            tangent_args.append(t)
        else:
            if ta.dtype != dt.float0 or ta.shape != aval.shape:
                raise ArgumentError(
                    f"jvp: expected a float0 tangent of shape {aval.shape} for the "
                    f"{aval.dtype.name} primal {i}, but got {ta.str_short(short_dtypes=False)}")
            nonzeros.append(False)
    jj, out_nz = jvp_jaxpr(jaxpr, [False] * n_c + nonzeros)
    outs = apply_jaxpr(jj, (), [*consts, *p_leaves, *tangent_args],
                       f"jvp_{traced.debug_info.func_name}")
    n_out = len(jaxpr.outvars)
    primal_outs, rest = outs[:n_out], iter(outs[n_out:])
    tangent_outs = [next(rest) if nz else zeros_for(a.aval)
                    for a, nz in zip(jaxpr.outvars, out_nz)]
    out = tree_unflatten(traced.out_tree, primal_outs)
    t_out = tree_unflatten(traced.out_tree, tangent_outs)
    if has_aux:
        return out[0], t_out[0], out[1]
    return out, t_out


def _run_forward(fwd: Jaxpr, n_out: int, args: Sequence[Any], name: str
                 ) -> tuple[list[Any], list[Any], list[int | None]]:
    """The outputs and residuals of the forward half of reverse mode or linearization,
    applied to ``args``.  Residuals that are inputs are not returned by the program
    (that would copy them) but taken from ``args``, as Arrays: a NumPy input is put
    on the device once, so changing it later does not change the residual.  Also
    returns, per residual, which of ``args`` it is (``None``: computed)."""
    pruned, res_from = split_forwarded(fwd, n_out)
    outs = apply_jaxpr(pruned, (), args, name)
    computed = iter(outs[n_out:])
    residuals = [next(computed) if i is None else _as_value(args[i], fwd.invars[i].aval)
                 for i in res_from]
    return outs[:n_out], residuals, list(res_from)


def _as_value(x: Any, aval: Any) -> Any:
    # What apply_jaxpr would have returned for it: the traced type, on the device.
    if type(x) is ArrayImpl or type(x) is Tracer:
        return x
    a = shaped(aval)
    return wrap_output(a, device_buffer(x, a))


@overload
def linearize(fun: Callable[..., R], *primals: Any,
              has_aux: Literal[False] = False) -> tuple[R, Callable[..., R]]: ...
@overload
def linearize(fun: Callable[..., tuple[R, A]], *primals: Any,
              has_aux: Literal[True]) -> tuple[R, Callable[..., R], A]: ...
@overload
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool) -> Any: ...
@api_boundary
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the linearized function.
    With ``has_aux``, ``fun`` returns ``(out, aux)`` and ``linearize`` returns
    ``(out, f_jvp, aux)``, ``aux`` not differentiated."""
    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        f = with_finals(fun, refs, has_aux) if refs else fun
        out, spec, residuals = _linearize(f, primals, token)
        if not refs and not has_aux:
            return out, Partial(spec, residuals)
        out, aux = out  # (aux: the user's, the Refs' final values, or both)
        user_aux = write_finals(refs, aux, has_aux) if refs else aux
        f_jvp = Partial(attrs.evolve(spec, first_only=True), residuals)
        return (out, f_jvp, user_aux) if has_aux else (out, f_jvp)
    return carrying_refs(attempt)


def _linearize(fun: Callable[..., Any], primals: tuple[Any, ...], token: object
               ) -> tuple[Any, Linearized, tuple[Any, ...]]:
    """The primal result, the linear function and its residuals (the function's
    ``Partial`` arguments: they are its pytree leaves, as in JAX)."""
    traced, jaxpr, consts = _trace(fun, primals, "linearize", refs=token)
    n_c = len(consts)
    diff = [False] * n_c + [dt.is_inexact(a.dtype) for a in traced.in_avals]
    primal, linear, _, out_nz = linearize_jaxpr(jaxpr, diff)
    p_leaves, _ = tree_flatten(tuple(primals))
    n_out = len(jaxpr.outvars)
    primal_outs, residuals, _ = _run_forward(primal, n_out, [*consts, *p_leaves],
                                          f"linearize_{traced.debug_info.func_name}")
    spec = Linearized(linear, tree_structure(tuple(primals)), tuple(diff[n_c:]),
                      traced.out_tree, tuple(out_nz),
                      tuple(shaped(v.aval) for v in jaxpr.outvars))
    return tree_unflatten(traced.out_tree, primal_outs), spec, tuple(residuals)


def _no_reduce_axes(name: str, reduce_axes: Sequence[Any]) -> None:
    # (JAX keeps the parameter, deprecated: only its default is accepted.)
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {name} is deprecated")


@overload
def vjp(fun: Callable[..., R], *primals: Any, has_aux: Literal[False] = False,
        reduce_axes: Sequence[Any] = ()) -> tuple[R, Callable[[R], tuple[Any, ...]]]: ...
@overload
def vjp(fun: Callable[..., tuple[R, A]], *primals: Any, has_aux: Literal[True],
        reduce_axes: Sequence[Any] = ()) -> tuple[R, Callable[[R], tuple[Any, ...]], A]: ...
@overload
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool,
        reduce_axes: Sequence[Any] = ()) -> Any: ...
@api_boundary
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False,
        reduce_axes: Sequence[Any] = ()) -> Any:
    """``(fun(*primals), f_vjp)`` where ``f_vjp(ct)`` pulls a cotangent back to the inputs.

    Integer and boolean inputs get ``float0`` cotangents.  With ``has_aux``,
    ``fun`` returns ``(out, aux)`` and ``vjp`` returns ``(out, f_vjp, aux)``.
    ``reduce_axes`` (deprecated in JAX) must be empty.
    """
    _no_reduce_axes("vjp", reduce_axes)
    leaves, tree = tree_flatten(tuple(primals))
    pos = ref_leaves(leaves)
    if pos:
        return _vjp_ref_args(fun, leaves, tree, pos, has_aux)

    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        if not refs:
            return _vjp(fun, primals, has_aux, token)
        out, f_vjp, aux = _vjp(with_finals(fun, refs, has_aux), primals, True, token)
        user_aux = write_finals(refs, aux, has_aux)
        return (out, f_vjp, user_aux) if has_aux else (out, f_vjp)
    return carrying_refs(attempt)


def _vjp_ref_args(fun: Callable[..., Any], leaves: list[Any], tree: PyTreeDef, pos: list[int],
                  has_aux: bool) -> Any:
    """vjp with Ref arguments: differentiated with respect to their values now; the
    function's writes to them happen (as when it is called), and the pullback
    accumulates their cotangents into the Refs given to ``with_refs``."""
    refs = [leaves[i] for i in pos]
    check_distinct(refs, "vjp")
    others = [x for i, x in enumerate(leaves) if i not in pos]
    args_tree = tree_structure((tree_unflatten(tree, [0] * len(leaves)), {}))
    pure = pure_with_refs(fun, args_tree, pos, None, lambda: refs)

    def pure_aux(values: list[Any], rest: list[Any]) -> Any:
        out, finals = pure(values, rest)
        return (out[0], (out[1], finals)) if has_aux else (out, finals)
    pure_aux.__name__ = getattr(fun, "__name__", "fun")
    out, pull, aux = vjp(pure_aux, [read(r) for r in refs], others, has_aux=True)
    user_aux = write_finals(refs, aux, has_aux)
    f_vjp = RefArgsPullback(pull, tree, pos)
    return (out, f_vjp, user_aux) if has_aux else (out, f_vjp)


class RefArgsPullback:
    """The pullback of a function of Refs: usable only through ``with_refs``, which
    must name a Ref (or ``DontWant()``) for each Ref argument, since the cotangent of
    a Ref is accumulated into a Ref."""

    def __init__(self, pull: Pullback, tree: PyTreeDef, pos: list[int]) -> None:
        self._pull, self._tree, self._pos = pull, tree, pos

    def __call__(self, *cts: Any) -> Any:
        raise RefError("vjp function: the function was differentiated with respect to a Ref "
                       "argument, whose gradient must be accumulated into a Ref: call "
                       "f_vjp.with_refs(grad_ref, ...)(ct), with a Ref (or "
                       "plait.ad.DontWant()) for each Ref argument")

    def with_refs(self, *entries: Any) -> Callable[..., Any]:
        """The pullback with each argument's cotangent routed as ``Pullback.with_refs``
        routes it; a Ref argument's must go to a Ref or be ``DontWant()``."""
        routes = leaf_routes(entries, self._tree)
        for i in self._pos:
            if not isinstance(routes[i], Ref | DontWant):
                raise RefError(f"with_refs: leaf {i} of the arguments is a Ref, whose "
                               f"gradient must be accumulated into a Ref, but its entry is "
                               f"{routes[i]!r}; pass a Ref of the same type")
        inner = self._pull.with_refs([routes[i] for i in self._pos],
                                     [r for i, r in enumerate(routes) if i not in self._pos])

        def pull(*cts: Any) -> Any:
            from_refs, from_rest = inner(*cts)
            a, b = iter(from_refs), iter(from_rest)
            return tree_unflatten(self._tree, [next(a) if i in self._pos else next(b)
                                               for i in range(len(routes))])
        return pull


def _vjp(fun: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool, token: object
         ) -> Any:
    aux = AuxPassThrough() if has_aux else None
    traced, jaxpr, consts = _trace(aux.wrap(fun) if aux is not None else fun, primals, "vjp",
                                   refs=token)
    n_c = len(consts)
    diff = [dt.is_inexact(a.dtype) for a in traced.in_avals]
    n_out = len(jaxpr.outvars)
    aux_n = 0
    if has_aux:
        out_struct = traced.out_tree.children()
        if traced.out_tree.num_nodes < 1 or len(out_struct) != 2:
            raise ArgumentError("vjp with has_aux=True: the function must return a pair (out, aux)")
        aux_n = out_struct[1].num_leaves
    n_main = n_out - aux_n
    pieces = vjp_jaxprs(jaxpr, [False] * n_c + diff)
    p_leaves, in_tree = tree_flatten(tuple(primals))
    primal_outs, residuals, res_from = _run_forward(pieces.fwd, n_out, [*consts, *p_leaves],
                                                    f"vjp_{traced.debug_info.func_name}")
    main_tree = traced.out_tree.children()[0] if has_aux else traced.out_tree
    spec = PullbackSpec(pieces.bwd, main_tree, tuple(shaped(v.aval) for v in jaxpr.outvars),
                        tuple(pieces.out_tangent), n_main, in_tree, tuple(traced.in_avals),
                        tuple(diff), tuple(None if i is None or i < n_c else i - n_c
                                           for i in res_from))
    f_vjp = Pullback(spec, residuals)
    out = tree_unflatten(traced.out_tree, primal_outs)
    if aux is not None:
        return out[0], f_vjp, aux.merge(out[1])
    return out, f_vjp


def _check_grad_inputs(avals: Sequence[ShapedArray], selected: Sequence[bool], allow_int: bool,
                       holomorphic: bool, names: Sequence[str], what: str) -> None:
    for a, s, name in zip(avals, selected, names):
        if not s:
            continue
        if holomorphic and not dt.is_complex(a.dtype):
            raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but "
                            f"got {a.dtype.name} for {name}")
        if not dt.is_inexact(a.dtype) and not allow_int:
            raise TypeError(
                f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                f"of np.inexact), but got {a.dtype.name} for {name}. If you want to use Boolean- "
                "or integer-valued inputs, use vjp or set allow_int to True.")
        # Complex inputs need no holomorphic=True (as in JAX): a real-valued function of
        # them has a gradient, in JAX's convention.


def _selected_names(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                    selected: Sequence[int]) -> list[str]:
    """The names of the leaves of the selected positional arguments, for error messages."""
    call = flatten_call(fun, args, kwargs, (), ())
    return [name for name, p in zip(call.debug_info.arg_names, call.paths)
            if p[0].idx == 0 and p[1].idx in selected]


def _check_scalar_output(aval: Any, holomorphic: bool, what: str) -> None:
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    _check_jacrev_output(aval, holomorphic, what)


def value_and_grad(fun: Callable[P, R], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False,
                   reduce_axes: Sequence[Any] = ()) -> Callable[P, tuple[R, Any]]:
    """A function returning ``(fun(*args), gradient)`` of a scalar-output ``fun``.

    ``argnums`` selects the arguments differentiated (an int, or a tuple giving
    a tuple of gradients); with ``has_aux``, ``fun`` returns ``(out, aux)`` and the
    result is ``((out, aux), grads)``.  ``reduce_axes`` (deprecated in JAX) must be empty.
    """
    _no_reduce_axes("grad", reduce_axes)
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, True)


def _value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
                    holomorphic: bool, allow_int: bool, with_value: bool) -> Callable[..., Any]:
    nums, single = _argnums_tuple(argnums)
    name = getattr(fun, "__name__", "fun")

    def run(fun: Callable[..., Any], has_aux: bool, token: object, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Any:
        n = len(args)
        for i in nums:
            if not -n <= i < n:
                raise ArgumentError(f"differentiating with respect to argnums={argnums} requires "
                                    f"at least {max(nums) + 1} positional arguments, but the "
                                    f"function was called with {n}")
        selected = sorted({i % n for i in nums})
        aux = AuxPassThrough() if has_aux else None
        user_fun = aux.wrap(fun) if aux is not None else fun

        # Only the differentiated arguments are traced; the others (and kwargs) are
        # closed over as they are, so they stay concrete (usable as static arguments of
        # an inner jit, or in Python control flow), as in JAX.
        def dyn_fun(*dyn: Any) -> Any:
            full = list(args)
            for i, v in zip(selected, dyn):
                full[i] = v
            return user_fun(*full, **kwargs)
        dyn_fun.__name__ = name
        call = flatten_call(dyn_fun, tuple(args[i] for i in selected), {}, (), ())
        traced = trace_function(dyn_fun, call, "grad", concrete=True, refs=token)
        closed, consts = consts_as_invars(traced.closed)
        jaxpr = closed.jaxpr
        if holomorphic or not allow_int:
            _check_grad_inputs(traced.in_avals, [True] * len(traced.in_avals), allow_int,
                               holomorphic, _selected_names(fun, args, kwargs, selected), "grad")
        diff = [dt.is_inexact(a.dtype) for a in traced.in_avals]
        out_leaves_tree = traced.out_tree
        if has_aux:
            kids = out_leaves_tree.children()
            if len(kids) != 2:
                raise ArgumentError("grad with has_aux=True: the function must return a pair "
                                    "(out, aux)")
            main_tree = kids[0]
        else:
            main_tree = out_leaves_tree
        if main_tree.num_leaves != 1:
            raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                            f"{main_tree}.")
        if shaped(jaxpr.outvars[0].aval).shape != ():
            # JAX differentiates before it looks at the output: an operation without a
            # derivative (a pure_callback) is the error it reports first.
            vjp_jaxprs(jaxpr, [False] * len(consts) + diff)
        _check_scalar_output(jaxpr.outvars[0].aval, holomorphic, "grad")
        n_out = len(jaxpr.outvars)
        # grad alone keeps only the aux outputs: the value's own computation is dropped.
        keep = [with_value or i > 0 for i in range(n_out)]
        full = value_and_grad_jaxpr(jaxpr, len(consts), diff, keep)
        outs = apply_jaxpr(full, (), [*consts, *call.leaves], f"grad_{name}")
        n_kept = sum(keep)
        kept = iter(outs[:n_kept])
        value = tree_unflatten(traced.out_tree, [next(kept) if k else None for k in keep])
        if aux is not None:
            value = (value[0], aux.merge(value[1]))
        grad_it = iter(outs[n_kept:])
        leaves = [next(grad_it) if d else float0_zeros(a) for d, a in zip(diff, traced.in_avals)]
        (dyn_grads, _) = tree_unflatten(call.in_tree, leaves)
        grads = tuple(dyn_grads[selected.index(i % n)] for i in nums)
        g = grads[0] if single else grads
        return value, g

    @wraps(fun)
    @api_boundary
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
            if not refs:
                return run(fun, has_aux, token, args, kwargs)
            (main, aux), g = run(with_finals(fun, refs, has_aux), True, token, args, kwargs)
            user_aux = write_finals(refs, aux, has_aux)
            return ((main, user_aux) if has_aux else main), g
        return carrying_refs(attempt)

    return value_and_grad_f


def grad(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False,
         reduce_axes: Sequence[Any] = ()) -> Callable[P, Any]:
    """The gradient of a scalar-output ``fun`` with respect to ``argnums``
    (``reduce_axes``, deprecated in JAX, must be empty)."""
    _no_reduce_axes("grad", reduce_axes)
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, False)

    @wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def _check_jacrev_output(a: ShapedArray, holomorphic: bool, what: str = "jacrev") -> None:
    if holomorphic:
        if not dt.is_complex(a.dtype):
            raise TypeError(f"{what} with holomorphic=True requires outputs with complex dtype, "
                            f"but got {a.dtype.name}.")
    elif dt.is_complex(a.dtype):
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {a.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use plait.vjp "
                        "directly.")
    elif not dt.is_float(a.dtype):
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {a.dtype.name}. For differentiation of "
                        "functions with integer outputs, use plait.vjp directly.")


def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The transpose of a linear ``fun``; ``primals`` give its input types (values unused;
    ``reduce_axes``, deprecated in JAX, must be empty)."""
    _no_reduce_axes("linear_transpose", reduce_axes)
    traced, jaxpr, consts = _trace(fun, primals, "linear_transpose", concrete=False)
    n_c = len(consts)
    transposed = transpose_jaxpr(jaxpr, [False] * n_c + [True] * len(jaxpr.invars[n_c:]))
    in_tree = tree_structure(tuple(primals))

    @api_boundary
    def transposed_fun(*cts: Any) -> Any:
        ct = cts[0] if len(cts) == 1 else cts
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != traced.out_tree:
            raise ArgumentError(f"linear_transpose: expected a cotangent of structure "
                                f"{traced.out_tree}, but got {ct_tree}")
        outs = apply_jaxpr(transposed, (), [*consts, *ct_leaves], "linear_transpose")
        return tree_unflatten(in_tree, outs)

    return transposed_fun
