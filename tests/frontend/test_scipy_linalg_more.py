"""The rest of jax.scipy.linalg 0.10.2 in plait.scipy.linalg, against JAX (and SciPy in
float64): the special matrices (toeplitz, hankel, circulant, leslie, companion, fiedler,
fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal, invpascal, helmert,
hadamard, dft), sqrtm, rsf2csf, funm, solve_sylvester, qr_multiply, polar and
eigh_tridiagonal: values and dtypes (x64 too), batches, jit, vmap, grad/jvp where JAX
differentiates, and bad arguments."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg  # type: ignore[import-untyped]  # SciPy has no annotations
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
import plait.scipy.linalg as psl

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(57)
SLOW = pytest.mark.slow


def _slow(*values: Any) -> list[Any]:
    return [pytest.param(v, marks=SLOW) for v in values]
WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}
_jsl: Any = jsl  # (JAX annotates its functions as taking jax Arrays)
# (NumPy's overloads do not take plait Arrays, which convert through __array__.)
_allclose: Any = np.testing.assert_allclose
_array_equal: Any = np.testing.assert_array_equal


@contextlib.contextmanager
def _x64() -> Iterator[None]:
    before = plait.config.read("enable_x64"), jax.config.read("jax_enable_x64")
    plait.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", before[0])
        jax.config.update("jax_enable_x64", before[1])


@pytest.fixture(autouse=True)
def _x64_for_wide_dtypes(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests parametrized by a 64-bit ``dtype`` (or ``x64=True``) run with x64 on."""
    callspec = getattr(request.node, "callspec", None)
    params = callspec.params if callspec is not None else {}
    dtype = params.get("dtype")
    if not params.get("x64") and (dtype is None or np.dtype(dtype) not in WIDE):
        yield
        return
    with _x64():
        yield


def _tol(dtype: Any) -> float:
    return 1e-10 if np.dtype(dtype) in WIDE else 2e-5


def _check(ours: Any, theirs: Any, tol: float = 2e-5, exact_dtype: bool = True) -> None:
    o_leaves, t_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape, (o.shape, t.shape)
        if exact_dtype:
            assert o.dtype == t.dtype, (o.dtype, t.dtype)
        finite = np.abs(t[np.isfinite(t)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        _allclose(o, t, rtol=tol, atol=tol * scale, equal_nan=True)


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(dtype)


def _raises(fn: Callable[[], Any]) -> BaseException:
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the caller compares whatever was raised)
        return e
    raise AssertionError("no error was raised")


def _same_error(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any,
                **kwargs: Any) -> None:
    """``ours(*args, **kwargs)`` raises the error ``theirs(*args, **kwargs)`` does."""
    e_ours = _raises(lambda: ours(*args, **kwargs))
    e_theirs = _raises(lambda: theirs(*args, **kwargs))
    assert type(e_ours) is type(e_theirs), (e_ours, e_theirs)
    if "requires ndarray or scalar arguments" in str(e_theirs):
        # (plait's shared check_arraylike words the type its own way: "but got list")
        assert "requires ndarray or scalar arguments" in str(e_ours), e_ours
    else:
        assert str(e_ours) == str(e_theirs)


# --- Special matrices from arrays -------------------------------------------------------

ARRAY_BUILDERS: list[Any] = [
    ("toeplitz", ((2, 3), (1, 5))), ("hankel", ((3,), (2, 4))), ("circulant", ((2, 3, 4),)),
    ("leslie", ((2, 3), (3, 1, 2))), ("companion", ((2, 4),)), ("fiedler", ((2, 3),)),
    ("fiedler_companion", ((2, 5),)),
    *[pytest.param(*case, marks=SLOW) for case in [
        ("toeplitz", ((4,), (3,))), ("toeplitz", ((3,),)), ("hankel", ((4,), (3,))),
        ("hankel", ((2, 3),)), ("circulant", ((5,),)), ("leslie", ((4,), (3,))),
        ("companion", ((2,),)), ("fiedler", ((5,),)), ("fiedler_companion", ((1,),)),
        ("fiedler_companion", ((2,),)), ("fiedler_companion", ((6,),))]],
]


@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.int32, np.complex64, np.float64)])
@pytest.mark.parametrize("name,shapes", ARRAY_BUILDERS)
def test_array_builders(name: str, shapes: tuple[tuple[int, ...], ...], dtype: Any) -> None:
    if name == "fiedler" and dtype == np.complex64:
        dtype = np.float32  # (|a_i - a_j| of complex values is real: covered elsewhere)
    args = [_x(*s) * 4 if np.dtype(dtype).kind == "i" else _x(*s, dtype=dtype) for s in shapes]
    args = [a.astype(dtype) for a in args]
    ours, theirs = getattr(psl, name)(*args), getattr(_jsl, name)(*args)
    _check(ours, theirs, _tol(dtype))
    _check(plait.jit(getattr(psl, name))(*args), theirs, _tol(dtype))


