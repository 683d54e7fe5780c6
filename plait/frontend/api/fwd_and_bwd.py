"""``fwd_and_bwd``: reverse mode as two reusable (jitted) functions, as JAX 0.10.2's
``jax.fwd_and_bwd``: ``fwd(*args)`` is ``vjp`` of ``fun`` at ``args``, returning the
pullback (a pytree of residuals), and ``bwd(pullback, ct)`` applies it.  Jitted, each
compiles once for all the calls with the same types."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.api.autodiff import vjp
from plait.frontend.api.jit import jit
from plait.ir.errors import ArgumentError

__all__ = ["fwd_and_bwd"]


def _positions(argnums: int | Sequence[int]) -> tuple[int, ...]:
    try:
        return ((operator.index(argnums),) if not isinstance(argnums, Sequence)
                else tuple(operator.index(i) for i in argnums))
    except TypeError:
        raise TypeError(f"fwd_and_bwd: expected argnums an int or a sequence of ints, but got "
                        f"{argnums!r}") from None


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(fwd, bwd)``: ``fwd(*args)`` returns ``(fun(*args), residuals)`` (with ``aux``
    last if ``has_aux``), the residuals being ``vjp``'s pullback w.r.t. the arguments
    ``argnums``; ``bwd(residuals, ct)`` returns their cotangents (one, for an int
    ``argnums``).  Both are jitted unless ``jitted=False``.

    Raises:
      TypeError: ``fun`` is not callable or ``argnums`` not ints.
      ArgumentError: ``fwd`` is called with too few arguments for ``argnums``.
    """
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: expected a callable, but got {fun!r}")
    nums = _positions(argnums)

    def fwd(*args: Any) -> Any:
        n = len(args)
        if any(not -n <= i < n for i in nums):
            raise ArgumentError(f"fwd_and_bwd: argnums {nums} expected at least "
                                f"{max(i if i >= 0 else -i - 1 for i in nums) + 1} positional "
                                f"arguments, but got {n}")
        chosen = [i % n for i in nums]

        def partial(*dyn: Any) -> Any:
            full = list(args)
            for i, d in zip(chosen, dyn):
                full[i] = d
            return fun(*full)
        return vjp(partial, *[args[i] for i in chosen], has_aux=has_aux)

    def bwd(f_vjp: Callable[[Any], Any], outgrad: Any) -> Any:
        g = f_vjp(outgrad)
        return g[0] if not isinstance(argnums, Sequence) else g

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
