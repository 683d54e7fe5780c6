"""plait.scipy.spatial.transform (Rotation, Slerp) and plait.scipy.cluster.vq against
jax.scipy 0.10.2 on the same inputs (and against SciPy where JAX has no say):
every constructor and conversion, Euler sequences of every kind (gimbal lock included),
compositions, inverses, application to vectors, means, indexing, Slerp interpolation and
extrapolation, Rotation and Slerp as pytrees through jit, vmap and grad, vq on random
data, and the exceptions for bad input."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import jax.scipy.cluster as jcluster
import jax.scipy.spatial as jspatial
import jax.scipy.spatial.transform as jtransform
import numpy as np
import pytest
import scipy.cluster.vq as scipy_vq  # type: ignore[import-untyped]  # scipy ships no stubs
import scipy.spatial.transform as scipy_transform  # type: ignore[import-untyped]  # (no stubs)
from jax.scipy.cluster.vq import vq as jax_vq
from jax.scipy.spatial.transform import Rotation as _JaxRotation
from jax.scipy.spatial.transform import Slerp as _JaxSlerp

import plait
import plait.numpy as pnp
import plait.scipy as pscipy
from plait.scipy.cluster.vq import vq as plait_vq
from plait.scipy.spatial.transform import Rotation as PR
from plait.scipy.spatial.transform import Slerp as PS
from tests.frontend.jax_oracle import assert_close, raised

# JAX's classes, untyped here: their annotations ask for jax.Array where NumPy data is fine.
JR: Any = _JaxRotation
JS: Any = _JaxSlerp

RNG = np.random.default_rng(2024)
QUATS = RNG.standard_normal((7, 4)).astype(np.float32)
VECTORS = RNG.standard_normal((7, 3)).astype(np.float32)


def near(got: Any, want: Any, tol: float = 2e-6) -> None:
    """Equal shapes and dtypes, values up to a few float32 ulps."""
    assert_close(got, want, rtol=tol, atol=tol)


def same_rotation(got: Any, want: Any, tol: float = 2e-6) -> None:
    """Quaternions equal up to their sign (both describe the same rotation)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype
    sign = np.where(np.sum(g * w, axis=-1, keepdims=True) < 0, -1, 1)
    np.testing.assert_allclose(g * sign, w, rtol=tol, atol=tol)


class Oracle:
    """JAX's values for a family of cases, computed lazily by one jitted JAX program per
    group of cases (the default cases, the slow ones): compiling each case on its own
    would take most of the time of the run."""

    def __init__(self, compute: Any, keys: list[str], slow: set[str]) -> None:
        self.compute = compute
        self.values: dict[str, Any] = {}
        self.groups = [[k for k in keys if k not in slow], [k for k in keys if k in slow]]

    def __getitem__(self, key: str) -> Any:
        if key not in self.values:
            group = next(g for g in self.groups if key in g)
            self.values.update(jax.jit(lambda: self.compute(group))())
        return self.values[key]


def params(keys: list[str], values: list[Any], slow: set[str]) -> list[Any]:
    """Test cases ``(key, *value)``, those in ``slow`` marked slow."""
    return [pytest.param(k, *v, id=k, marks=pytest.mark.slow if k in slow else ())
            for k, v in zip(keys, values)]


# --- constructors and conversions ------------------------------------------------------

CONVERSIONS: list[tuple[str, Any]] = [
    ("quat", lambda r: r.quat),
    ("as_matrix", lambda r: r.as_matrix()),
    ("as_rotvec", lambda r: r.as_rotvec()),
    ("as_rotvec_degrees", lambda r: r.as_rotvec(degrees=True)),
    ("as_mrp", lambda r: r.as_mrp()),
    ("as_quat_canonical", lambda r: r.as_quat(canonical=True)),
    ("as_quat_scalar_first", lambda r: r.as_quat(scalar_first=True)),
    ("as_quat_both", lambda r: r.as_quat(canonical=True, scalar_first=True)),
    ("magnitude", lambda r: r.magnitude()),
    ("inv", lambda r: r.inv().quat),
    ("apply", lambda r: r.apply(VECTORS)),
    ("apply_inverse", lambda r: r.apply(VECTORS, inverse=True)),
    ("apply_one_vector", lambda r: r.apply(VECTORS[0])),
    ("compose", lambda r: (r * r.inv() * r).quat),
    ("as_euler_degrees", lambda r: r.as_euler("zyx", degrees=True)),
]
STACK_ONLY: list[tuple[str, Any]] = [
    ("compose_reversed", lambda r: (r * r[::-1]).quat),
    ("compose_single_with_stack", lambda r: (r[2] * r).quat),
    ("slice", lambda r: r[1:3].quat),
    ("index_array", lambda r: r[np.array([4, 0])].quat),
]


