"""plait.scipy.signal against jax.scipy.signal 0.10.2 (and scipy.signal where JAX follows
it): convolutions of every mode and method, detrend, stft/istft, csd and welch, in
float32, complex64 and (x64) float64, under jit, grad and vmap, and the errors."""

from __future__ import annotations

import warnings
from typing import Any, Literal

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jjnp
import jax.scipy.signal as jsig
import numpy as np
import pytest
import scipy.signal as ssig  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.errors
import plait.lax
import plait.numpy as pnp
import plait.scipy.signal as psig
from plait.frontend.scipy.signal_windows import get_window
from tests.frontend.jax_oracle import assert_close, both_x64, raised

RNG = np.random.default_rng(11)


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


Case = tuple[tuple[Any, ...], dict[str, Any]]


def _same(name: str, cases: list[Case], rtol: float = 2e-5, atol: float = 2e-5) -> None:
    """``psig.name`` equals ``jsig.name`` (values, shapes, dtypes) on each case
    ``(args, kwargs)``; all the cases in one jitted program per library (the NumPy arrays
    among the arguments are its inputs, anything else is closed over)."""
    arrays = [[a for a in args if isinstance(a, np.ndarray)] for args, _ in cases]

    def program(module: Any) -> Any:
        fn = getattr(module, name)

        def run(inputs: list[list[Any]]) -> list[Any]:
            outs = []
            for (args, kw), arrs in zip(cases, inputs):
                it = iter(arrs)
                full = [next(it) if isinstance(a, np.ndarray) else a for a in args]
                outs.append(fn(*full, **kw))
            return outs
        return run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = jax.jit(program(jsig))(arrays)
        got = plait.jit(program(psig))(arrays)
    assert_close(got, want, rtol=rtol, atol=atol)


# -- convolutions ---------------------------------------------------------------------------

PAIRS = [((9,), (4,)), ((4,), (9,)), ((6,), (6,)), ((5, 6), (2, 3)), ((2, 3), (5, 6)),
         ((3, 4, 5), (2, 2, 3)), ((1, 7), (1, 3))]
MODES: tuple[Literal["full", "same", "valid"], ...] = ("full", "same", "valid")


def _conv_cases(pairs: list[tuple[tuple[int, ...], tuple[int, ...]]], methods: tuple[str, ...],
                dtype: Any = np.float32) -> list[Case]:
    return [((_x(*s1, dtype=dtype), _x(*s2, dtype=dtype), mode), {"method": method})
            for s1, s2 in pairs for mode in MODES for method in methods]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_nd_convolutions_match_jax(name: str) -> None:
    _same(name, _conv_cases(PAIRS[::2] + PAIRS[4:5], ("auto", "fft")), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=lambda d: np.dtype(d).name)
def test_nd_convolutions_exhaustive(name: str, dtype: Any) -> None:
    _same(name, _conv_cases(PAIRS, ("auto", "direct", "fft"), dtype), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["convolve", "correlate", "fftconvolve"])
def test_convolution_dtypes(name: str) -> None:
    cases: list[Case] = []
    for dtype in (np.complex64, np.int32, np.bool_):
        a, b = _x(7, 3, dtype=dtype), _x(3, 2, dtype=dtype)
        if dtype == np.bool_:
            a, b = _x(7, 3) > 0, _x(3, 2) > 0
        cases += [((a, b, mode), {}) for mode in MODES]
    _same(name, cases, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_2d_convolutions_match_jax(name: str) -> None:
    pairs = [((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 4), (4, 4)), ((1, 5), (1, 2)),
             ((3, 1), (4, 1))]
    _same(name, [((_x(*s1, dtype=d), _x(*s2, dtype=d), mode), {})
                 for s1, s2 in pairs for d in (np.float32, np.complex64) for mode in MODES])


def test_2d_convolutions_match_scipy_where_jax_does() -> None:
    a, b = _x(6, 5), _x(3, 2)
    for mode in MODES:
        assert_close(np.asarray(psig.convolve2d(a, b, mode)),
                     ssig.convolve2d(a, b, mode).astype(np.float32), rtol=1e-4, atol=1e-4)
        assert_close(np.asarray(psig.correlate2d(a, b, mode)),
                     ssig.correlate2d(a, b, mode).astype(np.float32), rtol=1e-4, atol=1e-4)


def test_fftconvolve_axes() -> None:
    a, b = _x(3, 8, 4), _x(3, 3, 4)
    c, d = _x(3, 1, 5, dtype=np.complex64), _x(3, 4, 1, dtype=np.complex64)
    cases: list[Case] = [((a, b, mode), {"axes": axes})
                         for mode in MODES for axes in (1, (1, 2), (-1, 1))]
    cases += [((c, d, mode), {"axes": (1, 2)}) for mode in ("full", "same")]
    _same("fftconvolve", cases, rtol=1e-4, atol=1e-4)
    assert_close(np.asarray(psig.fftconvolve(a, b, "same", axes=(1, 2))),
                 ssig.fftconvolve(a, b, "same", axes=(1, 2)).astype(np.float32),
                 rtol=1e-4, atol=1e-4)


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 9), elements=st.floats(-4, 4, width=32)),
       hnp.arrays(np.float32, st.integers(1, 9), elements=st.floats(-4, 4, width=32)),
       st.sampled_from(MODES))
