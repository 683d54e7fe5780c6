"""The test suites JAX libraries ship (optax, chex, rlax, mctx, jmp, einops, haiku,
dynamax), run on plait through the ``import jax`` alias and with JAX itself: every test
that passes with JAX passes on plait, but for the differences listed in :data:`KNOWN`,
each with its reason.  Slow (the suites take minutes each): run with ``-m slow``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SUITES = ["optax", "chex", "rlax", "mctx", "jmp", "einops", "haiku", "dynamax"]

KNOWN: dict[str, str] = {
    "_src/stateful_test.py::StatefulTest::test_remat":
        "plait caches the transformations of structurally equal programs, so a user rule's "
        "side effect (the test counts calls of a transpose rule) runs once, not per call",
    "_src/random_test.py::CustomRNGTest::test_custom_key":
        "plait has no user-defined PRNG implementations (jax.extend.random)",
    "_src/jaxpr_info_test.py::JaxprInfoTest::test_haiku_module_loss":
        "JAX's gradient jaxpr adds a zero cotangent (one more add_any) that plait's does not",
    "_src/integration/to_dot_test.py":
        "plait's jaxprs of the vector quantizers differ from JAX's in the graph haiku draws",
    "_src/integration/jax2tf_test.py": "no jax2tf (needs TensorFlow)",
}
"""Tests that pass with JAX and fail on plait, by node id prefix: why."""

_FAILED = re.compile(r"^(?:FAILED|ERROR|SUBFAILED)(?:\[[^\]]*\])? (\S+)", re.M)


def _failures(lib: str, alias: bool, tmp_path: Path) -> set[str]:
    spec = importlib.util.find_spec(lib)
    assert spec is not None and spec.submodule_search_locations
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "plait_alias_plugin.py").write_text(
        "import plait\nplait.compat.alias_jax()\n")
    plugin = ["-p", "plait_alias_plugin"] if alias else []
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "EINOPS_TEST_BACKENDS": "jax"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-c", str(tmp_path / "pytest.ini"),
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-n", "2", *plugin,
         "-W", "ignore", "--continue-on-collection-errors", "-rfE",
         spec.submodule_search_locations[0]],
        capture_output=True, text=True, env=env, timeout=3600, cwd=tmp_path)
    assert "passed" in done.stdout or "failed" in done.stdout, done.stdout[-2000:]
    return {m.group(1).split("[")[0] for m in _FAILED.finditer(done.stdout)}


@pytest.mark.slow
@pytest.mark.parametrize("lib", SUITES)
def test_a_librarys_own_tests_pass_on_plait_as_on_jax(lib: str, tmp_path: Path) -> None:
    theirs = _failures(lib, False, tmp_path)
    ours = _failures(lib, True, tmp_path)
    new = sorted(t for t in ours - theirs if not any(t.startswith(k) for k in KNOWN))
    assert not new, f"{len(new)} of {lib}'s tests fail on plait only: {new[:20]}"