def test_toeplitz_hankel_gather_as_jax() -> None:
    # A convolution gathers the diagonals in JAX: infinities spread NaNs, -0.0 becomes 0.0.
    c = np.array([1.0, np.inf, -0.0], np.float32)
    r = np.array([5.0, np.nan, 2.0, 3.0], np.float32)
    for name in ("toeplitz", "hankel"):
        o, t = np.asarray(getattr(psl, name)(c, r)), np.asarray(getattr(_jsl, name)(c, r))
        _array_equal(o, t)
        assert np.array_equal(np.signbit(o), np.signbit(t))
    # Complex c alone: r is conj(c) (a Hermitian matrix).
    cc = np.array([1.0, 2 + 1j, 3j], np.complex64)
    _check(psl.toeplitz(cc), jsl.toeplitz(cc))
    # Scalars, bools, empty vectors and mixed dtypes.
    _check(psl.toeplitz(3.0), jsl.toeplitz(3.0))
    _check(psl.toeplitz(np.array([True, False])), jsl.toeplitz(np.array([True, False])))
    _check(psl.toeplitz(np.arange(3), np.ones(2, np.float32)),
           jsl.toeplitz(np.arange(3), np.ones(2, np.float32)))
    for name in ("toeplitz", "hankel"):
        _check(getattr(psl, name)(np.zeros((2, 0), np.float32), np.ones(3, np.float32)),
               getattr(_jsl, name)(np.zeros((2, 0), np.float32), np.ones(3, np.float32)))
    _check(psl.circulant(np.zeros(0, np.float32)), jsl.circulant(np.zeros(0, np.float32)))


@SLOW
def test_array_builders_as_scipy() -> None:
    a, b = np.arange(1.0, 5.0), np.arange(5.0, 8.0)
    with _x64():
        _array_equal(psl.toeplitz(a, b), scipy.linalg.toeplitz(a, b))
        _array_equal(psl.hankel(a, b), scipy.linalg.hankel(a, b))
        _array_equal(psl.circulant(a), scipy.linalg.circulant(a))
        _allclose(psl.companion(a), scipy.linalg.companion(a))
        _allclose(psl.fiedler_companion(a),
                                   scipy.linalg.fiedler_companion(a))
        _array_equal(psl.leslie(a, b), scipy.linalg.leslie(a, b))
        _array_equal(psl.fiedler(a), scipy.linalg.fiedler(a))


# (No subnormals: XLA's CPU code flushes them to zero, in JAX as in plait.)
_FLOATS = st.floats(-9, 9, width=32, allow_subnormal=False)


@settings(max_examples=6, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 6), elements=_FLOATS),
       hnp.arrays(np.float32, st.integers(1, 6), elements=_FLOATS))
def test_toeplitz_hankel_structure(c: np.ndarray, r: np.ndarray) -> None:
    t, h = np.asarray(psl.toeplitz(c, r)), np.asarray(psl.hankel(c, r))
    _array_equal(t, scipy.linalg.toeplitz(c, r).astype(np.float32) + 0.0)
    _array_equal(h, scipy.linalg.hankel(c, r).astype(np.float32) + 0.0)
    _array_equal(np.asarray(psl.circulant(c)),
                                  scipy.linalg.circulant(c) + np.float32(0.0))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("m,n", [(4, 3), (3, 7), *[pytest.param(*mn, marks=SLOW)
                                                   for mn in ((1, 1), (4, 1), (4, 6))]])
