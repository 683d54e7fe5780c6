"""The list helpers that rules use to route positional operands."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plait.ir.lists import carry_fixpoint, fill_in, merge_lists, partition_list, split_list

masked = st.lists(st.tuples(st.booleans(), st.integers()), max_size=12)


@given(masked)
def test_merge_inverts_partition(pairs: list[tuple[bool, int]]) -> None:
    mask = [m for m, _ in pairs]
    xs = [x for _, x in pairs]
    falses, trues = partition_list(mask, xs)
    assert falses == [x for m, x in pairs if not m]
    assert trues == [x for m, x in pairs if m]
    assert merge_lists(mask, falses, trues) == xs


@given(st.lists(st.integers(), max_size=12), st.lists(st.integers(0, 5), max_size=4))
def test_split_list(xs: list[int], sizes: list[int]) -> None:
    pieces = split_list(xs, *sizes)
    assert len(pieces) == len(sizes) + 1
    assert sum(pieces, []) == xs
    start = 0
    for piece, n in zip(pieces, sizes):
        assert piece == xs[start:start + n]
        start += len(piece)


def test_fill_in() -> None:
    assert fill_in([True, False, True], ["a", "b"], [1, 2, 3], lambda x: f"zero{x}") == \
        ["a", "zero2", "b"]


@given(st.lists(st.booleans(), max_size=8), st.data())
def test_carry_fixpoint_is_least_fixed_point(flags: list[bool], data: st.DataObject) -> None:
    n = len(flags)
    # A monotone step: carry i becomes true if any of its sources is true (a dependency graph).
    sources = [data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3)) if n else []
               for _ in range(n)]
    calls = []

    def step(cur: list[bool]) -> list[bool]:
        calls.append(list(cur))
        return [any(cur[j] for j in src) for src in sources]

    out = carry_fixpoint(flags, step)
    # Above the start, closed under the step ...
    assert all(o or not f for o, f in zip(out, flags))
    assert [a or b for a, b in zip(out, step(out))] == out
    # ... and least: exactly what is reachable from the initially true flags.
    reach = {i for i, f in enumerate(flags) if f}
    changed = True
    while changed:
        changed = False
        for i, src in enumerate(sources):
            if i not in reach and any(j in reach for j in src):
                reach.add(i)
                changed = True
    assert out == [i in reach for i in range(n)]
    assert len(calls) <= n + 2
