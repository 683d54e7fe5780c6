"""Reference rule of ``jit``: evaluate the callee."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.errors import CheckError
from plait.ir.interpreter import eval_jaxpr, impl_rules
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import jit_p


def _jit(*args: np.ndarray, jaxpr: ClosedJaxpr, **_: Any) -> list[np.ndarray]:
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


impl_rules[jit_p] = _jit


impl_rules[P.add_any_p] = lambda x, y: (np.add(x, y),)


def _exported(*args: np.ndarray, exported: P.ExportedModule) -> list[np.ndarray]:
    # The callee is StableHLO, which only the compiler runs.
    raise NotImplementedError(
        f"the reference interpreter cannot run the exported function '{exported.fun_name}' "
        "(its body is a StableHLO module); run it with plait (eagerly or under jit)")


impl_rules[P.call_exported_p] = _exported
impl_rules[P.call_exported_lin_p] = _exported


def _ffi(*args: np.ndarray, target_name: str, **_: Any) -> list[np.ndarray]:
    # The handler is native code, which only the compiled program calls.
    raise NotImplementedError(
        f"the reference interpreter cannot run the FFI handler '{target_name}' (native code, "
        "which only a compiled program calls); run it with plait (eagerly or under jit)")


impl_rules[P.ffi_call_p] = _ffi


def _callback(*args: np.ndarray, callback: P.HostCallback, **_: Any) -> list[np.ndarray]:
    # The host callback is Python: the reference interpreter calls it directly.
    return [np.asarray(x) for x in callback(*args)]


impl_rules[P.pure_callback_p] = _callback
impl_rules[P.io_callback_p] = _callback
impl_rules[P.debug_callback_p] = _callback


def _check(pred: np.ndarray, *fmt: np.ndarray, message: P.CheckMessage, batch_ndim: int,
           debug: bool) -> list[np.ndarray]:
    if not debug and not np.all(pred):
        raise CheckError(f"check failed: {message.text}")
    return []


impl_rules[P.check_p] = _check
