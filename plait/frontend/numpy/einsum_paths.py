"""The order in which ``einsum`` contracts its operands: ``optimize=``'s strategies.

A *path* lists the contractions in order, each as the positions of its operands in
the current list of operands; a contraction removes its operands from the list and
appends its result (``[(1, 2), (0, 1)]`` for three operands contracts the last two,
then the first with that result).  Paths are chosen to minimise the estimated
number of floating-point operations, as ``opt_einsum`` (which JAX asks) chooses
them, so that plait contracts in JAX's order and gets JAX's numbers:

* ``"optimal"``: every order, depth first, pruned by the best cost found so far;
* ``"branch-all"``, ``"branch-2"``, ``"branch-1"``: the same search, trying the
  pairs whose contraction shrinks memory most first, following at most 2 (1) of
  them at each step, and abandoning an order four times costlier than the best
  one had been at the same step;
* ``"greedy"`` (``"eager"``, ``"opportunistic"``): repeated duplicates first, then
  the pair that shrinks memory most, then outer products, smallest first;
* ``"auto"`` (the default): ``"optimal"`` for up to 4 operands, ``"branch-all"``
  for 5-6, ``"branch-2"`` for 7-8, ``"branch-1"`` for 9-14, ``"greedy"`` above.

Where two orders cost the same, the one found first wins, so the searches visit
candidates in ``opt_einsum``'s order (pairs of a set of ids, a heap of costs).
"""

from __future__ import annotations

import bisect
import decimal
import heapq
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

__all__ = ["STRATEGIES", "Contraction", "PathInfo", "contraction_path", "contraction_steps",
           "flop_count", "size_of"]

Labels = frozenset[str]
Path = list[tuple[int, ...]]
Search = Callable[[list[Labels], Labels, Mapping[str, int]], Path]


def size_of(labels: Iterable[str], sizes: Mapping[str, int]) -> int:
    """The number of elements of an array with ``labels``."""
    return math.prod(sizes[c] for c in labels)


def flop_count(labels: Iterable[str], inner: bool, terms: int, sizes: Mapping[str, int]) -> int:
    """The estimated cost of contracting ``terms`` arrays over ``labels`` (``inner``:
    some label is summed away)."""
    return size_of(labels, sizes) * (max(1, terms - 1) + int(inner))


def _pair(inputs: Sequence[Labels], output: Labels, remaining: set[int], i: int, j: int,
          sizes: Mapping[str, int]) -> tuple[Labels, int]:
    """The labels of ``inputs[i]`` contracted with ``inputs[j]``, and its cost."""
    either = inputs[i] | inputs[j]
    keep = output.union(*(inputs[k] for k in remaining - {i, j}))
    return either & keep, flop_count(either, bool((inputs[i] & inputs[j]) - keep), 2, sizes)


def _ssa_to_linear(ssa_path: Sequence[tuple[int, ...]]) -> Path:
    """Contractions named by single-assignment ids (results numbered on from the
    inputs) renamed to positions in the shrinking list of operands."""
    n = sum(map(len, ssa_path)) - len(ssa_path) + 1
    alive = list(range(n))
    path: Path = []
    for new, ids in enumerate(ssa_path, start=n):
        positions = sorted(bisect.bisect_left(alive, s) for s in ids)
        for p in reversed(positions):
            alive.pop(p)
        alive.append(new)
        path.append(tuple(positions))
    return path


def optimal(inputs: list[Labels], output: Labels, sizes: Mapping[str, int]) -> Path:
    """The cheapest order of pairwise contractions, by exhaustive search."""
    best: dict[str, Any] = {"flops": math.inf, "path": (tuple(range(len(inputs))),)}
    cache: dict[tuple[Labels, Labels], tuple[Labels, int]] = {}

    def search(path: tuple[tuple[int, int], ...], remaining: set[int],
               terms: tuple[Labels, ...], flops: int) -> None:
        if len(remaining) == 1:
            best["flops"], best["path"] = flops, path
            return
        for i, j in itertools.combinations(remaining, 2):
            i, j = min(i, j), max(i, j)
            key = (terms[i], terms[j])
            if key not in cache:  # (keyed on the pair, as opt_einsum's cache is)
                cache[key] = _pair(terms, output, remaining, i, j, sizes)
            k12, cost = cache[key]
            if flops + cost >= best["flops"]:
                continue
            search(path + ((i, j),), (remaining - {i, j}) | {len(terms)}, terms + (k12,),
                   flops + cost)

    search((), set(range(len(inputs))), tuple(inputs), 0)
    return _ssa_to_linear(best["path"])


