"""``plait.extend.mlir``: the MLIR Python bindings of jaxlib (``ir``, ``dialects``), which
lowering rules of user primitives build ops with (see ``plait.interpreters.mlir``)."""

from jaxlib.mlir import ir as ir

from plait.extend.mlir import dialects as dialects

__all__ = ["dialects", "ir"]
