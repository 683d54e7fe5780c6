"""Lowering of ``check``: only ``checkify`` gives a check a meaning in a compiled
program; one left in a program is refused (a ``debug`` check is dropped), as JAX does."""

from __future__ import annotations

from typing import Any

from plait.ir import primitives as P
from plait.lowering.emitter import Value
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register

__all__: list[str] = []

NOT_FUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")


@register(P.check_p)
def _check(ctx: LoweringContext, *args: Value, debug: bool, **_: Any) -> list[Value]:
    if not debug:
        raise ValueError(NOT_FUNCTIONALIZED)
    return []
