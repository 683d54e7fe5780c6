"""The ``sparsify`` rules of control flow: ``while_loop`` (and ``fori_loop``), ``cond``
(and ``switch``), ``scan``, and calls of ``custom_jvp``/``custom_vjp`` functions.

A loop or conditional with a sparse operand stays one: its body is evaluated with the
sparse rules over the operands' buffers (a sparse value is its ``data`` and ``indices``),
inside the dense ``lax`` construct.  A loop's carries keep their kind: a sparse carry
must come out of the body sparse with the same number of stored elements, a dense one
dense.  A custom-derivative function is evaluated through its body, its rule dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.api.control_flow import scan, switch, while_loop
from plait.frontend.api.make_jaxpr import eval_shape
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.sparse.layout import SparseBuffers, SparseInfo
from plait.frontend.sparse.sparsify import SparseValue, eval_sparse, fresh, sparse_rules
from plait.ir import primitives as P
from plait.ir.jaxpr import ClosedJaxpr

__all__ = ["custom_call_rule"]

Kind = tuple[SparseInfo, tuple[int, ...]] | None
"""What a value is: ``None`` for dense, or a sparse value's info and data shape."""


def _kinds(values: Sequence[Any]) -> list[Kind]:
    return [(v.buffers.info, tuple(v.buffers.data.shape)) if type(v) is SparseValue else None
            for v in values]


def _buffers(values: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        out.extend((v.buffers.data, v.buffers.indices) if type(v) is SparseValue else (v,))
    return out


def _values(kinds: Sequence[Kind], buffers: Sequence[Any]) -> list[Any]:
    it = iter(buffers)
    return [next(it) if k is None else fresh(SparseBuffers(next(it), next(it), k[0]))
            for k in kinds]


def _loosened(v: Any) -> Any:
    """A loop carry without the sorted/unique flags: an iteration may not keep them."""
    if type(v) is not SparseValue:
        return v
    return SparseValue(v.buffers._replace(info=SparseInfo(v.buffers.shape)), v.indices_ref)


def _carries(init: Sequence[Any], body: Callable[[list[Kind]], Callable[..., Any]],
             *extra: Any) -> list[Any]:
    """The loop carries ``init``, keeping their sorted/unique flags if one step keeps them
    (then every step does), else without them.  ``body(kinds)`` is the loop body over
    buffers, which records the kinds of its carries out in ``kinds`` after the inputs'."""
    kinds = _kinds(init)
    probe = list(kinds)
    eval_shape(body(probe), _buffers(init), *extra)
    return list(init) if probe[len(kinds):] == kinds else [_loosened(v) for v in init]


def _check_carries(what: str, before: Sequence[Kind], after: Sequence[Kind]) -> None:
    def layout(k: Kind) -> Any:  # (the sorted/unique flags may differ between steps)
        return None if k is None else (k[0].shape, k[1])
    for i, (b, a) in enumerate(zip(before, after)):
        if layout(b) != layout(a):
            raise TypeError(f"sparsify: the {what} must keep each carry's sparsity, but "
                            f"carry {i} goes in {_kind_text(b)} and comes out "
                            f"{_kind_text(a)}")


def _kind_text(k: Kind) -> str:
    if k is None:
        return "dense"
    return f"sparse (shape {k[0].shape}, data of shape {k[1]})"


def _run(closed: ClosedJaxpr, ins: Sequence[Any]) -> list[Any]:
    return eval_sparse(closed.jaxpr, closed.consts, ins)


def _while(*args: Any, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
           body_nconsts: int) -> list[Any]:
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]

    def body(kinds: list[Kind]) -> Callable[[list[Any]], list[Any]]:
        n = len(kinds)

        def body_fun(carry: list[Any]) -> list[Any]:
            outs = _run(body_jaxpr, [*body_consts, *_values(kinds[:n], carry)])
            kinds[n:] = _kinds(outs)
            _check_carries("while_loop body", kinds[:n], kinds[n:])
            return _buffers(outs)
        return body_fun
    init = _carries(args[cond_nconsts + body_nconsts:], body)
    kinds = _kinds(init)

    def cond_fun(carry: list[Any]) -> Any:
        out, = _run(cond_jaxpr, [*cond_consts, *_values(kinds, carry)])
        return out
    return _values(kinds, while_loop(cond_fun, body(list(kinds)), _buffers(init)))


