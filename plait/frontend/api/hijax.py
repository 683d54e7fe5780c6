"""``VJPHiPrimitive``: an operation with its own derivative rules, written as a class
(``jax.experimental.hijax``'s interface).

A subclass declares its input and output types and static parameters, an
``expand`` method (the implementation, in ordinary plait operations) and the rules
it needs: ``vjp_fwd`` with ``vjp_bwd_retval`` (or ``vjp_bwd``) for reverse mode,
``jvp`` for forward mode.  plait stages a call as the IR's ``custom_vjp_call`` (when
there are reverse-mode rules) or ``custom_jvp_call`` (a ``jvp`` rule only), named
after the class, so every transformation, and the printed and parsed jaxpr, treat
it as those.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from plait.frontend.api.custom_derivatives import MAX_RULE_DEPTH, custom_jvp, custom_vjp
from plait.frontend.core.tree_util import tree_flatten, tree_map, tree_unflatten
from plait.frontend.lax.ops import full
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError

__all__ = ["VJPHiPrimitive", "GradAccum", "ValAccum", "NullAccum", "Zero", "instantiate_zeros"]


class GradAccum:
    """Where ``vjp_bwd`` puts one input's cotangent: call ``accum(value)``."""

    aval: ShapedArray
    """The cotangent's type."""

    def accum(self, x: Any) -> None:
        """Add ``x`` to the cotangent."""
        raise NotImplementedError


class ValAccum(GradAccum):
    """An accumulator of a value: the cotangent returned as usual."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval
        self.val: Any = None

    def accum(self, x: Any) -> None:
        """Add ``x`` to the cotangent (``None`` adds nothing)."""
        if x is not None:
            self.val = x if self.val is None else self.val + x

    def __repr__(self) -> str:
        return f"ValAccum({self.aval.str_short(short_dtypes=False)})"


class NullAccum(GradAccum):
    """An accumulator of a cotangent nobody wants: ``accum`` drops it."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def accum(self, x: Any) -> None:
        """Drop ``x``."""

    def __repr__(self) -> str:
        return f"NullAccum({self.aval.str_short(short_dtypes=False)})"


