"""The layering rule of DESIGN.md, enforced on the source: imports only point down.

``plait/ir`` imports nothing from the other layers; ``transforms`` and
``lowering`` import only ``ir``; ``frontend`` sits on top.  The errors and the
options every layer needs live in ``plait/ir`` (``plait.errors`` and
``plait.config`` are their public names, which only the frontend imports).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "plait"
ALLOWED = {
    "ir": {"ir"},
    "transforms": {"ir", "transforms"},
    "lowering": {"ir", "lowering"},
}


def _plait_imports(path: pathlib.Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n == "plait" or n.startswith("plait.")]
    return found


def _violations(layer: str) -> list[str]:
    out = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, name in _plait_imports(path):
            parts = name.split(".")
            target = parts[1] if len(parts) > 1 else ""
            if target not in ALLOWED[layer]:
                out.append(f"{path.relative_to(ROOT.parent)}:{line} imports {name}")
    return out


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_point_down(layer: str) -> None:
    assert _violations(layer) == []


def test_checker_detects_a_violation(tmp_path: pathlib.Path) -> None:
    fake = tmp_path / "plait"
    (fake / "ir").mkdir(parents=True)
    (fake / "ir" / "bad.py").write_text("from plait.frontend import tracing\nimport plait.errors\n")
    global ROOT
    saved, ROOT = ROOT, fake
    try:
        assert _violations("ir") == ["plait/ir/bad.py:1 imports plait.frontend",
                                     "plait/ir/bad.py:1 imports plait.frontend.tracing",
                                     "plait/ir/bad.py:2 imports plait.errors"]
    finally:
        ROOT = saved