def test_convolution_matrix(mode: str, m: int, n: int) -> None:
    a = _x(2, m)
    _check(psl.convolution_matrix(a, n, mode), jsl.convolution_matrix(a, n, mode))
    v = _x(n)
    conv: Any = np.convolve
    _allclose(np.asarray(psl.convolution_matrix(a[0], n, mode)) @ v, conv(a[0], v, mode),
              rtol=1e-5, atol=1e-5)
    ints = np.arange(1, m + 1, dtype=np.int32)
    _check(psl.convolution_matrix(ints, n, mode), jsl.convolution_matrix(ints, n, mode))


def test_array_builders_vmap_and_grad() -> None:
    c, r = _x(3, 4), _x(3, 5)
    _check(plait.vmap(psl.toeplitz)(c, r), jax.vmap(jsl.toeplitz)(c, r))
    _check(plait.vmap(psl.hankel, in_axes=(0, None))(c, r[0]),
           jax.vmap(jsl.hankel, in_axes=(0, None))(c, r[0]))
    _check(plait.vmap(psl.fiedler_companion)(c), jax.vmap(jsl.fiedler_companion)(c))
    _check(plait.vmap(lambda a: psl.convolution_matrix(a, 3))(c),
           jax.vmap(lambda a: jsl.convolution_matrix(a, 3))(c))
    w = _x(4, 5)

    def loss(lib: Any, name: str, *args: Any) -> Any:
        return (getattr(lib, name)(*args) ** 2 * w[:getattr(lib, name)(*args).shape[0],
                                                   :getattr(lib, name)(*args).shape[1]]).sum()

    for name, args in [("toeplitz", (c[0], r[0])), ("companion", (c[0] + 3,))]:
        argnums = tuple(range(len(args)))
        ours = plait.grad(lambda *a, n=name: loss(psl, n, *a), argnums=argnums)(*args)
        theirs = jax.grad(lambda *a, n=name: loss(jsl, n, *a), argnums=argnums)(*args)
        _check(ours, theirs, 1e-5)
    _check(plait.grad(lambda a: psl.convolution_matrix(a, 3, "same").sum())(c[0]),
           jax.grad(lambda a: jsl.convolution_matrix(a, 3, "same").sum())(c[0]))


def test_array_builder_errors() -> None:
    cases: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("toeplitz", ([1, 2],), {}), ("hankel", (np.float32(1.0),), {}),
        ("hankel", (np.ones(2), np.float32(1.0)), {}), ("hankel", ([1, 2],), {}),
        ("circulant", ([1, 2],), {}),
        ("leslie", (np.ones(1), np.ones(0)), {}), ("leslie", (np.ones(3), np.ones(3)), {}),
        ("companion", (np.ones(1),), {}), ("fiedler_companion", (np.ones(0),), {}),
        ("fiedler", ([1, 2],), {}),
        ("convolution_matrix", (np.ones(3), 0), {}),
        ("convolution_matrix", (np.ones(3), 2.0), {}),
        ("convolution_matrix", (np.float32(1.0), 2), {}),
        ("convolution_matrix", (np.ones(0), 2), {}),
        ("convolution_matrix", (np.ones(3), 2), {"mode": "wide"}),
    ]
    for name, args, kwargs in cases:
        _same_error(getattr(psl, name), getattr(_jsl, name), *args, **kwargs)


# --- Matrices of an order n -------------------------------------------------------------

