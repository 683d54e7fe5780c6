"""``pmap``'s program cache, ``lower`` and ``donate_argnums``, against JAX 0.10.2 (the
collectives under ``pmap`` are in test_multi_device.py)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import plait
from tests.frontend.jax_oracle import assert_close

X = np.arange(12, dtype=np.float32).reshape(4, 3)


def _traces(lib: Any) -> list[int]:
    count = [0]

    def f(x: Any, y: Any) -> Any:
        count[0] += 1
        return [x * y], (x + y, None)

    # (equinox's filter_pmap passes out_axes holding a list: still a cache key)
    g = lib.pmap(f, out_axes=([0], (0, None)))
    seen = []
    for x in (X, X + 1.0, X[:2]):
        g(x, x)
        seen.append(count[0])
    return seen


def test_programs_are_reused_for_equal_argument_types_as_jaxs() -> None:
    assert _traces(plait) == _traces(jax) == [1, 1, 2]


def test_lower_then_compile_runs_with_the_same_arguments() -> None:
    def run(lib: Any) -> Any:
        lowered = lib.pmap(lambda x, y: 2.0 * x + y, axis_name="i").lower(X, X)
        assert "stablehlo" in lowered.as_text() or "mhlo" in lowered.as_text()
        return lowered.compile()(X, X + 1.0)
    assert_close(run(plait), run(jax))
    assert_close(run(plait), 3.0 * X + 1.0)


def test_donated_arguments_are_consumed_as_in_jax() -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x, y = lib.numpy.asarray(X), lib.numpy.asarray(X)
        laid_out = lib.pmap(lambda a: a)(X)  # (already split over the devices)
        f = lib.pmap(lambda a, s, b: a * s + b, donate_argnums=(0,),
                     static_broadcasted_argnums=(1,))
        out = f(x, 2.0, y)
        again = f(laid_out, 3.0, y)
        return out, again, x.is_deleted(), y.is_deleted(), laid_out.is_deleted()
    ours, theirs = run(plait), run(jax)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    # (an argument copied to the devices is not consumed: its copy is)
    assert ours[2:] == theirs[2:] == (False, False, True)


@pytest.mark.parametrize("lib", [plait, jax], ids=["plait", "jax"])
def test_a_callable_object_without_a_name_is_mapped(lib: Any) -> None:
    class Scale:
        __name__ = None  # (as equinox's modules may answer)

        def __call__(self, x: Any) -> Any:
            return x * 2.0

    for transform in (lib.pmap, lib.vmap, lib.grad, lib.checkpoint, lib.jacfwd):
        fn = transform(Scale())
        assert fn.__name__ in ("Scale", "<unnamed function>")
    assert_close(lib.pmap(Scale())(X), X * 2.0)
