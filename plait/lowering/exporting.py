"""StableHLO for export: the module, its safety checks, its portable bytes, and the
functions of a serialized module made ready to inline into another module.

Exported modules follow JAX's calling convention (version 9 and 10): ``@main``
takes the platform index first when the module serves several platforms
(``jax.global_constant = "_platform_index"``), then the kept array arguments.
The bytes are a StableHLO portable artifact, versioned for consumers up to four
weeks older than this ``jaxlib`` (as JAX writes them).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Final

from plait.ir.caches import BoundedDict
from plait.lowering.runtime import mlir_context

__all__ = ["STABLE_CUSTOM_CALL_TARGETS", "check_custom_calls", "serialize_module",
           "deserialize_module", "module_text", "ForeignModule", "foreign_module",
           "HOST_CALLBACK_TARGETS", "set_locations"]

_LAPACK_ROUTINES: Final = ("potrf", "geqrf", "orgqr", "ungqr", "syevd", "heevd", "geev",
                           "gesdd", "getrf", "sytrd", "hetrd", "gehrd", "gees", "trsm",
                           "gtsv")
_CPU_KERNELS: Final = frozenset(
    f"lapack_{p}{r}_ffi" for r in _LAPACK_ROUTINES for p in "sdcz"
    # (LAPACK names the complex variants of the symmetric routines by their own names)
    if not (p in "sd" and r in ("ungqr", "heevd", "hetrd"))
    and not (p in "cz" and r in ("orgqr", "syevd", "sytrd")))

STABLE_CUSTOM_CALL_TARGETS: Final = frozenset({
    *_CPU_KERNELS,
    # GPU and TPU kernels JAX guarantees (a module exported by JAX for those platforms
    # may hold them; plait never emits them).
    "cu_lu_pivots_to_permutation", "cusolver_getrf_ffi", "hip_lu_pivots_to_permutation",
    "hipsolver_getrf_ffi", "cusolver_geqrf_ffi", "cusolver_orgqr_ffi", "hipsolver_geqrf_ffi",
    "hipsolver_orgqr_ffi", "cusolver_potrf_ffi", "hipsolver_potrf_ffi", "cusolver_syevd_ffi",
    "hipsolver_syevd_ffi", "cusolver_gesvd_ffi", "cusolver_gesvdj_ffi", "hipsolver_gesvd_ffi",
    "hipsolver_gesvdj_ffi", "hipsolver_gesdd_ffi", "cusolver_sytrd_ffi", "hipsolver_sytrd_ffi",
    "cusparse_gtsv2_ffi", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "Eigh", "Qr",
    "ProductOfElementaryHouseholderReflectors", "LuDecomposition", "ApproxTopK",
    "stablehlo.dynamic_approx_top_k", "tpu_custom_call", "mosaic_gpu_v2",
    # Sharding annotations and shape-polymorphism helpers.
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
    "AllocateBuffer", "stablehlo.dynamic_reduce_window", "stablehlo.dynamic_rng_bit_generator",
    "stablehlo.dynamic_top_k", "shape_assertion",
})
"""Custom-call targets whose implementations keep backward compatibility (JAX 0.10.2's
list): a module calling any other target cannot be exported unless the check is
disabled for it."""

HOST_CALLBACK_TARGETS: Final = frozenset({"xla_ffi_python_cpu_callback",
                                          "xla_python_cpu_callback",
                                          "xla_ffi_python_gpu_callback"})
"""Targets that call back into the Python process that compiled the module."""

def _ops(op: Any) -> Iterator[Any]:
    yield op
    for region in op.regions:
        for block in region:
            for inner in block:
                yield from _ops(inner.operation)


def _custom_call_targets(module: Any) -> list[tuple[str, str]]:
    """``(target, op text)`` of every custom call in ``module``."""
    from jaxlib.mlir import ir
    found = []
    for op in _ops(module.operation):
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            found.append((target, op.get_asm(enable_debug_info=False, assume_verified=True)))
    return found


def check_custom_calls(module: Any, allowed: frozenset[str], platforms: Sequence[str]) -> None:
    """Refuse what cannot be exported: host callbacks, custom calls without
    compatibility guarantees (unless in ``allowed``), and CPU kernels in a module
    exported for other platforms.

    Raises:
      ValueError: naming the offending custom calls.
    """
    calls = _custom_call_targets(module)
    callbacks = sorted({t for t, _ in calls if t in HOST_CALLBACK_TARGETS})
    if callbacks:
        raise ValueError("Cannot export a function that calls back into Python (host "
                         f"callbacks: {', '.join(callbacks)}): the exported module would "
                         "call into a process that no longer exists when it runs")
    bad = [text for t, text in calls
           if t not in STABLE_CUSTOM_CALL_TARGETS and t not in allowed and "ALL" not in allowed]
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            "guarantees. Pass plait.export.DisabledSafetyCheck.custom_call(target) for each "
            "target you trust. Examples are:\n" + "\n".join(bad) + ".")
    others = [p for p in platforms if p != "cpu"]
    cpu_only = sorted({t for t, _ in calls if t.startswith("lapack_")})
    if cpu_only and others:
        raise ValueError(
            f"Cannot export for platforms {tuple(platforms)}: plait lowers this function with "
            f"CPU kernels ({', '.join(cpu_only)}), and has no lowering of them for "
            f"{', '.join(others)}; export for platforms=['cpu']")


def set_locations(module: Any, arg_names: Sequence[str]) -> None:
    """Replace the text positions parsing gave ``module``'s ops by unknown locations (the
    named-scope locations stay), and name ``@main``'s arguments, as JAX's modules do."""
    from jaxlib.mlir import ir
    with mlir_context():
        unknown = ir.Location.unknown()

        def clean(loc: Any) -> Any:
            return unknown if str(loc).startswith('loc("-":') else loc
        for op in _ops(module.operation):
            op.location = clean(op.location)
            for region in op.regions:
                for block in region:
                    for arg in block.arguments:
                        arg.set_location(clean(arg.location))
        main = ir.SymbolTable(module.operation)["main"]
        args = main.regions[0].blocks[0].arguments
        skip = len(args) - len(arg_names)  # (the platform index comes first)
        for i, name in enumerate(arg_names):
            if name:
                args[skip + i].set_location(ir.Location.name(name))


def _target_version() -> str:
    from jaxlib.mlir.dialects import stablehlo
    # Readable by consumers built up to four weeks before this jaxlib (JAX's choice).
    return str(stablehlo.get_version_from_compatibility_requirement(
        stablehlo.StablehloCompatibilityRequirement.WEEK_4))


_trusted: BoundedDict[bytes, bool] = BoundedDict("artifacts known to parse safely", 4096)
"""Digests of the artifacts this process wrote or checked (a forgotten one is checked again)."""


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def serialize_module(module: Any) -> bytes:
    """The StableHLO portable artifact of a parsed module."""
    from jaxlib.mlir.dialects import stablehlo
    with mlir_context():
        data: bytes = stablehlo.serialize_portable_artifact(module, _target_version(), True)
    _trusted[_digest(data)] = True
    return data


# Run by a child Python: reads an artifact on stdin, parses and verifies it.
_CHECKER: Final = """
import sys
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, sdy, stablehlo
registry = ir.DialectRegistry()
_jax_mlir_ext.register_dialects(registry)
ctx = ir.Context()
ctx.append_dialect_registry(registry)
ctx.load_all_available_dialects()
for d in (stablehlo, chlo, sdy):
    d.register_dialect(ctx)