def test_convolve_is_scipys(a: np.ndarray, b: np.ndarray, mode: str) -> None:
    want = ssig.convolve(a.astype(np.float64), b.astype(np.float64), mode)
    np.testing.assert_allclose(np.asarray(psig.convolve(a, b, mode)),  # type: ignore[arg-type]
                               want, rtol=1e-4, atol=1e-4)


def test_convolutions_under_grad_and_vmap() -> None:
    a, b = _x(12), _x(4)
    batch_a, batch_b = np.stack([a, -a, 2 * a]), np.stack([b, b + 1, b])
    m, k = _x(5, 6), _x(2, 3)

    def program(sig: Any, lib: Any, jnp: Any) -> Any:
        def run(a: Any, b: Any, ba: Any, bb: Any, m: Any) -> Any:
            out = []
            for name in ("convolve", "correlate", "fftconvolve"):
                f = getattr(sig, name)
                out.append(lib.grad(lambda x, y, f=f: (f(x, y) ** 2).sum(), argnums=(0, 1))(a, b))
                out.append(lib.vmap(f)(ba, bb))
            for name in ("convolve2d", "correlate2d"):
                f = getattr(sig, name)
                out.append(lib.grad(lambda x, f=f: (f(x, k, "same") ** 2).sum())(m))
            return out
        return lib.jit(run)
    want = program(jsig, jax, jjnp)(a, b, batch_a, batch_b, m)
    got = program(psig, plait, pnp)(a, b, batch_a, batch_b, m)
    assert_close(got, want, rtol=1e-4, atol=1e-4)


# -- detrend --------------------------------------------------------------------------------

def test_detrend_matches_jax_and_scipy() -> None:
    data = _x(20, 3)
    kws: list[dict[str, Any]] = [
        {}, {"type": "constant"}, {"axis": 0}, {"axis": 0, "bp": [6, 13]},
        {"axis": 0, "bp": np.array([19])}, {"axis": -1, "type": "constant"},
        {"axis": 0, "bp": 5, "type": "linear"}]
    _same("detrend", [((data,), kw) for kw in kws] + [
        ((_x(4, 9, dtype=np.complex64),), {}), ((np.arange(10),), {})], rtol=1e-4, atol=1e-5)
    for kw in kws[2:4]:
        assert_close(np.asarray(plait.jit(lambda d, kw=kw: psig.detrend(d, **kw))(data)),
                     ssig.detrend(data.astype(np.float64), **kw).astype(np.float32),
                     rtol=1e-4, atol=1e-5)
    g = plait.jit(plait.grad(lambda x: (psig.detrend(x, bp=[3]) ** 3).sum()))(data[:, 0])
    want = jax.jit(jax.grad(lambda x: (jsig.detrend(x, bp=[3]) ** 3).sum()))(data[:, 0])
    assert_close(g, want, rtol=1e-3, atol=1e-4)


# -- spectral analysis ----------------------------------------------------------------------

STFT_CASES: list[dict[str, Any]] = [
    {}, {"nperseg": 16}, {"nperseg": 16, "noverlap": 4, "nfft": 20},
    {"nperseg": 15, "boundary": "even"}, {"nperseg": 15, "boundary": "odd", "padded": False},
    {"nperseg": 8, "boundary": "constant", "detrend": "linear"},
    {"nperseg": 8, "boundary": None, "window": "hamming", "return_onesided": False},
    {"nperseg": 10, "window": ("kaiser", 5.0), "fs": 3.0},
    {"nperseg": 7, "window": np.linspace(0.1, 1, 7), "detrend": "constant"},
]


