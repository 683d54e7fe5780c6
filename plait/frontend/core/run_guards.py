"""The ``no_tracing`` and ``no_execution`` options (``plait.no_tracing``,
``plait.no_execution``): the errors raised where plait traces and where it runs a
computation while they are set."""

from __future__ import annotations

from typing import NoReturn

from plait.ir.config import values as _config

__all__ = ["check_tracing", "refuse_execution"]


def check_tracing(purpose: str, name: str) -> None:
    """Raise if tracing is disallowed (called where a function is traced to a jaxpr).

    Raises:
      RuntimeError: the ``no_tracing`` option is set.
    """
    if _config.no_tracing:
        raise RuntimeError(
            f"re-tracing function {name} for `{purpose}`, but 'no_tracing' is set: a call "
            "traces when no cached program fits its function and argument types (a new "
            "function, new shapes or dtypes, a Python scalar where an array was); trace "
            "it outside the plait.no_tracing block first, or leave the block")


def refuse_execution(name: str) -> NoReturn:
    """Raise the error of running computation ``name`` under ``no_execution`` (the
    callers check the option themselves, on their hot paths).

    Raises:
      RuntimeError: always.
    """
    raise RuntimeError(
        f"plait tried to execute function {name}, but the no_execution config option is "
        "set: leave the plait.no_execution block to run it (tracing, lowering and "
        "compiling work within it: plait.eval_shape, plait.make_jaxpr, jit(f).lower)")