@pytest.mark.parametrize("orders", [(0, 3), pytest.param((1, 2, 5, 8), marks=SLOW)])
@pytest.mark.parametrize("x64", [False, True])
def test_static_constructors(x64: bool, orders: tuple[int, ...]) -> None:
    tol = 1e-12 if x64 else 1e-6
    for n in orders:
        _check(psl.hilbert(n), jsl.hilbert(n), tol)
        _check(psl.invhilbert(n), jsl.invhilbert(n), tol)
        for kind in (None, "lower", "upper", "symmetric")[:4 if len(orders) > 2 else 2]:
            _check(psl.pascal(n, kind), jsl.pascal(n, kind), tol)
            _check(psl.invpascal(n, kind), jsl.invpascal(n, kind), tol)
        if n:
            _check(psl.helmert(n), jsl.helmert(n), tol)
            _check(psl.helmert(n, full=True), jsl.helmert(n, full=True), tol)
    for n in orders[-1:]:
        n = 2 ** n
        _check(psl.hadamard(n), jsl.hadamard(n))
        _check(psl.hadamard(n, np.float32), jsl.hadamard(n, np.float32))
    for n in orders[-1:]:
        for scale in (None, "sqrtn", "n"):
            _check(psl.dft(n, scale), jsl.dft(n, scale), tol)
            _check(psl.dft(n, scale, dtype=np.complex64), jsl.dft(n, scale, dtype=np.complex64))
    if x64:
        for n in orders[1:]:
            _allclose(psl.hilbert(n), scipy.linalg.hilbert(n), rtol=1e-15)
            _allclose(psl.invhilbert(n), scipy.linalg.invhilbert(n),
                                       rtol=1e-9)
            _allclose(psl.invpascal(n), scipy.linalg.invpascal(n),
                                       rtol=1e-9)
            _allclose(psl.helmert(n, True), scipy.linalg.helmert(n, True),
                                       rtol=1e-14)
            _allclose(psl.dft(n), scipy.linalg.dft(n), atol=1e-14)
            _array_equal(psl.hadamard(2 ** n), scipy.linalg.hadamard(2 ** n))
            _allclose(psl.pascal(n, "upper"), scipy.linalg.pascal(n, "upper"),
                                       rtol=1e-5)


def test_static_constructor_errors_and_warnings() -> None:
    for fn in [lambda lib: lib.pascal(3, "diagonal"), lambda lib: lib.invpascal(3, "x"),
               lambda lib: lib.helmert(0), lambda lib: lib.hadamard(3),
               lambda lib: lib.hadamard(0), lambda lib: lib.dft(3, "unitary"),
               lambda lib: lib.dft(3, dtype=np.float32)]:
        _same_error(partial(fn, psl), partial(fn, jsl))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = psl.dft(2, dtype=np.complex128)
    assert out.dtype == np.complex64
    assert any("Explicitly requested dtype complex128 requested in dft" in str(w.message)
               for w in got)


# --- Matrix functions -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.float64, np.complex64, np.complex128)])
def test_sqrtm(dtype: Any) -> None:
    a = _x(4, 4, dtype=dtype)
    spd = (a @ np.conj(a.T) + np.eye(4)).astype(dtype)
    for x in (a, spd, np.triu(a)):
        ours = psl.sqrtm(x)
        _check(ours, jsl.sqrtm(x), _tol(dtype) * 10)
        _check(ours @ ours, x.astype(ours.dtype), _tol(dtype) * 50)
    _check(plait.jit(psl.sqrtm)(a), jsl.sqrtm(a), _tol(dtype) * 10)
    batch = np.stack([a, spd])
    _check(plait.vmap(psl.sqrtm)(batch), jax.vmap(jsl.sqrtm)(batch), _tol(dtype) * 10)
    if np.dtype(dtype) in WIDE:
        _allclose(psl.sqrtm(spd), scipy.linalg.sqrtm(spd), rtol=1e-10)


def test_sqrtm_edge_cases() -> None:
    _check(psl.sqrtm(np.ones((1, 1), np.float32) * 4), jsl.sqrtm(np.ones((1, 1)) * 4))
    _check(psl.sqrtm(np.zeros((2, 2), np.float32)), jsl.sqrtm(np.zeros((2, 2), np.float32)))
    _same_error(lambda: psl.sqrtm(np.eye(2), blocksize=2),
                lambda: jsl.sqrtm(np.eye(2), blocksize=2))
    with pytest.raises(NotImplementedError):  # (no derivative of schur, as in JAX)
        plait.grad(lambda a: psl.sqrtm(a).real.sum())(np.eye(2, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.float64)])