with ctx:
    stablehlo.deserialize_portable_artifact(ctx, sys.stdin.buffer.read()).operation.verify()
"""


def _check_in_child(data: bytes) -> None:
    """Parse an artifact from outside in a child process first: MLIR's bytecode reader
    may crash the process on corrupted bytes (measured: aborts and segfaults), so a
    crash must be the child's."""
    digest = _digest(data)
    if digest in _trusted:
        return
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _CHECKER], input=data,
                              capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(f"could not check the exported module in a child process: {exc}"
                         ) from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        why = (f"reading it crashed the checking process (signal {-done.returncode})"
               if done.returncode < 0 else lines[-1] if lines else "unknown error")
        raise ValueError(f"the exported module is not a readable StableHLO portable "
                         f"artifact: {why}")
    _trusted[digest] = True


_lock = threading.Lock()


def deserialize_module(data: bytes) -> Any:
    """Parse a StableHLO portable artifact (a fresh module each call); bytes this
    process did not write are first checked in a child process (once).

    Raises:
      ValueError: the bytes are not a readable artifact.
    """
    from jaxlib.mlir.dialects import stablehlo
    _check_in_child(data)
    ctx = mlir_context()
    with _lock, ctx:
        # MLIR reports why on the context's diagnostics: keep them for the message.
        notes: list[str] = []

        def keep(d: Any) -> bool:
            notes.append(str(d.message))
            return True
        handler = ctx.attach_diagnostic_handler(keep)
        try:
            return stablehlo.deserialize_portable_artifact(ctx, bytes(data))
        except Exception as exc:
            why = "; ".join(notes) or str(exc)
            raise ValueError(f"the exported module is not a readable StableHLO portable "
                             f"artifact: {why}") from None
        finally:
            handler.detach()