def branch(nbranch: int | None) -> Search:
    """The branch-and-bound search following ``nbranch`` candidates per step (all: None)."""
    def search(inputs: list[Labels], output: Labels, sizes: Mapping[str, int]) -> Path:
        best: dict[str, Any] = {"flops": math.inf, "size": math.inf, "path": ()}
        progress: defaultdict[int, float] = defaultdict(lambda: math.inf)
        size_cache = {k: size_of(k, sizes) for k in inputs}
        cache: dict[tuple[Labels, Labels], tuple[Labels, int]] = {}

        def assess(terms: tuple[Labels, ...], remaining: set[int], flops: int, size: int,
                   i: int, j: int) -> tuple[Any, ...] | None:
            key = (terms[i], terms[j])
            if key not in cache:
                cache[key] = _pair(terms, output, remaining, i, j, sizes)
            k12, cost = cache[key]
            if k12 not in size_cache:
                size_cache[k12] = size_of(k12, sizes)
            new_flops, new_size = flops + cost, max(size, size_cache[k12])
            if (new_flops, new_size) >= (best["flops"], best["size"]):
                return None
            if new_flops < progress[len(terms)]:
                progress[len(terms)] = new_flops
            elif new_flops > 4 * progress[len(terms)]:
                return None
            shrink = size_cache[k12] - size_cache[terms[i]] - size_cache[terms[j]]
            return shrink, cost, new_flops, new_size, (i, j), k12

        def step(path: tuple[tuple[int, int], ...], terms: tuple[Labels, ...],
                 remaining: set[int], flops: int, size: int) -> None:
            if len(remaining) == 1:
                best.update(flops=flops, size=size, path=path)
                return
            heap: list[tuple[Any, ...]] = []
            for outer in (False, True):  # outer products only when nothing else is left
                for i, j in itertools.combinations(remaining, 2):
                    i, j = min(i, j), max(i, j)
                    if not outer and terms[i].isdisjoint(terms[j]):
                        continue
                    candidate = assess(terms, remaining, flops, size, i, j)
                    if candidate is not None:
                        heapq.heappush(heap, candidate)
                if heap:
                    break
            for _ in range(len(heap) if nbranch is None else min(nbranch, len(heap))):
                _, _, new_flops, new_size, (i, j), k12 = heapq.heappop(heap)
                step(path + ((i, j),), terms + (k12,), (remaining - {i, j}) | {len(terms)},
                     new_flops, new_size)

        step((), tuple(inputs), set(range(len(inputs))), 0, 0)
        return _ssa_to_linear(best["path"])
    return search


def greedy(inputs: list[Labels], output: Labels, sizes: Mapping[str, int]) -> Path:
    """Duplicates first, then the pair that shrinks memory most, then outer products."""
    output = output | frozenset.intersection(*inputs)
    ids = itertools.count(len(inputs))
    remaining: dict[Labels, int] = {}
    ssa: list[tuple[int, ...]] = []
    for n, key in enumerate(inputs):
        if key in remaining:
            ssa.append((remaining[key], n))
            remaining[key] = next(ids)
        else:
            remaining[key] = n
    holders: defaultdict[str, set[Labels]] = defaultdict(set)
    for key in remaining:
        for c in key - output:
            holders[c].add(key)
    twice = {c for c, ks in holders.items() if len(ks) >= 2} - output
    thrice = {c for c, ks in holders.items() if len(ks) >= 3} - output
    footprint = {key: size_of(key, sizes) for key in remaining}

    def candidate(k1: Labels, k2: Labels) -> tuple[Any, ...]:
        either, both = k1 | k2, k1 & k2
        k12 = (either & output) | (both & thrice) | ((either - both) & twice)
        id1, id2 = remaining[k1], remaining[k2]
        if id1 > id2:
            k1, id1, k2, id2 = k2, id2, k1, id1
        cost = size_of(k12, sizes) - footprint[k1] - footprint[k2]
        return (cost, id2, id1), k1, k2, k12

    queue: list[tuple[Any, ...]] = []
    for keys in holders.values():
        ordered = sorted(keys, key=remaining.__getitem__)
        for n, k1 in enumerate(ordered[:-1]):
            heapq.heappush(queue, min(candidate(k1, k2) for k2 in ordered[n + 1:]))
    while queue:
        _, k1, k2, k12 = heapq.heappop(queue)
        if k1 not in remaining or k2 not in remaining:
            continue  # a stale candidate: one of its operands was contracted already
        ssa.append((remaining.pop(k1), remaining.pop(k2)))
        for k in (k1, k2):
            for c in k - output:
                holders[c].remove(k)
        if k12 in remaining:
            ssa.append((remaining[k12], next(ids)))
        else:
            for c in k12 - output:
                holders[c].add(k12)
        remaining[k12] = next(ids)
        for c in k1 | (k2 - output):  # (opt_einsum's precedence, kept for its paths)
            count = len(holders[c])
            for group, least in ((twice, 2), (thrice, 3)):
                if count >= least:
                    group.add(c)
                else:
                    group.discard(c)
        footprint[k12] = size_of(k12, sizes)
        partners = {k for c in k12 for k in holders[c]} - {k12}
        if partners:
            heapq.heappush(queue, min(candidate(k12, k2) for k2 in partners))
    # What is left shares no summed label: outer products, smallest result first.
    finals = [(size_of(key & output, sizes), n, key) for key, n in remaining.items()]
    heapq.heapify(finals)
    _, id1, k1 = heapq.heappop(finals)
    while finals:
        _, id2, k2 = heapq.heappop(finals)
        ssa.append((min(id1, id2), max(id1, id2)))
        k12 = (k1 | k2) & output
        _, id1, k1 = heapq.heappushpop(finals, (size_of(k12, sizes), next(ids), k12))
    return _ssa_to_linear(ssa)