def test_rsf2csf(dtype: Any) -> None:
    a = _x(2, 5, 5, dtype=dtype)
    t, z = (np.asarray(v) for v in jsl.schur(a))
    ours = psl.rsf2csf(t, z)
    _check(ours, jsl.rsf2csf(t, z), _tol(dtype) * 10)
    _check(plait.vmap(psl.rsf2csf)(t, z), jax.vmap(jsl.rsf2csf)(t, z), _tol(dtype) * 10)
    tc, zc = ours
    assert np.allclose(np.tril(np.asarray(tc), -1), 0)
    recon = np.asarray(zc) @ np.asarray(tc) @ np.conj(np.swapaxes(np.asarray(zc), -1, -2))
    _allclose(recon, a, atol=_tol(dtype) * 100)
    if np.dtype(dtype) in WIDE:
        ts, zs = scipy.linalg.rsf2csf(t[0], z[0])
        _allclose(np.abs(np.asarray(tc[0])), np.abs(ts), atol=1e-10)
    one = np.full((1, 1), 2.0, dtype)
    _check(psl.rsf2csf(one, one), jsl.rsf2csf(one, one))
    for args in [(np.ones(3), np.ones((3, 3))), (np.ones((3, 3)), np.ones((3, 2))),
                 (np.ones((3, 3)), np.ones((2, 2)))]:
        _same_error(psl.rsf2csf, jsl.rsf2csf, *args)


@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.complex64, np.float64)])
def test_funm(dtype: Any) -> None:
    a = _x(4, 4, dtype=dtype) * 0.5
    for f, jf in [(pnp.exp, jnp.exp), (lambda x: pnp.sin(x) + 2 * pnp.cos(x),
                                       lambda x: jnp.sin(x) + 2 * jnp.cos(x))]:
        _check(psl.funm(a, f), jsl.funm(a, jf), _tol(dtype) * 10)
        _check(psl.funm(a, f, disp=False), jsl.funm(a, jf, disp=False), _tol(dtype) * 10)
    f_exp: Any = psl.funm(a, pnp.exp)
    _check(f_exp, jsl.expm(a).astype(f_exp.dtype),
           _tol(dtype) * 100, exact_dtype=False)
    if np.dtype(dtype) in WIDE:
        _allclose(psl.funm(a, pnp.exp), scipy.linalg.funm(a, np.exp),
                                   rtol=1e-9)
    _same_error(lambda: psl.funm(np.ones((2, 3)), pnp.exp),
                lambda: jsl.funm(np.ones((2, 3)), jnp.exp))


@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.float64, np.complex64, np.complex128)])
@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester(dtype: Any, method: str) -> None:
    a = _x(4, 4, dtype=dtype) + 4 * np.eye(4, dtype=dtype)
    b = _x(3, 3, dtype=dtype) + 4 * np.eye(3, dtype=dtype)
    c = _x(4, 3, dtype=dtype)
    ours = psl.solve_sylvester(a, b, c, method=method)
    _check(ours, jsl.solve_sylvester(a, b, c, method=method), _tol(dtype) * 50)
    _allclose(a @ np.asarray(ours) + np.asarray(ours) @ b, c,
                               atol=_tol(dtype) * 100)
    if np.dtype(dtype) in WIDE:
        _allclose(ours, scipy.linalg.solve_sylvester(a, b, c), rtol=1e-9)


def test_solve_sylvester_batches_and_errors() -> None:
    a = _x(2, 3, 3) + 4 * np.eye(3, dtype=np.float32)
    b = _x(2, 2) + 4 * np.eye(2, dtype=np.float32)
    c = _x(2, 3, 2)
    _check(psl.solve_sylvester(a, b, c), jsl.solve_sylvester(a, b, c), 1e-4)
    _check(plait.jit(psl.solve_sylvester)(a, b, c), jsl.solve_sylvester(a, b, c), 1e-4)
    _check(plait.vmap(psl.solve_sylvester, in_axes=(0, None, 0))(a, b, c),
           jax.vmap(jsl.solve_sylvester, in_axes=(0, None, 0))(a, b, c), 1e-4)
    ints = np.arange(4, dtype=np.int32).reshape(2, 2) + 3 * np.eye(2, dtype=np.int32)
    _check(psl.solve_sylvester(ints, ints, ints), jsl.solve_sylvester(ints, ints, ints), 1e-4)
    # A singular equation (eigenvalues of A and B summing to zero) gives NaNs.
    _check(psl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2))),
           jsl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2))))
    _same_error(psl.solve_sylvester, jsl.solve_sylvester, a, b, c[..., :1])
    _same_error(psl.solve_sylvester, jsl.solve_sylvester, a[0], b, c[0], method="lu")


