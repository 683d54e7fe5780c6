"""A mypy plugin giving plait's transformations the types ``ParamSpec`` cannot.

Enable it in the mypy configuration::

    [mypy]
    plugins = plait.mypy_plugin

With it, ``grad(f)`` keeps ``f``'s parameters and returns the type of the
differentiated argument (a tuple of them for a tuple ``argnums``; scalars
become ``plait.Array``, since that is what the gradient of a ``float`` is);
``value_and_grad(f)`` returns ``(value, grads)`` and, with ``has_aux=True``,
``((value, aux), grads)``; ``jvp``, ``vjp`` and ``linearize`` follow ``f``'s
types.  At check time it reports ``grad`` of a function that does not return
an array or a float, and an ``argnums`` out of range.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mypy.errorcodes import ErrorCode
from mypy.messages import format_type
from mypy.nodes import (
    ARG_OPT,
    ARG_POS,
    ARG_STAR,
    Expression,
    IntExpr,
    NameExpr,
    TupleExpr,
    UnaryExpr,
)
from mypy.plugin import FunctionContext, Plugin
from mypy.subtypes import find_member, is_subtype
from mypy.typeops import make_simplified_union
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    ProperType,
    TupleType,
    Type,
    TypeOfAny,
    UnionType,
    get_proper_type,
)

__all__ = ["plugin", "PlaitPlugin"]

PLAIT_TRANSFORM = ErrorCode("plait-transform", "Invalid use of a plait transformation", "plait")
"""The error code of every error this plugin reports."""

_AD = "plait.frontend.api.autodiff."
_ARRAY = "plait.frontend.core.array_base.Array"
# Types whose values become plait Arrays when a transformation returns them.
_ARRAY_LIKE = ("builtins.float", "builtins.int", "builtins.complex", "builtins.bool",
               "numpy.ndarray", "numpy.generic", _ARRAY)


class PlaitPlugin(Plugin):
    """Return types for ``grad``, ``value_and_grad``, ``jvp``, ``vjp`` and ``linearize``."""

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return _HOOKS.get(fullname)


def plugin(version: str) -> type[Plugin]:
    """The entry point mypy calls."""
    return PlaitPlugin


# -- helpers --------------------------------------------------------------------

def _arg(ctx: FunctionContext, name: str) -> list[Expression]:
    """The expressions passed for the formal parameter ``name``."""
    return ctx.args[ctx.callee_arg_names.index(name)]


def _arg_type(ctx: FunctionContext, name: str) -> ProperType | None:
    types = ctx.arg_types[ctx.callee_arg_names.index(name)]
    return get_proper_type(types[0]) if types else None


def _as_callable(t: ProperType | None) -> CallableType | None:
    """The call signature of ``t``: a function, or an object with ``__call__`` (a jitted one)."""
    if isinstance(t, CallableType):
        return t
    if isinstance(t, Instance):
        call = get_proper_type(find_member("__call__", t, t, is_operator=True))
        if isinstance(call, CallableType):
            return call
    return None


def _int_value(e: Expression) -> int | None:
    if isinstance(e, IntExpr):
        return e.value
    if isinstance(e, UnaryExpr) and e.op == "-" and isinstance(e.expr, IntExpr):
        return -e.expr.value
    return None


def _argnums(ctx: FunctionContext) -> tuple[list[int], bool] | None:
    """``(argnums, is_tuple)`` when written literally; ``([0], False)`` when left out."""
    exprs = _arg(ctx, "argnums")
    if not exprs:
        return [0], False
    e = exprs[0]
    if isinstance(e, TupleExpr):
        vals = [_int_value(x) for x in e.items]
        return (None if any(v is None for v in vals) else ([v for v in vals if v is not None],
                                                           True))
    v = _int_value(e)
    return None if v is None else ([v], False)


def _flag(ctx: FunctionContext, name: str) -> bool | None:
    """A boolean keyword's value when written literally (``False`` when left out)."""
    exprs = _arg(ctx, name)
    if not exprs:
        return False
    e = exprs[0]
    if isinstance(e, NameExpr) and e.fullname in ("builtins.True", "builtins.False"):
        return e.fullname == "builtins.True"
    return None


