"""``plait.scipy.sparse.linalg``: Krylov solvers for ``A x = b``, as JAX 0.10.2's
``jax.scipy.sparse.linalg``: ``cg``, ``gmres`` and ``bicgstab``.

``A`` (and the preconditioner ``M``) is a square matrix, an object with ``@``, or a
function computing the matrix-vector product; ``b`` and ``x0`` may be any pytree of
arrays (the "vector" is all their leaves together), and every inner product, norm and
update works leaf by leaf.  The iterations are ``while_loop``\\ s, so the solvers stage
under ``jit`` and batch under ``vmap``.

Each solve is a :func:`custom_linear_solve`: derivatives come from one more solve of
the same kind (with the transposed operator in reverse mode; ``cg`` on real data treats
``A`` as symmetric), never from differentiating the iterations.

Convergence means ``norm(b - A x) <= max(tol * norm(b), atol)`` (SciPy's non-legacy
tolerance).  ``cg`` and ``bicgstab`` return ``info=None``; ``gmres`` returns ``-1`` when
the solution holds a NaN and ``0`` otherwise, as JAX does.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial, reduce
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import fori_loop, while_loop
from plait.frontend.api.device_put import device_put
from plait.frontend.api.solves import custom_linear_solve
from plait.frontend.core.array_base import Array
from plait.frontend.core.dtype_queries import finfo
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.frontend.core.tree_util import tree_leaves, tree_map, tree_structure
from plait.frontend.lax import convert_element_type, rsqrt
from plait.frontend.scipy.linalg import solve, solve_triangular
from plait.ir.primitives import Precision

__all__ = ["cg", "gmres", "bicgstab"]

Operator = Callable[[Any], Any]
_HIGHEST = Precision.HIGHEST

# --- vectors as pytrees ---------------------------------------------------------------


def _plus(x: Any, y: Any) -> Any:
    return tree_map(operator.add, x, y)


def _minus(x: Any, y: Any) -> Any:
    return tree_map(operator.sub, x, y)


def _scaled(s: Any, x: Any) -> Any:
    return tree_map(lambda leaf: s * leaf, x)


def _total(terms: list[Any]) -> Any:
    return reduce(operator.add, terms)


def _real_inner_leaf(x: Any, y: Any) -> Any:
    """``Re <x, y>`` without the cross terms: a real number (exact for ``<z, Mz>`` with a
    Hermitian ``M``)."""
    out = pnp.vdot(pnp.real(x), pnp.real(y), precision=_HIGHEST)
    if pnp.iscomplexobj(x) or pnp.iscomplexobj(y):
        out = out + pnp.vdot(pnp.imag(x), pnp.imag(y), precision=_HIGHEST)
    return out


def _real_inner(x: Any, y: Any) -> Any:
    return _total(tree_leaves(tree_map(_real_inner_leaf, x, y)))


def _inner(x: Any, y: Any) -> Any:
    """``<x, y>``, conjugating ``x``."""
    return _total(tree_leaves(tree_map(partial(pnp.vdot, precision=_HIGHEST), x, y)))


def _norm(x: Any) -> Any:
    return pnp.sqrt(_real_inner(x, x))


def _lattice_type(tree: Any) -> tuple[np.dtype[Any], bool]:
    """The (dtype, weak type) the leaves of ``tree`` promote to."""
    return result_type_info([dtype_and_weak(leaf) for leaf in tree_leaves(tree)])


def _as_operator(a: Any, name: str, what: str) -> Operator:
    """``a`` as a function computing ``a @ x``.

    Raises:
      ValueError: ``a`` is an array that is not a square matrix.
      TypeError: ``a`` is neither a function nor a matrix.
    """
    if callable(a):
        return a  # type: ignore[no-any-return]  # (any callable is accepted as the operator)
    if isinstance(a, np.ndarray | Array) or hasattr(a, "__matmul__"):
        shape = getattr(a, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"{name}: expected the linear operator {what} to be a square "
                             f"matrix, but got an array of shape {tuple(shape)}")
        if isinstance(a, np.ndarray | Array):
            return partial(pnp.dot, a, precision=_HIGHEST)
        return partial(operator.matmul, a)
    raise TypeError(f"{name}: expected the linear operator {what} to be a function or a "
                    f"square matrix, but got {a!r}")


def _apply(m: Operator | None, x: Any) -> Any:
    """The preconditioner ``m`` (the identity when ``None``) applied to ``x``."""
    return x if m is None else m(x)


def _prepared(name: str, b: Any, x0: Any) -> tuple[Any, Any, int]:
    """``b`` and ``x0`` (zeros by default) on the device, and the vector's length.

    Raises:
      ValueError: ``x0``'s structure is not ``b``'s.
    """
    if x0 is None:
        x0 = tree_map(pnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"{name}: expected x0 to have the tree structure of b, "
                         f"{tree_structure(b)}, but got {tree_structure(x0)}")
    return b, x0, sum(int(np.size(leaf)) for leaf in tree_leaves(b))


# --- conjugate gradients and BiCGSTAB -------------------------------------------------


def _cg_iterations(a: Operator, b: Any, *, x0: Any, tol: Any, atol: Any, maxiter: int,
                   m: Operator | None) -> Any:
    """Preconditioned conjugate gradients from ``x0``."""
    atol2 = pnp.maximum(pnp.square(tol) * _real_inner(b, b), pnp.square(atol))
    r0 = _minus(b, a(x0))
    z0 = _apply(m, r0)
    dtype = pnp.result_type(*tree_leaves(z0))
    gamma0 = _real_inner(r0, z0).astype(dtype)

    def unconverged(state: tuple[Any, ...]) -> Any:
        _, r, gamma, _, k = state
        rs = pnp.real(gamma) if m is None else _real_inner(r, r)
        return (rs > atol2) & (k < maxiter)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, gamma, p, k = state
        ap = a(p)
        alpha = gamma / _real_inner(p, ap).astype(dtype)
        x = _plus(x, _scaled(alpha, p))
        r = _minus(r, _scaled(alpha, ap))
        z = _apply(m, r)
        gamma_next = _real_inner(r, z).astype(dtype)
        p = _plus(z, _scaled(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    return while_loop(unconverged, step, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_iterations(a: Operator, b: Any, *, x0: Any, tol: Any, atol: Any, maxiter: int,
                         m: Operator | None) -> Any:
    """Preconditioned BiCGSTAB from ``x0``; a breakdown (a zero ``rho``, ``alpha`` or
    ``omega``) ends the iteration, with the counter set negative."""
    atol2 = pnp.maximum(pnp.square(tol) * _real_inner(b, b), pnp.square(atol))

    def unconverged(state: tuple[Any, ...]) -> Any:
        r, k = state[1], state[-1]
        return (_real_inner(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, r_hat, alpha, omega, rho, p, q, k = state
        rho_next = _inner(r_hat, r)
        beta = rho_next / rho * alpha / omega
        p = _plus(r, _scaled(beta, _minus(p, _scaled(omega, q))))
        p_hat = _apply(m, p)
        q = a(p_hat)
        alpha = rho_next / _inner(r_hat, q)
        s = _minus(r, _scaled(alpha, q))
        done = _real_inner(s, s) < atol2
        s_hat = _apply(m, s)
        t = a(s_hat)
        omega = _inner(t, s) / _inner(t, t)
        half = _plus(x, _scaled(alpha, p_hat))
        full = _plus(x, _plus(_scaled(alpha, p_hat), _scaled(omega, s_hat)))
        x = tree_map(partial(pnp.where, done), half, full)
        r = tree_map(partial(pnp.where, done), s, _minus(s, _scaled(omega, t)))
        k = pnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = pnp.where(rho_next == 0, -10, k)
        return x, r, r_hat, alpha, omega, rho_next, p, q, k

    r0 = _minus(b, a(x0))
    one = convert_element_type(1, *_lattice_type(b))
    init = (x0, r0, r0, one, one, one, r0, r0, 0)
    return while_loop(unconverged, step, init)[0]


def _isolve(name: str, iterations: Callable[..., Any], a: Any, b: Any, x0: Any, *, tol: Any,
            atol: Any, maxiter: int | None, m: Any, symmetric_if_real: bool) -> Any:
    b, x0, size = _prepared(name, b, x0)
    if maxiter is None:
        maxiter = 10 * size
    precondition = None if m is None else _as_operator(m, name, "M")
    matvec = _as_operator(a, name, "A")
    shapes_b = [np.shape(leaf) for leaf in tree_leaves(b)]
    shapes_x0 = [np.shape(leaf) for leaf in tree_leaves(x0)]
    if shapes_x0 != shapes_b:
        raise ValueError(f"{name}: expected the arrays of x0 to have the shapes of b's, "
                         f"{shapes_b}, but got {shapes_x0}")
    run = partial(iterations, x0=x0, tol=tol, atol=atol, maxiter=maxiter, m=precondition)
    symmetric = symmetric_if_real and not any(pnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    return custom_linear_solve(matvec, b, solve=run, transpose_solve=run, symmetric=symmetric)


def cg(A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Solve ``A x = b`` for a Hermitian positive-definite ``A`` by (preconditioned)
    conjugate gradients; returns ``(x, None)``.

    Args:
      A: the operator: a square matrix, an object with ``@``, or a function of a vector
        (a pytree shaped like ``b``) returning one.
      b: the right-hand side: an array or a pytree of arrays.
      x0: the starting guess (zeros by default), with ``b``'s structure and shapes.
      tol, atol: stop once ``norm(r) <= max(tol * norm(b), atol)``.
      maxiter: the iteration limit (default ``10 *`` the number of unknowns).
      M: a preconditioner approximating ``A``'s inverse (a matrix or a function).

    Raises:
      ValueError: ``A`` or ``M`` is a non-square matrix, or ``x0`` does not match ``b``.
      TypeError: ``A`` or ``M`` is neither a function nor a matrix.
    """
    return _isolve("cg", _cg_iterations, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, m=M,
                   symmetric_if_real=True), None


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Solve ``A x = b`` for a general (non-symmetric) ``A`` by the stabilized
    bi-conjugate gradient method; returns ``(x, None)``.  The arguments are
    :func:`cg`'s.

    Raises:
      ValueError: ``A`` or ``M`` is a non-square matrix, or ``x0`` does not match ``b``.
      TypeError: ``A`` or ``M`` is neither a function nor a matrix.
    """
    return _isolve("bicgstab", _bicgstab_iterations, A, b, x0, tol=tol, atol=atol,
                   maxiter=maxiter, m=M, symmetric_if_real=False), None


# --- GMRES ----------------------------------------------------------------------------


def _safe_normalize(x: Any, threshold: Any = None) -> tuple[Any, Any]:
    """``(x / norm(x), norm(x))``, or zeros and ``0`` when the norm is at most
    ``threshold`` (by default the machine epsilon of ``x``'s precision)."""
    norm = _norm(x)
    dtype, weak = _lattice_type(x)
    if threshold is None:
        threshold = finfo(norm.dtype).eps
    big = norm > threshold
    divisor = convert_element_type(norm, dtype, weak)
    unit = tree_map(lambda leaf: pnp.where(big, leaf / divisor, 0.0), x)
    return unit, pnp.where(big, norm, 0.0)


def _column(v: Any, k: Any) -> Any:
    return tree_map(lambda leaf: leaf[..., k], v)


def _arnoldi_step(k: Any, a: Operator, m: Operator | None, basis: Any,
                  h: Array) -> tuple[Any, Array, Any]:
    """Extend the Krylov basis (each leaf has the basis vectors in its last axis) by the
    orthonormalized ``M A v_k``, writing its overlaps with ``v_0 .. v_k`` and its norm
    into row ``k`` of ``h``; also says whether the new vector vanished (breakdown)."""
    dtype = _lattice_type(basis)[0]
    w = _apply(m, a(_column(basis, k)))
    _, w_norm = _safe_normalize(w)
    # One pass of classical Gram-Schmidt, as JAX's re-orthogonalizing loop ends up doing.
    overlaps = _total(tree_leaves(tree_map(
        lambda q, y: pnp.einsum("...n,...->n", pnp.conj(q), y, precision=_HIGHEST),
        basis, w)))
    w = _minus(w, tree_map(lambda q: pnp.dot(q, overlaps, precision=_HIGHEST), basis))
    unit, new_norm = _safe_normalize(w, finfo(dtype).eps * w_norm)
    basis = tree_map(lambda q, u: q.at[..., k + 1].set(u), basis, unit)
    row = overlaps.at[k + 1].set(new_norm.astype(dtype))
    return basis, h.at[k, :].set(row), new_norm == 0.0


def _rotate(v: Array, i: Any, c: Any, s: Any) -> Array:
    """``v`` with the Givens rotation ``(c, s)`` applied to entries ``i`` and ``i + 1``."""
    first, second = v[i], v[i + 1]
    v = v.at[i].set(pnp.conj(c) * first - pnp.conj(s) * second)
    return v.at[i + 1].set(s * first + c * second)


def _givens(f: Any, g: Any) -> tuple[Any, Any]:
    """The rotation ``(c, s)`` that zeroes ``g`` in ``(f, g)``."""
    g_smaller = pnp.abs(f) < pnp.abs(g)
    t = -pnp.where(g_smaller, f, g) / pnp.where(g_smaller, g, f)
    r = rsqrt(1 + pnp.abs(t) ** 2).astype(t.dtype)
    g_zero = pnp.abs(g) == 0
    c = pnp.where(g_zero, 1, pnp.where(g_smaller, r * t, r))
    s = pnp.where(g_zero, 0, pnp.where(g_smaller, r, r * t))
    return c, s


def _gmres_incremental(a: Operator, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                       ptol: Any, restart: int, m: Operator | None) -> tuple[Any, Any, Any]:
    """One GMRES cycle that keeps the QR factorization of the Hessenberg matrix up to date
    by Givens rotations, so it can stop as soon as the residual estimate is below
    ``ptol``."""
    basis = tree_map(lambda v: pnp.pad(v[..., None], [(0, 0)] * v.ndim + [(0, restart)]),
                     unit_residual)
    dtype = pnp.result_type(*tree_leaves(b))
    r = pnp.eye(restart, restart + 1, dtype=dtype)  # the identity keeps R invertible
    rotations = pnp.zeros((restart, 2), dtype=dtype)
    rhs = pnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def unconverged(state: tuple[Any, ...]) -> Any:
        k, err = state[0], state[1]
        return pnp.logical_and(k < restart, err > ptol)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        k, _, basis, r, rhs, rotations = state
        basis, h, _ = _arnoldi_step(k, a, m, basis, r)
        row = fori_loop(0, k, lambda i, v: _rotate(v, i, rotations[i, 0], rotations[i, 1]),
                        h[k, :])
        c, s = _givens(row[k], row[k + 1])
        rotations = rotations.at[k, :].set(pnp.stack([c, s]))
        r = r.at[k, :].set(_rotate(row, k, c, s))
        rhs = _rotate(rhs, k, rotations[k, 0], rotations[k, 1])
        return k + 1, pnp.abs(rhs[k + 1]), basis, r, rhs, rotations

    _, _, basis, r, rhs, _ = while_loop(unconverged, step,
                                        (0, residual_norm, basis, r, rhs, rotations))
    y = solve_triangular(r[:, :-1].T, rhs[:-1])
    x = _plus(x0, tree_map(lambda q: pnp.dot(q[..., :-1], y, precision=_HIGHEST), basis))
    unit, norm = _safe_normalize(_apply(m, _minus(b, a(x))))
    return x, unit, norm


def _gmres_batched(a: Operator, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                   ptol: Any, restart: int, m: Operator | None) -> tuple[Any, Any, Any]:
    """One GMRES cycle that builds the whole Krylov basis (unless it breaks down) and
    then solves the small least-squares problem by its normal equations."""
    basis = tree_map(lambda v: pnp.pad(v[..., None], [(0, 0)] * v.ndim + [(0, restart)]),
                     unit_residual)
    dtype, weak = _lattice_type(b)
    h = convert_element_type(pnp.eye(restart, restart + 1, dtype=dtype), dtype, weak)

    def unconverged(state: tuple[Any, ...]) -> Any:
        _, _, breakdown, k = state
        return pnp.logical_and(k < restart, pnp.logical_not(breakdown))

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        basis, h, _, k = state
        basis, h, breakdown = _arnoldi_step(k, a, m, basis, h)
        return basis, h, breakdown, k + 1

    basis, h, _, _ = while_loop(unconverged, step, (basis, h, False, 0))
    rhs = pnp.zeros_like(h, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    # Least squares for H^T y = rhs by the normal equations (H H^H) y = H rhs.
    hc = pnp.conj(h)
    y = solve(pnp.dot(hc, h.T, precision=_HIGHEST), pnp.dot(hc, rhs, precision=_HIGHEST),
              assume_a="pos")
    x = _plus(x0, tree_map(lambda q: pnp.dot(q[..., :-1], y, precision=_HIGHEST), basis))
    unit, norm = _safe_normalize(_apply(m, _minus(b, a(x))))
    return x, unit, norm


def _gmres_iterations(a: Operator, b: Any, *, x0: Any, atol: Any, ptol: Any, restart: int,
                      maxiter: int, m: Operator | None, cycle: Callable[..., Any]) -> Any:
    """Restarted GMRES: cycles from the last solution until ``norm(M (b - A x))`` is at
    most ``atol`` or ``maxiter`` cycles ran."""
    unit, norm = _safe_normalize(_apply(m, _minus(b, a(x0))))

    def unconverged(state: tuple[Any, ...]) -> Any:
        return pnp.logical_and(state[1] < maxiter, state[3] > atol)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        x, k, unit, norm = state
        x, unit, norm = cycle(a, b, x, unit, norm, ptol, restart, m)
        return x, k + 1, unit, norm

    return while_loop(unconverged, step, (x0, 0, unit, norm))[0]


def gmres(A: Any, b: Any, x0: Any = None, *, tol: Any = 1e-5, atol: Any = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, Array]:
    """Solve ``A x = b`` for a general ``A`` by restarted GMRES; returns ``(x, info)``,
    ``info`` ``-1`` when ``x`` holds a NaN and ``0`` otherwise.

    Args:
      A, b, x0, tol, atol, M: as in :func:`cg` (the tolerance is on the preconditioned
        residual between cycles).
      restart: the dimension of the Krylov space built in each cycle (at most the
        number of unknowns).
      maxiter: the number of cycles (default ``10 *`` the number of unknowns).
      solve_method: ``'batched'`` builds the whole space and then solves a small
        least-squares problem; ``'incremental'`` keeps a QR factorization up to date with
        Givens rotations and can stop early within a cycle.

    Raises:
      ValueError: ``A`` or ``M`` is a non-square matrix, ``x0`` does not match ``b``, or
        ``solve_method`` is neither ``'incremental'`` nor ``'batched'``.
      TypeError: ``A`` or ``M`` is neither a function nor a matrix.
    """
    precondition = None if M is None else _as_operator(M, "gmres", "M")
    matvec = _as_operator(A, "gmres", "A")
    b, x0, size = _prepared("gmres", b, x0)
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    b_norm = _norm(b)
    atol = pnp.maximum(tol * b_norm, atol)
    ptol = _norm(_apply(precondition, b)) * pnp.minimum(1.0, atol / b_norm)
    cycles = {"incremental": _gmres_incremental, "batched": _gmres_batched}
    if solve_method not in cycles:
        raise ValueError(f"gmres: expected solve_method to be 'incremental' or 'batched', "
                         f"but got {solve_method!r}")
    run = partial(_gmres_iterations, x0=x0, atol=atol, ptol=ptol, restart=restart,
                  maxiter=maxiter, m=precondition, cycle=cycles[solve_method])
    x = custom_linear_solve(matvec, b, solve=run, transpose_solve=run)
    return x, pnp.where(pnp.isnan(_norm(x)), -1, 0)
