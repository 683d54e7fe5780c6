"""``check_jaxpr``: the type checker of the IR.

Every variable is bound once, before use; every equation's outputs have the
types its primitive's typing rule gives; params match the declarations;
nested jaxprs are checked recursively.  Errors are :class:`JaxprTypeError`\\ s
that print the offending equation, named as in ``print(jaxpr)``.
"""

from __future__ import annotations

import contextlib

from plait.ir import axis_env
from plait.ir.atoms import Literal, Var
from plait.ir.avals import ShapedArray
from plait.ir.errors import JaxprTypeError, UnboundVariableError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, subjaxprs
from plait.ir.printer import pp_eqn_in

__all__ = ["check_jaxpr"]


def _same_type(a: object, b: object) -> bool:
    if isinstance(a, ShapedArray) and isinstance(b, ShapedArray):
        return a.strip_weak_type() is b.strip_weak_type()
    return a == b


def _fail(jaxpr: Jaxpr, eqn: Eqn | None, msg: str,
          cls: type[JaxprTypeError] = JaxprTypeError) -> None:
    if eqn is not None:
        msg = f"{msg}\nin equation:\n  {pp_eqn_in(jaxpr, eqn)}"
    raise cls(msg)


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Type-check ``jaxpr`` (and the jaxprs nested in its params).

    Raises:
      JaxprTypeError: the jaxpr is ill-formed or ill-typed.
    """
    if isinstance(jaxpr, ClosedJaxpr):
        for v, c in zip(jaxpr.jaxpr.constvars, jaxpr.consts):
            shape = getattr(c, "shape", None)
            if (isinstance(v.aval, ShapedArray) and shape is not None
                    and tuple(shape) != v.aval.shape):
                raise JaxprTypeError(f"expected a const of shape {v.aval.shape}, but got "
                                     f"{tuple(shape)}")
        jaxpr = jaxpr.jaxpr
    bound: set[Var] = set()

    def bind(v: Var, eqn: Eqn | None) -> None:
        if type(v) is not Var:
            _fail(jaxpr, eqn, f"expected a Var binder, but got {v!r}")
        if v in bound:
            _fail(jaxpr, eqn, f"expected each variable to be bound once, but a variable of type "
                              f"{v.aval.str_short()} is bound again "
                              f"{'by this equation' if eqn else 'as an input'}",
                  UnboundVariableError)
        bound.add(v)

    for v in jaxpr.constvars + jaxpr.invars:
        bind(v, None)
    effects: set[object] = set()
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        for i, a in enumerate(eqn.invars):
            if type(a) is Var:
                if a not in bound:
                    _fail(jaxpr, eqn, f"expected operands bound before use, but operand {i} "
                                      f"({a.aval.str_short()}) is not bound", UnboundVariableError)
            elif type(a) is not Literal:
                _fail(jaxpr, eqn, f"expected a Var or Literal operand, but got {a!r}")
        try:
            params = prim.complete_params(eqn.params)
            if params != eqn.params:
                raise JaxprTypeError(f"{prim.name}: expected all declared params, but got "
                                     f"{sorted(eqn.params)}")
            out_avals = prim.abstract_eval([a.aval for a in eqn.invars], eqn.params)
        except JaxprTypeError as e:
            _fail(jaxpr, eqn, str(e))
        if len(out_avals) != len(eqn.outvars):
            _fail(jaxpr, eqn, f"{prim.name}: expected {len(out_avals)} outputs, "
                              f"but got {len(eqn.outvars)}")
        for v, aval in zip(eqn.outvars, out_avals):
            if not _same_type(v.aval, aval):
                _fail(jaxpr, eqn, f"{prim.name}: expected an output of type {aval.str_short()}, "
                                  f"but got {v.aval.str_short()}")
        if eqn.effects != prim.effects(eqn.params):
            _fail(jaxpr, eqn, f"{prim.name}: expected effects {set(prim.effects(eqn.params))}, "
                              f"but got {set(eqn.effects)}")
        effects.update(eqn.effects)
        axes = axis_env.body_axes.get(prim)
        with axis_env.frame(axes(eqn.params)) if axes is not None else contextlib.nullcontext():
            for sub in subjaxprs(eqn.params):
                try:
                    check_jaxpr(sub)
                except JaxprTypeError as e:
                    _fail(jaxpr, eqn, f"{prim.name}: in a nested jaxpr: {e}")
        for v in eqn.outvars:
            bind(v, eqn)
    for i, a in enumerate(jaxpr.outvars):
        if type(a) is Var and a not in bound:
            _fail(jaxpr, None, f"expected outputs bound before use, but output {i} "
                               f"({a.aval.str_short()}) is not bound", UnboundVariableError)
    if not effects <= jaxpr.effects:
        _fail(jaxpr, None, f"expected the jaxpr's effects to include {effects}, "
                           f"but got {set(jaxpr.effects)}")