def _cond(index: Any, *operands: Any, branches: Sequence[ClosedJaxpr],
          branches_platforms: Any = None) -> list[Any]:
    if type(index) is SparseValue:
        raise NotImplementedError("sparse rule for cond with a sparse predicate is not "
                                  "implemented.")
    if branches_platforms is not None:
        raise NotImplementedError("sparse rule for platform_dependent is not implemented.")
    kinds = _kinds(operands)
    out_kinds: list[list[Kind]] = [[] for _ in branches]

    def branch(i: int) -> Callable[..., list[Any]]:
        def run(*bufs: Any) -> list[Any]:
            outs = _run(branches[i], _values(kinds, bufs))
            out_kinds[i] = _kinds(outs)
            return _buffers(outs)
        return run
    flat = _buffers(operands)
    for i in range(len(branches)):  # each branch's kinds, before switch compares types
        eval_shape(branch(i), *flat)
        if out_kinds[i] != out_kinds[0]:
            raise TypeError("sparsify: the branches of cond must give results of the same "
                             f"sparsity, but branch 0 gives "
                             f"{[_kind_text(k) for k in out_kinds[0]]} and branch {i} gives "
                             f"{[_kind_text(k) for k in out_kinds[i]]}")
    return _values(out_kinds[0], switch(index, [branch(i) for i in range(len(branches))],
                                        *flat))


def _scan_slice_kind(v: Any, length: int) -> Kind:
    """The kind of one step's slice of a scanned operand."""
    if type(v) is not SparseValue:
        return None
    m = v.buffers
    if m.layout.n_batch < 1 or m.data.shape[0] != length or m.indices.shape[0] != length:
        raise NotImplementedError(
            "sparse rule for scan over a sparse array is implemented for arrays whose "
            "leading dimension is an (unbroadcast) batch dimension; use "
            "bcoo_update_layout(n_batch=1) first")
    return (SparseInfo(m.shape[1:]), tuple(m.data.shape[1:]))


def _scan(*args: Any, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
          num_carry: int, unroll: Any = 1, **params: Any) -> list[Any]:
    consts = args[:num_consts]
    xs = args[num_consts + num_carry:]
    x_kinds = [_scan_slice_kind(x, length) for x in xs]
    y_kinds: list[Kind] = []

    def body(kinds: list[Kind]) -> Callable[[list[Any], list[Any]], Any]:
        n = len(kinds)

        def step(carry: list[Any], x: list[Any]) -> tuple[list[Any], list[Any]]:
            outs = _run(jaxpr, [*consts, *_values(kinds[:n], carry), *_values(x_kinds, x)])
            kinds[n:] = _kinds(outs[:num_carry])
            _check_carries("scan body", kinds[:n], kinds[n:])
            y_kinds[:] = _kinds(outs[num_carry:])
            return _buffers(outs[:num_carry]), _buffers(outs[num_carry:])
        return step
    # (one step, on the first slice of each xs, to see what the carries keep)
    first = [ShapeDtypeStruct(b.shape[1:], b.dtype) for b in _buffers(xs)]
    init = _carries(args[num_consts:num_consts + num_carry], body, first)
    kinds = _kinds(init)
    carry, ys = scan(body(list(kinds)), _buffers(init), _buffers(xs), length=length,
                     reverse=reverse, unroll=unroll)
    # Stacked along a new batch dimension, each step's sorted indices stay sorted.
    stacked: list[Kind] = [None if k is None else (k[0]._replace(shape=(length, *k[0].shape)),
                                                   (length, *k[1])) for k in y_kinds]
    return [*_values(kinds, carry), *_values(stacked, ys)]


def custom_call_rule(*args: Any, call_jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    """The rule of a custom-derivative function's call: its body, the rule dropped."""
    return _run(call_jaxpr, args)


sparse_rules[P.while_p] = _while
sparse_rules[P.cond_p] = _cond
sparse_rules[P.scan_p] = _scan
sparse_rules[P.custom_jvp_call_p] = custom_call_rule
sparse_rules[P.custom_vjp_call_p] = custom_call_rule
