"""The layering rule of DESIGN.md, enforced on the source: imports only point down.

Layers: ``plait/ir`` imports nothing from the other layers; ``transforms`` and
``lowering`` import only ``ir``; ``frontend`` sits on top.  Inside the frontend
four sub-layers, each importing only its own level or lower:

    core   (values, tracing, eager execution, caches, pytrees, promotion)
    lax    (thin functions over primitives)
    api    (make_jaxpr, jit and its stages, the grad family, vmap, control flow,
            custom derivatives, checkpoint, device_put)
    numpy  (the namespace; imported only by the public ``plait.numpy`` facade)

Inside the package nothing imports the public facades (``plait``, ``plait.errors``,
``plait.config``, ``plait.numpy``...): the errors and options live in ``plait.ir``.
Imports under ``if TYPE_CHECKING:`` are not run and are exempt.  Function-local
imports are allowed only where they break a real cycle (listed in ``LOCAL_OK``),
and the graph of module-level imports has no cycle.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "plait"

# Which layers (or frontend sub-layers) each may import.
ALLOWED = {
    "ir": {"ir"},
    "transforms": {"ir", "transforms"},
    "lowering": {"ir", "lowering"},
    "frontend.core": {"ir", "transforms", "lowering", "frontend.core"},
    "frontend.lax": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax"},
    "frontend.api": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                     "frontend.api"},
    "frontend.numpy": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                       "frontend.api", "frontend.numpy"},
    "frontend.scipy": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                       "frontend.api", "frontend.numpy", "frontend.random", "frontend.scipy"},
    "frontend.random": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                        "frontend.api", "frontend.numpy", "frontend.random"},
    "frontend.nn": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                    "frontend.api", "frontend.numpy", "frontend.scipy", "frontend.random",
                    "frontend.nn"},
    "frontend.sparse": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                        "frontend.api", "frontend.numpy", "frontend.random", "frontend.sparse"},
    "frontend.pallas": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                        "frontend.api", "frontend.numpy", "frontend.pallas"},
    "frontend.image": {"ir", "transforms", "lowering", "frontend.core", "frontend.lax",
                       "frontend.api", "frontend.numpy", "frontend.scipy", "frontend.image"},
    "frontend.example_libraries": {"ir", "transforms", "lowering", "frontend.core",
                                   "frontend.lax", "frontend.api", "frontend.numpy",
                                   "frontend.scipy", "frontend.random", "frontend.nn",
                                   "frontend.example_libraries"},
}

# Function-local imports that break a real cycle: a value's ``__repr__`` prints it with
# the printer, which imports the value's module.
LOCAL_OK = {
    ("plait/ir/jaxpr.py", "plait.ir.printer"),
}


def _layer_of(module: str) -> str | None:
    """The layer (``ir``) or frontend sub-layer (``frontend.api``) of a plait module."""
    parts = module.split(".")
    if parts[0] != "plait" or len(parts) < 2:
        return None
    if parts[1] != "frontend":
        return parts[1] if parts[1] in ("ir", "transforms", "lowering") else None
    if len(parts) < 3:
        return None
    return "frontend." + parts[2]


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(path: pathlib.Path) -> list[tuple[int, str, bool]]:
    """``(line, imported module, at module level)`` for each plait import that runs."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = _module_name(path).split(".")
    if path.name != "__init__.py":
        pkg = pkg[:-1]
    found: list[tuple[int, str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub, top)
                continue
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(pkg[: len(pkg) - child.level + 1] + ([base] if base else []))
                # `from plait.x import y`: the submodule plait.x.y, or a name of plait.x.
                names = [f"{base}.{a.name}" for a in child.names]
            line = getattr(child, "lineno", 0)  # an Import or ImportFrom statement
            found.extend((line, n, top) for n in names
                         if n == "plait" or n.startswith("plait."))
            # Class bodies and module-level if/try blocks run at import; function bodies don't.
            visit(child, top and not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(tree, True)
    return found


def _modules() -> set[str]:
    return {_module_name(p) for p in ROOT.rglob("*.py")}


def _resolve(name: str, modules: set[str]) -> str | None:
    """The module an imported name refers to (``plait.ir.atoms.Var`` -> ``plait.ir.atoms``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _violations() -> list[str]:
    out: list[str] = []
    modules = _modules()
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT.parent))
        me = _layer_of(_module_name(path))
        for line, name, top in _imports(path):
            target = _resolve(name, modules)
            if target is None:
                continue
            layer = _layer_of(target)
            if me is not None and layer is None:
                out.append(f"{rel}:{line} imports the public facade {target}")
            elif me is not None and layer not in ALLOWED[me]:
                out.append(f"{rel}:{line} ({me}) imports {target} ({layer})")
            if not top and me is not None and (rel, target) not in LOCAL_OK:
                out.append(f"{rel}:{line} imports {target} inside a function")
    return sorted(set(out))


def _cycles() -> list[list[str]]:
    """Cycles of the module-level import graph (each as the modules along it)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path in ROOT.rglob("*.py"):
        me = _module_name(path)
        for _, name, top in _imports(path):
            target = _resolve(name, modules)
            if top and target is not None and target != me:
                graph[me].add(target)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            # A package's __init__ importing its own submodules is not a cycle of ideas.
            if m.startswith(n + ".") and "plait" != n:
                continue
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return cycles


def test_imports_point_down() -> None:
    assert _violations() == []


def test_module_level_imports_have_no_cycle() -> None:
    assert _cycles() == []


def test_checker_detects_violations(tmp_path: pathlib.Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "plait"
    for d in ("ir", "frontend/core", "frontend/api", "frontend/numpy"):
        (fake / d).mkdir(parents=True)
        (fake / d / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "errors.py").write_text("")
    (fake / "ir" / "bad.py").write_text("from plait.frontend.core import tracing\nimport "
                                        "plait.errors\n")
    (fake / "frontend" / "core" / "tracing.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from plait.frontend.api import jit\n"
        "if TYPE_CHECKING:\n    from plait.frontend.numpy import ok\n"
        "def f():\n    from plait.frontend.core import other\n")
    (fake / "frontend" / "core" / "other.py").write_text(
        "from plait.frontend.core import tracing\n")
    (fake / "frontend" / "api" / "jit.py").write_text("from plait.ir.errors import E\n")
    (fake / "frontend" / "numpy" / "ok.py").write_text("from plait.frontend.api import jit\n")
    (fake / "ir" / "errors.py").write_text("")
    (fake / "ir" / "a.py").write_text("from plait.ir import b\n")
    (fake / "ir" / "b.py").write_text("from plait.ir.a import x\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", fake)
    assert _violations() == [
        "plait/frontend/core/tracing.py:2 (frontend.core) imports plait.frontend.api.jit "
        "(frontend.api)",
        "plait/frontend/core/tracing.py:6 imports plait.frontend.core.other inside a function",
        "plait/ir/bad.py:1 (ir) imports plait.frontend.core.tracing (frontend.core)",
        "plait/ir/bad.py:2 imports the public facade plait.errors",
    ]
    assert _cycles() == [["plait.ir.a", "plait.ir.b", "plait.ir.a"]]
