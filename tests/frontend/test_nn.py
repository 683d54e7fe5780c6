"""plait.nn against jax.nn 0.10.2: values, dtypes and weak types, derivatives (grad and
jvp, JAX's custom rules at the kinks included), jit, vmap, the traced primitives, and
errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.ir.config
import plait.nn as pn
import plait.numpy as pnp
from tests.frontend.jax_oracle import assert_close, f32

# One shape (16,) for the elementwise functions: eager execution and jit compile once
# per shape.  The kinks of every piecewise function are here: 0, +-1, -3, 3, 6.
EDGE = f32(-np.inf, -30.0, -6.0, -3.0, -1.5, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0, 3.0, 6.0,
           7.5, 30.0, np.inf)
# The same without infinities, for derivatives.
FINITE = f32(-30.0, -6.0, -3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0, 3.0, 4.5, 6.0,
             7.5, 30.0)

UNARY = ["identity", "relu", "relu6", "squareplus", "softplus", "sparse_plus", "soft_sign",
         "sigmoid", "sparse_sigmoid", "silu", "swish", "mish", "log_sigmoid", "elu",
         "leaky_relu", "hard_tanh", "celu", "selu", "gelu", "hard_sigmoid", "hard_silu",
         "hard_swish", "tanh"]
# Functions over softplus, whose derivative at 0 plait.numpy.logaddexp gets wrong (JAX's
# logaddexp has a custom_jvp that plait.numpy's lacks): see the xfail test below.
LOGADDEXP_AT_0 = {"softplus", "log_sigmoid"}
FLOATS = [np.float32, ml_dtypes.bfloat16, np.float16]


def _ours(name: str) -> Callable[..., Any]:
    return getattr(pn, name)


def _theirs(name: str) -> Callable[..., Any]:
    return getattr(jax.nn, name)


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-5, "atol": 1e-6} if np.dtype(dtype) == np.float32 else \
        {"rtol": 1e-2, "atol": 1e-2}


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type) if isinstance(x, plait.Array) else bool(x.weak_type)


def _prims(j: Any) -> set[str]:
    """The primitives of a jaxpr (plait's or JAX's), nested jaxprs included, without the
    call wrappers."""
    out: set[str] = set()
    jaxpr = j.jaxpr if hasattr(j, "jaxpr") else j
    for e in jaxpr.eqns:
        out.add(e.primitive.name)
        for k, v in e.params.items():
            if k == "jvp_jaxpr":  # plait carries custom_jvp's rule as a jaxpr, JAX does not
                continue
            for sub in (v if isinstance(v, tuple | list) else (v,)):
                if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns"):
                    out |= _prims(sub)
    return out - {"jit", "pjit", "custom_jvp_call", "closed_call"}


# -- elementwise activations --------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY)
def test_activation_values_eager_and_jit(name: str, dtype: Any) -> None:
    x = EDGE.astype(dtype)
    want = _theirs(name)(x)
    assert_close(_ours(name)(x), want, **_tol(dtype))
    assert_close(plait.jit(_ours(name))(x), jax.jit(_theirs(name))(x), **_tol(dtype))


@pytest.mark.parametrize("name", UNARY)
def test_activation_dtypes_and_weak_types_of_scalars(name: str) -> None:
    ours, theirs = _ours(name)(2.5), _theirs(name)(2.5)
    assert_close(ours, theirs)
    assert _weak(ours) == _weak(theirs)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"sigmoid", "silu", "swish"}))
def test_activation_on_integers(name: str) -> None:
    x = np.arange(-4, 8, dtype=np.int32)
    ours, theirs = _ours(name)(x), _theirs(name)(x)
    assert_close(ours, theirs, rtol=2e-5, atol=1e-6)
    assert _weak(ours) == _weak(theirs)


@pytest.mark.parametrize("name", UNARY)
def test_activation_grad_matches_at_and_off_the_kinks(name: str) -> None:
    x = FINITE
    if name in LOGADDEXP_AT_0:
        x = x[x != 0]
    want = jax.vmap(jax.grad(_theirs(name)))(x)
    assert_close(plait.vmap(plait.grad(_ours(name)))(x), want, rtol=1e-5, atol=1e-6)
    assert_close(plait.grad(lambda v: _ours(name)(v).sum())(x), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LOGADDEXP_AT_0))
def test_softplus_family_grad_at_zero(name: str) -> None:
    assert_close(plait.grad(_ours(name))(0.0), jax.grad(_theirs(name))(0.0))


@pytest.mark.parametrize("name", UNARY)
def test_activation_jvp(name: str) -> None:
    x = FINITE if name not in LOGADDEXP_AT_0 else FINITE[FINITE != 0]
    t = np.linspace(-1, 1, x.size).astype(np.float32)
    assert_close(plait.jvp(_ours(name), (x,), (t,)), jax.jvp(_theirs(name), (x,), (t,)),
                 rtol=1e-5, atol=1e-6)


def test_relu_family_custom_derivatives_at_the_kinks() -> None:
    # JAX's rules: relu'(0) = 0 (maximum's own derivative would give 1/2), relu6'(0) =
    # relu6'(6) = 0, hard_sigmoid through relu6.
    assert float(plait.grad(pn.relu)(0.0)) == 0.0
    assert float(plait.grad(pn.relu6)(0.0)) == 0.0
    assert float(plait.grad(pn.relu6)(6.0)) == 0.0
    assert float(plait.grad(pn.relu6)(3.0)) == 1.0
    assert float(plait.grad(pn.hard_sigmoid)(-3.0)) == 0.0
    assert float(plait.grad(pn.relu)(pnp.float32(1e-30))) == 1.0
    # Second derivatives go through the rule too.
    assert float(plait.grad(plait.grad(pn.relu))(1.0)) == float(
        jax.grad(jax.grad(jax.nn.relu))(1.0))


def test_relu_traces_to_a_custom_jvp_call_around_jit() -> None:
    j = plait.make_jaxpr(pn.relu)(np.ones(3, np.float32))
    (eqn,) = j.jaxpr.eqns
    assert eqn.primitive.name == "custom_jvp_call" and eqn.params["name"] == "relu"
    (inner,) = eqn.params["call_jaxpr"].jaxpr.eqns
    assert inner.primitive.name == "jit" and inner.params["name"] == "relu"


@pytest.mark.parametrize("name", UNARY + ["softmax", "log_softmax", "standardize",
                                          "logmeanexp", "glu"])
def test_traced_primitives_are_jaxs(name: str) -> None:
    x = np.ones((2, 4), np.float32)
    ours = _prims(plait.make_jaxpr(_ours(name))(x))
    theirs = _prims(jax.make_jaxpr(_theirs(name))(x))
    # plait's clip has no convert of its Python bound; its pnp.where needs no jit.
    assert ours == theirs - {"convert_element_type"} or ours == theirs


@pytest.mark.parametrize("approximate", [True, False])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_gelu(approximate: bool, dtype: Any) -> None:
    x = FINITE.astype(dtype)
    assert_close(pn.gelu(x, approximate), jax.nn.gelu(x, approximate), **_tol(dtype))
    assert_close(plait.vmap(plait.grad(lambda v: pn.gelu(v, approximate)))(FINITE),
                 jax.vmap(jax.grad(lambda v: jax.nn.gelu(v, approximate)))(FINITE),
                 rtol=1e-5, atol=1e-6)
    assert_close(pn.gelu(np.arange(3), approximate=approximate),
                 jax.nn.gelu(np.arange(3), approximate=approximate))


def test_parameterized_activations() -> None:
    x = FINITE
    for kw in ({"alpha": 0.5}, {"alpha": 2.0}):
        for name in ("elu", "celu"):
            assert_close(_ours(name)(x, **kw), _theirs(name)(x, **kw))
    assert_close(pn.leaky_relu(x, negative_slope=0.2), jax.nn.leaky_relu(x, 0.2))
    assert_close(pn.squareplus(x, b=1.0), jax.nn.squareplus(x, b=1.0))
    # An array parameter, and vmap over it.
    alpha = np.linspace(0.5, 2, 16).astype(np.float32)
    assert_close(pn.elu(x, alpha), jax.nn.elu(x, alpha))
    assert_close(plait.vmap(pn.celu)(x, alpha), jax.vmap(jax.nn.celu)(x, alpha))
    assert_close(plait.grad(pn.elu, argnums=1)(-1.0, 2.0), jax.grad(jax.nn.elu, argnums=1)(
        -1.0, 2.0))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_glu(axis: int) -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6) / 10 - 1
    assert_close(pn.glu(x, axis), jax.nn.glu(x, axis))
    assert_close(plait.grad(lambda v: pn.glu(v, axis=axis).sum())(x),
                 jax.grad(lambda v: jax.nn.glu(v, axis=axis).sum())(x))
    assert_close(plait.vmap(pn.glu)(x), jax.vmap(jax.nn.glu)(x))


def test_log1mexp() -> None:
    x = f32(1e-4, 0.1, 0.5, np.log(2), 1.0, 3.0, 20.0, 60.0)
    assert_close(pn.log1mexp(x), jax.nn.log1mexp(x))
    assert_close(plait.vmap(plait.grad(pn.log1mexp))(x), jax.vmap(jax.grad(jax.nn.log1mexp))(x))


def test_activation_vmap_and_jit_compose() -> None:
    x = np.linspace(-4, 4, 24).astype(np.float32).reshape(4, 6)
    for name in ("relu", "relu6", "hard_silu", "selu", "sparse_plus"):
        f = plait.jit(plait.vmap(plait.grad(lambda v, n=name: _ours(n)(v).sum())))
        g = jax.jit(jax.vmap(jax.grad(lambda v, n=name: _theirs(n)(v).sum())))
        assert_close(f(x), g(x))


# -- softmax, log_softmax, logsumexp, logmeanexp, standardize -----------------------------

X2 = np.array([[0.5, -1.0, 2.0, 0.0], [3.0, 3.0, -2.0, 1.0], [-0.5, 0.25, 0.0, -4.0]],
              np.float32)
MASK = np.array([[True, False, True, True], [False, True, True, False],
                 [True, True, True, True]])


@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_values_and_grads(name: str, axis: Any) -> None:
    ours, theirs = _ours(name), _theirs(name)
    assert_close(ours(X2, axis=axis), theirs(X2, axis=axis))
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert_close(plait.grad(lambda v: (ours(v, axis) * w).sum())(X2),
                 jax.grad(lambda v: (theirs(v, axis) * w).sum())(X2), atol=1e-6)
    t = np.ones_like(X2) / 3
    assert_close(plait.jvp(lambda v: ours(v, axis), (X2,), (t,)),
                 jax.jvp(lambda v: theirs(v, axis), (X2,), (t,)), atol=1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_where(name: str) -> None:
    ours, theirs = _ours(name), _theirs(name)
    assert_close(ours(X2, where=MASK), theirs(X2, where=MASK))
    assert_close(ours(X2, axis=0, where=MASK[0]), theirs(X2, axis=0, where=MASK[0]))
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    # Masked-out outputs are 0 (softmax) or -inf (log_softmax): weight only the rest.
    assert_close(plait.grad(lambda v: pnp.where(MASK, ours(v, where=MASK) * w, 0).sum())(X2),
                 jax.grad(lambda v: jjnp.where(MASK, theirs(v, where=MASK) * w, 0).sum())(X2),
                 atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_softmax_dtypes_jit_and_vmap(dtype: Any) -> None:
    x = X2.astype(dtype)
    for name in ("softmax", "log_softmax"):
        assert_close(_ours(name)(x), _theirs(name)(x), **_tol(dtype))
        assert_close(plait.jit(_ours(name))(x), jax.jit(_theirs(name))(x), **_tol(dtype))
        assert_close(plait.vmap(_ours(name))(x), jax.vmap(_theirs(name))(x), **_tol(dtype))
        assert_close(plait.vmap(lambda v, n=name: _ours(n)(v, axis=0), in_axes=1)(x),
                     jax.vmap(lambda v, n=name: _theirs(n)(v, axis=0), in_axes=1)(x),
                     **_tol(dtype))


def test_softmax_with_infinities_as_jax() -> None:
    x = f32(-np.inf, 0.0, 1.0, -np.inf)
    assert_close(pn.softmax(x), jax.nn.softmax(x))
    assert_close(pn.log_softmax(x), jax.nn.log_softmax(x))
    y = f32(np.inf, 0.0, 1.0, 2.0)
    assert np.isnan(np.asarray(pn.softmax(y))).all() == np.isnan(
        np.asarray(jax.nn.softmax(y))).all()


def test_softmax_custom_jvp_option(monkeypatch: pytest.MonkeyPatch) -> None:
    # JAX's jax_softmax_custom_jvp=True form: a custom_jvp with tangent y * (t - sum(y t)).
    monkeypatch.setattr(plait.ir.config.values, "softmax_custom_jvp", True, raising=False)
    j = plait.make_jaxpr(lambda v: pn.softmax(v, where=MASK))(X2)
    assert "custom_jvp_call" in {e.primitive.name for e in j.jaxpr.eqns}
    jax.config.update("jax_softmax_custom_jvp", True)
    try:
        w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
        for where in (None, MASK):
            assert_close(pn.softmax(X2, where=where), jax.nn.softmax(X2, where=where))
            assert_close(plait.grad(lambda v, m=where: (pn.softmax(v, 1, m) * w).sum())(X2),
                         jax.grad(lambda v, m=where: (jax.nn.softmax(v, 1, m) * w).sum())(X2),
                         atol=1e-6)
            assert_close(plait.vmap(lambda v: pn.softmax(v, where=MASK[0]))(X2),
                         jax.vmap(lambda v: jax.nn.softmax(v, where=MASK[0]))(X2))
    finally:
        jax.config.update("jax_softmax_custom_jvp", False)


def test_logsumexp_is_scipys() -> None:
    assert pn.logsumexp is plait.scipy.special.logsumexp
    assert_close(pn.logsumexp(X2, axis=1, where=MASK), jax.nn.logsumexp(X2, axis=1, where=MASK))


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": 0, "keepdims": True},
                                {"axis": (0, 1)}, {"axis": 1, "where": MASK},
                                {"where": MASK, "keepdims": True}])
def test_logmeanexp(kw: dict[str, Any]) -> None:
    assert_close(pn.logmeanexp(X2, **kw), jax.nn.logmeanexp(X2, **kw))
    assert_close(plait.grad(lambda v: pn.logmeanexp(v, **kw).sum())(X2),
                 jax.grad(lambda v: jax.nn.logmeanexp(v, **kw).sum())(X2), atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": None}, {"axis": (0, 1)},
                                {"epsilon": 0.5}, {"where": MASK},
                                {"algorithm": "stable"}, {"algorithm": "stable", "where": MASK},
                                {"mean": 0.5, "variance": 2.0},
                                {"mean": np.float32(1.0)}])
def test_standardize(kw: dict[str, Any]) -> None:
    assert_close(pn.standardize(X2, **kw), jax.nn.standardize(X2, **kw))
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert_close(plait.grad(lambda v: (pn.standardize(v, **kw) * w).sum())(X2),
                 jax.grad(lambda v: (jax.nn.standardize(v, **kw) * w).sum())(X2),
                 rtol=1e-4, atol=1e-5)


def test_standardize_dtypes_and_vmap() -> None:
    for dtype in FLOATS:
        x = X2.astype(dtype)
        assert_close(pn.standardize(x), jax.nn.standardize(x), **_tol(dtype))
    assert_close(pn.standardize(np.arange(6).reshape(2, 3)),
                 jax.nn.standardize(np.arange(6).reshape(2, 3)))
    assert_close(plait.vmap(pn.standardize)(X2), jax.vmap(jax.nn.standardize)(X2))
    assert_close(plait.jit(lambda v: pn.standardize(v, 0))(X2), jax.nn.standardize(X2, 0))


# -- one_hot -------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": 1}, {"axis": -2},
                                {"dtype": np.int32}, {"dtype": ml_dtypes.bfloat16},
                                {"dtype": bool}])
def test_one_hot(kw: dict[str, Any]) -> None:
    x = np.array([[0, 3, -1], [2, 4, 1]], np.int32)  # -1 and 4 are out of range: all 0
    assert_close(pn.one_hot(x, 4, **kw), jax.nn.one_hot(x, 4, **kw))


def test_one_hot_jit_vmap_and_primitives() -> None:
    x = np.array([0, 2, 1, 5], np.int32)
    assert_close(plait.jit(lambda v: pn.one_hot(v, 3))(x), jax.nn.one_hot(x, 3))
    assert_close(plait.vmap(lambda v: pn.one_hot(v, 6, axis=0))(x),
                 jax.vmap(lambda v: jax.nn.one_hot(v, 6, axis=0))(x))
    assert _prims(plait.make_jaxpr(lambda v: pn.one_hot(v, 3))(x)) == _prims(
        jax.make_jaxpr(lambda v: jax.nn.one_hot(v, 3))(x))
    assert_close(pn.one_hot(2, 3), jax.nn.one_hot(2, 3))
    assert_close(pn.one_hot(np.uint8(7), 9, dtype=np.float16),
                 jax.nn.one_hot(np.uint8(7), 9, dtype=np.float16))


def test_one_hot_float_indices_warn_as_jax() -> None:
    with pytest.warns(DeprecationWarning, match="integer-typed"):
        ours = pn.one_hot(f32(0.0, 1.0, 1.5), 3)
    with pytest.warns(DeprecationWarning):
        theirs = jax.nn.one_hot(f32(0.0, 1.0, 1.5), 3)
    assert_close(ours, theirs)


def test_one_hot_errors() -> None:
    x = np.array([0, 1], np.int32)
    with pytest.raises(plait.errors.ConcretizationTypeError):
        plait.jit(lambda n: pn.one_hot(x, n))(3)
    with pytest.raises(TypeError, match="expected an int num_classes"):
        pn.one_hot(x, 2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="named axes"):
        pn.one_hot(x, 3, axis="batch")  # type: ignore[arg-type]
    with pytest.raises(np.exceptions.AxisError):
        pn.one_hot(x, 3, axis=2)


# -- dot_product_attention -----------------------------------------------------------------

B, T, S, N, K, H = 2, 3, 5, 4, 2, 8
_rng = np.random.default_rng(0)
Q = _rng.normal(size=(B, T, N, H)).astype(np.float32)
KEY = _rng.normal(size=(B, S, K, H)).astype(np.float32)
VAL = _rng.normal(size=(B, S, K, H)).astype(np.float32)
BIAS = _rng.normal(size=(1, N, T, S)).astype(np.float32)
AMASK = _rng.random((B, 1, T, S)) > 0.3
QLEN = np.array([2, 3], np.int32)
KVLEN = np.array([4, 2], np.int32)

ATTENTION_CASES: dict[str, dict[str, Any]] = {
    "plain": {},
    "causal": {"is_causal": True},
    "bias": {"bias": BIAS},
    "batch_bias": {"bias": _rng.normal(size=(B, 1, T, S)).astype(np.float32)},
    "mask": {"mask": AMASK},
    "head_mask": {"mask": _rng.random((1, N, T, S)) > 0.3},
    "seq_lengths": {"query_seq_lengths": QLEN, "key_value_seq_lengths": KVLEN},
    "q_lengths": {"query_seq_lengths": QLEN},
    "window": {"local_window_size": (1, 2)},
    "window_causal_scale": {"local_window_size": 1, "is_causal": True, "scale": 0.3},
    "everything": {"bias": BIAS, "mask": AMASK, "is_causal": True, "query_seq_lengths": QLEN,
                   "key_value_seq_lengths": KVLEN, "local_window_size": (2, 0),
                   "implementation": "xla"},
}


@pytest.mark.parametrize("case", sorted(ATTENTION_CASES))
def test_attention_values_and_grads(case: str) -> None:
    kw = ATTENTION_CASES[case]
    assert_close(pn.dot_product_attention(Q, KEY, VAL, **kw),
                 jax.nn.dot_product_attention(Q, KEY, VAL, **kw))

    def loss(lib: Any) -> Callable[..., Any]:
        return lambda q, k, v: (lib.dot_product_attention(q, k, v, **kw) ** 2).sum()
    assert_close(plait.grad(loss(pn), argnums=(0, 1, 2))(Q, KEY, VAL),
                 jax.grad(loss(jax.nn), argnums=(0, 1, 2))(Q, KEY, VAL), rtol=1e-4, atol=2e-5)


def test_attention_jit_vmap_and_bias_grad() -> None:
    kw: dict[str, Any] = {"is_causal": True, "key_value_seq_lengths": KVLEN}
    assert_close(plait.jit(lambda q, k, v: pn.dot_product_attention(q, k, v, **kw))(Q, KEY, VAL),
                 jax.nn.dot_product_attention(Q, KEY, VAL, **kw))
    # vmap over a leading axis of 3-D (T, N, H) operands.
    assert_close(plait.vmap(pn.dot_product_attention)(Q, KEY, VAL),
                 jax.vmap(jax.nn.dot_product_attention)(Q, KEY, VAL))
    assert_close(plait.grad(lambda b: pn.dot_product_attention(Q, KEY, VAL, b).sum())(BIAS),
                 jax.grad(lambda b: jax.nn.dot_product_attention(Q, KEY, VAL, b).sum())(BIAS),
                 rtol=1e-4, atol=1e-5)


def test_attention_three_dimensional_and_multi_query() -> None:
    assert_close(pn.dot_product_attention(Q[0], KEY[0], VAL[0], is_causal=True),
                 jax.nn.dot_product_attention(Q[0], KEY[0], VAL[0], is_causal=True))
    k1, v1 = KEY[:, :, :1], VAL[:, :, :1]  # one key/value head for all query heads
    assert_close(pn.dot_product_attention(Q, k1, v1, bias=BIAS),
                 jax.nn.dot_product_attention(Q, k1, v1, bias=BIAS))


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=["bfloat16", "float16"])
def test_attention_half_precision(dtype: Any) -> None:
    q, k, v = (a.astype(dtype) for a in (Q, KEY, VAL))
    ours = pn.dot_product_attention(q, k, v, is_causal=True)
    assert ours.dtype == dtype
    # Logits and softmax in float32 as JAX's: the same values.
    assert_close(ours, jax.nn.dot_product_attention(q, k, v, is_causal=True), rtol=1e-2,
                 atol=1e-2)
    assert_close(plait.grad(lambda q: pn.dot_product_attention(q, k, v).astype(
        np.float32).sum())(q), jax.grad(lambda q: jax.nn.dot_product_attention(q, k, v).astype(
            np.float32).sum())(q), rtol=5e-2, atol=5e-2)


def test_attention_bfloat16_contracts_with_jaxs_algorithm() -> None:
    q, k, v = (a.astype(ml_dtypes.bfloat16) for a in (Q, KEY, VAL))
    j = plait.make_jaxpr(pn.dot_product_attention)(q, k, v)
    dots = [e for e in j.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert str(dots[0].params["precision"]) == "BF16_BF16_F32"
    assert dots[0].params["preferred_element_type"] == np.float32
    assert _prims(j) == _prims(jax.make_jaxpr(jax.nn.dot_product_attention)(q, k, v))
    assert_close(plait.jit(pn.dot_product_attention)(q, k, v),
                 jax.jit(jax.nn.dot_product_attention)(q, k, v), rtol=1e-2, atol=1e-2)


def test_attention_return_residual() -> None:
    kw: dict[str, Any] = {"mask": AMASK, "is_causal": True}
    ours = pn.dot_product_attention(Q, KEY, VAL, return_residual=True, **kw)
    theirs = jax.nn.dot_product_attention(Q, KEY, VAL, return_residual=True, **kw)
    assert_close(ours, theirs)
    assert ours[1].shape == (B, T, N)


def test_attention_errors() -> None:
    with pytest.raises(ValueError, match="multiple of the key/value heads"):
        pn.dot_product_attention(Q[:, :, :3], KEY, VAL)
    with pytest.raises(ValueError, match="value of shape"):
        pn.dot_product_attention(Q, KEY, VAL[:, :4])
    with pytest.raises(ValueError, match="query of dtype"):
        pn.dot_product_attention(Q.astype(np.float16), KEY, VAL)
    with pytest.raises(ValueError, match="mask of dtype bool"):
        pn.dot_product_attention(Q, KEY, VAL, mask=AMASK.astype(np.float32))
    with pytest.raises(ValueError, match="query_seq_lengths of dtype int32"):
        pn.dot_product_attention(Q, KEY, VAL, query_seq_lengths=QLEN.astype(np.float32))
    with pytest.raises(ValueError, match="key_value_seq_lengths of shape"):
        pn.dot_product_attention(Q, KEY, VAL, key_value_seq_lengths=np.array([1], np.int32))
    with pytest.raises(ValueError, match="head dimension of a bias or mask"):
        pn.dot_product_attention(Q, KEY, VAL, bias=np.zeros((1, 3, T, S), np.float32))
    with pytest.raises(ValueError, match="implementation"):
        pn.dot_product_attention(Q, KEY, VAL, implementation="flash")  # type: ignore[call-overload]
    with pytest.raises(NotImplementedError, match="cudnn"):
        pn.dot_product_attention(Q, KEY, VAL, implementation="cudnn")
    # JAX raises the same kinds for these.
    with pytest.raises(ValueError):
        jax.nn.dot_product_attention(Q[:, :, :3], KEY, VAL)
    with pytest.raises(ValueError):
        jax.nn.dot_product_attention(Q, KEY, VAL, mask=AMASK.astype(np.float32))


# -- errors, facade ------------------------------------------------------------------------

def test_bad_inputs_raise_as_jax() -> None:
    for name in ("relu", "elu", "softplus", "silu", "soft_sign", "hard_tanh"):
        with pytest.raises(TypeError):
            _ours(name)([1.0, 2.0])
        with pytest.raises(TypeError):
            _theirs(name)([1.0, 2.0])
    with pytest.raises(TypeError, match="logistic"):
        pn.sigmoid(np.arange(3))
    with pytest.raises(ValueError, match="divisible by 2"):
        pn.glu(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="algorithm"):
        pn.standardize(X2, algorithm="slow")
    with pytest.raises(ValueError, match="algorithm"):
        # (jax.nn's stub of standardize lacks the keyword its implementation takes)
        _theirs("standardize")(X2, algorithm="slow")
    with pytest.raises(TypeError):
        pn.standardize(X2, where=[True, False, True, True])
    with pytest.raises(TypeError):
        pn.softmax([1.0, 2.0])


def test_facade_has_jax_nns_functions() -> None:
    missing = {n for n in dir(jax.nn) if not n.startswith("_")} - set(dir(pn))
    # Not in plait: cuDNN-only scaled matmuls, and initializers (plait.nn.initializers,
    # a submodule imported on its own).
    assert missing <= {"scaled_matmul", "scaled_dot_general", "get_scaled_dot_general_config",
                       "initializers"}
    assert plait.nn is pn and "nn" in plait.__all__
    assert pn.swish is pn.silu and pn.hard_swish is pn.hard_silu
    assert pn.tanh is pnp.tanh
    for name in pn.__all__:
        assert getattr(pn, name).__doc__, name
