"""Reference rules of control flow, custom-derivative calls, remat and custom linear solves:
plain Python loops."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.avals import shaped_avals
from plait.ir.interpreter import eval_jaxpr, impl_rules
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives.control_flow import Platforms, platform_branch
from plait.ir.primitives.custom import nonlinear_bwd_error


def _run(j: ClosedJaxpr, *args: Any) -> list[np.ndarray]:
    return eval_jaxpr(j.jaxpr, j.consts, *args)


def _cond(index: np.ndarray, *ops: np.ndarray, branches: tuple[ClosedJaxpr, ...],
          branches_platforms: Platforms | None) -> list[np.ndarray]:
    i = int(index)
    if not 0 <= i < len(branches):
        i = len(branches) - 1  # XLA's case runs the last branch for any index out of range
    return _run(branches[i], *ops)


def _while(*args: np.ndarray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
           cond_nconsts: int, body_nconsts: int) -> list[np.ndarray]:
    cconsts = args[:cond_nconsts]
    bconsts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(_run(cond_jaxpr, *cconsts, *carry)[0]):
        carry = _run(body_jaxpr, *bconsts, *carry)
    return carry


def _scan(*args: np.ndarray, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
          num_carry: int, unroll: Any) -> list[np.ndarray]:
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    ys: list[list[np.ndarray]] = []
    out_avals = shaped_avals(jaxpr.out_avals[num_carry:])
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = _run(jaxpr, *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        ys.append(outs[num_carry:])
    if reverse:
        ys.reverse()
    stacked = [np.stack([y[k] for y in ys]) if ys else
               np.zeros((0,) + a.shape, a.dtype)
               for k, a in enumerate(out_avals)]
    return carry + stacked


def _call(*args: np.ndarray, call_jaxpr: ClosedJaxpr, **_: Any) -> list[np.ndarray]:
    return _run(call_jaxpr, *args)


def _custom_lin(*args: np.ndarray, name: str, num_res: int, bwd_jaxpr: ClosedJaxpr,
                fwd_lin_jaxpr: ClosedJaxpr | None) -> list[np.ndarray]:
    if fwd_lin_jaxpr is None:
        raise nonlinear_bwd_error(name)
    return _run(fwd_lin_jaxpr, *args)


def _linear_solve(*args: np.ndarray, const_lengths: P.LinearSolveTuple[int],
                  jaxprs: P.LinearSolveTuple[ClosedJaxpr | None]) -> list[np.ndarray]:
    start = const_lengths.matvec + const_lengths.vecmat
    consts = args[start:start + const_lengths.solve]
    assert jaxprs.solve is not None
    return _run(jaxprs.solve, *consts, *args[sum(const_lengths):])


impl_rules[P.platform_index_p] = lambda *, platforms: (
    np.asarray(platform_branch(platforms, "cpu"), np.int32),)
impl_rules[P.cond_p] = _cond
impl_rules[P.while_p] = _while
impl_rules[P.scan_p] = _scan
impl_rules[P.custom_jvp_call_p] = _call
impl_rules[P.custom_vjp_call_p] = _call
impl_rules[P.custom_vmap_call_p] = lambda *args, call, **_: _run(call, *args)
impl_rules[P.custom_lin_p] = _custom_lin
impl_rules[P.custom_linear_solve_p] = _linear_solve
impl_rules[P.remat_p] = lambda *args, jaxpr, **_: _run(jaxpr, *args)