def test_stft_matches_jax() -> None:
    x = _x(3, 50)
    _same("stft", [((x,), kw) for kw in STFT_CASES] + [((x.T,), {**kw, "axis": 0})
                                                      for kw in STFT_CASES[3:6]],
          rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_stft_exhaustive() -> None:
    _same("stft", [((x,), {**kw, "axis": ax}) for kw in STFT_CASES
                   for x, ax in ((_x(50, 2), 0), (_x(50, 2, dtype=np.complex64), 0),
                                 (_x(2, 3, 33), -1))], rtol=1e-4, atol=1e-5)


def test_stft_matches_scipy() -> None:
    x = _x(2, 64)
    for kw in ({"nperseg": 16}, {"nperseg": 12, "noverlap": 9, "window": "blackman"}):
        got = psig.stft(x, **kw)  # (eagerly)
        for g, w in zip(got, ssig.stft(x.astype(np.float64), **kw)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-5)


CSD_CASES: list[dict[str, Any]] = [
    {}, {"nperseg": 16}, {"nperseg": 16, "noverlap": 4, "nfft": 21, "scaling": "spectrum"},
    {"nperseg": 8, "average": "median"},
    {"nperseg": 8, "detrend": "linear", "return_onesided": False},
    {"nperseg": 9, "window": "blackman", "fs": 100.0, "detrend": False},
    {"nperseg": 10, "detrend": lambda d: d - d.mean(axis=-1, keepdims=True)},
]


def test_welch_and_csd_match_jax() -> None:
    x, y = _x(3, 50), _x(3, 40)
    xc = _x(50, 2, dtype=np.complex64)
    _same("welch", [((x,), kw) for kw in CSD_CASES], rtol=1e-4, atol=1e-6)
    _same("csd", [((x, y), kw) for kw in CSD_CASES] + [((x, None), kw) for kw in CSD_CASES[:4]]
          + [((xc, xc[:30, :1]), {**kw, "axis": 0}) for kw in CSD_CASES[2:5]],
          rtol=1e-4, atol=1e-6)


def test_welch_and_csd_match_scipy() -> None:
    x, y = _x(2, 128), _x(2, 128)
    for kw in ({"nperseg": 32}, {"nperseg": 20, "average": "median", "window": "hamming"},
               {"nperseg": 16, "scaling": "spectrum", "detrend": "linear"}):
        for got, want in (
                (plait.jit(lambda a, kw=kw: psig.welch(a, **kw))(x),
                 ssig.welch(x.astype(np.float64), **kw)),
                (plait.jit(lambda a, b, kw=kw: psig.csd(a, b, **kw))(x, y),
                 ssig.csd(x.astype(np.float64), y, **kw))):
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), w, rtol=1e-3, atol=1e-6)


def test_complex_input_warns_and_goes_two_sided() -> None:
    x = _x(40, dtype=np.complex64)
    with pytest.warns(UserWarning, match="Input data is complex"):
        f, pxx = psig.welch(x, nperseg=8)
    assert f.shape == (8,) and pxx.dtype == np.float32
    with pytest.warns(UserWarning, match="nperseg=256 is greater than input_length=40"):
        plait.jit(psig.stft)(_x(40))


ISTFT_CASES: list[dict[str, Any]] = [
    {}, {"nperseg": 16}, {"nperseg": 16, "noverlap": 4, "nfft": 20},
    {"nperseg": 8, "window": "hamming"}, {"nperseg": 12, "window": ("tukey", 0.3)}]