class VJPHiPrimitive:
    """Base class of an operation with its own derivative rules.

    A subclass's ``__init__`` sets ``self.in_avals`` (a tuple with one type, or
    pytree of types, per argument), ``self.out_aval`` (the result's type, or pytree
    of types) and ``self.params`` (static values, readable as attributes), then calls
    ``super().__init__()``.  It defines ``expand(*args)`` and, for
    differentiation, ``vjp_fwd(nzs_in, *args) -> (out, residuals)`` with
    ``vjp_bwd_retval(residuals, out_ct) -> (ct per argument, None for zero)``, or
    ``jvp(primals, tangents) -> (out, out_tangent)``.  ``batch_dim_rule`` and
    ``batch`` may be defined for JAX compatibility: plait batches the traced rules
    itself, which gives the same values.
    """

    in_avals: tuple[Any, ...]
    out_aval: Any
    params: dict[str, Hashable]

    def __init__(self) -> None:
        for attr in ("in_avals", "out_aval", "params"):
            if not hasattr(self, attr):
                raise AttributeError(f"subclass __init__ should set `self.{attr}`")
        if (_overrides(self, "vjp_bwd") and _overrides(self, "vjp_bwd_retval")):
            raise AttributeError(f"subclass {type(self)} should not override both `vjp_bwd` "
                                 "and `vjp_bwd_retval`")
        self.__dict__.update(self.params)
        self.check(*self.in_avals)
        self._fun = self._staged()

    # -- what a subclass defines ----------------------------------------------------
    def expand(self, *args: Any) -> Any:
        """The operation, in ordinary plait operations."""
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in: Any, /, *args: Any) -> Any:
        """Reverse mode's forward pass: ``(out, residuals)``."""
        raise NotImplementedError(f"for grad support, subclass {type(self)} must implement "
                                  "`vjp_fwd`")

    def vjp_bwd(self, res: Any, outgrad: Any, /, *arg_accums: Any) -> None:
        """Reverse mode's backward pass, accumulating into one accumulator per argument."""
        args_grad = self.vjp_bwd_retval(res, outgrad)
        tree_map(lambda acc, v: acc.accum(v) if isinstance(acc, GradAccum) else None,
                 list(arg_accums), list(args_grad), is_leaf=lambda x: isinstance(x, GradAccum))

    def vjp_bwd_retval(self, res: Any, outgrad: Any, /) -> Any:
        """Reverse mode's backward pass: one cotangent per argument (``None``: zero)."""
        raise NotImplementedError(f"for grad support, subclass {type(self)} must implement "
                                  "`vjp_bwd` or `vjp_bwd_retval`")

    def jvp(self, primals: Any, tangents: Any) -> Any:
        """Forward mode: ``(out, out_tangent)``."""
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must implement "
                                  "`jvp`")

    def check(self, *arg_tys: Any) -> None:
        """Check the argument types (a subclass may override this)."""

    # -- the call -------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.in_avals):
            raise ArgumentError(f"{type(self).__name__}: expected {len(self.in_avals)} "
                                f"arguments, but got {len(args)}")
        # plait traces a call's rules when the call is traced (JAX, when it is
        # differentiated), so a rule that calls a new instance of its own class (a
        # fixed point whose backward pass is a fixed point) would recurse for ever:
        # past MAX_RULE_DEPTH nested rules, the call is its expansion alone.
        if _nesting.depth >= MAX_RULE_DEPTH:
            return self.expand(*args)
        _nesting.depth += 1
        try:
            return self._fun(*args)
        finally:
            _nesting.depth -= 1

    def _staged(self) -> Callable[..., Any]:
        name = type(self).__name__

        def expand(*args: Any) -> Any:
            return self.expand(*args)
        expand.__name__ = name
        if _overrides(self, "vjp_fwd"):
            f: Any = custom_vjp(expand)
            nzs = tuple(tree_map(lambda _: True, a) for a in self.in_avals)

            def fwd(*args: Any) -> Any:
                out, res, *_ = self.vjp_fwd(nzs, *args)
                return out, res
            f.defvjp(fwd, self._bwd)
            return f  # type: ignore[no-any-return]  # (a custom_vjp function)
        if _overrides(self, "jvp"):
            g: Any = custom_jvp(expand)
            g.defjvp(lambda primals, tangents: self.jvp(tuple(primals), tuple(tangents)))
            return g  # type: ignore[no-any-return]  # (a custom_jvp function)
        return expand

    def _bwd(self, res: Any, g: Any) -> Any:
        if not _overrides(self, "vjp_bwd"):
            return tuple(self.vjp_bwd_retval(res, g))
        accums = [tree_map(ValAccum, a, is_leaf=lambda x: isinstance(x, ShapedArray))
                  for a in self.in_avals]
        self.vjp_bwd(res, g, *accums)
        leaves, tree = tree_flatten(accums, is_leaf=lambda x: isinstance(x, ValAccum))
        return tuple(tree_unflatten(tree, [
            full(a.aval.shape, 0, a.aval.dtype) if a.val is None else a.val for a in leaves]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}[{self.params}]"

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.params.items())))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.params == getattr(other, "params", None)


class _Nesting(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_nesting = _Nesting()


class Zero:
    """A symbolic zero cotangent, as JAX's rules may receive.  plait passes zero
    arrays instead, so rules see arrays only; the class is here for code that
    handles both (``instantiate_zeros``)."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short(short_dtypes=False)})"


def instantiate_zeros(x: Any) -> Any:
    """``x``, a :class:`Zero` replaced by an array of zeros of its type."""
    if isinstance(x, Zero):
        return full(x.aval.shape, 0, x.aval.dtype)
    return x


def _overrides(obj: VJPHiPrimitive, method: str) -> bool:
    return getattr(type(obj), method) is not getattr(VJPHiPrimitive, method)
