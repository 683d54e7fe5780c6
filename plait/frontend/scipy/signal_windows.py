"""The windows of the spectral functions, as ``scipy.signal.get_window`` gives them.

A window is a host (NumPy ``float64``) array computed once per call: by name
(``'hann'``), or by a tuple of a name and its parameters (``('kaiser', 8.0)``).  The
common windows are computed here; any other name SciPy knows is asked of SciPy itself,
as JAX 0.10.2 does for every window but ``'hann'``.  As ``get_window``'s default, the
windows are periodic (the symmetric window one point longer, its last point dropped),
the form spectral analysis wants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["get_window"]


def _cosine_sum(m: int, coeffs: tuple[float, ...]) -> np.ndarray:
    phase = np.linspace(-np.pi, np.pi, m)
    out = np.zeros(m)
    for k, a in enumerate(coeffs):
        out += a * np.cos(k * phase)
    return out


def _triang(m: int) -> np.ndarray:
    half = np.arange(1, (m + 1) // 2 + 1, dtype=np.float64)
    if m % 2 == 0:
        w = (2 * half - 1) / m
        return np.concatenate([w, w[::-1]])
    w = 2 * half / (m + 1)
    return np.concatenate([w, w[-2::-1]])


def _bartlett(m: int) -> np.ndarray:
    n = np.arange(m, dtype=np.float64)
    return np.where(n <= (m - 1) / 2, 2 * n / (m - 1), 2 - 2 * n / (m - 1))


def _kaiser(m: int, beta: float) -> np.ndarray:
    centre = (m - 1) / 2
    n = np.arange(m, dtype=np.float64)
    return np.asarray(np.i0(beta * np.sqrt(1 - ((n - centre) / centre) ** 2)) / np.i0(beta))


def _gaussian(m: int, std: float) -> np.ndarray:
    n = np.arange(m, dtype=np.float64) - (m - 1) / 2
    return np.asarray(np.exp(-(n * n) / (2 * std * std)))


def _tukey(m: int, alpha: float) -> np.ndarray:
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _cosine_sum(m, (0.5, 0.5))
    n = np.arange(m, dtype=np.float64)
    width = int(np.floor(alpha * (m - 1) / 2))
    first, middle, last = n[:width + 1], n[width + 1:m - width - 1], n[m - width - 1:]
    w1 = 0.5 * (1 + np.cos(np.pi * (-1 + 2 * first / alpha / (m - 1))))
    w2 = np.ones(middle.shape)
    w3 = 0.5 * (1 + np.cos(np.pi * (-2 / alpha + 1 + 2 * last / alpha / (m - 1))))
    return np.concatenate([w1, w2, w3])


_WINDOWS: dict[str, tuple[Callable[..., np.ndarray], int]] = {}
"""Each name (and SciPy's aliases of it): the symmetric window and its parameter count."""
_TABLE: list[tuple[tuple[str, ...], Callable[..., np.ndarray], int]] = [
    (("boxcar", "box", "ones", "rect", "rectangular"), lambda m: np.ones(m), 0),
    (("triang", "triangle", "tri"), _triang, 0),
    (("bartlett", "bart", "brt"), _bartlett, 0),
    (("hann", "han"), lambda m: _cosine_sum(m, (0.5, 0.5)), 0),
    (("hamming", "hamm", "ham"), lambda m: _cosine_sum(m, (0.54, 0.46)), 0),
    (("blackman", "black", "blk"), lambda m: _cosine_sum(m, (0.42, 0.50, 0.08)), 0),
    (("cosine", "halfcosine"), lambda m: np.sin(np.pi / m * (np.arange(m) + 0.5)), 0),
    (("general_hamming",), lambda m, a: _cosine_sum(m, (a, 1.0 - a)), 1),
    (("kaiser", "ksr"), _kaiser, 1),
    (("gaussian", "gauss", "gss"), _gaussian, 1),
    (("tukey", "tuk"), _tukey, 1),
]
for _names, _fn, _nparams in _TABLE:
    for _name in _names:
        _WINDOWS[_name] = (_fn, _nparams)


def _from_scipy(window: Any, n: int) -> np.ndarray:
    try:
        from scipy.signal import get_window as scipy_window  # type: ignore[import-untyped]  # no stubs
    except ImportError as err:  # pragma: no cover  (jaxlib depends on SciPy)
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return np.asarray(scipy_window(window, n), np.float64)


def get_window(window: str | tuple[Any, ...], n: int) -> np.ndarray:
    """The periodic window ``window`` (a name, or a tuple of a name and its parameters)
    of ``n`` points, as ``float64``.

    Raises:
      ValueError: a window that needs parameters given without them, or a name neither
        plait nor SciPy knows.
    """
    if isinstance(window, tuple):
        name, params = window[0], tuple(window[1:])
    else:
        name, params = window, ()
    entry = _WINDOWS.get(name) if isinstance(name, str) else None
    if entry is None or len(params) != entry[1]:
        if entry is not None and entry[1] and not params:
            raise ValueError(f"The '{name}' window needs one or more parameters -- pass a "
                             "tuple.")
        return _from_scipy(window, n)
    fn, _ = entry
    if n <= 1:
        return np.ones(n)
    return np.asarray(fn(n + 1, *(float(p) for p in params))[:n], np.float64)
