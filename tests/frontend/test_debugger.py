"""``debug.breakpoint`` against ``jax.debug.breakpoint`` 0.10.2: the same debugger
session (commands on stdin, everything it prints compared line by line) under
``jit``, eagerly, under ``vmap`` and ``grad``, and in a script run from the shell."""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import plait
import plait.numpy as pnp

COMMANDS = "p z\npp (x, y)\np pair\nw\nu\np a\nd\nl\nnot_a_name\nc\n"


def session(L: Any, np_: Any, how: str) -> str:
    out = io.StringIO()
    commands = io.StringIO(COMMANDS * 2)  # (vmap stops once per element)

    def f(x: Any, y: Any) -> Any:
        z = np_.sin(x) / y
        pair = (z, "tag", 3)  # noqa: F841  (a local for the debugger: traced and untraced leaves)
        L.debug.breakpoint(stdin=commands, stdout=out)
        return z

    def caller(a: Any) -> Any:
        if how == "jit":
            return L.jit(f)(a, 0.5)
        if how == "eager":
            return f(a, 0.5)
        if how == "vmap":
            return L.vmap(f, in_axes=(0, None))(np_.stack([a, a + 1.0]), 0.5)
        return L.grad(lambda v: f(v, 0.5))(a)
    caller(np_.asarray(2.0))
    # (This file's name is the same for both; the line numbers too.)
    return out.getvalue()


@pytest.mark.parametrize("how", ["jit", "eager", "vmap", "grad"])
def test_session_matches_jax(how: str) -> None:
    got, want = session(plait, pnp, how), session(jax, jnp, how)
    assert "Entering jdb:" in got and "*** NameError: name 'not_a_name' is not defined" in got
    assert "'tag', 3)" in got
    if how in ("grad", "vmap"):
        # JAX runs these eagerly, so its values there are the concrete (weakly typed)
        # arrays; plait traces them, and a program's values have strong types.
        got, want = got.replace(", weak_type=True", ""), want.replace(", weak_type=True", "")
    assert got == want
    assert got.count("Entering jdb:") == (2 if how == "vmap" else 1)


def test_a_script_under_the_shell(tmp_path: pathlib.Path) -> None:
    script = """
import {lib} as L, {lib}.numpy as np_

@L.jit
def f(x, y):
    z = x / y
    L.debug.breakpoint()
    return z

def g(a):
    return f(a, 0.0) + 1

print(g(2.0))
"""
    outs = []
    for lib in ("plait", "jax"):
        path = tmp_path / "prog.py"
        path.write_text(script.format(lib=lib))
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
        outs.append(subprocess.run([sys.executable, str(path)], input="p z\nw\nu\np a\nl\nc\n",
                                   capture_output=True, text=True, env=env, check=True).stdout)
    assert outs[0] == outs[1]
    assert outs[0].endswith("(jdb) inf\n")


def test_errors() -> None:
    with pytest.raises(ValueError, match="expected ordered or token, but got both"):
        plait.debug.breakpoint(ordered=True, token=pnp.ones(2))
    with pytest.raises(ValueError, match="command-line debugger only"):
        plait.debug.breakpoint(backend="web")
