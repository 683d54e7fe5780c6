"""Static typing: the public API's signatures and ``plait.mypy_plugin``, checked by
running mypy on the fixtures in ``typing_fixtures/``.

Each fixture line may end in ``# N: <note>`` or ``# E: <error>  [code]``: the
messages mypy must report on that line.  mypy must report nothing else.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "typing_fixtures"
FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))
_EXPECT = re.compile(r"#\s*([NE]): (.*)$")
_REPORTED = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<kind>note|error): (?P<msg>.*)$")
Message = tuple[str, int, str, str]


def _expected(path: Path) -> set[Message]:
    out = set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = _EXPECT.search(line)
        if m:
            out.add((path.name, n, "note" if m[1] == "N" else "error", m[2].strip()))
    return out


def _run_mypy(tmp: Path, plugin: bool) -> set[Message]:
    # The package is found through mypy_path: an editable install is an import hook,
    # which mypy cannot follow.
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\nfollow_imports = silent\n"
                      f"mypy_path = {ROOT}\n" + ("plugins = plait.mypy_plugin\n" if plugin else ""))
    stdout, stderr, _ = mypy_api.run([
        "--config-file", str(config), "--cache-dir", str(tmp / "cache"), "--no-pretty",
        "--show-error-codes", "--no-error-summary", *map(str, FIXTURE_FILES)])
    assert "INTERNAL ERROR" not in stdout + stderr, stdout + stderr
    reported = set()
    for line in stdout.splitlines():
        m = _REPORTED.match(line)
        assert m, f"unexpected mypy output: {line!r}"
        reported.add((Path(m["file"]).name, int(m["line"]), m["kind"], m["msg"]))
    return reported


@pytest.fixture(scope="module")
def mypy_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy")


@pytest.fixture(scope="module")
def with_plugin(mypy_tmp: Path) -> set[Message]:
    return _run_mypy(mypy_tmp, plugin=True)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_fixture_reports_exactly_the_expected_messages(path: Path,
                                                       with_plugin: set[Message]) -> None:
    expected = _expected(path)
    reported = {m for m in with_plugin if m[0] == path.name}
    assert sorted(reported - expected) == [], "reported but not expected"
    assert sorted(expected - reported) == [], "expected but not reported"


def test_fixtures_expect_something() -> None:
    for path in FIXTURE_FILES:
        if path.stem != "custom_interpreter":
            assert _expected(path), path


def test_without_the_plugin_grad_types_are_lost(mypy_tmp: Path) -> None:
    without = _run_mypy(mypy_tmp / "no_plugin", plugin=False)
    grad_expected = _expected(FIXTURES / "plugin_grad.py")
    reported = {m for m in without if m[0] == "plugin_grad.py"}
    # The str-returning function and the out-of-range argnums go unnoticed, and
    # grad's return type degrades to Any.
    missing = grad_expected - reported
    assert any("returns \"str\"" in m[3] for m in missing)
    assert any("argnums=2 is out of range" in m[3] for m in missing)
    assert ("plugin_grad.py", 27, "note", 'Revealed type is "Any"') in reported


def test_typed_custom_interpreter_runs() -> None:
    import importlib.util
    spec = importlib.util.spec_from_file_location("custom_interpreter",
                                                  FIXTURES / "custom_interpreter.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import plait.numpy as pnp
    xs = np.linspace(-0.9, 0.9, 5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(mod.inverse(mod.f)(mod.f(pnp.asarray(xs)))), xs,
                               rtol=1e-5, atol=1e-5)
    import plait
    import plait.lax as plax
    closed = plait.make_jaxpr(lambda x: plax.cond(x > 0, pnp.sin, pnp.cos, x) * 2.0)(1.0)
    assert mod.count_primitives(closed.jaxpr) == {"gt": 1, "convert_element_type": 1, "cond": 1,
                                                  "sin": 1, "cos": 1, "mul": 1}


_IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def _unexplained_ignores(text: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each ``type: ignore`` comment without an error code or a reason."""
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _IGNORE.search(line)
        if m and (not m["codes"] or not m["codes"].strip("[] ")
                  or not re.match(r"\s*#\s*\S", m["rest"])):
            bad.append((n, line.strip()))
    return bad


def test_unexplained_ignores_are_found() -> None:
    assert _unexplained_ignores("x = f()  # type: ignore[arg-type]  # untyped library\n") == []
    for line in ["x = f()  # type: ignore", "x = f()  # type: ignore[arg-type]",
                 "x = f()  # type: ignore  # no code", "x = f()  # type: ignore[]  # empty",
                 "x = f()  # type:ignore[misc]   "]:
        assert _unexplained_ignores(line) == [(1, line.strip())], line


def test_every_type_ignore_has_an_error_code_and_a_reason() -> None:
    bad = [f"{path.relative_to(ROOT)}:{n}: {line}"
           for path in sorted((ROOT / "plait").rglob("*.py"))
           for n, line in _unexplained_ignores(path.read_text(encoding="utf-8"))]
    assert bad == [], ("each `# type: ignore` needs an error code and a reason, "
                       "`# type: ignore[code]  # why`:\n" + "\n".join(bad))


PUBLIC_MODULES = ["plait", "plait.lax", "plait.numpy", "plait.errors", "plait.config",
                  "plait.tree_util", "plait.typing", "plait.ir"]


def test_every_public_name_is_exported_to_strict_users(mypy_tmp: Path) -> None:
    # With --strict (no implicit re-export) a name a facade imports without
    # ``as name`` or a static ``__all__`` is invisible to the user's mypy.
    import importlib
    lines = []
    for i, mod in enumerate(PUBLIC_MODULES):
        lines.append(f"import {mod} as m{i}")
        names = importlib.import_module(mod).__all__
        assert names, mod
        lines += [f"m{i}.{name}" for name in names]
    tmp = mypy_tmp / "exports"
    tmp.mkdir()
    (tmp / "uses_every_name.py").write_text("\n".join(lines) + "\n")
    (tmp / "mypy.ini").write_text(f"[mypy]\nstrict = True\nfollow_imports = silent\n"
                                  f"mypy_path = {ROOT}\n")
    stdout, stderr, _ = mypy_api.run([
        "--config-file", str(tmp / "mypy.ini"), "--cache-dir", str(mypy_tmp / "cache"),
        "--no-pretty", "--show-error-codes", "--no-error-summary",
        str(tmp / "uses_every_name.py")])
    assert stdout + stderr == ""