def _auto(inputs: list[Labels], output: Labels, sizes: Mapping[str, int]) -> Path:
    n = len(inputs)
    chosen = (optimal if n <= 4 else _BRANCH_ALL if n <= 6 else _BRANCH_2 if n <= 8
              else _BRANCH_1 if n <= 14 else greedy)
    return chosen(inputs, output, sizes)


_BRANCH_ALL, _BRANCH_2, _BRANCH_1 = branch(None), branch(2), branch(1)
STRATEGIES: dict[str, Search] = {
    "auto": _auto, "optimal": optimal, "branch-all": _BRANCH_ALL, "branch-2": _BRANCH_2,
    "branch-1": _BRANCH_1, "greedy": greedy, "eager": greedy, "opportunistic": greedy}
"""The named strategies ``optimize=`` takes (``True`` is ``"optimal"``)."""


def contraction_path(inputs: Sequence[str], output: str, sizes: Mapping[str, int],
                     optimize: Any) -> Path:
    """The path ``einsum`` follows for operands labelled ``inputs`` (``...`` expanded)
    and result ``output``, by ``optimize``: a strategy's name, ``True`` (optimal),
    ``False`` (the first two operands, repeatedly), or a path.

    Raises:
      ValueError: an unknown strategy, or a path that does not contract every operand
        into one.
    """
    n = len(inputs)
    if isinstance(optimize, (list, tuple)):
        return _checked(optimize, n)
    if optimize is True:
        optimize = "optimal"
    if not isinstance(optimize, str) and optimize is not False:
        raise ValueError(f"einsum: expected optimize to be a bool, a strategy name or a "
                         f"path (a list of tuples of operand positions), but got {optimize!r}")
    search = STRATEGIES.get(optimize.lower()) if isinstance(optimize, str) else None
    if isinstance(optimize, str) and search is None:
        raise ValueError(f"einsum: unknown optimize strategy {optimize!r}; expected one of "
                         f"{sorted(STRATEGIES)}, True, False or a path")
    if n <= 2:
        return [tuple(range(n))]
    if search is None:
        return [(0, 1)] * (n - 1)
    return search([frozenset(t) for t in inputs], frozenset(output), sizes)


def _checked(path: Sequence[Any], n: int) -> Path:
    out: Path = []
    count = n
    for step in path:
        if (not isinstance(step, (tuple, list)) or not step
                or not all(isinstance(p, int) and 0 <= p < count for p in step)
                or len(set(step)) != len(step)):
            raise ValueError(f"einsum: the path {list(path)!r} is not valid for {n} operands: "
                             f"expected each step to be a tuple of distinct positions among "
                             f"the {count} operands left, but got {step!r}")
        out.append(tuple(int(p) for p in step))
        count -= len(step) - 1
    if count != 1:
        raise ValueError(f"einsum: the path {list(path)!r} leaves {count} operands of {n}; "
                         "expected its steps to contract them all into one")
    return out


@attrs.frozen
class Contraction:
    """One step of a path (immutable: ``einsum`` caches its plans)."""

    positions: tuple[int, ...]
    """The positions of the operands it contracts, in the current list, descending."""
    terms: tuple[str, ...]
    """Their labels, in that order."""
    result: str
    """The labels of its result, in order of first appearance among ``terms``."""
    removed: Labels
    """The labels it sums away."""
    flops: int
    """Its estimated cost (:func:`flop_count`)."""
    scale: int
    """The number of distinct labels it involves."""


def contraction_steps(inputs: Sequence[str], output: str, sizes: Mapping[str, int],
                      path: Path) -> list[Contraction]:
    """``path``'s contractions, each with the labels of its result (in order of first
    appearance among its operands' labels; the last one's are ``output``)."""
    terms = list(inputs)
    steps: list[Contraction] = []
    for n, step in enumerate(path):
        positions = tuple(sorted(step, reverse=True))
        taken = [terms.pop(p) for p in positions]
        every = frozenset("".join(taken))
        kept = every & frozenset(output).union(*map(frozenset, terms))
        joined = "".join(taken)
        result = output if n == len(path) - 1 else "".join(sorted(kept, key=joined.find))
        steps.append(Contraction(positions, tuple(taken), result, every - kept,
                                 flop_count(every, bool(every - kept), len(taken), sizes),
                                 len(every)))
        terms.append(result)
    return steps


