"""``einsum``: Einstein summation, built from transposes, reshapes, strided slices,
``reduce_sum`` and pairwise ``dot_general``.

The operands are contracted pairwise in the order ``optimize=`` chooses
(``einsum_paths``: by default the one JAX's ``opt_einsum`` chooses, so that the
intermediates and the numbers are JAX's).  Before each contraction,
labels that no later operand nor the output needs are summed out; a label
repeated within one operand takes its diagonal (a strided slice of the two
axes laid end to end); a size-1 axis whose label is longer elsewhere broadcasts.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.lax.ops import canonicalize_precision
from plait.frontend.numpy._core import as_array, check_arraylike, convert
from plait.frontend.numpy.einsum_paths import (
    Contraction,
    PathInfo,
    contraction_path,
    contraction_steps,
)
from plait.ir import dtypes as dt
from plait.ir.errors import IncompatibleShapesError
from plait.ir.sharding import NamedSharding, PartitionSpec, type_sharding_of

__all__ = ["einsum", "einsum_path"]

_LETTERS = string.ascii_letters


def einsum(subscripts: Any, /, *operands: Any, out: None = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Callable[..., Any] = lax.dot_general,
           out_sharding: Any = None) -> Array:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    Subscripts may use ``...`` for broadcast dimensions; without ``->`` the output
    is the labels used once, in alphabetical order (after the ``...`` dimensions).
    The interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is accepted too.
    ``optimize`` chooses the order of the pairwise contractions: ``"auto"`` (the
    default), ``"optimal"`` (or ``True``), ``"greedy"``, ``"branch-all"``, ``"branch-2"``,
    ``"branch-1"``, ``False`` (the first two operands, repeatedly), or a path as
    :func:`einsum_path` returns it.  The named strategies choose JAX's order.
    ``out_sharding`` is the sharding of the result's type (given to the last
    contraction, which needs it when it contracts a sharded dimension).  ``_dot_general``
    (JAX's private argument, which flax passes) does each contraction, called as
    ``lax.dot_general`` is (``out_sharding=`` only when there is one).

    Raises:
      ValueError: malformed subscripts, subscripts that do not fit the operands, or a
        bad ``optimize``.
      IncompatibleShapesError: one label with different sizes (neither 1).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts, *operands))
    if not operands:
        raise ValueError("einsum: no operands given")
    check_arraylike("einsum", *operands)
    custom = {} if _dot_general is lax.dot_general else {"dot_general": _dot_general}
    return _einsum(subscripts, *operands, optimize=optimize, precision=precision,
                   preferred_element_type=preferred_element_type, out_sharding=out_sharding,
                   **custom)


# (As JAX's, whose einsum is a jit: called eagerly, the contractions run as one compiled
# program, so that they round as JAX's do and dispatch once.)
@compiled_when_eager(("subscripts", "optimize", "precision", "preferred_element_type",
                      "out_sharding"))
def _einsum(subscripts: str, *operands: Any, optimize: Any, precision: Any,
            preferred_element_type: Any, out_sharding: Any,
            dot_general: Callable[..., Any] = lax.dot_general) -> Array:
    arrays = [as_array(x) for x in operands]
    inputs, output = _parse(subscripts, [a.ndim for a in arrays])
    if preferred_element_type is None:
        pet, weak = result_type_info([dtype_and_weak(a) for a in arrays])
    else:
        pet, weak = check_user_dtype(preferred_element_type, "einsum"), False
    requested = None if out_sharding is None else type_sharding_of(out_sharding, "einsum")
    result = _contract([as_array(convert(a, pet, False)) for a in arrays], inputs, output, pet,
                       canonicalize_precision(precision), requested, dot_general, optimize)
    return lax.convert_element_type(result, pet, weak)


def einsum_path(subscripts: Any, /, *operands: Any,
                optimize: Any = "auto") -> tuple[list[tuple[int, ...]], PathInfo]:
    """The order in which :func:`einsum` would contract ``operands`` (arrays, or
    anything with a shape) by ``optimize``, without contracting them: the path (which
    ``einsum(..., optimize=path)`` takes) and a report of its cost that prints as a
    table.  ``optimize`` is as :func:`einsum`'s.

    Raises:
      ValueError: as :func:`einsum`.
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts, *operands))
    if not operands:
        raise ValueError("einsum_path: no operands given")
    shapes = [tuple(int(d) for d in np.shape(x)) for x in operands]
    inputs, output = _parse(subscripts, [len(s) for s in shapes])
    sizes = _sizes(shapes, inputs)
    path = contraction_path(inputs, output, sizes, optimize)
    return path, PathInfo(inputs, output, shapes, sizes, path)