CONVERSION_CASES = {f"{n}-stack": (c, False) for n, c in CONVERSIONS + STACK_ONLY}
CONVERSION_CASES.update({f"{n}-single": (c, True) for n, c in CONVERSIONS})
CONVERSION_SLOW = {f"{n}-single" for i, (n, _) in enumerate(CONVERSIONS) if i % 4}
CONVERSION_ORACLE = Oracle(
    lambda keys: {k: CONVERSION_CASES[k][0](JR.from_quat(
        QUATS[3] if CONVERSION_CASES[k][1] else QUATS)) for k in keys},
    list(CONVERSION_CASES), CONVERSION_SLOW)


@pytest.mark.parametrize("key,conversion,single", params(
    list(CONVERSION_CASES), list(CONVERSION_CASES.values()), CONVERSION_SLOW))
def test_conversions_match_jax(key: str, conversion: Any, single: bool) -> None:
    near(conversion(PR.from_quat(QUATS[3] if single else QUATS)), CONVERSION_ORACLE[key])


CONSTRUCTORS: list[tuple[str, Any]] = [
    ("from_quat", lambda R, x: R.from_quat(x)),
    ("from_quat_ints", lambda R, x: R.from_quat(np.array([[1, 2, 3, 4], [0, 0, 0, 1]]))),
    ("from_rotvec", lambda R, x: R.from_rotvec(x[..., :3])),
    ("from_rotvec_degrees", lambda R, x: R.from_rotvec(40 * x[..., :3], degrees=True)),
    ("from_rotvec_tiny", lambda R, x: R.from_rotvec(1e-4 * x[..., :3])),  # Taylor branch
    ("from_mrp", lambda R, x: R.from_mrp(x[..., :3])),
    ("from_matrix", lambda R, x: R.from_matrix(R.from_quat(x).as_matrix())),
    ("from_matrix_trace_branch", lambda R, x: R.from_matrix(np.diag([1.0, -1.0, -1.0]))),
    ("from_matrix_stack", lambda R, x: R.from_matrix(np.stack(
        [np.eye(3), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0]),
         np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])]).astype(np.float32))),
    ("from_euler_scalar_degrees", lambda R, x: R.from_euler("z", 90, degrees=True)),
    ("from_euler_ints", lambda R, x: R.from_euler("xy", np.array([1, 2]))),
    ("identity", lambda R, x: R.identity()),
    ("concatenate", lambda R, x: R.concatenate([R.from_quat(x[:2]), R.from_quat(x[2:])])),
    ("mean", lambda R, x: R.from_quat(x).mean()),
    ("mean_weighted", lambda R, x: R.from_quat(x).mean(np.arange(1.0, 8.0))),
]


CONSTRUCTOR_ORACLE = Oracle(
    lambda keys: {n: (lambda r: (r.quat, r.as_matrix()))(c(JR, QUATS))
                  for n, c in CONSTRUCTORS if n in keys},
    [n for n, _ in CONSTRUCTORS], set())