@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.complex64, np.float64)])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr_multiply(dtype: Any, shape: tuple[int, int]) -> None:
    a = _x(*shape, dtype=dtype)
    m, n = shape
    k = min(m, n)
    for pivoting in (False, True):
        for conjugate in (False, True):
            left, right = _x(k, 2, dtype=dtype), _x(3, m, dtype=dtype)
            for mode, c in (("left", left), ("right", right), ("left", left[:, 0]),
                            ("right", right[0])):
                ours = psl.qr_multiply(a, c, mode, pivoting, conjugate)
                theirs = jsl.qr_multiply(a, c, mode, pivoting, conjugate)
                _check(ours, theirs, _tol(dtype) * 10)
    if np.dtype(dtype) in WIDE:  # (SciPy's ``c @ Q`` for mode 'right' keeps all M columns)
        c = _x(3, m, dtype=dtype) if m <= n else _x(k, 3, dtype=dtype)
        mode = "right" if m <= n else "left"
        _check(psl.qr_multiply(a, c, mode), scipy.linalg.qr_multiply(a, c, mode), 1e-9)


def test_qr_multiply_batches_jit_and_errors() -> None:
    a, c = _x(2, 5, 3), _x(4, 5)
    _check(psl.qr_multiply(a, c), jsl.qr_multiply(a, c), 1e-5)
    x = _x(3, 2)
    _check(plait.jit(psl.qr_multiply, static_argnums=2)(a, x, "left"),
           jsl.qr_multiply(a, x, "left"), 1e-5)
    _check(plait.vmap(psl.qr_multiply, in_axes=(0, None))(a, c),
           jax.vmap(jsl.qr_multiply, in_axes=(0, None))(a, c), 1e-5)
    _check(psl.qr_multiply(np.arange(6).reshape(3, 2), np.ones((2, 3), np.int32)),
           jsl.qr_multiply(np.arange(6).reshape(3, 2), np.ones((2, 3), np.int32)), 1e-5)
    for args in [(a[0], c, "middle"), (a[0], _x(2, 2), "left"), (a[0], _x(2, 3), "right")]:
        _same_error(psl.qr_multiply, jsl.qr_multiply, *args)


# --- polar and eigh_tridiagonal ---------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.complex64, np.float64)])
@pytest.mark.parametrize("shape,side", [((4, 3), "right"), ((3, 3), "right"),
                                        ((3, 5), "left"), ((2, 5, 4), "right")])
def test_polar(dtype: Any, shape: tuple[int, ...], side: str) -> None:
    a = _x(*shape, dtype=dtype)
    for method in ("qdwh", "svd"):
        u, p = psl.polar(a, side, method=method)
        _check((u, p), jsl.polar(a, side, method=method), _tol(dtype) * 20)
        recon = np.asarray(u) @ np.asarray(p) if side == "right" else np.asarray(p) @ u
        _allclose(recon, a, atol=_tol(dtype) * 100)
    if np.dtype(dtype) in WIDE and len(shape) == 2:
        su, sp = scipy.linalg.polar(a, side)
        _check(psl.polar(a, side), (su, sp), 1e-9)


def test_polar_transforms_and_errors() -> None:
    a = _x(2, 4, 3)
    _check(plait.vmap(psl.polar)(a), jax.vmap(jsl.polar)(a), 1e-4)
    _check(plait.jit(psl.polar)(a[0]), jsl.polar(a[0]), 1e-4)
    # QDWH differentiates in forward mode (reverse mode: a while_loop), the SVD both ways.
    t = _x(4, 3)
    _check(plait.jvp(lambda x: psl.polar(x), (a[0],), (t,)),
           jax.jvp(lambda x: jsl.polar(x), (a[0],), (t,)), 1e-3)
    _check(plait.grad(lambda x: psl.polar(x, method="svd")[0][0].sum())(a[0]),
           jax.grad(lambda x: jsl.polar(x, method="svd")[0][0].sum())(a[0]), 1e-4)
    for args, kwargs in [((np.ones(3),), {}), ((np.ones((2, 2)), "up"), {}),
                         ((np.ones((2, 2)),), {"method": "newton"}),
                         ((np.ones((2, 3)),), {}), ((np.ones((3, 3)), "left"), {})]:
        _same_error(psl.polar, jsl.polar, *args, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, *_slow(np.float64, np.complex64)])