def test_istft_matches_jax_and_inverts_stft() -> None:
    x = _x(3, 50)
    cases: list[Case] = []
    for kw in ISTFT_CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            z = np.asarray(jax.jit(lambda a, kw=kw: jsig.stft(a, **kw)[2])(x))
        cases += [((z,), kw), ((z,), {**kw, "boundary": False}),
                  ((z.transpose(2, 0, 1),), {**kw, "time_axis": 0, "freq_axis": 2})]
        if kw == ISTFT_CASES[2]:
            _, back = plait.jit(lambda a, kw=kw: psig.istft(a, **kw))(z)
            np.testing.assert_allclose(np.asarray(back)[:, :50], x, rtol=1e-4, atol=1e-4)
    z = np.asarray(jax.jit(lambda a: jsig.stft(a, nperseg=16, return_onesided=False)[2])(
        _x(40, dtype=np.complex64)))
    cases.append(((z,), {"input_onesided": False, "nperseg": 16}))
    _same("istft", cases, rtol=1e-4, atol=1e-5)


def test_spectral_functions_under_jit_grad_and_vmap() -> None:
    x = _x(40)
    fs = np.float32(3.0)
    z = np.asarray(jax.jit(lambda a: jsig.stft(a, nperseg=16)[2])(x))
    batch = np.stack([x, -x, 2 * x])

    def program(sig: Any, lib: Any, jnp: Any) -> Any:
        def run(x: Any, fs: Any, z: Any, batch: Any) -> Any:
            return [
                sig.welch(x, fs=fs, nperseg=16), sig.stft(x, fs=fs, nperseg=16),
                lib.grad(lambda a: sig.welch(a, nperseg=16)[1].sum())(x),
                lib.grad(lambda a: sig.welch(a, nperseg=16, average="median")[1].sum())(x),
                lib.grad(lambda a: jnp.abs(sig.stft(a, nperseg=16)[2]).sum())(x),
                lib.grad(lambda a: sig.istft(a, nperseg=16)[1].sum())(z),
                lib.vmap(lambda a: sig.welch(a, nperseg=16))(batch),
                lib.vmap(lambda a: sig.csd(a, a[::-1], nperseg=16))(batch)]
        return lib.jit(run)
    want = program(jsig, jax, jjnp)(x, fs, z, batch)
    got = program(psig, plait, pnp)(x, fs, z, batch)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_empty_and_short_inputs() -> None:
    e2, e1 = jjnp.zeros((2, 0), np.float32), jjnp.zeros(0, np.float32)
    assert_close(psig.welch(e2), jsig.welch(e2))
    assert_close(psig.csd(e1, e1), jsig.csd(e1, e1))
    with pytest.warns(UserWarning, match="nperseg=256 is greater"):
        assert_close(psig.stft(jjnp.zeros((3, 0))), jsig.stft(jjnp.zeros((3, 0))))
    _same("welch", [((_x(3, 5),), {"nperseg": 5})])  # one segment: no average to take


WINDOWS: list[Any] = [
    "boxcar", "rect", "triang", "bartlett", "hann", "hamming", "blackman", "cosine",
    ("general_hamming", 0.6), ("kaiser", 8.0), ("gaussian", 2.5), ("tukey", 0.5),
    ("tukey", 0.0), ("tukey", 1.0), "flattop", ("exponential", None, 2.0)]


def test_windows_are_scipys() -> None:
    for w in WINDOWS:
        for n in (1, 2, 3, 8, 15):
            np.testing.assert_allclose(get_window(w, n), ssig.get_window(w, n), rtol=1e-12,
                                       atol=1e-14, err_msg=str((w, n)))
    with pytest.raises(ValueError, match="needs one or more parameters"):
        get_window("kaiser", 8)


def test_x64() -> None:
    with both_x64():
        x, k = RNG.normal(size=40), RNG.normal(size=5)
        for name, args in [("convolve", (x, k)), ("fftconvolve", (x, k)),
                           ("correlate2d", (x.reshape(5, 8), k[:4].reshape(2, 2))),
                           ("detrend", (x,)), ("welch", (x,)), ("stft", (x,)),
                           ("csd", (x, x[::-1]))]:
            _same(name, [(args, {})], rtol=1e-10, atol=1e-10)
        _same("istft", [((np.ones((5, 4), np.int64),), {})])
        _same("convolve", [((np.arange(4), np.arange(2)), {})])


# -- errors ---------------------------------------------------------------------------------

