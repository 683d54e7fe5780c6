"""List helpers for rules that route positional operands: split, partition, merge, fixpoint.

Rules of higher-order primitives keep converting between the flat operand list
of an equation (consts, carries, scanned inputs, ...) and the lists a
transformation splits it into (known and unknown, zero and nonzero tangents).
These helpers name those moves so that each rule says which one it makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

__all__ = ["split_list", "partition_list", "merge_lists", "fill_in", "carry_fixpoint"]

T = TypeVar("T")
U = TypeVar("U")


def split_list(xs: Sequence[T], *sizes: int) -> list[list[T]]:
    """``xs`` cut into pieces of the given sizes, and one last piece with the rest."""
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def partition_list(mask: Sequence[bool], xs: Sequence[T]) -> tuple[list[T], list[T]]:
    """The items of ``xs`` whose mask is false, and those whose mask is true."""
    falses: list[T] = []
    trues: list[T] = []
    for m, x in zip(mask, xs, strict=True):
        (trues if m else falses).append(x)
    return falses, trues


def merge_lists(mask: Sequence[bool], falses: Iterable[T], trues: Iterable[U]) -> list[T | U]:
    """The inverse of :func:`partition_list`: ``trues`` where the mask is true, in order."""
    it_f, it_t = iter(falses), iter(trues)
    return [next(it_t) if m else next(it_f) for m in mask]


def fill_in(mask: Sequence[bool], present: Iterable[T], xs: Sequence[U],
            absent: Callable[[U], T]) -> list[T]:
    """``present`` values where the mask is true, ``absent(x)`` elsewhere.

    The common case: a rule returns tangents only for the nonzero positions, and
    the others become symbolic zeros of the corresponding value's type.
    """
    it = iter(present)
    return [next(it) if m else absent(x) for m, x in zip(mask, xs, strict=True)]


def carry_fixpoint(flags: Sequence[bool], step: Callable[[list[bool]], Sequence[bool]]
                   ) -> list[bool]:
    """The least fixed point above ``flags`` of ``flags | step(flags)``.

    A loop carry is nonzero (batched, unknown) if its initial value is, or if one
    iteration makes it so; ``step`` says which carries one iteration makes so.
    Flags only grow, so this ends after at most ``len(flags)`` steps.
    """
    cur = list(flags)
    while True:
        new = [a or b for a, b in zip(cur, step(cur), strict=True)]
        if new == cur:
            return cur
        cur = new
