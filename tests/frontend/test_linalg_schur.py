"""lax.linalg.hessenberg, lax.linalg.tridiagonal, lax.linalg.schur and
scipy.linalg.hessenberg/schur against jax 0.10.2: values for the four LAPACK dtypes
(batched too) eagerly and under jit and vmap, checked by reconstruction (Q H Q^H == A,
Z T Z^H == A); printed and parsed jaxprs; the lowered modules (JAX's LAPACK custom
calls); the reference interpreter; the missing derivatives; bad arguments."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax as jlax

import plait
from plait.errors import RuleNotImplementedError
from plait.frontend.lax import linalg_schur as S
from plait.ir import check_jaxpr, eval_jaxpr, parse_jaxpr

if TYPE_CHECKING:
    # plait.scipy.linalg re-exports hessenberg and schur through `__all__ += _schur_all`,
    # which mypy does not follow: type-check against the module defining them (the same
    # functions).
    import plait.frontend.scipy.linalg_schur as psl
else:
    import plait.scipy.linalg as psl

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}
RNG = np.random.default_rng(13)

# JAX annotates its linalg functions as taking jax Arrays; the tests pass NumPy arrays.
_jax_linalg: Any = jlax.linalg
_jsl: Any = jsl


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
    """Tests parametrized by a 64-bit ``dtype`` run with x64 on."""
    callspec = getattr(request.node, "callspec", None)
    dtype = callspec.params.get("dtype") if callspec is not None else None
    if dtype is None or np.dtype(dtype) not in WIDE:
        yield
        return
    with _x64():
        yield


def _tol(dtype: Any) -> float:
    return 1e-10 if np.dtype(dtype) in WIDE else 3e-4


def _close(got: Any, want: Any, dtype: Any = np.float32, scale: float = 1) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=_tol(dtype) * scale, atol=_tol(dtype) * scale)


def _normal(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _hermitian(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = _normal(shape, dtype)
    return ((x + _h(x)) / 2).astype(dtype)


def _h(x: Any) -> Any:
    return np.swapaxes(np.asarray(x).conj(), -1, -2)


def _eye_like(x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)


def _zero_below(x: Any, k: int) -> bool:
    """Whether the entries more than ``k`` below the diagonal are all zero."""
    x = np.asarray(x)
    return bool(np.all(np.tril(x, -k - 1) == 0))


SHAPES = [(4, 4), (2, 3, 3), (1, 1)]


# -- hessenberg -----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    ja, jt = _jax_linalg.hessenberg(x)
    for a, taus in (S.hessenberg(x), plait.jit(S.hessenberg)(x)):
        assert np.asarray(taus).shape == shape[:-2] + (shape[-1] - 1,)
        # The same LAPACK kernel as JAX: the same reflectors and scales.
        _close(a, ja, dtype, 10)
        _close(taus, jt, dtype, 10)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scipy_hessenberg_reconstructs(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    jh, jq = _jsl.hessenberg(x, calc_q=True)
    for h, q in (psl.hessenberg(x, calc_q=True),
                 plait.jit(lambda a: psl.hessenberg(a, calc_q=True))(x)):
        h_, q_ = np.asarray(h), np.asarray(q)
        assert _zero_below(h_, 1)
        _close(q_ @ h_ @ _h(q_), x, dtype, 30)
        _close(_h(q_) @ q_, _eye_like(q_), dtype, 30)
        _close(h, jh, dtype, 10)
        _close(q, jq, dtype, 10)
    _close(psl.hessenberg(x), jh, dtype, 10)


def test_scipy_hessenberg_of_an_empty_matrix() -> None:
    x = np.zeros((2, 0, 0), np.float32)
    h, q = psl.hessenberg(x, calc_q=True)
    assert np.asarray(h).shape == np.asarray(q).shape == (2, 0, 0)
    assert np.asarray(psl.hessenberg(x)).shape == (2, 0, 0)


# -- tridiagonal ----------------------------------------------------------------------------------


def _tridiagonal_matrix(d: Any, e: Any) -> np.ndarray:
    d, e = np.asarray(d), np.asarray(e)
    n = d.shape[-1]
    t = np.zeros(d.shape + (n,), d.dtype)
    i = np.arange(n)
    t[..., i, i] = d
    t[..., i[1:], i[:-1]] = e
    t[..., i[:-1], i[1:]] = e
    return t


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_values(dtype: Any, shape: tuple[int, ...], lower: bool) -> None:
    x = _hermitian(shape, dtype)
    theirs = _jax_linalg.tridiagonal(x, lower=lower)
    for ours in (S.tridiagonal(x, lower=lower),
                 plait.jit(lambda a: S.tridiagonal(a, lower=lower))(x)):
        for got, want in zip(ours, theirs):
            _close(got, want, dtype, 10)
        a, d, e, taus = (np.asarray(v) for v in ours)
        assert d.dtype == e.dtype == np.finfo(dtype).dtype and taus.dtype == dtype
        # T is similar to A: the same eigenvalues.
        _close(np.linalg.eigvalsh(_tridiagonal_matrix(d, e)), np.linalg.eigvalsh(x), dtype, 30)
        if lower and shape[-1] > 1:
            # A = Q T Q^H with Q = diag(1, H_1 ... H_{n-1}), as for hessenberg.
            q = np.asarray(psl.hessenberg(x, calc_q=True)[1])  # (a Hermitian x: the same Q)
            _close(q @ _tridiagonal_matrix(d, e).astype(dtype) @ _h(q), x, dtype, 30)


def test_tridiagonal_reads_one_triangle() -> None:
    x = _hermitian((4, 4), np.complex64)
    noisy_upper = x + np.triu(_normal((4, 4), np.complex64), 1)
    noisy_lower = x + np.tril(_normal((4, 4), np.complex64), -1)
    for got, want in zip(S.tridiagonal(noisy_upper)[1:3], S.tridiagonal(x)[1:3]):
        _close(got, want, scale=10)
    for got, want in zip(S.tridiagonal(noisy_lower, lower=False)[1:3],
                         S.tridiagonal(x, lower=False)[1:3]):
        _close(got, want, scale=10)


# -- schur ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_schur_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    jt, jz = _jax_linalg.schur(x)
    real = np.dtype(dtype).kind == "f"
    for t, z in (S.schur(x), plait.jit(S.schur)(x)):
        t_, z_ = np.asarray(t), np.asarray(z)
        # Quasi-triangular (2x2 blocks for conjugate pairs) when real, else triangular.
        assert _zero_below(t_, 1 if real else 0)
        _close(z_ @ t_ @ _h(z_), x, dtype, 30)
        _close(_h(z_) @ z_, _eye_like(z_), dtype, 30)
        _close(t, jt, dtype, 30)
        _close(z, jz, dtype, 30)
    (t_only,) = S.schur(x, compute_schur_vectors=False)
    _close(t_only, jt, dtype, 30)


@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_scipy_schur(dtype: Any, output: str) -> None:
    x = _normal((2, 4, 4), dtype)
    t, z = psl.schur(x, output=output)
    jt, jz = _jsl.schur(x, output=output)
    _close(t, jt, dtype, 30)
    _close(z, jz, dtype, 30)
    t_, z_ = np.asarray(t), np.asarray(z)
    if output == "complex":
        assert _zero_below(t_, 0)
    _close(z_ @ t_ @ _h(z_), x.astype(t_.dtype), dtype, 30)
    with pytest.raises(ValueError, match="Expected 'output' to be either 'real' or 'complex'"):
        psl.schur(x, output="imaginary")


def test_scipy_schur_of_integers_and_empty_matrices() -> None:
    x = np.array([[1, 2], [3, 4]], np.int32)
    with pytest.raises(TypeError, match="schur: expected float32"):
        psl.schur(x)  # (JAX refuses integers too)
    t, z = psl.schur(x, output="complex")
    jt, jz = _jsl.schur(x, output="complex")
    _close(t, jt, scale=10)
    _close(z, jz, scale=10)
    t, z = S.schur(np.zeros((0, 0), np.float32))
    assert np.asarray(t).shape == np.asarray(z).shape == (0, 0)


def test_nans_where_the_reduction_fails_or_the_input_is_nan() -> None:
    x = np.stack([_normal((3, 3), np.float32), np.full((3, 3), np.nan, np.float32)])
    for ours, theirs in ((S.hessenberg(x), _jax_linalg.hessenberg(x)),
                         (S.tridiagonal(x), _jax_linalg.tridiagonal(x)),
                         (S.schur(x), _jax_linalg.schur(x))):
        for got, want in zip(ours, theirs):
            np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(np.asarray(want)))


# -- vmap, the reference interpreter --------------------------------------------------------------


_CASES: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("hessenberg", S.hessenberg, _jax_linalg.hessenberg),
    ("tridiagonal", lambda x: S.tridiagonal(x), lambda x: _jax_linalg.tridiagonal(x)),
    ("tridiagonal_upper", lambda x: S.tridiagonal(x, lower=False),
     lambda x: _jax_linalg.tridiagonal(x, lower=False)),
    ("schur", S.schur, _jax_linalg.schur),
    ("schur_form_only", lambda x: S.schur(x, compute_schur_vectors=False),
     lambda x: _jax_linalg.schur(x, compute_schur_vectors=False)),
]


@pytest.mark.parametrize("name, ours, theirs", _CASES, ids=[c[0] for c in _CASES])
def test_vmap(name: str, ours: Callable[..., Any], theirs: Callable[..., Any]) -> None:
    make = _hermitian if name.startswith("tridiagonal") else _normal
    x = make((3, 2, 4, 4), np.float32)
    xs = np.moveaxis(x, 0, 3)
    for got, want in zip(plait.vmap(ours, in_axes=3)(xs), jax.vmap(theirs, in_axes=3)(xs)):
        _close(got, want, scale=30)
    for got, want in zip(plait.jit(plait.vmap(plait.vmap(ours)))(x), theirs(x)):
        _close(got, want, scale=30)


@pytest.mark.parametrize("name, ours, theirs", _CASES, ids=[c[0] for c in _CASES])
def test_reference_interpreter(name: str, ours: Callable[..., Any],
                               theirs: Callable[..., Any]) -> None:
    make = _hermitian if name.startswith("tridiagonal") else _normal
    x = make((2, 4, 4), np.complex64)
    closed = plait.make_jaxpr(ours)(x)
    for ref, got in zip(eval_jaxpr(closed.jaxpr, closed.consts, x), ours(x)):
        _close(ref, got, scale=10)


# -- derivatives (none, as in JAX) ---------------------------------------------------------------


@pytest.mark.parametrize("name, ours, theirs", _CASES, ids=[c[0] for c in _CASES])
def test_no_derivatives(name: str, ours: Callable[..., Any], theirs: Callable[..., Any]) -> None:
    x = _hermitian((3, 3), np.float32)
    prim = name.split("_")[0]
    message = f"JVP rule for '{prim}' not implemented"
    with pytest.raises(RuleNotImplementedError, match=message):
        plait.jvp(lambda a: ours(a)[0], (x,), (x,))
    with pytest.raises(RuleNotImplementedError, match=message):
        plait.grad(lambda a: ours(a)[0].sum())(x)
    with pytest.raises(NotImplementedError):  # JAX has no rule either
        jax.jvp(lambda a: theirs(a)[0], (x,), (x,))
    # Where no tangent reaches the reduction, differentiation goes through.
    y, dy = plait.jvp(lambda s: ours(x)[0] * s, (np.float32(2),), (np.float32(1),))
    _close(dy, ours(x)[0], scale=10)


# -- printed jaxprs and lowered modules -----------------------------------------------------------


@pytest.mark.parametrize("name, ours, theirs", _CASES, ids=[c[0] for c in _CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_jaxprs_match_jax_and_parse_back(name: str, ours: Callable[..., Any],
                                         theirs: Callable[..., Any], dtype: Any,
                                         shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    text, jax_text = str(plait.make_jaxpr(ours)(x)), str(jax.make_jaxpr(theirs)(x))
    assert text == jax_text
    parsed = parse_jaxpr(jax_text)
    check_jaxpr(parsed)
    assert str(parsed) == jax_text


def test_schur_prints_a_select_callable_as_jax_does() -> None:
    x = _normal((3, 3), np.float32)

    def select(w: Any) -> Any:
        return w

    ours = str(plait.make_jaxpr(lambda a: S.schur(a, select_callable=select))(x))
    theirs = str(jax.make_jaxpr(lambda a: _jax_linalg.schur(a, select_callable=select))(x))
    assert ours == theirs
    assert "select_callable=<function test_schur_prints_a_select_callable_as_jax_does" \
           ".<locals>.select at 0xXXXXXXXXXXXX>" in ours


def test_scipy_jaxprs_use_the_primitives() -> None:
    x = _normal((4, 4), np.float32)
    assert "hessenberg a" in str(plait.make_jaxpr(lambda a: psl.hessenberg(a, calc_q=True))(x))
    assert "schur[" in str(plait.make_jaxpr(psl.schur)(x))


_SDY = re.compile(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>")
_PREFIX = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}


def _jax_text(f: Callable[..., Any], *args: Any) -> str:
    return _SDY.sub("", jax.jit(f).lower(*args).as_text())


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lowered_modules_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    p = _PREFIX[dtype]
    sy = "he" if np.dtype(dtype).kind == "c" else "sy"
    targets = {"hessenberg": f"lapack_{p}gehrd_ffi", "tridiagonal": f"lapack_{p}{sy}trd_ffi",
               "tridiagonal_upper": f"lapack_{p}{sy}trd_ffi", "schur": f"lapack_{p}gees_ffi",
               "schur_form_only": f"lapack_{p}gees_ffi"}
    for name, ours, theirs in _CASES:
        text = plait.jit(ours).lower(x).as_text()
        assert f"stablehlo.custom_call @{targets[name]}(" in text
        assert text == _jax_text(theirs, x), name
    hess = plait.jit(S.hessenberg).lower(x).as_text()
    assert f"mhlo.backend_config = {{high = {shape[-1]} : i32, low = 1 : i32}}" in hess


def test_schur_sorting_does_not_lower() -> None:
    x = _normal((3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="sort feature of LAPACK's gees"):
        S.schur(x, sort_eig_vals=True)
    # It traces, as in JAX (only the lowering refuses).
    text = str(plait.make_jaxpr(lambda a: S.schur(a, sort_eig_vals=True))(x))
    assert "sort_eig_vals=True" in text


# -- bad arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, name", [(S.hessenberg, "hessenberg"), (S.tridiagonal, "tridiagonal"),
                                      (S.schur, "schur")])
def test_bad_arguments(fn: Callable[..., Any], name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}: expected float32, float64, complex64 or "
                                        r"complex128 for the operand, but got i32\[3,3\]"):
        fn(np.eye(3, dtype=np.int32))
    with pytest.raises(TypeError, match=rf"{name}: expected float32.* but got f16\[3,3\]"):
        fn(np.eye(3, dtype=np.float16))
    with pytest.raises(TypeError, match=rf"{name}: expected a square matrix .* but got "
                                        r"f32\[3,4\]"):
        fn(np.ones((3, 4), np.float32))
    with pytest.raises(TypeError, match=rf"{name}: expected a square matrix .* but got f32\[3\]"):
        fn(np.ones(3, np.float32))


def test_empty_matrices() -> None:
    for fn, name in ((S.hessenberg, "hessenberg"), (S.tridiagonal, "tridiagonal")):
        with pytest.raises(TypeError, match=rf"{name}: expected a nonempty matrix, but got "
                                            r"f32\[0,0\]"):
            fn(np.zeros((0, 0), np.float32))
    with pytest.raises(ValueError):  # (JAX refuses an empty tridiagonal too)
        _jax_linalg.tridiagonal(jnp.zeros((0, 0), jnp.float32))