@pytest.mark.parametrize("name,construct", CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_constructors_match_jax(name: str, construct: Any) -> None:
    got = construct(PR, QUATS)
    quat, matrix = CONSTRUCTOR_ORACLE[name]
    same_rotation(got.quat, quat)
    near(got.as_matrix(), matrix)


def _all_sequences() -> list[str]:
    out = []
    for a in "xyz":
        for b in "xyz":
            for c in "xyz":
                if a != b and b != c:
                    out += [a + b + c, (a + b + c).upper()]
    return out


SEQUENCES = _all_sequences()  # 12 axis patterns, extrinsic and intrinsic
ANGLES = RNG.uniform(-3, 3, (5, 3)).astype(np.float32)


SEQUENCES_SLOW = set(SEQUENCES) - {"xyz", "ZYX", "zxz", "XZX", "yzx", "YXY", "zyx", "XYZ"}
EULER_ORACLE = Oracle(
    lambda keys: {seq: (JR.from_euler(seq, ANGLES).quat, JR.from_quat(QUATS).as_euler(seq))
                  for seq in keys},
    SEQUENCES, SEQUENCES_SLOW)


@pytest.mark.parametrize("seq", params(SEQUENCES, [()] * len(SEQUENCES), SEQUENCES_SLOW))
def test_euler_angles_match_jax_and_round_trip(seq: str) -> None:
    quat, angles = EULER_ORACLE[seq]
    near(PR.from_euler(seq, ANGLES).quat, quat)
    r = PR.from_quat(QUATS)
    got = r.as_euler(seq)
    near(got, angles, tol=2e-5)
    same_rotation(PR.from_euler(seq, got).quat, r.quat, tol=2e-5)


def _locked(seq: str, middle: float) -> np.ndarray:
    """Angles with the middle one at 0, pi/2 or pi (shifted by -pi/2 for Tait-Bryan
    sequences, whose lock is at +-pi/2)."""
    angles = np.array([[0.3, middle, -0.4], [1.2, middle, 0.7]], np.float32)
    if seq.lower()[0] != seq.lower()[2]:
        angles[:, 1] = middle - np.pi / 2
    return angles


LOCKS = {f"{s}-{m:.2f}": (s, m) for s in ["xyz", "ZXZ", "yxy", "XZY"]
         for m in [0.0, np.pi / 2, np.pi]}
LOCKS_SLOW = set(list(LOCKS)[1::3]) | set(list(LOCKS)[2::3])
LOCK_ORACLE = Oracle(
    lambda keys: {k: (lambda r: (r.quat, r.as_euler(LOCKS[k][0])))(
        JR.from_euler(LOCKS[k][0], _locked(*LOCKS[k]))) for k in keys},
    list(LOCKS), LOCKS_SLOW)


@pytest.mark.parametrize("key,seq,middle", params(list(LOCKS), list(LOCKS.values()),
                                                  LOCKS_SLOW))
def test_euler_at_gimbal_lock_matches_jax(key: str, seq: str, middle: float) -> None:
    """One angle is free at the lock: both libraries set the same one to zero."""
    quat, want = LOCK_ORACLE[key]
    near(PR.from_quat(np.asarray(quat)).as_euler(seq), want, tol=5e-5)


def test_single_and_stacked_rotations() -> None:
    # (Any: mypy types literal indexes of a NamedTuple by its fields, as for JAX's class.)
    r: Any = PR.from_quat(QUATS)
    s = PR.from_quat(QUATS[0])
    assert (len(r), r.single, s.single) == (len(JR.from_quat(QUATS)), False, True)
    assert r[2].single and not r[2:3].single
    assert PR.identity().quat.dtype == JR.identity().quat.dtype
    with plait.enable_x64(True):
        assert PR.identity(dtype=np.float64).quat.dtype == np.float64


def test_concatenate_of_single_rotations_follows_scipy() -> None:
    """JAX concatenates single quaternions end to end (shape (8,)); plait stacks them,
    as SciPy does."""
    got = PR.concatenate([PR.from_quat(QUATS[0]), PR.from_quat(QUATS[1:3])])
    want = scipy_transform.Rotation.concatenate(
        [scipy_transform.Rotation.from_quat(QUATS[0].astype(np.float64)),
         scipy_transform.Rotation.from_quat(QUATS[1:3].astype(np.float64))])
    np.testing.assert_allclose(np.asarray(got.as_matrix()), want.as_matrix(), atol=1e-6)


def test_agrees_with_scipy() -> None:
    """An independent check of the conventions (scalar last, extrinsic lowercase)."""
    ours = PR.from_quat(QUATS)
    theirs = scipy_transform.Rotation.from_quat(QUATS.astype(np.float64))
    np.testing.assert_allclose(np.asarray(ours.as_matrix()), theirs.as_matrix(), atol=1e-6)
    np.testing.assert_allclose(np.asarray(ours.as_rotvec()), theirs.as_rotvec(), atol=1e-5)
    np.testing.assert_allclose(np.asarray(ours.as_euler("xzy")), theirs.as_euler("xzy"),
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(ours.apply(VECTORS)), theirs.apply(VECTORS),
                               atol=1e-5)
    times = np.array([0.0, 1.0, 2.5, 3.0, 4.0, 6.0, 7.0], np.float32)
    at = np.array([0.5, 2.0, 6.5], np.float32)
    want = scipy_transform.Slerp(times, theirs)(at)
    np.testing.assert_allclose(np.asarray(PS.init(times, ours)(at).as_matrix()), want.as_matrix(),
                               atol=1e-5)


# --- Slerp ----------------------------------------------------------------------------

KEY_TIMES = np.array([0.0, 1.0, 1.5, 3.0, 4.0, 6.0, 7.0], np.float32)


SLERP_TIMES: list[tuple[str, Any]] = [
    ("inside", np.array([0.0, 0.25, 1.0, 1.2, 2.9, 4.5, 7.0], np.float32)),
    ("outside", np.array([-1.0, 8.5], np.float32)),  # extrapolation
    ("scalar", np.float32(2.0)),  # a single rotation
    ("list", [0, 1, 2]),
]


SLERP_ORACLE = Oracle(
    lambda keys: {n: JS.init(KEY_TIMES, JR.from_quat(QUATS))(t).quat
                  for n, t in SLERP_TIMES if n in keys},
    [n for n, _ in SLERP_TIMES], set())


@pytest.mark.parametrize("name,times", SLERP_TIMES, ids=[n for n, _ in SLERP_TIMES])
def test_slerp_matches_jax(name: str, times: Any) -> None:
    got = PS.init(KEY_TIMES, PR.from_quat(QUATS))(times)
    near(got.quat, SLERP_ORACLE[name], tol=5e-6)
    assert got.single == (np.ndim(times) == 0)


def test_slerp_fields_match_jax() -> None:
    got = PS.init(KEY_TIMES, PR.from_quat(QUATS))
    want = jax.jit(lambda q: JS.init(KEY_TIMES, JR.from_quat(q)))(QUATS)
    assert got._fields == want._fields
    near(tuple(got), tuple(want), tol=5e-6)


# --- pytrees: jit, vmap, grad ---------------------------------------------------------


def test_rotation_and_slerp_are_pytrees_like_jax() -> None:
    r, j = PR.from_quat(QUATS), JR.from_quat(QUATS)
    assert str(plait.tree_util.tree_structure(r)) == str(jax.tree_util.tree_structure(j))
    s, js = PS.init(KEY_TIMES, r), JS.init(KEY_TIMES, j)
    assert str(plait.tree_util.tree_structure(s)) == str(jax.tree_util.tree_structure(js))
    back = plait.tree_util.tree_unflatten(plait.tree_util.tree_structure(s),
                                          plait.tree_util.tree_leaves(s))
    assert isinstance(back, PS) and isinstance(back.rotations, PR)


def test_jit_and_vmap_match_jax() -> None:
    at = np.linspace(-0.5, 7.5, 9).astype(np.float32)

    def program(lib: Any, R: Any, S: Any) -> Any:
        r = R.from_quat(QUATS)
        step = lib.jit(lambda r, v: (r * r.inv()[::-1], r.apply(v), r.as_euler("XYZ")))
        per = lib.vmap(lambda r: (r.as_matrix(), (r * r).as_rotvec(), r.magnitude()))
        interp = lib.jit(lambda s, t: s(t))(S.init(KEY_TIMES, r), at)
        batched = lib.vmap(lambda t: S.init(KEY_TIMES, r)(t).quat)(at)
        return step(r, VECTORS), per(r), interp, batched

    got, want = program(plait, PR, PS), jax.jit(lambda: program(jax, JR, JS))()
    assert_close(got, want, rtol=5e-5, atol=5e-6)


def test_grad_matches_jax() -> None:
    def loss(lib: Any, R: Any) -> Any:
        def f(rotvec: Any, v: Any) -> Any:
            r = R.from_rotvec(rotvec)
            return lib.sum(r.apply(v) ** 3) + lib.sum((r * r.inv()[::-1]).as_rotvec() ** 2)
        return f

    rv = 0.5 * VECTORS
    got = plait.grad(loss(pnp, PR), argnums=(0, 1))(rv, VECTORS)
    want = jax.jit(jax.grad(loss(jjnp, JR), argnums=(0, 1)))(rv, VECTORS)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_euler_grad_matches_jax() -> None:
    got = plait.grad(lambda q: PR.from_quat(q).as_euler("zyz").sum())(QUATS)
    want = jax.jit(jax.grad(lambda q: JR.from_quat(q).as_euler("zyz").sum()))(QUATS)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


# --- vq -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(50, 3, 4), (20, 1, 5), (30, 6, 1)],
                         ids=["3d_4codes", "1d_features", "1_code"])
