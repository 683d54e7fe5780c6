"""``dot_product_attention``, as JAX 0.10.2's ``jax.nn.dot_product_attention`` with its
XLA implementation: ``softmax(scale * Q K^T + bias, masked) V`` per head, logits and
softmax in float32 (or wider), grouped-query attention when the key/value heads divide
the query heads.

JAX computes each group of query heads with ``vmap``; here the group is one more
dimension of the two ``dot_general`` contractions (layout ``B K G T S``), which gives
the same primitives and the same values with fewer transposes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.nn.softmax import logsumexp, softmax
from plait.ir import dtypes as dt
from plait.ir.primitives import DotAlgorithmPreset

__all__ = ["dot_product_attention"]

_F32_MAX = float(np.finfo(np.float32).max)
# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


def _ensure_4d(t: Any) -> Array:
    arr = pnp.asarray(t)
    if arr.ndim < 4:
        return pnp.expand_dims(arr, tuple(range(4 - arr.ndim)))
    return arr


def _check(t: Array | None, shape: Sequence[int], dtype: np.dtype[Any] | None,
           name: str) -> None:
    # The shape checks of JAX's _check_shape_and_dtype (-1: any size).
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"dot_product_attention: expected {name} to have {len(shape)} "
                         f"dimensions, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"dot_product_attention: expected {name} of dtype {dtype}, but got "
                         f"{t.dtype}")
    if any(want != -1 and got != want for want, got in zip(shape, t.shape)):
        raise ValueError(f"dot_product_attention: expected {name} of shape "
                         f"{tuple(shape)} (-1: any size), but got {t.shape}")


def _grouped(t: Array | None, n: int, k: int) -> Array | None:
    # A 4-D bias or mask (B|1, N|1, T|1, S|1) in the grouped layout (B, K, G, T, S).
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return pnp.reshape(t, (tb, 1, 1, tt, ts))
    if tn != n:
        raise ValueError(f"dot_product_attention: expected the head dimension of a bias or "
                         f"mask to be 1 or {n}, but got {tn}")
    return pnp.reshape(t, (tb, k, n // k, tt, ts))


def _large_negative(dtype: np.dtype[Any]) -> Array:
    # Finite in float32 too (the softmax runs in float32), so masked logits never
    # become -inf, and a fully masked row gives a uniform softmax, not NaN.
    dmax = min(float(_finfo(dtype).max), _F32_MAX)
    return pnp.asarray(-0.7 * dmax, dtype=dtype)


def _mask_logits(logits: Array, mask: Array | None, is_causal: bool, q_seqlen: Array | None,
                 kv_seqlen: Array | None, window: tuple[int, int] | None) -> Array:
    # logits: (B, K, G, T, S); every mask is True where a logit takes part.
    if mask is None and not is_causal and q_seqlen is None and kv_seqlen is None \
            and window is None:
        return logits
    combined = pnp.ones_like(logits, dtype=bool)
    if mask is not None:
        combined = pnp.logical_and(combined, mask)
    t, s = logits.shape[-2], logits.shape[-1]
    if is_causal:
        combined = pnp.logical_and(combined, pnp.tril(pnp.ones((t, s), dtype=bool)))
    if window is not None:
        left, right = window
        q_pos = pnp.arange(t)[:, None]
        k_pos = pnp.arange(s)[None, :]
        in_window = pnp.logical_and(q_pos >= k_pos - right, q_pos <= k_pos + left)
        combined = pnp.logical_and(combined, in_window)
    if q_seqlen is not None or kv_seqlen is not None:
        pad: Any = True
        if q_seqlen is not None:
            pad = pnp.arange(t)[None, :, None] < q_seqlen[:, None, None]
        if kv_seqlen is not None:
            pad = pnp.logical_and(pad, pnp.arange(s)[None, None, :] < kv_seqlen[:, None, None])
        combined = pnp.logical_and(combined, pnp.asarray(pad)[:, None, None, :, :])
    return pnp.where(combined, logits, _large_negative(logits.dtype))


def _attention(query: Array, key: Array, value: Array, bias: Array | None,
               mask: Array | None, is_causal: bool, scale: Any, q_seqlen: Array | None,
               kv_seqlen: Array | None, window: tuple[int, int] | None, residual: bool
               ) -> tuple[Array, Array | None]:
    """The XLA implementation on 4-D operands: the output (B, T, N, H) and, if
    ``residual``, the logsumexp of each row of logits (B, T, N)."""
    b, t, n, h = query.shape
    _, _, k, _ = key.shape
    g = n // k
    logits_dtype = pnp.promote_types(query.dtype, np.float32)
    # bfloat16 inputs multiply with float32 accumulation, asked for explicitly so that
    # the derivatives' contractions use the same types (JAX issue 24047).  float16
    # stays with the default precision: XLA:CPU cannot carry out the F16_F16_F32
    # algorithm JAX asks for (JAX's eager call then falls back to the default, giving
    # the same values; its jitted call fails to lower).
    precision = DotAlgorithmPreset.BF16_BF16_F32 if query.dtype == dt.bfloat16 else None
    q5 = pnp.reshape(query, (b, t, k, g, h))
    # (B, T, K, G, H) x (B, S, K, H) -> (B, K, T, G, S) -> (B, K, G, T, S)
    logits = lax.dot_general(q5, key, (((4,), (3,)), ((0, 2), (0, 2))), precision=precision,
                             preferred_element_type=logits_dtype)
    logits = pnp.transpose(logits, (0, 1, 3, 2, 4))
    logits = logits * pnp.asarray(scale, dtype=logits.dtype)
    bias5 = _grouped(bias, n, k)
    if bias5 is not None:
        logits = (logits + bias5).astype(logits.dtype)
    padded = _mask_logits(logits, _grouped(mask, n, k), is_causal, q_seqlen, kv_seqlen, window)
    # The softmax always runs in float32 (float64 logits included, as JAX's).
    padded = padded.astype(np.float32)
    probs = softmax(padded, axis=-1).astype(key.dtype)
    # (B, S, K, H) x (B, K, G, T, S) -> (B, K, H, G, T) -> (B, T, K, G, H); value first,
    # as JAX's einsum orders this contraction (which XLA:CPU's summation order follows).
    encoded = lax.dot_general(value, probs, (((1,), (4,)), ((0, 2), (0, 1))),
                              preferred_element_type=pnp.promote_types(probs.dtype,
                                                                       value.dtype))
    encoded = pnp.transpose(encoded, (0, 4, 1, 3, 2))
    if q_seqlen is not None:
        rows = pnp.arange(t)[None, :] < q_seqlen[:, None]
        encoded = encoded * rows[:, :, None, None, None].astype(encoded.dtype)
    out = pnp.reshape(encoded, (b, t, n, h))
    if not residual:
        return out, None
    lse = logsumexp(padded, axis=-1).astype(key.dtype)
    lse = lax.stop_gradient(pnp.transpose(lse, (0, 3, 1, 2)))
    return out, pnp.reshape(lse, (b, t, n))


@overload
def dot_product_attention(
        query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
        scale: Any = None, is_causal: bool = False, query_seq_lengths: Any = None,
        key_value_seq_lengths: Any = None, local_window_size: int | tuple[int, int] | None = None,
        implementation: Literal["xla", "cudnn"] | None = None,
        return_residual: Literal[False] = ...) -> Array: ...


@overload
def dot_product_attention(
        query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
        scale: Any = None, is_causal: bool = False, query_seq_lengths: Any = None,
        key_value_seq_lengths: Any = None, local_window_size: int | tuple[int, int] | None = None,
        implementation: Literal["xla", "cudnn"] | None = None,
        return_residual: Literal[True]) -> tuple[Array, Array]: ...


def dot_product_attention(
        query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
        scale: Any = None, is_causal: bool = False, query_seq_lengths: Any = None,
        key_value_seq_lengths: Any = None, local_window_size: int | tuple[int, int] | None = None,
        implementation: Literal["xla", "cudnn"] | None = None,
        return_residual: bool = False) -> Array | tuple[Array, Array]:
    """Scaled dot-product attention, ``softmax(scale * Q K^T + bias) V`` for each head.

    Shapes: ``query`` is ``(B, T, N, H)`` (or ``(T, N, H)``), ``key`` and ``value``
    ``(B, S, K, H)`` with ``N`` a multiple of ``K`` (grouped-query attention; ``K == 1``
    is multi-query attention).  ``bias`` (added to the logits) and ``mask`` (boolean,
    ``True`` where a logit takes part) broadcast to ``(B, N, T, S)`` and have 4
    dimensions (1 or ``N`` heads).  ``scale`` defaults to ``1 / sqrt(H)``.
    ``is_causal`` lets a query attend only to keys at or before its position;
    ``query_seq_lengths``/``key_value_seq_lengths`` (int32, shape ``(B,)``) mask out
    padding (padded query rows give 0); ``local_window_size`` ``(left, right)`` (or one
    int for both) limits each query to the keys within that window.  The logits are
    computed in ``promote_types(query.dtype, float32)`` and the softmax in float32.
    With ``return_residual`` also returns the logsumexp of each row of logits, shape
    ``(B, T, N)``, without derivative.  ``implementation`` ``None`` or ``'xla'`` (plait
    has no cuDNN).

    Raises:
      ValueError: shapes or dtypes that do not fit together, or an unknown
        ``implementation``.
      NotImplementedError: ``implementation='cudnn'``.
    """
    output_shape = pnp.shape(query)
    q = _ensure_4d(query)
    k = _ensure_4d(key)
    v = _ensure_4d(value)
    bias_arr = None if bias is None else _ensure_4d(bias)
    mask_arr = None if mask is None else _ensure_4d(mask)
    q_len = None if query_seq_lengths is None else pnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else pnp.asarray(key_value_seq_lengths)
    window = (local_window_size, local_window_size) if isinstance(local_window_size, int) \
        else local_window_size
    b, s, nk, h = k.shape
    _check(v, [b, s, nk, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask_arr, [-1] * 4, np.dtype(bool), "mask")
    _check(bias_arr, [-1] * 4, None, "bias")
    _check(q_len, [b], np.dtype(np.int32), "query_seq_lengths")
    _check(kv_len, [b], np.dtype(np.int32), "key_value_seq_lengths")
    if q.shape[-2] % nk != 0:
        raise ValueError(f"dot_product_attention: expected the number of query heads to be "
                         f"a multiple of the key/value heads, but got {q.shape[-2]} and {nk}")
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale
    if implementation == "cudnn":
        raise NotImplementedError("dot_product_attention: implementation='cudnn' is not "
                                  "supported (plait runs on CPU); use None or 'xla'")
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: expected implementation None, 'xla' or "
                         f"'cudnn', but got {implementation!r}")
    out, lse = _attention(q, k, v, bias_arr, mask_arr, is_causal, scale_val, q_len, kv_len,
                          window, return_residual)
    if lse is not None:
        return pnp.reshape(out, output_shape), pnp.reshape(lse, output_shape[:-1])
    return pnp.reshape(out, output_shape)