def blas_kind(terms: Sequence[str], result: str, removed: Labels,
              shapes: Sequence[Sequence[int]]) -> str | bool:
    """Which BLAS-like kernel a pairwise contraction amounts to, as ``einsum_path``
    reports it (``"GEMM"``, ``"DOT"``...; ``False``: none, e.g. a repeated label)."""
    if len(terms) != 2:
        return False
    left, right = terms
    for c in set(left + right):
        nl, nr = left.count(c), right.count(c)
        if nl > 1 or nr > 1 or nl + nr - 1 == int(c in result):
            return False
    if any(shapes[0][left.find(c)] != shapes[1][right.find(c)] for c in removed):
        return False
    if not removed:
        return "OUTER/EINSUM"
    r = len(removed)
    if left == right:
        return "DOT"
    if set(left) == set(right):
        return "DOT/EINSUM"
    if (left[-r:] == right[:r] or left[:r] == right[-r:] or left[-r:] == right[-r:]
            or left[:r] == right[:r]):
        return "GEMM"
    if not set(left) - removed or not set(right) - removed:
        return "GEMV/EINSUM"
    return "TDOT"


class PathInfo:
    """What ``einsum_path`` reports besides the path: costs, scalings and each
    contraction; printed as a table (as JAX's, which is ``opt_einsum``'s)."""

    def __init__(self, inputs: Sequence[str], output: str, shapes: Sequence[Sequence[int]],
                 sizes: Mapping[str, int], path: Path) -> None:
        self.path = path
        """The path, as ``einsum_path`` returns it."""
        self.equation = ",".join(inputs) + "->" + output
        """The contraction, ``...`` spelled with letters."""
        self.steps = contraction_steps(inputs, output, sizes, path)
        """Each contraction of the path."""
        every = frozenset("".join(inputs))
        self.naive_cost = flop_count(every, sum(map(len, map(set, inputs))) > len(every),
                                     len(inputs), sizes)
        """The cost of contracting every operand at once."""
        self.opt_cost = sum(s.flops for s in self.steps)
        """The cost of the path."""
        self.largest_intermediate = max((size_of(s.result, sizes) for s in self.steps),
                                        default=1)
        """The number of elements of the path's largest result."""
        self._scaling = len(every)
        self._output = output
        self._blas = self._kinds(inputs, shapes, sizes)

    def _kinds(self, inputs: Sequence[str], shapes: Sequence[Sequence[int]],
               sizes: Mapping[str, int]) -> list[str | bool]:
        current = [tuple(s) for s in shapes]
        kinds: list[str | bool] = []
        for step in self.steps:
            taken = [current.pop(p) for p in step.positions]
            kept = frozenset("".join(step.terms)) - step.removed
            kinds.append(blas_kind(step.terms, "".join(sorted(kept)), step.removed, taken))
            current.append(tuple(sizes[c] for c in step.result))
        return kinds

    def __repr__(self) -> str:
        speedup = decimal.Decimal(self.naive_cost) / max(decimal.Decimal(self.opt_cost),
                                                          decimal.Decimal(1))
        lines = [f"  Complete contraction:  {self.equation}\n",
                 f"         Naive scaling:  {self._scaling}\n",
                 f"     Optimized scaling:  {max((s.scale for s in self.steps), default=0)}\n",
                 f"      Naive FLOP count:  {decimal.Decimal(self.naive_cost):.3e}\n",
                 f"  Optimized FLOP count:  {decimal.Decimal(self.opt_cost):.3e}\n",
                 f"   Theoretical speedup:  {speedup:.3e}\n",
                 f"  Largest intermediate:  {decimal.Decimal(self.largest_intermediate):.3e}"
                 " elements\n",
                 "-" * 80 + "\n",
                 f"{'scaling':>6} {'BLAS':>11} {'current':>22} {'remaining':>37}\n",
                 "-" * 80]
        terms = list(self.equation.split("->")[0].split(","))
        for step, kind in zip(self.steps, self._blas):
            for p in step.positions:
                terms.pop(p)
            terms.append(step.result)
            current = ",".join(step.terms) + "->" + step.result
            remaining = ",".join(terms) + "->" + self._output if len(terms) <= 20 else "..."
            width = max(0, 56 - max(22, len(current)))
            lines.append(f"\n{step.scale:>4} {kind:>14} {current:>22}    {remaining:>{width}}")
        return "".join(lines)
