"""What research libraries (e3nn-jax, jax-md) need of JAX's API, against JAX 0.10.2 without
the libraries: ``jax.extend.backend`` and ``jax.api_util.infer_argnums_and_argnames``."""

from __future__ import annotations

import inspect
from typing import Any

import jax.extend.backend as jax_backend
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax._src import api_util as jax_api_util

import plait
import plait.api_util
import plait.extend.backend as plait_backend


def test_the_backend_is_the_cpu_client_as_in_jax() -> None:
    for backend in (plait_backend, jax_backend):
        client = backend.get_backend()
        assert client.platform == "cpu" and backend.get_backend("cpu") is client
        assert list(backend.backends()) == ["cpu"] and backend.backends()["cpu"] is client
        assert backend.get_default_device() == client.local_devices()[0]
    assert plait_backend.get_default_device() == plait.devices()[0]
    with pytest.raises(RuntimeError, match="expected None or 'cpu', but got 'gpu': plait runs "
                       "on the CPU only"):
        plait_backend.get_backend("gpu")


def _f(a: Any, b: Any, /, c: Any, d: Any = 1, *args: Any, e: Any, f: Any = 2,
       **kw: Any) -> None:
    pass


def _g(x: Any, y: Any, z: Any) -> None:
    pass


_NUMS = st.none() | st.integers(-4, 7) | st.lists(st.integers(-4, 7), max_size=4).map(tuple)
_NAMES = st.none() | st.sampled_from("abcdefxyz") | st.lists(
    st.sampled_from("abcdefxyz"), max_size=4).map(tuple)


@given(st.sampled_from([_f, _g]), _NUMS, _NAMES)
def test_infer_argnums_and_argnames_completes_as_jaxs(fun: Any, nums: Any, names: Any) -> None:
    sig = inspect.signature(fun)
    assert plait.api_util.infer_argnums_and_argnames(sig, nums, names) == \
        jax_api_util.infer_argnums_and_argnames(sig, nums, names)


def test_infer_argnums_and_argnames_refuses_a_non_integer_position() -> None:
    sig = inspect.signature(_g)
    for f in (plait.api_util.infer_argnums_and_argnames,
              jax_api_util.infer_argnums_and_argnames):
        with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
            f(sig, "x", None)  # type: ignore[arg-type]  # (the point of the test)