def _interleaved(args: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    """``(a, [0, 1], b, [1, 2], [0, 2])`` as ``("ab,bc->ac", (a, b))``."""
    def term(sub: Any) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            else:
                i = int(s)
                if not 0 <= i < len(_LETTERS):
                    raise ValueError(f"einsum: subscript {s!r} in the interleaved form is not "
                                     f"an int in [0, {len(_LETTERS)})")
                out.append(_LETTERS[i])
        return "".join(out)

    ops, terms = list(args[0::2]), [term(s) for s in args[1::2]]
    spec = ",".join(terms[:len(ops)])
    if len(args) % 2:
        ops = ops[:-1]
        spec = ",".join(terms) + "->" + term(args[-1])
    return spec, tuple(ops)


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    """The subscripts of each operand and of the output, ``...`` replaced by letters."""
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    if "->" in rhs or "-" in lhs or ">" in lhs:
        raise ValueError(f"einsum: invalid subscripts {subscripts!r}")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: the subscripts {subscripts!r} name {len(terms)} operands, "
                         f"but {len(ndims)} were given")
    for t in terms + [rhs]:
        # (As JAX's, through opt_einsum: any character but '.' is a label, '1' too.)
        if "." in t.replace("...", "") or t.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {subscripts!r}: expected labels and "
                             "at most one '...' per operand")
    used = set(s) - set(".,->")
    free = [c for c in _LETTERS if c not in used]
    ranks = []
    for t, nd in zip(terms, ndims):
        named = len(t.replace("...", ""))
        if "..." in t:
            if nd < named:
                raise ValueError(f"einsum: operand subscripts {t!r} name more dimensions than "
                                 f"the operand's {nd}")
            ranks.append(nd - named)
        elif named != nd:
            raise ValueError(f"einsum: operand subscripts {t!r} name {named} dimensions, but "
                             f"the operand has {nd}")
    ell_rank = max(ranks, default=0)
    if ell_rank > len(free):
        raise ValueError("einsum: too many dimensions for the available labels")
    ell = "".join(free[:ell_rank])
    expanded = [t.replace("...", ell[ell_rank - (nd - len(t.replace("...", ""))):])
                if "..." in t else t for t, nd in zip(terms, ndims)]
    if arrow:
        output = rhs.replace("...", ell)
    else:
        flat = "".join(t.replace("...", "") for t in terms)
        output = ell + "".join(c for c in sorted(set(flat)) if flat.count(c) == 1)
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: output subscript {rhs!r} repeats a label")
    missing = set(output) - set("".join(expanded))
    if missing:
        raise ValueError(f"einsum: output subscript {rhs!r} has labels {sorted(missing)} that "
                         "no operand has")
    return expanded, output


def _sum(x: Array, axes: Sequence[int]) -> Array:
    return lax.reduce_or(x, axes) if x.dtype == dt.bool_ else lax.reduce_sum(x, axes)


def _sum_unneeded(x: Array, labels: list[str], keep: set[str]) -> tuple[Array, list[str]]:
    axes = [labels.index(c) for c in sorted(labels) if c not in keep]  # (JAX's order)
    if not axes:
        return x, labels
    return _sum(x, axes), [c for c in labels if c in keep]


def _diagonals(x: Array, labels: list[str]) -> tuple[Array, list[str]]:
    """Each label repeated within ``labels`` reduced to its diagonal (moved last)."""
    while len(set(labels)) < len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        rest = [k for k in range(len(labels)) if k not in (i, j)]
        x = lax.transpose(x, rest + [i, j])
        n = x.shape[-1]
        batch = x.shape[:-2]
        x = lax.reshape(x, (*batch, n * n))
        nb = len(batch)
        if n > 1:
            x = lax.slice(x, [0] * (nb + 1), [*batch, n * n], [1] * nb + [n + 1])
        labels = [labels[k] for k in rest] + [c]
    return x, labels


def _sizes(shapes: Sequence[tuple[int, ...]], inputs: list[str]) -> dict[str, int]:
    """Each label's size (a size-1 axis broadcasts against a longer one)."""
    sizes: dict[str, int] = {}
    for shape, term in zip(shapes, inputs):
        for c, d in zip(term, shape):
            prev = sizes.get(c, d)
            if d != prev and 1 not in (d, prev):
                raise IncompatibleShapesError(
                    f"einsum: label {c!r} has size {d} in an operand of shape {shape}, but "
                    f"size {prev} elsewhere")
            sizes[c] = max(prev, d) if 1 in (d, prev) else d
    return sizes


