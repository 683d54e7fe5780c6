"""JAX's own Pallas kernels (``jax/experimental/pallas/ops/gpu``: softmax, layer and RMS
norms with their backward kernels, flash attention forward and backward, decode and
paged attention), loaded from JAX's installed files as a user's modules and run in
interpret mode: ``python pallas_ops.py [name ...]`` prints, per use (all of them unless
named), numbers to compare as JSON, and checks each kernel against its reference."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def _kernels(name: str) -> types.ModuleType:
    """The module of JAX's file ``ops/gpu/<name>.py`` (read as user code: under
    ``plait run`` its ``import jax`` gives plait)."""
    path = importlib.metadata.distribution("jax").locate_file(
        f"jax/experimental/pallas/ops/gpu/{name}.py")
    spec = importlib.util.spec_from_file_location(f"pallas_ops_{name}", str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _normal(seed: int, *shape: int) -> Any:
    return jax.random.normal(jax.random.PRNGKey(seed), shape, jnp.float32)


def _close(got: Any, want: Any, tol: float = 2e-5) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def _flat(*xs: Any) -> list[float]:
    return [float(v) for x in xs for v in np.ravel(np.asarray(x))]


def _softmax() -> list[float]:
    ops = _kernels("softmax")
    x = _normal(0, 4, 20)
    y = ops.softmax(x, interpret=True)
    _close(y, jax.nn.softmax(x, axis=-1))
    return _flat(y)


def _norm(name: str) -> list[float]:
    ops = _kernels(name)
    x, w, b = _normal(1, 2, 3, 24), _normal(2, 24), _normal(3, 24)
    kernel = getattr(ops, name)
    reference = getattr(ops, f"{name}_reference")
    y = kernel(x, w, b, interpret=True)
    _close(y, reference(x, w, b))

    def loss(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda x, w, b: jnp.sum(jnp.sin(f(x, w, b)))
    grads = jax.grad(loss(lambda x, w, b: kernel(x, w, b, interpret=True)), (0, 1, 2))(x, w, b)
    for g, r in zip(grads, jax.grad(loss(reference), (0, 1, 2))(x, w, b)):
        _close(g, r, 1e-4)
    return _flat(y, *grads)


def _attention() -> list[float]:
    ops = _kernels("attention")
    q, k, v = _normal(4, 1, 32, 2, 16), _normal(5, 1, 32, 2, 16), _normal(6, 1, 32, 2, 16)
    sizes = ops.BlockSizes(block_q=16, block_k=16, block_q_dkv=16, block_kv_dkv=16,
                           block_q_dq=16, block_kv_dq=16)

    def mha(q: Any, k: Any, v: Any) -> Any:
        return ops.mha(q, k, v, None, sm_scale=0.25, causal=True, block_sizes=sizes,
                       interpret=True)
    out = mha(q, k, v)
    _close(out, ops.mha_reference(q, k, v, None, sm_scale=0.25, causal=True))
    grads = jax.grad(lambda q, k, v: jnp.sum(mha(q, k, v) ** 2), (0, 1, 2))(q, k, v)
    want = jax.grad(lambda q, k, v: jnp.sum(ops.mha_reference(
        q, k, v, None, sm_scale=0.25, causal=True) ** 2), (0, 1, 2))(q, k, v)
    for g, r in zip(grads, want):
        _close(g, r, 1e-4)
    return _flat(out, *grads)


def _decode_attention() -> list[float]:
    ops = _kernels("decode_attention")
    q, k, v = _normal(7, 2, 4, 16), _normal(8, 2, 64, 16), _normal(9, 2, 64, 16)
    out = ops.mqa(q, k, v, block_h=4, block_k=16, k_splits=2, interpret=True)
    _close(out, ops.mqa_reference(q, k, v), 1e-4)
    qg, kg, vg = _normal(10, 2, 4, 16), _normal(11, 2, 64, 2, 16), _normal(12, 2, 64, 2, 16)
    outg = ops.gqa(qg, kg, vg, block_h=2, block_k=16, k_splits=2, interpret=True)
    _close(outg, ops.gqa_reference(qg, kg, vg), 1e-4)
    return _flat(out, outg)


def _paged_attention() -> list[float]:
    ops = _kernels("paged_attention")
    heads, pages, page_size, dim = 16, 8, 16, 16
    q = _normal(13, 2, heads, dim)
    k_pages, v_pages = _normal(14, 1, pages, page_size, dim), _normal(15, 1, pages, page_size,
                                                                      dim)
    tables = jnp.array([[0, 2, 4, 6], [1, 3, 5, 7]], jnp.int32)
    lengths = jnp.array([50, 17], jnp.int32)
    out = ops.paged_attention(q, k_pages, v_pages, tables, lengths, block_h=16,
                              pages_per_compute_block=2, k_splits=2, interpret=True)
    def dense(pages: Any) -> Any:  # (kv heads, pages, page, dim) -> (batch, seq, kv heads, dim)
        taken = pages[:, tables]
        return jnp.transpose(taken, (1, 2, 3, 0, 4)).reshape(2, -1, 1, dim)
    _close(out, ops.paged_attention_reference(q, dense(k_pages), dense(v_pages), lengths),
           1e-4)
    return _flat(out)


def uses() -> dict[str, Callable[[], list[float]]]:
    """One use of each kernel module."""
    return {"softmax": _softmax, "layer_norm": lambda: _norm("layer_norm"),
            "rms_norm": lambda: _norm("rms_norm"), "attention": _attention,
            "decode_attention": _decode_attention, "paged_attention": _paged_attention}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))