def test_vq_matches_jax_and_scipy(shape: tuple[int, int, int]) -> None:
    m, n, k = shape
    obs = RNG.standard_normal((m, n)).astype(np.float32)
    book = RNG.standard_normal((k, n)).astype(np.float32)
    got, want = plait_vq(obs, book), jax.jit(jax_vq)(obs, book)
    near(got, want)
    codes, dist = scipy_vq.vq(obs.astype(np.float64), book.astype(np.float64))
    np.testing.assert_array_equal(got[0], codes)
    np.testing.assert_allclose(np.asarray(got[1]), dist, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("args", [
    (np.arange(6.0, dtype=np.float32), np.array([0.5, 4.0], np.float32)),  # rank 1
    (np.array([[0, 0], [2, 2]]), np.array([[1, 1], [3, 3]])),  # ints; exact ties
    (np.float32(2.0) * np.ones((3, 2), np.float32), np.ones((2, 2), np.float32)),
], ids=["rank1", "ints_ties", "equal_codes"])
def test_vq_edge_cases_match_jax(args: tuple[Any, Any]) -> None:
    near(plait_vq(*args), jax.jit(jax_vq)(*args))


def test_vq_under_jit_and_vmap_matches_jax() -> None:
    obs = RNG.standard_normal((4, 10, 3)).astype(np.float32)
    book = RNG.standard_normal((5, 3)).astype(np.float32)
    got = plait.jit(plait.vmap(plait_vq, in_axes=(0, None)))(obs, book)
    want = jax.jit(jax.vmap(jax_vq, in_axes=(0, None)))(obs, book)
    near(got, want)
    near(plait.grad(lambda o: plait_vq(o, book)[1].sum())(obs[0]),
         jax.grad(lambda o: jax_vq(o, book)[1].sum())(obs[0]))


def test_public_names_match_jax() -> None:
    assert pscipy.cluster.vq.vq is plait_vq and pscipy.spatial.transform.Rotation is PR
    assert pscipy.cluster.vq.__all__ == [n for n in dir(jcluster.vq) if not n.startswith("_")]
    assert pscipy.cluster.__all__ == [n for n in dir(jcluster) if not n.startswith("_")]
    assert pscipy.spatial.__all__ == [n for n in dir(jspatial) if not n.startswith("_")]
    assert sorted(pscipy.spatial.transform.__all__) == sorted(
        n for n in dir(jtransform) if not n.startswith("_"))
    public = {n for n in dir(JR) if not n.startswith("_")} | {"__getitem__", "__len__",
                                                               "__mul__"}
    assert public <= set(dir(PR))
    assert {n for n in dir(JS) if not n.startswith("_")} | {"__call__"} <= set(dir(PS))


# --- bad input ------------------------------------------------------------------------

ONE = np.array([0.0, 0.0, 0.0, 1.0], np.float32)
TWO = np.stack([ONE, ONE])
BAD: list[tuple[str, Any]] = [
    ("euler_empty", lambda R, S, vq: R.from_euler("", ONE[:0])),
    ("euler_four_axes", lambda R, S, vq: R.from_euler("xyzx", np.ones(4))),
    ("euler_mixed_case", lambda R, S, vq: R.from_euler("xyZ", np.ones(3))),
    ("euler_bad_letter", lambda R, S, vq: R.from_euler("xwz", np.ones(3))),
    ("euler_repeated", lambda R, S, vq: R.from_euler("xxy", np.ones(3))),
    ("euler_too_few_angles", lambda R, S, vq: R.from_euler("xyz", np.ones(2))),
    ("euler_too_many_angles", lambda R, S, vq: R.from_euler("x", np.ones(3))),
    ("as_euler_two_axes", lambda R, S, vq: R.from_quat(ONE).as_euler("xy")),
    ("as_euler_repeated", lambda R, S, vq: R.from_quat(ONE).as_euler("zzy")),
    ("apply_wrong_length", lambda R, S, vq: R.from_quat(ONE).apply(np.ones(2))),
    ("compose_with_number", lambda R, S, vq: R.from_quat(ONE) * 3),
    ("identity_num", lambda R, S, vq: R.identity(5)),
    ("random", lambda R, S, vq: R.random(None)),
    ("len_single", lambda R, S, vq: len(R.from_quat(ONE))),
    ("index_single", lambda R, S, vq: R.from_quat(ONE)[0]),
    ("mean_single", lambda R, S, vq: R.from_quat(ONE).mean()),
    ("mean_2d_weights", lambda R, S, vq: R.from_quat(TWO).mean(np.ones((2, 1)))),
    ("mean_weight_count", lambda R, S, vq: R.from_quat(TWO).mean(np.ones(3))),
    ("slerp_not_rotation", lambda R, S, vq: S.init([0, 1], TWO)),
    ("slerp_single", lambda R, S, vq: S.init([0, 1], R.from_quat(ONE))),
    ("slerp_one", lambda R, S, vq: S.init([0], R.from_quat(TWO[:1]))),
    ("slerp_2d_times", lambda R, S, vq: S.init([[0, 1]], R.from_quat(TWO))),
    ("slerp_time_count", lambda R, S, vq: S.init([0, 1, 2], R.from_quat(TWO))),
    ("slerp_call_2d", lambda R, S, vq: S.init([0, 1], R.from_quat(TWO))(np.ones((2, 2)))),
    ("vq_list", lambda R, S, vq: vq([[1.0]], np.ones((1, 1)))),
    ("vq_ranks", lambda R, S, vq: vq(np.ones((3, 2)), np.ones(2))),
    ("vq_rank3", lambda R, S, vq: vq(np.ones((3, 2, 1)), np.ones((2, 2, 1)))),
]


@pytest.mark.parametrize("call", [c for _, c in BAD], ids=[n for n, _ in BAD])
def test_bad_input_raises_like_jax(call: Any) -> None:
    got, want = raised(lambda: call(PR, PS, plait_vq)), raised(lambda: call(JR, JS, jax_vq))
    assert type(got) is type(want), (got, want)
    assert str(got)


@pytest.mark.parametrize("call", [
    lambda: PR.from_quat(np.ones(3)),
    lambda: PR.from_rotvec(np.ones(4)),
    lambda: PR.from_mrp(np.ones((2, 2))),
    lambda: PR.from_matrix(np.eye(2)),
    lambda: PR.from_matrix(np.ones(3)),
], ids=["quat3", "rotvec4", "mrp2", "matrix2", "matrix_vector"])
def test_wrong_shapes_are_refused(call: Any) -> None:
    """JAX returns garbage for these (its conversions index whatever they get); plait
    refuses them."""
    with pytest.raises(ValueError, match="expected an array of shape"):
        call()