Operand = tuple[Array, list[str]]


def _contract(arrays: list[Array], inputs: list[str], output: str,
              pet: np.dtype[Any], precision: Any = None,
              requested: NamedSharding | None = None,
              dot_general: Callable[..., Any] = lax.dot_general,
              optimize: Any = "auto") -> Array:
    sizes = _sizes([a.shape for a in arrays], inputs)
    steps = _plan(tuple(inputs), output, tuple(sizes.items()), optimize)
    ops: list[Operand] = []
    for a, term in zip(arrays, inputs):
        labels = list(term)
        broadcast = [i for i, c in enumerate(labels) if a.shape[i] == 1 and sizes[c] != 1]
        if broadcast:
            a = lax.squeeze(a, broadcast)
            labels = [c for i, c in enumerate(labels) if i not in broadcast]
        ops.append(_diagonals(a, labels))
    placed = False  # whether the last contraction gave the result out_sharding
    for step in steps:
        taken = [ops.pop(p) for p in step.positions]
        later = set(output).union(*[set(lb) for _, lb in ops])
        x, x_labels = _sum_unneeded(*taken[0], later.union(*[set(lb) for _, lb in taken[1:]]))
        for k in range(1, len(taken)):
            rest = later.union(*[set(lb) for _, lb in taken[k + 1:]])
            out = requested if not ops and k == len(taken) - 1 else None
            x, x_labels = _pair((x, x_labels), taken[k], rest, step.result, out, pet, precision,
                                dot_general)
            placed = out is not None and set(x_labels) == set(output)
        # (Every label of the result is in step.result: a squeezed size-1 axis's label
        # is still held, at its full size, by another operand.)
        order = sorted(x_labels, key=step.result.find)
        if order != x_labels:
            x = lax.transpose(x, [x_labels.index(c) for c in order])
        ops.append((x, order))
    (result, _), = ops
    return result if requested is None or placed else reshard(result, requested)


def _steps(inputs: tuple[str, ...], output: str, sizes: tuple[tuple[str, int], ...],
           optimize: Any) -> tuple[Contraction, ...]:
    table = dict(sizes)
    return tuple(contraction_steps(inputs, output, table,
                                   contraction_path(inputs, output, table, optimize)))


_cached_steps = functools.lru_cache(maxsize=1024)(_steps)


def _plan(inputs: tuple[str, ...], output: str, sizes: tuple[tuple[str, int], ...],
          optimize: Any) -> tuple[Contraction, ...]:
    """The contractions of ``optimize``'s path (cached per labels, sizes and a named
    strategy: the tracing of an einsum pays for its search once; a given path is not
    hashable, and is cheap to follow)."""
    return (_cached_steps if isinstance(optimize, str | bool) else _steps)(
        inputs, output, sizes, optimize)


def _pair(lhs: Operand, rhs: Operand, later: set[str], want: str,
          requested: NamedSharding | None, pet: np.dtype[Any], precision: Any,
          dot_general: Callable[..., Any]) -> Operand:
    """``lhs`` contracted with ``rhs``: labels both have and ``later`` (what the rest of
    the einsum needs) lacks are summed; the result's labels are in ``want``'s order
    where ``dot_general`` allows it (batch labels, then the free ones of an operand)."""
    x, x_labels = _sum_unneeded(*lhs, later | set(rhs[1]))
    y, y_labels = _sum_unneeded(*rhs, later | set(x_labels))
    common = set(x_labels) & set(y_labels)
    batch = sorted((c for c in common if c in later),
                   key=lambda c: (c not in want, want.find(c), x_labels.index(c)))
    contract = sorted(c for c in common if c not in later)
    x_free = [c for c in x_labels if c not in common]
    y_free = [c for c in y_labels if c not in common]
    # As JAX does: put the right operand first when that needs no transpose after.
    if batch + y_free + x_free == [c for c in want if c in x_labels or c in y_labels]:
        (x, x_labels, x_free), (y, y_labels, y_free) = (y, y_labels, y_free), (x, x_labels, x_free)
    dims = (([x_labels.index(c) for c in contract], [y_labels.index(c) for c in contract]),
            ([x_labels.index(c) for c in batch], [y_labels.index(c) for c in batch]))
    labels = batch + x_free + y_free
    extra: dict[str, Any] = {}
    if requested is not None and set(labels) == set(want):
        by_label = dict(zip(want, requested.spec.padded(len(want))))
        extra["out_sharding"] = NamedSharding(requested.mesh,
                                              PartitionSpec(*(by_label[c] for c in labels)))
    return dot_general(x, y, dims, precision, preferred_element_type=pet, **extra), labels
