"""The rest of plait.scipy.special (erfcx, dawsn, wofz, the exponential, sine/cosine and
Fresnel integrals, poch, hyp1f1, hyp2f1, spence, bernoulli, owens_t, bessel_jn,
sph_harm_y) against jax.scipy.special 0.10.2 and, in float64, scipy.special: values
(edge values included), dtypes and weak types, jit, grad (JAX's custom rules), vmap,
and errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special as ssp  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.errors
import plait.scipy.special as psp
from tests.frontend.jax_oracle import assert_close, f32

_jsp: Any = jsp  # (JAX annotates its functions as taking jax Arrays)

# One shape, (16,), per family where possible: eager calls and jit compile once per shape.
REAL = f32(-np.inf, -30.0, -5.0, -1.0, -0.3, -0.0, 0.0, 1e-3, 0.5, 2.0, 3.3, 6.5, 9.5, 30.0,
           np.inf, np.nan)
POSITIVE = f32(0.0, 1e-4, 0.1, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 3.0, 5.0, 9.0, 17.0, 40.0, 70.0,
               np.inf)
WIDE = f32(-1e10, -40.0, -8.0, -4.0, -1.0, -0.2, 0.0, 1e-3, 0.7, 3.9, 4.1, 7.9, 8.1, 50.0,
           1e10, np.nan)


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type) if isinstance(x, plait.Array) else bool(x.weak_type)


def check(name: str, *args: Any, rtol: float = 2e-5, atol: float = 1e-6, jit: bool = False,
          **kw: Any) -> None:
    """Eager (and with ``jit``, jitted) values of ``name`` equal JAX's, dtypes and tuples
    included.  (Most of these functions are one jitted program inside, as JAX's, and their
    compilation dominates the run time: so only some are compiled again under ``jit``.)"""
    ours, theirs = getattr(psp, name), getattr(_jsp, name)
    want = jax.jit(lambda *a: theirs(*a, **kw))(*args)
    assert_close(ours(*args, **kw), want, rtol=rtol, atol=atol)
    if jit:
        assert_close(plait.jit(lambda *a: ours(*a, **kw))(*args), want, rtol=rtol, atol=atol)


@contextlib.contextmanager
def x64() -> Iterator[None]:
    before = plait.config.read("enable_x64"), jax.config.read("jax_enable_x64")
    plait.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", before[0])
        jax.config.update("jax_enable_x64", before[1])


# -- values -----------------------------------------------------------------------------

UNARY = {"erfcx": REAL, "dawsn": REAL, "expi": REAL, "exp1": REAL, "sici": WIDE,
         "fresnel": WIDE, "spence": POSITIVE}
UNDER_JIT = {"erfcx", "dawsn", "fresnel", "spence"}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_dtypes(name: str) -> None:
    check(name, UNARY[name], jit=name in UNDER_JIT)
    ours, theirs = getattr(psp, name)(0.5), getattr(_jsp, name)(0.5)
    assert_close(ours, theirs)
    assert ([_weak(x) for x in jax.tree_util.tree_leaves(ours)]
            == [_weak(x) for x in jax.tree_util.tree_leaves(theirs)])


@pytest.mark.parametrize("name", [
    "erfcx", "dawsn", "sici", "fresnel",
    pytest.param("expi", marks=pytest.mark.slow), pytest.param("exp1", marks=pytest.mark.slow)])
def test_integers_become_float32(name: str) -> None:
    n = np.arange(-2, 6, dtype=np.int16)
    assert_close(getattr(psp, name)(n), getattr(_jsp, name)(n))


def test_spence_below_zero_and_its_reflections() -> None:
    x = f32(-2.0, -1e-6, 0.0, 0.2, 0.49, 0.51, 1.0, 1.49, 1.51, 1.99, 2.01, 1e6)
    check("spence", x, jit=True)
    assert np.isnan(np.asarray(psp.spence(f32(-1.0)))).all()


def test_wofz_and_complex_erfcx() -> None:
    re = np.array([-6.0, -2.0, -0.5, 0.0, 0.5, 1.5, 3.0, 8.0], np.float32)
    im = np.array([-3.0, -0.5, 0.0, 0.2, 1.0, 4.0, 10.0, -7.0], np.float32)
    z = (re[:, None] + 1j * im[None, :]).astype(np.complex64)
    check("wofz", z, rtol=5e-5, atol=1e-6)
    check("erfcx", z, rtol=5e-5, atol=1e-6)
    check("wofz", re)  # real arguments become complex64
    assert psp.wofz(1.0).dtype == np.complex64
    assert psp.wofz(np.arange(3)).dtype == np.complex64


def test_expn_cases() -> None:
    n = np.array([0, 1, 2, 3, 5, 10, -1, 1, 2, 0, 6000, 5000, 3, 1, 2, 4])
    x = f32(0.0, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 30.0, 0.3, 2.0, 0.5, np.inf, np.nan, 1e-4,
            7.0)
    check("expn", n, x)
    check("expn", n[:4, None], x[None, 3:7])  # broadcasting


@pytest.mark.slow
def test_expn_more() -> None:
    check("expn", 2, POSITIVE, jit=True)
    check("expn", 2.5, f32(0.5, 2.0))  # a non-integer order, as JAX computes it


def test_poch() -> None:
    z = f32(0.5, 1.0, 2.5, -1.5, 3.0, 0.0, -2.0, 4.2)
    m = f32(0.0, 1.0, 2.0, 0.5, -1.2, 3.0, 2.0, 1.7)
    check("poch", z, m, rtol=1e-4, jit=True)
    check("poch", np.arange(1, 5), 3)  # integers become float32


def test_hyp1f1() -> None:
    a = f32(0.5, 1.0, 2.0, 0.0, 3.0, 1.5, -2.0, 0.3, 1.0, 2.0, 0.5, 4.0)
    b = f32(1.5, 2.0, 2.0, 0.0, 0.0, 3.5, 1.0, 2.0, 1.0, 5.0, 0.5, 1.0)
    x = f32(0.3, -2.0, 5.0, 1.0, 2.0, 120.0, 0.7, -0.5, 0.0, 101.0, -3.0, 10.0)
    check("hyp1f1", a, b, x, rtol=1e-4)


HYP2F1 = (
    f32(0.5, 1.0, -2.0, 0.5, 1.5, 2.0, 0.3, 1.2, 1.0, 0.5, 2.0, -3.0, 0.0, 1.0, 1.0, 2.0),
    f32(1.5, 2.0, 1.0, 1.0, 0.5, 1.0, 0.7, 2.0, 1.0, 0.5, 3.0, 1.5, 1.0, 2.0, 1.0, 1.0),
    f32(2.5, 3.0, 1.5, 2.0, 4.5, 3.0, 2.0, 3.2, 1.0, 2.5, 5.0, 2.5, 0.0, -1.0, 3.0, 2.0),
    f32(0.3, -2.0, 0.5, 0.95, 0.99, 1.0, 0.92, 0.97, 0.5, 1.0, 0.2, 0.8, 0.5, 0.5, 1.5, 0.0),
)


def test_hyp2f1() -> None:
    # every branch: Taylor series, terminating, Euler's transformation, the digamma
    # expansion near 1, Gauss's theorem at 1, (1 - x)^-a, inf
    check("hyp2f1", *HYP2F1, rtol=1e-4)


def test_owens_t() -> None:
    h = f32(-2.0, -0.5, 0.0, 0.3, 1.0, 2.5, 5.0, 0.7, np.nan, 1.0, 0.2, 3.0)
    a = f32(0.5, -0.3, 2.0, 1.0, 1.0, -3.0, 0.2, 10.0, 1.0, np.inf, 0.0, -1.0)
    check("owens_t", h, a, jit=True)
    check("owens_t", h[:4, None], a[None, :3])


def test_bernoulli() -> None:
    for n in (0, 3, 10):
        assert_close(psp.bernoulli(n), jsp.bernoulli(n), rtol=1e-5, atol=1e-7)
    assert psp.bernoulli(np.int8(2)).shape == (3,)  # type: ignore[arg-type]


def test_bessel_jn() -> None:
    z = f32(0.1, 1.0, 2.5, 5.0, 10.0, -3.0)
    check("bessel_jn", z.reshape(2, 3), v=3, rtol=1e-4, atol=1e-6, jit=True)
    check("bessel_jn", 2.0, v=0, rtol=1e-4)
    check("bessel_jn", np.arange(1, 4), v=2, n_iter=30, rtol=1e-4)


def test_sph_harm_y() -> None:
    n = np.array([0, 1, 2, 3, 2, 3, 4, 1])
    m = np.array([0, -1, 2, -2, 1, 3, -4, 0])
    theta = f32(0.1, 0.5, 1.0, 2.0, 3.0, 1.5, 0.7, np.pi)
    phi = f32(0.2, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0)
    assert_close(psp.sph_harm_y(n, m, theta, phi), _jsp.sph_harm_y(n, m, theta, phi),
                 rtol=1e-4, atol=1e-6)
    check("sph_harm_y", n, m, theta, phi, n_max=4, rtol=1e-4, atol=1e-6, jit=True)
    check("sph_harm_y", n, m, theta, phi, n_max=2, rtol=1e-4, atol=1e-6)  # clipped degrees
    check("sph_harm_y", n, m, 0.5, phi, n_max=4, rtol=1e-4, atol=1e-6)  # a scalar theta
    # SciPy's values (this convention: Condon-Shortley phase, theta the colatitude).
    np.testing.assert_allclose(np.asarray(psp.sph_harm_y(n, m, theta, phi)),
                               ssp.sph_harm_y(n, m, theta, phi), rtol=1e-4, atol=1e-6)


def test_lpmn_values_is_jaxs_and_deprecated_as_there() -> None:
    # (e3nn-jax reads it; JAX 0.10.2 warns on reading it, as plait does.)
    z = np.linspace(-0.9, 0.9, 7, dtype=np.float32)
    name = "lpmn_values"  # (read by name: neither module lists it any more)
    for mod in (psp, jsp):
        with pytest.warns(DeprecationWarning, match="lpmn_values is deprecated; no "
                                                    "replacement is planned"):
            getattr(mod, name)
    with pytest.warns(DeprecationWarning):
        ours, theirs = getattr(psp, name), getattr(jsp, name)
    for n, normalized in ((0, True), (2, False), (6, True)):  # (each call compiles twice)
        assert_close(ours(n, n, z, normalized), theirs(n, n, z, normalized),
                     rtol=1e-5, atol=1e-6)
    assert_close(plait.jit(ours, static_argnums=(0, 1, 3))(4, 4, z, True),
                 theirs(4, 4, z, True), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="m!=n"):
        ours(2, 3, z, True)
    with pytest.raises(ValueError, match="z must be a 1D array"):
        ours(2, 2, z[None], True)
    with pytest.raises(TypeError, match="z.dtype=int32 is not supported"):
        ours(2, 2, np.arange(3, dtype=np.int32), True)


# -- derivatives ------------------------------------------------------------------------

GRAD_ARGS = {
    "erfcx": f32(-3.0, -0.5, 0.0, 0.7, 12.0), "dawsn": f32(-3.0, 0.2, 1.0, 4.0, 8.0),
    "expi": f32(-3.0, -0.5, 0.5, 3.0, 20.0), "exp1": f32(0.1, 0.5, 1.5, 3.0, 10.0),
    "spence": f32(0.1, 0.6, 1.2, 1.8, 3.0),
}


@pytest.mark.parametrize("name", sorted(GRAD_ARGS))
def test_vmap_grad_matches_jax(name: str) -> None:
    x = GRAD_ARGS[name]
    ours = plait.vmap(plait.grad(getattr(psp, name)))(x)
    assert_close(ours, jax.jit(jax.vmap(jax.grad(getattr(_jsp, name))))(x), rtol=1e-4,
                 atol=1e-6)


@pytest.mark.parametrize("name", ["sici", "fresnel"])
def test_jacobians_of_pairs(name: str) -> None:
    x = f32(-2.0, 0.1, 0.5, 1.5, 3.0, 10.0)
    ours = plait.vmap(plait.jacfwd(getattr(psp, name)))(x)
    assert_close(ours, jax.vmap(jax.jacfwd(getattr(_jsp, name)))(x), rtol=1e-4, atol=1e-6)
    rev = plait.vmap(plait.grad(lambda v: getattr(psp, name)(v)[1]))(x)
    assert_close(rev, jax.vmap(jax.grad(lambda v: getattr(_jsp, name)(v)[1]))(x), rtol=1e-4,
                 atol=1e-6)


def test_wofz_derivative() -> None:
    z = np.array([0.5 + 0.5j, -1.0 + 2.0j, 2.0 - 1.0j], np.complex64)
    t = np.ones_like(z)
    assert_close(plait.jvp(psp.wofz, (z,), (t,)), jax.jvp(jsp.wofz, (z,), (t,)), rtol=1e-4)
    assert_close(plait.grad(lambda v: psp.wofz(v).real)(0.7),
                 jax.grad(lambda v: jsp.wofz(v).real)(0.7), rtol=1e-4)


def test_derivatives_of_binary_functions() -> None:
    n, x = np.array([1, 2, 3, 4, 6]), f32(0.2, 0.5, 1.5, 3.0, 10.0)
    assert_close(plait.vmap(plait.grad(psp.expn, 1))(n, x),
                 jax.vmap(jax.grad(jsp.expn, 1))(n, x), rtol=1e-4)
    z, m = f32(0.5, 1.0, 2.5, -1.5, 4.2), f32(0.0, 1.0, 2.0, 0.5, 1.7)
    assert_close(plait.vmap(plait.grad(psp.poch, (0, 1)))(z, m),
                 jax.vmap(jax.grad(jsp.poch, (0, 1)))(z, m), rtol=1e-4)
    h, a = f32(-2.0, -0.5, 0.3, 2.5, 5.0), f32(0.5, -0.3, 1.0, -3.0, 10.0)
    assert_close(plait.vmap(plait.grad(psp.owens_t, (0, 1)))(h, a),
                 jax.vmap(jax.grad(jsp.owens_t, (0, 1)))(h, a), rtol=1e-4, atol=1e-7)
    zz = f32(0.1, 1.0, 2.5, 5.0, -3.0)
    assert_close(plait.grad(lambda v: psp.bessel_jn(v, v=2)[2].sum())(zz),
                 jax.grad(lambda v: jsp.bessel_jn(v, v=2)[2].sum())(zz), rtol=1e-4, atol=1e-6)


def test_hyp1f1_derivatives() -> None:
    a, b, x = f32(0.5, 1.0, 2.0, 1.5, 0.3), f32(1.5, 2.0, 2.0, 3.5, 2.0), f32(0.3, -2.0, 5.0,
                                                                             120.0, -0.5)
    assert_close(plait.vmap(plait.grad(psp.hyp1f1, (0, 1, 2)))(a, b, x),
                 jax.vmap(jax.grad(jsp.hyp1f1, (0, 1, 2)))(a, b, x), rtol=1e-4)


@pytest.mark.slow
def test_hyp2f1_derivatives() -> None:
    a, b, c, x = (v[[0, 1, 3, 10]] for v in HYP2F1)
    assert_close(plait.vmap(plait.grad(psp.hyp2f1, (0, 1, 2, 3)))(a, b, c, x),
                 jax.vmap(jax.grad(jsp.hyp2f1, (0, 1, 2, 3)))(a, b, c, x), rtol=1e-4)


def test_custom_jvps_are_staged() -> None:
    for f in (psp.erfcx, psp.dawsn, psp.expi, psp.sici, psp.fresnel, psp.exp1, psp.owens_t):
        args = (f32(0.5, 1.0),) * (2 if f is psp.owens_t else 1)
        assert "custom_jvp_call" in str(plait.make_jaxpr(f)(*args))


# -- properties -------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.float32, 6, elements=st.floats(-50, 50, width=32)))
def test_erfcx_and_dawsn_match_jax(x: np.ndarray) -> None:
    assert_close(psp.erfcx(x), jsp.erfcx(x), rtol=2e-5, atol=1e-6)
    assert_close(psp.dawsn(x), jsp.dawsn(x), rtol=2e-5, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.float32, 6, elements=st.floats(-60, 60, width=32)))
def test_expi_and_sici_match_jax(x: np.ndarray) -> None:
    # (JAX's expi loops ~1 / |x| times for a tiny negative x in an array: plait's does not.)
    x = np.where(np.abs(x) < 1e-3, np.float32(1e-3), x)
    assert_close(psp.expi(x), jsp.expi(x), rtol=5e-5, atol=1e-6)
    assert_close(psp.sici(x), jsp.sici(x), rtol=5e-5, atol=1e-6)


# -- float64 ----------------------------------------------------------------------------

F64_POINTS = np.array([1e-3, 0.2, 0.5, 0.9, 1.0, 1.5, 2.5, 3.9, 4.5, 7.5, 9.0, 15.0, 33.0,
                       65.0])


@pytest.mark.parametrize("names", [
    ("erfcx", "dawsn", "sici", "fresnel", "spence"),
    pytest.param(("expi", "exp1"), marks=pytest.mark.slow)])
def test_float64_matches_jax_and_scipy(names: tuple[str, ...]) -> None:
    x = F64_POINTS
    with x64():
        for name in names:
            ours = getattr(psp, name)(x)
            assert_close(ours, jax.jit(getattr(_jsp, name))(x), rtol=1e-12, atol=1e-15)
            assert_close(ours, getattr(ssp, name)(x), rtol=1e-12, atol=1e-15)
        if "erfcx" in names:
            z = x[:7] + 1j * x[7:]
            assert_close(psp.wofz(z), ssp.wofz(z), rtol=1e-12)
            assert psp.erfcx(1.0).dtype == np.float64
        else:
            assert_close(psp.expn(3, x), ssp.expn(3, x), rtol=1e-12)


@pytest.mark.slow
def test_float64_parameter_functions_match_scipy() -> None:
    a, b, x = F64_POINTS[:7], F64_POINTS[7:], F64_POINTS[:7] / 10
    with x64():
        assert_close(psp.poch(a, b), ssp.poch(a, b), rtol=1e-10)
        assert_close(psp.hyp1f1(a, b, x * 10), ssp.hyp1f1(a, b, x * 10), rtol=1e-10)
        assert_close(psp.hyp2f1(a, b, b + 1, x), ssp.hyp2f1(a, b, b + 1, x), rtol=1e-10)
        assert_close(psp.owens_t(a, x), ssp.owens_t(a, x), rtol=1e-10, atol=1e-15)
        assert_close(psp.bernoulli(12), ssp.bernoulli(12), rtol=1e-12)
        assert_close(psp.bessel_jn(a, v=3), np.stack([ssp.jv(k, a) for k in range(4)]),
                     rtol=1e-10, atol=1e-13)


# -- errors -----------------------------------------------------------------------------

def test_errors_match_jax() -> None:
    c = np.complex64(1 + 1j)
    for name in ("dawsn", "expi", "exp1"):
        with pytest.raises(ValueError, match=f"{name} does not support complex-valued"):
            getattr(psp, name)(c)
    with pytest.raises(ValueError, match="expn does not support complex-valued"):
        psp.expn(1, c)
    with pytest.raises(ValueError, match="Argument `x` to sici must be real-valued"):
        psp.sici(c)
    with pytest.raises(NotImplementedError, match="complex-valued inputs is not implemented"):
        psp.fresnel(c)
    with pytest.raises(ValueError, match="poch does not support complex-valued"):
        psp.poch(c, 1.0)
    with pytest.raises(ValueError, match="hyp1f1 does not support complex-valued"):
        psp.hyp1f1(c, 1.0, 1.0)
    with pytest.raises(TypeError, match=r"x.dtype=int32 is not supported"):
        psp.spence(np.arange(3))
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        psp.bernoulli(-1)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        psp.bernoulli(2.0)  # type: ignore[arg-type]
    with pytest.raises(plait.errors.ConcretizationTypeError):
        plait.jit(psp.bernoulli)(3)
    with pytest.raises(ValueError, match="complex input not supported"):
        psp.bessel_jn(c, v=1)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        psp.bessel_jn(1.0, v=1.5)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="'diff_n' argument"):
        psp.sph_harm_y(np.array([1]), np.array([0]), 0.5, 0.5, diff_n=1)
    with pytest.raises(plait.errors.ConcretizationTypeError, match="must be statically"):
        plait.jit(lambda n: psp.sph_harm_y(n, n, 0.5, 0.5))(np.array([1]))
    with pytest.raises(TypeError, match="erfcx requires ndarray or scalar arguments"):
        psp.erfcx([1.0, 2.0])


def test_public_facade() -> None:
    assert set(psp.__all__) == {n for n in dir(jsp) if not n.startswith("_")} - {
        "lpmn", "lpmn_values", "sph_harm"}
    for name in psp.__all__:
        assert callable(getattr(psp, name)), name
