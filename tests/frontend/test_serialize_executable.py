"""``plait.experimental.serialize_executable``: a compiled function written as bytes and
loaded back (in this process and in another one) computes what JAX 0.10.2's compiled
function computes, with the same argument checks; what cannot be serialized is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jax
import jax.experimental.serialize_executable as jse
import jax.numpy as jjnp
import numpy as np
import pytest

import plait
import plait.experimental.serialize_executable as pse
import plait.numpy as pjnp

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
PARAMS = {"w": X.T.copy(), "b": np.arange(3, dtype=np.float32)}


def _model(np_: Any) -> Any:
    def f(params: Any, x: Any, *, scale: float = 2.0) -> Any:
        h = np_.tanh(x @ params["w"] + params["b"])
        return {"out": h * scale, "norm": np_.sum(h ** 2)}
    return f


def _round_trip(lib: Any, mod: Any, np_: Any) -> Any:
    compiled = lib.jit(_model(np_), static_argnames="scale").lower(PARAMS, X, scale=3.0) \
        .compile()
    data, in_tree, out_tree = mod.serialize(compiled)
    assert isinstance(data, bytes)
    loaded = mod.deserialize_and_load(data, in_tree, out_tree,
                                      execution_devices=lib.devices()[:1])
    return loaded(PARAMS, X), compiled(PARAMS, X)


def test_a_round_trip_computes_what_jaxs_does() -> None:
    ours, direct = _round_trip(plait, pse, pjnp)
    theirs, _ = _round_trip(jax, jse, jjnp)
    for got in (ours, direct):
        assert set(got) == set(theirs)
        for k in theirs:
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(theirs[k]), rtol=1e-6)


def test_bytes_load_in_another_process_without_compiling(tmp_path: Path) -> None:
    compiled = plait.jit(lambda a, b: (pjnp.sin(a) * b, a.sum())).lower(X, X).compile()
    data, _, _ = pse.serialize(compiled)
    (tmp_path / "f.bin").write_bytes(data)
    code = textwrap.dedent(f"""
        import json
        import numpy as np
        import plait
        import plait.experimental.serialize_executable as pse
        from plait.lowering import runtime
        x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
        in_tree = plait.tree_util.tree_structure(((x, x), {{}}))
        out_tree = plait.tree_util.tree_structure((x, x))
        with open({str(tmp_path / "f.bin")!r}, "rb") as file:
            f = pse.deserialize_and_load(file.read(), in_tree, out_tree)
        a, s = f(x, x)
        print(json.dumps([np.asarray(a).ravel().tolist(), float(s), runtime.compile_count()]))
    """)
    env = dict(os.environ, PYTHONPATH=str(Path(plait.__file__).parent.parent))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    values, total, compiles = json.loads(done.stdout)
    want = jax.jit(lambda a, b: (jjnp.sin(a) * b, a.sum()))(X, X)
    np.testing.assert_allclose(values, np.asarray(want[0]).ravel(), rtol=1e-6)
    np.testing.assert_allclose(total, float(want[1]), rtol=1e-6)
    assert compiles == 0


def test_a_loaded_function_checks_its_arguments_as_compiled_ones_do() -> None:
    compiled = plait.jit(lambda a: a * 2).lower(X).compile()
    loaded = pse.deserialize_and_load(*pse.serialize(compiled))
    for f in (compiled, loaded):
        with pytest.raises(TypeError, match="Argument types differ from the types for which "
                                            "this computation was compiled"):
            f(X.astype(np.int32))
        with pytest.raises(TypeError, match="was called with arguments of structure"):
            f(X, X)


def test_what_cannot_be_serialized_is_refused() -> None:
    const = plait.numpy.asarray(X)
    with pytest.raises(NotImplementedError, match="closes over arrays"):
        pse.serialize(plait.jit(lambda a: a + const).lower(X).compile())

    def printing(a: Any) -> Any:
        plait.debug.print("a = {}", a)
        return a * 2
    with pytest.raises(NotImplementedError, match="host callbacks"):
        pse.serialize(plait.jit(printing).lower(X).compile())
    with pytest.raises(ValueError, match="expected the bytes plait.experimental"):
        pse.deserialize_and_load(b"\x80\x04N.", plait.tree_util.tree_structure(((X,), {})),
                                 plait.tree_util.tree_structure(X))