def _positional(fun: CallableType) -> list[Type] | None:
    """Types of the positional parameters, or None when ``*args`` makes them open-ended."""
    if ARG_STAR in fun.arg_kinds:
        return None
    return [t for t, k in zip(fun.arg_types, fun.arg_kinds) if k in (ARG_POS, ARG_OPT)]


def _array(ctx: FunctionContext) -> Instance:
    # Looked up through the package, whose namespace re-exports it (mypy does not add
    # submodules to a package's names unless they are imported there).
    return ctx.api.named_generic_type("plait.Array", [])


def _is_array_like(t: ProperType) -> bool:
    return isinstance(t, Instance) and any(t.type.has_base(b) for b in _ARRAY_LIKE)


def _as_arrays(ctx: FunctionContext, t: Type) -> Type:
    """``t`` with every array-like leaf (a float, a NumPy array) replaced by ``Array``,
    through tuples, unions, lists and dicts: the type a transformation returns for it."""
    p = get_proper_type(t)
    if _is_array_like(p):
        return _array(ctx)
    if isinstance(p, UnionType):
        return make_simplified_union([_as_arrays(ctx, x) for x in p.items])
    if isinstance(p, TupleType):
        return p.copy_modified(items=[_as_arrays(ctx, x) for x in p.items])
    if isinstance(p, Instance) and p.type.fullname in ("builtins.list", "builtins.dict",
                                                       "builtins.tuple"):
        return p.copy_modified(args=[_as_arrays(ctx, x) for x in p.args])
    return t


def _fail(ctx: FunctionContext, msg: str) -> Type:
    ctx.api.fail(msg, ctx.context, code=PLAIT_TRANSFORM)
    return AnyType(TypeOfAny.from_error)


def _fun_name(fun: CallableType) -> str:
    return f'"{fun.name}"' if fun.name else "the function"


def _type_str(ctx: FunctionContext, t: Type) -> str:
    return format_type(t, ctx.api.options)


# -- grad and value_and_grad ----------------------------------------------------------

def _differentiated(ctx: FunctionContext, what: str, fun: CallableType) -> Type | None:
    """The type of the gradient(s), after checking ``argnums``; None when unknown."""
    nums = _argnums(ctx)
    params = _positional(fun)
    if nums is None or params is None:
        return None
    idx, is_tuple = nums
    n = len(params)
    bad = [i for i in idx if not -n <= i < n]
    if bad:
        _fail(ctx, f"{what}: argnums={bad[0]} is out of range: the function has {n} positional "
                   f"parameter{'s' if n != 1 else ''}, so argnums must be in [{-n}, {n})")
        return AnyType(TypeOfAny.from_error)
    grads = [_as_arrays(ctx, params[i]) for i in idx]
    if is_tuple:
        return TupleType(grads, ctx.api.named_generic_type("builtins.tuple", [AnyType(
            TypeOfAny.special_form)]))
    return grads[0]


def _checked_output(ctx: FunctionContext, what: str, fun: CallableType, has_aux: bool
                    ) -> tuple[Type, Type] | None:
    """``(output, aux)`` of ``fun``, after checking the output is a scalar array or float."""
    ret = get_proper_type(fun.ret_type)
    aux: Type = AnyType(TypeOfAny.special_form)
    if has_aux:
        if isinstance(ret, AnyType):
            return ret, ret
        if isinstance(ret, TupleType) and len(ret.items) == 2:
            aux = ret.items[1]
            ret = get_proper_type(ret.items[0])
        else:
            _fail(ctx, f"{what}(..., has_aux=True): expected a function returning a pair "
                       f"(output, aux), but {_fun_name(fun)} returns {_type_str(ctx, ret)}")
            return None
    allowed = make_simplified_union([_array(ctx), ctx.api.named_generic_type("builtins.float", [])])
    if not isinstance(ret, AnyType) and not is_subtype(ret, allowed):
        _fail(ctx, f"{what}: expected a function returning a scalar array or float, but "
                   f"{_fun_name(fun)} returns {_type_str(ctx, ret)}; {what} differentiates "
                   "scalar outputs only (use jacrev or vjp for others)")
        return None
    return ret, aux