ERROR_CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("convolve", (np.ones(3), np.ones(2)), {"mode": "bad"}),
    ("convolve", (np.ones(3), np.ones(2)), {"method": "bad"}),
    ("convolve", (np.ones(3), np.ones((2, 2))), {}),
    ("convolve", (np.ones((3, 1)), np.ones((1, 3))), {}),
    ("convolve", (np.ones(0), np.ones(2)), {}),
    ("fftconvolve", (np.ones(3), np.ones((2, 2))), {}),
    ("fftconvolve", (np.ones(3), np.ones(2)), {"mode": "bad"}),
    ("fftconvolve", (np.ones((3, 1)), np.ones((1, 3))), {"mode": "valid"}),
    ("fftconvolve", (np.ones((3, 4)), np.ones((2, 3))), {"axes": 1}),
    ("convolve2d", (np.ones((3, 3)), np.ones((2, 2))), {"boundary": "wrap"}),
    ("convolve2d", (np.ones((3, 3)), np.ones((2, 2))), {"fillvalue": 1}),
    ("convolve2d", (np.ones(3), np.ones(2)), {}),
    ("correlate2d", (np.ones((3, 3, 1)), np.ones((2, 2, 1))), {}),
    ("correlate2d", (np.ones((3, 3)), np.ones((2, 2))), {"boundary": "symm"}),
    ("detrend", (np.ones(5),), {"type": "quadratic"}),
    ("detrend", (np.ones(5),), {"bp": [7]}),
    ("detrend", (np.ones(5),), {"overwrite_data": True}),
    ("stft", (np.ones(20),), {"boundary": "bad"}),
    ("stft", (np.ones(20),), {"nperseg": 0}),
    ("stft", (np.ones(20),), {"nperseg": 8, "nfft": 4}),
    ("stft", (np.ones(20),), {"nperseg": 8, "noverlap": 8}),
    ("stft", (np.ones(20),), {"window": np.ones((2, 2))}),
    ("stft", (np.ones(20),), {"window": np.ones(30)}),
    ("stft", (np.ones(20),), {"window": np.ones(5), "nperseg": 6}),
    ("stft", (np.ones(20),), {"nperseg": 8, "detrend": True}),
    ("welch", (np.ones(20),), {"nperseg": 8, "scaling": "bad"}),
    ("welch", (np.ones(20),), {"nperseg": 8, "average": "bad"}),
    ("csd", (np.ones((2, 20)), np.ones(20)), {}),
    ("csd", (np.ones((2, 20)), np.ones((3, 20))), {}),
    ("istft", (np.ones(5, np.complex64),), {}),
    ("istft", (np.ones((5, 4), np.complex64),), {"time_axis": 0, "freq_axis": 0}),
    ("istft", (np.ones((5, 4), np.complex64),), {"nperseg": 8, "nfft": 6}),
    ("istft", (np.ones((5, 4), np.complex64),), {"noverlap": 9}),
    ("istft", (np.ones((5, 4), np.complex64),), {"window": np.ones(3)}),
]


@pytest.mark.parametrize("name,args,kw", ERROR_CASES, ids=lambda c: str(c)[:40])
def test_errors_match_jax(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # (Under jit: the errors come while tracing, before anything is computed.)
        want = raised(lambda: jax.jit(lambda: getattr(jsig, name)(*args, **kw))())
        got = raised(lambda: plait.jit(lambda: getattr(psig, name)(*args, **kw))())
    assert isinstance(got, type(want)), (got, want)
    assert str(got)


def test_non_arrays_are_refused() -> None:
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        psig.convolve([1.0, 2.0], np.ones(2))
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        psig.welch([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="expected mode to be one of"):
        psig.convolve(np.ones(3), np.ones(2), "bad")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected one input to be at least as large"):
        psig.convolve(np.ones((3, 1)), np.ones((1, 3)))
    with pytest.raises(plait.errors.ConcretizationTypeError, match="nperseg"):
        plait.jit(lambda n: psig.welch(np.ones(32, np.float32), nperseg=n))(8)
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        psig.convolve(np.ones(3), np.ones(2), precision="bad")


def test_precision_is_accepted() -> None:
    a, b = _x(6, 5), _x(3, 2)
    _same("convolve2d", [((a, b), {"precision": "highest"}), ((a, b), {"precision": None})])
    _same("correlate", [((a, b), {"precision": ("highest", "highest")})])
    assert_close(psig.correlate2d(a, b, precision=plait.lax.Precision.HIGHEST),
                 jsig.correlate2d(jjnp.asarray(a), jjnp.asarray(b),
                                  precision=jax.lax.Precision.HIGHEST), rtol=1e-5)
