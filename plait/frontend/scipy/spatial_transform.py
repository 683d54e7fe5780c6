"""``plait.scipy.spatial.transform``: rotations in three dimensions, as JAX 0.10.2's
``jax.scipy.spatial.transform``: :class:`Rotation` and :class:`Slerp`.

A :class:`Rotation` holds unit quaternions ``(x, y, z, w)`` (scalar last): one of shape
``(4,)`` (a single rotation) or a stack of shape ``(..., 4)``.  Conversions to and from
rotation matrices, rotation vectors, Euler angles and modified Rodrigues parameters
broadcast over the leading axes.  Both classes are named tuples of arrays, hence
pytrees: they pass through ``jit``, ``vmap`` and the other transformations.

Euler angle sequences are one to three of ``'xyz'`` (extrinsic: about the fixed axes) or
of ``'XYZ'`` (intrinsic: about the rotating axes), with no axis twice in a row.  The
conversions back to Euler angles and to rotation vectors follow SciPy's algorithms
(Bernardes and Viollet's for Euler angles; Taylor expansions near the identity).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.lax import convert_element_type
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.numpy._core import promote_dtypes_inexact

__all__ = ["Rotation", "Slerp"]

_AXES = {"x": 0, "y": 1, "z": 2}


def _floats(name: str, x: Any, last: tuple[int, ...]) -> Array:
    """``x`` as a strongly typed inexact array whose trailing axes are ``last``.

    Raises:
      ValueError: the trailing axes differ.
    """
    a: Array = promote_dtypes_inexact(name, pnp.asarray(x))[0]
    if a.aval.weak_type:
        a = convert_element_type(a, a.dtype)
    if a.ndim < len(last) or a.shape[a.ndim - len(last):] != last:
        want = "(..., " + ", ".join(map(str, last)) + ")"
        raise ValueError(f"{name}: expected an array of shape {want}, but got shape {a.shape}")
    return a


def _sequence(name: str, seq: str, lengths: tuple[int, ...]) -> tuple[list[int], bool]:
    """The axis indices of an Euler sequence and whether it is intrinsic.

    Raises:
      ValueError: a malformed sequence.
    """
    if len(seq) not in lengths:
        what = "3" if lengths == (3,) else "1 to 3"
        raise ValueError(f"{name}: expected a sequence of {what} axes, but got {seq!r}")
    intrinsic = re.fullmatch("[XYZ]+", seq) is not None
    if not intrinsic and re.fullmatch("[xyz]+", seq) is None:
        raise ValueError(f"{name}: expected axes all from 'xyz' or all from 'XYZ', "
                         f"but got {seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"{name}: expected consecutive axes to differ, but got {seq!r}")
    return [_AXES[c] for c in seq.lower()], intrinsic


def _dot3(u: Array, v: Array) -> Array:
    return pnp.einsum("...i,...i->...", u, v)


def _length(v: Array) -> Array:
    return pnp.sqrt(_dot3(v, v))


def _unit(quat: Array) -> Array:
    return quat / _length(quat)[..., None]


def _product(p: Array, q: Array) -> Array:
    """The Hamilton product ``p q`` (rotation ``q`` first, then ``p``)."""
    c = pnp.cross(p[..., :3], q[..., :3])
    pw, qw = p[..., 3], q[..., 3]
    vector = [pw * q[..., i] + qw * p[..., i] + c[..., i] for i in range(3)]
    scalar = pw * qw - p[..., 0] * q[..., 0] - p[..., 1] * q[..., 1] - p[..., 2] * q[..., 2]
    return pnp.stack([*vector, scalar], axis=-1)


def _about_axis(axis: int, angle: Array) -> Array:
    """The quaternion of the rotation by ``angle`` about coordinate axis ``axis``."""
    parts = [pnp.zeros_like(angle)] * 3 + [pnp.cos(angle / 2.0)]
    parts[axis] = pnp.sin(angle / 2.0)
    return pnp.stack(parts, axis=-1)


def _matrix(quat: Array) -> Array:
    x, y, z, w = (quat[..., i] for i in range(4))
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -xx + yy - zz + ww, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -xx - yy + zz + ww]]
    return pnp.stack([pnp.stack(row, axis=-1) for row in rows], axis=-2)


def _quat_from_matrix(m: Array) -> Array:
    """Shepperd's method: build the quaternion from the largest of ``w`` (via the trace)
    and the diagonal entries, for accuracy."""
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    choice = pnp.argmax(pnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], -1), -1)
    quat = pnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                      m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [m[..., 0, 0]] * 4
        parts[i] = 1 - trace + 2 * m[..., i, i]
        parts[j] = m[..., j, i] + m[..., i, j]
        parts[k] = m[..., k, i] + m[..., i, k]
        parts[3] = m[..., k, j] - m[..., j, k]
        quat = pnp.where((choice == i)[..., None], pnp.stack(parts, axis=-1), quat)
    return _unit(quat)


def _quat_from_rotvec(rotvec: Array, degrees: Any) -> Array:
    rotvec = pnp.where(degrees, pnp.deg2rad(rotvec), rotvec)
    angle = _length(rotvec)
    a2 = angle * angle
    near_zero = 0.5 - a2 / 48 + a2 * a2 / 3840
    scale = pnp.where(angle <= 1e-3, near_zero, pnp.sin(angle / 2) / angle)
    return pnp.concatenate([scale[..., None] * rotvec, pnp.cos(angle / 2)[..., None]], -1)


def _rotvec(quat: Array, degrees: Any) -> Array:
    quat = pnp.where((quat[..., 3] < 0)[..., None], -quat, quat)  # angle in [0, pi]
    angle = 2.0 * pnp.arctan2(_length(quat[..., :3]), quat[..., 3])
    a2 = angle * angle
    near_zero = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    scale = pnp.where(angle <= 1e-3, near_zero, angle / pnp.sin(angle / 2))
    scale = pnp.where(degrees, pnp.rad2deg(scale), scale)
    return scale[..., None] * quat[..., :3]


def _euler(quat: Array, axes: list[int], extrinsic: bool, degrees: Any) -> Array:
    """Euler angles of ``quat`` about ``axes`` (Bernardes and Viollet, 2022)."""
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    proper = i == k  # a "proper" (symmetric) sequence such as zxz
    if proper:
        k = 3 - i - j
    sign = float((i - j) * (j - k) * (k - i) // 2)
    w, qi, qj, qk = quat[..., 3], quat[..., i], quat[..., j], quat[..., k]
    if proper:
        a, b, c, d = w, qi, qj, qk * sign
    else:
        a, b, c, d = w - qj, qi + qk * sign, qj + w, qk * sign - qi
    middle = 2 * pnp.arctan2(pnp.hypot(c, d), pnp.hypot(a, b))
    # 0: regular; 1: middle angle 0, 2: middle angle pi (gimbal lock: one angle is free,
    # and is set to 0).
    case = pnp.where(pnp.abs(middle) <= 1e-7, 1,
                     pnp.where(pnp.abs(middle - np.pi) <= 1e-7, 2, 0))
    half_sum, half_diff = pnp.arctan2(b, a), pnp.arctan2(d, c)
    angles = [pnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)),
              middle, pnp.zeros_like(middle)]
    angles[first] = pnp.where(case == 0, half_sum - half_diff, angles[first])
    angles[third] = pnp.where(case == 0, half_sum + half_diff, angles[third])
    if not proper:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = (pnp.stack(angles, axis=-1) + np.pi) % (2 * np.pi) - np.pi
    return pnp.where(degrees, pnp.rad2deg(out), out)


def _canonical(quat: Array) -> Array:
    """``quat`` or ``-quat``, whichever has its first nonzero of ``(w, x, y, z)``
    positive."""
    neg, zero = quat < 0, quat == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0])
            | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return pnp.where(flip[..., None], -quat, quat)


class Rotation(NamedTuple):
    """Rotations in three dimensions, held as unit quaternions ``quat`` (scalar last):
    shape ``(4,)`` for a single rotation, ``(N, 4)`` (or ``(..., 4)``) for several.

    Build one with the ``from_*`` class methods (or :meth:`identity`); ``r * s`` is the
    composition (``s`` first), ``r.apply(v)`` rotates vectors, ``r[i]`` and ``len(r)``
    index a stack of rotations.
    """

    quat: Array

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """The rotations of ``rotations``, single or stacked, as one stack."""
        return cls(pnp.concatenate([pnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """The rotations by ``angles`` (last axis: one angle per axis of ``seq``, in
        radians or ``degrees``) about the axes of ``seq``: ``'xyz'``-style extrinsic or
        ``'XYZ'``-style intrinsic.

        Raises:
          ValueError: a malformed ``seq``, or angles not one per axis.
        """
        axes, intrinsic = _sequence("Rotation.from_euler", seq, (1, 2, 3))
        (a,) = promote_dtypes_inexact("Rotation.from_euler", pnp.atleast_1d(angles))
        a = convert_element_type(a, a.dtype)
        if a.shape[-1] != len(axes):
            raise ValueError(f"Rotation.from_euler: expected {len(axes)} angles for {seq!r} "
                             f"in the last axis, but got an array of shape {a.shape}")
        a = pnp.where(degrees, pnp.deg2rad(a), a)
        quat = _about_axis(axes[0], a[..., 0])
        for n in range(1, len(axes)):
            step = _about_axis(axes[n], a[..., n])
            quat = _product(quat, step) if intrinsic else _product(step, quat)
        return cls(quat)

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """The rotations of rotation matrices (shape ``(..., 3, 3)``).

        Raises:
          ValueError: the trailing axes are not ``(3, 3)``.
        """
        return cls(_quat_from_matrix(_floats("Rotation.from_matrix", matrix, (3, 3))))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """The rotations of modified Rodrigues parameters (shape ``(..., 3)``).

        Raises:
          ValueError: the last axis does not have length 3.
        """
        p = _floats("Rotation.from_mrp", mrp, (3,))
        s = _dot3(p, p) + 1
        return cls(pnp.concatenate([2 * p, (2 - s)[..., None]], -1) / s[..., None])

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """The rotations of quaternions ``(x, y, z, w)`` (shape ``(..., 4)``), normalized.

        Raises:
          ValueError: the last axis does not have length 4.
        """
        return cls(_unit(_floats("Rotation.from_quat", quat, (4,))))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """The rotations of rotation vectors (axis times angle; shape ``(..., 3)``).

        Raises:
          ValueError: the last axis does not have length 3.
        """
        return cls(_quat_from_rotvec(_floats("Rotation.from_rotvec", rotvec, (3,)), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (a single one: JAX has no ``num``).

        Raises:
          AssertionError: ``num`` is given (as in JAX).
        """
        if num is not None:
            raise AssertionError(f"Rotation.identity: expected num=None (only a single "
                                 f"identity rotation is supported), but got {num!r}")
        return cls(pnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Not implemented, as in JAX.

        Raises:
          NotImplementedError: always.
        """
        raise NotImplementedError("Rotation.random is not implemented (nor is it in JAX "
                                  "0.10.2); sample quaternions and use Rotation.from_quat")

    def __getitem__(self, indexer: Any) -> Rotation:  # type: ignore[override]  # (rotations)
        """The rotation(s) at ``indexer`` of a stack.

        Raises:
          TypeError: a single rotation.
        """
        if self.single:
            raise TypeError("Rotation: expected a stack of rotations to index, but got a "
                            "single rotation (it is not subscriptable)")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations of a stack.

        Raises:
          TypeError: a single rotation (it has no ``len()``).
        """
        if self.single:
            raise TypeError("Rotation: expected a stack of rotations, but got a single "
                            "rotation (it has no len())")
        return int(self.quat.shape[0])

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]  # (composes)
        """The composition: ``other`` first, then ``self`` (broadcasting stacks).

        Raises:
          AttributeError: ``other`` is not a Rotation (as in JAX).
        """
        quat = getattr(other, "quat", None)
        if quat is None:
            raise AttributeError(f"Rotation * other: expected other to be a Rotation, "
                                 f"but got {type(other).__name__}")
        return Rotation(_unit(_product(self.quat, quat)))

    def apply(self, vectors: Any, inverse: bool = False) -> Array:
        """``vectors`` (shape ``(..., 3)``) rotated (by the inverse with ``inverse``).

        Raises:
          ValueError: the last axis does not have length 3.
        """
        (v,) = promote_dtypes_inexact("Rotation.apply", pnp.asarray(vectors))
        if v.ndim == 0 or v.shape[-1] != 3:
            raise ValueError(f"Rotation.apply: expected vectors of shape (..., 3), but got "
                             f"shape {v.shape}")
        m = self.as_matrix()
        m = pnp.where(inverse, pnp.swapaxes(m, -1, -2), m)
        return pnp.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False) -> Array:
        """Euler angles about the three axes of ``seq`` (``'xyz'``-style extrinsic or
        ``'XYZ'``-style intrinsic), in ``(-pi, pi]`` (the middle one in ``[0, pi]`` for a
        sequence like ``'zxz'``, ``[-pi/2, pi/2]`` otherwise), radians or ``degrees``.

        Raises:
          ValueError: a malformed ``seq``.
        """
        axes, intrinsic = _sequence("Rotation.as_euler", seq, (3,))
        return _euler(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self) -> Array:
        """The rotation matrices, shape ``(..., 3, 3)``."""
        return _matrix(self.quat)

    def as_mrp(self) -> Array:
        """The modified Rodrigues parameters (of the rotation by at most pi),
        shape ``(..., 3)``."""
        sign = pnp.where(self.quat[..., 3] < 0, -1.0, 1.0)
        return sign[..., None] * self.quat[..., :3] / (1.0 + sign * self.quat[..., 3])[..., None]

    def as_rotvec(self, degrees: bool = False) -> Array:
        """The rotation vectors (axis times angle in ``[0, pi]``), shape ``(..., 3)``."""
        return _rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """The quaternions, ``(x, y, z, w)`` or with ``scalar_first`` ``(w, x, y, z)``;
        with ``canonical``, the sign of each is chosen with ``w >= 0``."""
        quat = _canonical(self.quat) if canonical else self.quat
        return pnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(self.quat * pnp.asarray([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self) -> Array:
        """The rotation angle(s), in ``[0, pi]``."""
        return 2.0 * pnp.arctan2(_length(self.quat[..., :3]), pnp.abs(self.quat[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation of a stack: the quaternion maximizing the
        weighted sum of squared cosines of the half-angles to them (Markley et al.).

        Raises:
          TypeError: a single rotation.
          ValueError: ``weights`` is not one number per rotation.
        """
        count = len(self)
        dtype = self.quat.dtype
        w = (pnp.ones(count, dtype=dtype) if weights is None
             else pnp.asarray(weights, dtype=dtype))
        if w.ndim != 1:
            raise ValueError(f"Rotation.mean: expected 1-dimensional weights, but got "
                             f"shape {w.shape}")
        if w.shape[0] != count:
            raise ValueError(f"Rotation.mean: expected one weight per rotation ({count}), "
                             f"but got {w.shape[0]} weights")
        k = pnp.dot(w[None, :] * self.quat.T, self.quat)
        return Rotation(np_linalg.eigh(k)[1][:, -1])

    @property
    def single(self) -> bool:
        """Whether this is a single rotation (``quat`` of shape ``(4,)``)."""
        return bool(self.quat.ndim == 1)


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times.

    Build one with :meth:`init`; calling it with times gives the interpolated rotations
    (constant angular velocity between consecutive keys).  Times outside the keys
    extrapolate along the first or last segment.
    """

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` (a stack of at least two) at ``times``
        (one per rotation, increasing; this is not checked).

        Raises:
          TypeError: ``rotations`` is not a :class:`Rotation`.
          ValueError: fewer than two rotations, or not one time per rotation.
        """
        if not isinstance(rotations, Rotation):
            raise TypeError(f"Slerp.init: expected rotations to be a Rotation, but got "
                            f"{type(rotations).__name__}")
        if rotations.single or len(rotations) == 1:
            raise ValueError("Slerp.init: expected a stack of at least 2 rotations, but got "
                             + ("a single rotation" if rotations.single else "1 rotation"))
        t = pnp.asarray(times, dtype=rotations.quat.dtype)
        if t.ndim != 1:
            raise ValueError(f"Slerp.init: expected 1-dimensional times, but got "
                             f"{t.ndim} dimensions")
        if t.shape[0] != len(rotations):
            raise ValueError(f"Slerp.init: expected one time per rotation "
                             f"({len(rotations)}), but got {t.shape[0]} times")
        starts = Rotation(rotations.quat[:-1])
        steps = starts.inv() * Rotation(rotations.quat[1:])
        return cls(times=t, timedelta=pnp.diff(t), rotations=starts, rotvecs=steps.as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar gives a single rotation).

        Raises:
          ValueError: ``times`` has more than one dimension.
        """
        t = pnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError(f"Slerp: expected times of at most 1 dimension, but got "
                             f"{t.ndim} dimensions")
        single = t.ndim == 0
        t = pnp.atleast_1d(t)
        segment = pnp.maximum(pnp.searchsorted(self.times, t) - 1, 0)
        fraction = (t - self.times[segment]) / self.timedelta[segment]
        start = Rotation(self.rotations.quat[segment])
        out = start * Rotation.from_rotvec(self.rotvecs[segment] * fraction[:, None])
        return Rotation(out.quat[0]) if single else out
