"""Drawing where an array's shards live (``plait.debug.visualize_array_sharding``).

A grid of boxes, one per distinct shard: a box's height and width follow the
shard's share of the array's rows and columns, and it names the devices holding
the shard (``CPU 0,1``).  The geometry is JAX 0.10.2's, so the drawings match
the ones JAX prints, without the colours (and without the ``rich`` package).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.frontend.core.tracing import Tracer
from plait.ir.errors import ArgumentError

__all__ = ["visualize_array_sharding", "visualize_sharding"]

_WIDTH_PER_HEIGHT = 2.5
"""A text line is about two and a half characters tall."""


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Print how an array of ``shape`` (one or two dimensions) is laid out by ``sharding``.

    ``use_color`` and ``color_map`` are accepted for JAX's signature; plait draws
    without colours.
    """
    del use_color, color_map
    shape = tuple(int(d) for d in shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding: expected a shape of 1 or 2 dimensions, but got "
                         f"{shape}")
    print(_draw(shape, _cells(shape, sharding), scale, min_width, max_width))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print how the array ``arr`` is laid out over its devices (see
    :func:`visualize_sharding` for the options)."""
    if type(arr) is Tracer:
        raise ArgumentError("visualize_array_sharding: expected a concrete array, but got a "
                            f"traced value {arr.aval.str_short()}: where its shards live is "
                            "decided when the program is compiled; call it on the result, "
                            "outside the transformation")
    sharding = getattr(arr, "sharding", None)
    if sharding is None:
        raise TypeError(f"visualize_array_sharding: expected a plait Array, but got "
                        f"{type(arr).__name__}")
    visualize_sharding(arr.shape, sharding, **kwargs)


def _cells(shape: tuple[int, ...], sharding: Any) -> dict[tuple[tuple[int, int], ...], set[Any]]:
    """The devices holding each distinct shard, keyed by its (start, stop) per dimension
    (two dimensions, the first whole for a one-dimensional array)."""
    cells: dict[tuple[tuple[int, int], ...], set[Any]] = {}
    for device, index in sharding.devices_indices_map(shape).items():
        bounds = tuple(s.indices(n)[:2] for s, n in zip(index, shape))
        key = ((0, 1), *bounds) if len(shape) == 1 else bounds
        cells.setdefault(key, set()).add(device)
    return cells


def _draw(shape: tuple[int, ...], cells: dict[tuple[tuple[int, int], ...], set[Any]],
          scale: float, min_width: int, max_width: int) -> str:
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    one_dim = len(shape) == 1
    height_unit = int(10 * scale)
    width_unit = int(height_unit * (1 if one_dim else shape[1]) / shape[0])
    # Per box: its label, the spaces left and right of it, the lines above it, its lines.
    boxes: dict[tuple[int, int], tuple[str, int, int, int, int]] = {}
    for key, devices in cells.items():
        (r0, r1), (c0, c1) = key
        first = next(iter(devices))
        label = (f"{str(getattr(first, 'platform', 'device')).upper()} "
                 + ",".join(str(i) for i in sorted(d.id for d in devices)))
        width = int((c1 - c0) / shape[-1] * width_unit * _WIDTH_PER_HEIGHT)
        width = min(max(width, min_width), max_width)
        height = 1 if one_dim else int((r1 - r0) / shape[0] * height_unit)
        left, extra = divmod(width - len(label) - 2, 2)
        top, below = divmod(height - 2, 2)
        boxes[rows.index(key[0]), cols.index(key[1])] = (
            label, max(left, 0), max(left + extra, 0), max(top, 0),
            max(top, 0) + 1 + max(top + below, 0))
    col_widths = [max(b[1] + len(b[0]) + b[2] for (_, c), b in boxes.items() if c == j)
                  for j in range(len(cols))]
    room = max_width - len(cols) - 1
    if sum(col_widths) > room:  # too wide: narrower columns, each still fitting its labels
        col_widths = [max(w * room // sum(col_widths),
                          max(len(b[0]) for (_, c), b in boxes.items() if c == j))
                      for j, w in enumerate(col_widths)]
    lines = ["┌" + "┬".join("─" * w for w in col_widths) + "┐"]
    for i in range(len(rows)):
        row = [boxes[i, j] for j in range(len(cols))]
        for k in range(max(b[4] for b in row)):
            parts = [_place(label, left, w) if k == above else " " * w
                     for (label, left, _, above, _), w in zip(row, col_widths)]
            lines.append("│" + "│".join(parts) + "│")
        if i + 1 < len(rows):
            lines.append("├" + "┼".join("─" * w for w in col_widths) + "┤")
    lines.append("└" + "┴".join("─" * w for w in col_widths) + "┘")
    return "\n".join(lines)


def _place(label: str, left: int, width: int) -> str:
    """``label`` in a line of ``width``: ``left`` spaces before it if it fits, else centred."""
    if left + len(label) > width:
        left = max((width - len(label)) // 2, 0)
    return (" " * left + label).ljust(width)