def module_text(data: bytes, debug_info: bool = False) -> str:
    """The module of a portable artifact in MLIR's pretty syntax."""
    with mlir_context():
        text: str = deserialize_module(data).operation.get_asm(enable_debug_info=debug_info)
    return text


class ForeignModule:
    """The functions of a serialized module, renamed to fit into another module."""

    __slots__ = ("functions", "main", "arg_types", "result_types")

    def __init__(self, functions: list[str], main: str, arg_types: list[str],
                 result_types: list[str]) -> None:
        self.functions = functions
        """Each top-level op's text (generic syntax), ``main`` made private."""
        self.main = main
        """The new name of ``@main``."""
        self.arg_types = arg_types
        """``@main``'s argument types."""
        self.result_types = result_types
        """``@main``'s result types."""


_texts: BoundedDict[bytes, str] = BoundedDict("deserialized exported modules", 64)


def foreign_module(data: bytes, rename: Any) -> ForeignModule:
    """The top-level ops of the artifact ``data``, each symbol renamed by ``rename(name)``.

    Raises:
      ValueError: the artifact is unreadable or has no ``@main``.
    """
    from jaxlib.mlir import ir
    ctx = mlir_context()
    text = _texts.get(data)
    with ctx:
        if text is None:
            text = _texts[data] = deserialize_module(data).operation.get_asm(
                print_generic_op_form=True, assume_verified=True)
        module = ir.Module.parse(text)
        ops = list(module.body.operations)
        names = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in ops
                 if "sym_name" in op.attributes}
        if "main" not in names:
            raise ValueError("the exported module has no @main function")
        new_names = {n: rename(n) for n in names}
        for old, op in names.items():
            ir.SymbolTable.replace_all_symbol_uses(old, new_names[old], module.operation)
            ir.SymbolTable.set_symbol_name(op, new_names[old])
        main = names["main"]
        main.attributes["sym_visibility"] = ir.StringAttr.get("private")
        for a in ("arg_attrs", "res_attrs"):
            if a in main.attributes:
                del main.attributes[a]
        fn_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        return ForeignModule(
            [str(op.get_asm(print_generic_op_form=True, assume_verified=True)) for op in ops],
            new_names["main"], [str(t) for t in fn_type.inputs],
            [str(t) for t in fn_type.results])