@pytest.mark.parametrize("n", [7, *_slow(1, 2, 33)])
def test_eigh_tridiagonal(dtype: Any, n: int) -> None:
    d = _x(n, dtype=dtype).real.astype(dtype)
    e = _x(n - 1, dtype=dtype)
    _check(psl.eigh_tridiagonal(d, e, eigvals_only=True),
           jsl.eigh_tridiagonal(d, e, eigvals_only=True), _tol(dtype) * 5)
    if n > 2:
        kw: dict[str, Any] = {"eigvals_only": True, "select": "i", "select_range": (1, n - 2)}
        _check(psl.eigh_tridiagonal(d, e, **kw), jsl.eigh_tridiagonal(d, e, **kw),
               _tol(dtype) * 5)
        _check(psl.eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-3),
               jsl.eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-3), 1e-3)
    w, v_ours = psl.eigh_tridiagonal(d, e)
    wj, v_jax = jsl.eigh_tridiagonal(d, e)
    _check(w, wj, _tol(dtype) * 5)
    # The same starting vectors (random.normal of key(42)): the same eigenvectors, signs too.
    v, vj = np.asarray(v_ours), np.asarray(v_jax)
    assert v.dtype == vj.dtype and v.shape == vj.shape
    _allclose(v, vj, atol=1e-3 if np.dtype(dtype) not in WIDE else 1e-8)
    if np.dtype(dtype) == np.float64 and n > 1:
        _allclose(w, scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True),
                                   rtol=1e-12, atol=1e-12)


def test_eigh_tridiagonal_clusters_transforms_errors() -> None:
    d, e = np.ones(6, np.float32), np.zeros(5, np.float32)
    w, v = psl.eigh_tridiagonal(d, e)
    _check(w, jsl.eigh_tridiagonal(d, e)[0])
    _allclose(np.asarray(v).T @ np.asarray(v), np.eye(6), atol=1e-5)
    # a cluster's basis depends on the starting vectors: JAX's, from the key given
    for k in (plait.random.key(7), None):
        jk = None if k is None else jax.random.key(7)
        _allclose(np.asarray(psl.eigh_tridiagonal(d, e, key=k)[1]),
                  np.asarray(jsl.eigh_tridiagonal(d, e, key=jk)[1]), atol=1e-5)
    ds, es = _x(3, 5), _x(3, 4)
    only: dict[str, Any] = {"eigvals_only": True}
    _check(plait.vmap(lambda a, b: psl.eigh_tridiagonal(a, b, **only))(ds, es),
           jax.vmap(lambda a, b: jsl.eigh_tridiagonal(a, b, **only))(ds, es), 1e-5)
    _check(plait.jit(lambda a, b: psl.eigh_tridiagonal(a, b, **only))(ds[0], es[0]),
           jsl.eigh_tridiagonal(ds[0], es[0], **only), 1e-5)
    f32 = np.ones(3, np.float32)
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((f32, np.ones(2, np.int32)), {}), ((np.ones(3, np.int32),) * 2, {}),
        ((f32, f32[:2]), {"select": "i"}),
        ((f32, f32[:2]), {"select": "i", "select_range": (2, 1)}),
        ((f32, f32[:2]), {"select": "v", "select_range": (0, 1)}),
        ((f32, f32[:2]), {"select": "x"})]
    for args, kwargs in cases:
        _same_error(psl.eigh_tridiagonal, jsl.eigh_tridiagonal, *args, **kwargs)


def test_all_names_of_jax() -> None:
    public = {n for n in dir(jsl) if not n.startswith("_")}
    assert public <= set(psl.__all__), sorted(public - set(psl.__all__))