def _grad_hook(with_value: bool) -> Callable[[FunctionContext], Type]:
    what = "value_and_grad" if with_value else "grad"

    def hook(ctx: FunctionContext) -> Type:
        fun = _as_callable(_arg_type(ctx, "fun"))
        has_aux = _flag(ctx, "has_aux")
        if fun is None or has_aux is None:
            return ctx.default_return_type
        out = _checked_output(ctx, what, fun, has_aux)
        grads = _differentiated(ctx, what, fun)
        if out is None or grads is None:
            return ctx.default_return_type if out is not None else AnyType(TypeOfAny.from_error)
        value, aux = _as_arrays(ctx, out[0]), out[1]
        ret: Type
        if with_value:
            ret = _tuple(ctx, [_tuple(ctx, [value, aux]) if has_aux else value, grads])
        else:
            ret = _tuple(ctx, [grads, aux]) if has_aux else grads
        return fun.copy_modified(ret_type=ret, name=None)
    return hook


def _tuple(ctx: FunctionContext, items: Sequence[Type]) -> TupleType:
    fallback = ctx.api.named_generic_type("builtins.tuple", [AnyType(TypeOfAny.special_form)])
    return TupleType(list(items), fallback)


# -- jvp, vjp, linearize ------------------------------------------------------

def _jvp_hook(ctx: FunctionContext) -> Type:
    fun = _as_callable(_arg_type(ctx, "fun"))
    has_aux = _flag(ctx, "has_aux")
    if fun is None or has_aux is None:
        return ctx.default_return_type
    out, aux = _split_aux(ctx, fun, has_aux)
    return _tuple(ctx, [out, out, aux] if has_aux else [out, out])


def _split_aux(ctx: FunctionContext, fun: CallableType, has_aux: bool) -> tuple[Type, Type]:
    ret = get_proper_type(fun.ret_type)
    if has_aux and isinstance(ret, TupleType) and len(ret.items) == 2:
        return _as_arrays(ctx, ret.items[0]), ret.items[1]
    any_t = AnyType(TypeOfAny.special_form)
    return (any_t, any_t) if has_aux else (_as_arrays(ctx, ret), any_t)


def _primal_types(ctx: FunctionContext, fun: CallableType) -> list[Type] | None:
    """Types of the parameters the ``*primals`` passed bind to (as arrays)."""
    n = len(_arg(ctx, "primals"))
    params = _positional(fun)
    if params is None or n > len(params):
        return None
    return [_as_arrays(ctx, t) for t in params[:n]]


def _vjp_hook(ctx: FunctionContext) -> Type:
    fun = _as_callable(_arg_type(ctx, "fun"))
    has_aux = _flag(ctx, "has_aux")
    primals = None if fun is None else _primal_types(ctx, fun)
    if fun is None or has_aux is None or primals is None:
        return ctx.default_return_type
    out, aux = _split_aux(ctx, fun, has_aux)
    pullback = _function(ctx, [out], _tuple(ctx, primals))
    return _tuple(ctx, [out, pullback, aux] if has_aux else [out, pullback])


def _linearize_hook(ctx: FunctionContext) -> Type:
    fun = _as_callable(_arg_type(ctx, "fun"))
    primals = None if fun is None else _primal_types(ctx, fun)
    if fun is None or primals is None:
        return ctx.default_return_type
    out = _as_arrays(ctx, fun.ret_type)
    return _tuple(ctx, [out, _function(ctx, primals, out)])


def _function(ctx: FunctionContext, params: Sequence[Type], ret: Type) -> CallableType:
    return CallableType(list(params), [ARG_POS] * len(params), [None] * len(params), ret,
                        ctx.api.named_generic_type("builtins.function", []))


_HOOKS: dict[str, Callable[[FunctionContext], Type]] = {
    _AD + "grad": _grad_hook(False),
    _AD + "value_and_grad": _grad_hook(True),
    _AD + "jvp": _jvp_hook,
    _AD + "vjp": _vjp_hook,
    _AD + "linearize": _linearize_hook,
}
