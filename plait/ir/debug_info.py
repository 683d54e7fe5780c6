"""Debug information: where IR came from.  Never part of structural identity."""

from __future__ import annotations

import attrs

__all__ = ["DebugInfo", "SourceInfo"]


@attrs.frozen
class DebugInfo:
    """Names of a traced function, its flattened arguments and results.

    Conventions follow JAX's debug info: a missing argument name is ``""``; a
    single result is ``("result",)``, a pair ``("result[0]", "result[1]")``,
    a dict ``("result['k']",)``.
    """

    func_name: str
    """The traced function's ``__name__`` (``"<lambda>"`` for lambdas)."""
    arg_names: tuple[str, ...]
    """One name per flattened input, such as ``"x"`` or ``"params['w']"``."""
    result_paths: tuple[str, ...]
    """One path per flattened output."""
    func_src_info: str = ""
    """``"f at /path/file.py:12"`` when known."""

    def with_result_paths(self, result_paths: tuple[str, ...]) -> DebugInfo:
        """A copy with the result paths set (they are known only after tracing)."""
        return attrs.evolve(self, result_paths=result_paths)


@attrs.frozen
class SourceInfo:
    """The user source line that emitted an equation."""

    file: str
    """The file name."""
    line: int
    """The 1-based line number."""
    function: str
    """The enclosing function's qualified name (``Model.apply.<locals>.<lambda>``)."""
    name_stack: str = ""
    """The ``named_scope``\\ s active when it was traced, outermost first, joined by ``/``
    (``"block/attention"``), relative to the jaxpr that holds the equation (as JAX's: a
    called or nested jaxpr is traced from an empty stack, and lowering puts its
    equations under the stack of the equation that holds it); lowering names the
    equation's ops after it."""
    column: int = -1
    """The 0-based column of the expression on the line (-1: unknown)."""

    def __str__(self) -> str:
        # JAX's form: file:line:column (function).
        col = f":{self.column}" if self.column >= 0 else ""
        where = f"{self.file}:{self.line}{col} ({self.function})"
        # (A stack whose scopes are all transformations of no scope, "transpose(jvp())",
        # names nothing.)
        named = any(not part.rstrip(")").endswith("(") for part in self.name_stack.split("/")
                    if part)
        return f"[{self.name_stack}] {where}" if named else where

    def transformed(self, transform: str) -> SourceInfo:
        """This source info with its name stack under a transformation (``jvp``,
        ``transpose``, ``vmap``), named as JAX names it: the outermost scope wrapped,
        ``a/b`` becoming ``jvp(a)/b`` and an empty stack ``jvp()``."""
        head, sep, rest = self.name_stack.partition("/")
        return attrs.evolve(self, name_stack=f"{transform}({head}){sep}{rest}")

    def under(self, scope: str) -> SourceInfo:
        """This source info with its name stack inside ``scope``: an equation of a called
        jaxpr (whose stack is relative to the call) moved to where the call was."""
        if not scope:
            return self
        return attrs.evolve(self, name_stack=f"{scope}/{self.name_stack}" if self.name_stack
                            else scope)
