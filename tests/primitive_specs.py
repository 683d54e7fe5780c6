"""One table of primitive specs, shared by the reference, lowering and autodiff tests.

Each :class:`PrimSpec` says how to exercise one primitive: its params, how to
draw valid inputs for a dtype and shape, which dtypes and shapes to try, the
same operation in real JAX (the oracle), how close the results must be, and
facts the transformation tests need (differentiability, linearity).

Several specs may share a primitive (``reduce_sum`` over different axes,
``pad`` with negative and interior padding, ...).  Specs whose name ends in
``_special`` feed edge values (NaN, infinities, signed zeros, ties, integer
extremes); they are for value tests only and have their autodiff flags off.

No spec feeds subnormal floats: XLA on CPU flushes them to zero (in inputs
and results of arithmetic), NumPy and plait's reference interpreter do not;
value tests count a subnormal result where XLA has a zero of the same sign as
equal.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jax
import jax.ad_checkpoint
import ml_dtypes
import numpy as np
from jax import lax
from jax._src.lax import fft as jax_fft
from jax._src.lax import linalg as jax_linalg
from jax._src.lax.control_flow import conditionals as jax_conditionals
from jax._src.lax.control_flow import solves as jax_solves

from plait.frontend.sparse.sparsify import todense_p
from plait.ir import Builder, ClosedJaxpr, Literal, Primitive, ShapedArray, Var
from plait.ir import primitives as P
from plait.ir.primitives.indexing import combiner_jaxpr
from plait.ir.primitives.windowed import window_output_shape

jax.config.update("jax_platforms", "cpu")

Shape = tuple[int, ...]
DType = np.dtype[Any]
ArgMaker = Callable[[np.random.Generator, DType, Shape], list[Any]]
"""Arguments of one case: arrays, or NumPy scalars where an operand is a scalar index."""
ParamsFn = Callable[[DType, Shape], Mapping[str, Any]]

BOOL = np.dtype(np.bool_)
I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
U8, U16, U32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
C64 = np.dtype(np.complex64)

FLOATS: tuple[DType, ...] = (F32, F16, BF16)
INEXACT: tuple[DType, ...] = FLOATS + (C64,)
NUM: tuple[DType, ...] = (F32, I32, I8, U8, F16, BF16, C64)
ORDERED: tuple[DType, ...] = (F32, I32, U8, BOOL, F16, BF16)
BOOL_INT: tuple[DType, ...] = (BOOL, I32, I8, U8)
ALL: tuple[DType, ...] = (F32, I32, BOOL, I8, U8, U32, F16, BF16, C64)
ALL_DTYPES: tuple[DType, ...] = (BOOL, I8, I16, I32, U8, U16, U32, F16, BF16, F32, C64)
"""Every dtype JAX has without x64, for checking which dtypes a typing rule accepts."""

SHAPES: tuple[Shape, ...] = ((), (5,), (2, 3, 4))
NONSCALAR: tuple[Shape, ...] = ((5,), (2, 3, 4))
WITH_EMPTY: tuple[Shape, ...] = SHAPES + ((3, 0),)


@dataclasses.dataclass(frozen=True, eq=False)
class PrimSpec:
    """How to test one primitive on one family of inputs."""

    name: str
    """Test id (unique)."""
    primitive: Primitive
    """The plait primitive."""
    params: Mapping[str, Any] | ParamsFn
    """Complete params for ``bind``, or ``fn(dtype, shape) -> params`` when they
    depend on the case (axes, sizes, a nested jaxpr ...)."""
    make_args: ArgMaker
    """``make_args(rng, dtype, shape)``: valid operands for the case."""
    dtypes: tuple[DType, ...]
    """The dtype of the case; what it governs (usually the first operand) is up to ``make_args``."""
    shapes: tuple[Shape, ...] = SHAPES
    """The shape of the case; ``make_args`` derives the operand shapes from it."""
    jax_fn: Callable[..., Any] | None = None
    """``jax_fn(*args, **params)`` runs the same operation with real JAX; by
    default it binds ``jax.lax.<primitive>_p`` with the same params."""
    tol: float = 0.0
    """Allowed error, in units of the result dtype's epsilon, relative to the
    larger of 1 and the magnitude of the expected value; 0 means equal (NaNs
    equal, signed zeros distinguished).  See :meth:`tol_for`."""
    differentiable: bool = False
    """JAX defines a nonzero derivative of the float results w.r.t. the float
    operands, and it is the true derivative at the inputs ``make_args`` draws
    (except where sort keys tie: there it is JAX's choice among one-sided ones)."""
    linear_in: tuple[int, ...] = ()
    """Operand positions in which the op is linear: with the other operands
    held fixed, linear in the operands at these positions taken together (or
    in each one alone, when ``multilinear``)."""
    unmapped: tuple[int, ...] = ()
    """Operand positions that ``vmap`` must not batch (``reduce_window``'s init values,
    which JAX does not batch either)."""
    multilinear: bool = False
    """Linear in each position of ``linear_in`` separately, not jointly (``mul``, ``dot_general``
    with both operands in ``linear_in``)."""

    def tol_for(self, dtype: DType) -> float:
        """The tolerance of the case: :attr:`tol`, but at least 2 for complex cases,
        whose arithmetic XLA rounds differently from NumPy."""
        return max(self.tol, 2.0) if np.dtype(dtype).kind == "c" else self.tol

    def params_for(self, dtype: DType, shape: Shape) -> dict[str, Any]:
        """The params of the case."""
        p = self.params(dtype, shape) if callable(self.params) else self.params
        return dict(p)

    def args_for(self, dtype: DType, shape: Shape, seed: int = 0) -> list[np.ndarray]:
        """Operands of the case, drawn from an rng seeded by the case itself."""
        key = f"{self.name}|{np.dtype(dtype).name}|{shape}|{seed}".encode()
        return self.make_args(np.random.default_rng(zlib.crc32(key)), np.dtype(dtype), shape)

    def cases(self) -> Iterator[tuple[DType, Shape]]:
        """Every (dtype, shape) pair."""
        for d in self.dtypes:
            for s in self.shapes:
                yield d, s

    def run_jax(self, args: Sequence[Any], params: Mapping[str, Any]) -> list[Any]:
        """The JAX results, always as a list."""
        assert self.jax_fn is not None
        out = self.jax_fn(*args, **params)
        return list(out) if self.primitive.multiple_results else [out]

    def __post_init__(self) -> None:
        if self.jax_fn is None:
            object.__setattr__(self, "jax_fn", _bind_jax(self.primitive.name))


@functools.cache
def _bind_jax(name: str) -> Callable[..., Any]:
    prim = getattr(lax, f"{name}_p")

    def fn(*args: Any, **params: Any) -> Any:
        if "rounding_method" in params:
            params["rounding_method"] = lax.RoundingMethod(int(params["rounding_method"]))
        return prim.bind(*args, **params)
    return fn


# ----------------------------------------------------------------------------- value generators


def rand(rng: np.random.Generator, dtype: DType, shape: Shape, lo: float = -3.0,
         hi: float = 3.0) -> np.ndarray:
    """Uniform values in [lo, hi] of any dtype (ints rounded inward, bools random)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a, b = max(math.ceil(lo), int(info.min)), min(math.floor(hi), int(info.max))
        if a > b:
            a, b = 0, min(3, int(info.max))
        return np.asarray(rng.integers(a, b, size=shape, endpoint=True)).astype(dtype)
    if dtype.kind == "c":
        parts = rng.uniform(lo, hi, shape), rng.uniform(lo, hi, shape)
        return np.asarray(parts[0] + 1j * parts[1]).astype(dtype)
    return np.asarray(rng.uniform(lo, hi, shape)).astype(dtype)


def ints_as(rng: np.random.Generator, dtype: DType, shape: Shape, lo: int = -2,
            hi: int = 2) -> np.ndarray:
    """Small whole numbers in any dtype: many ties and equalities."""
    if dtype == BOOL:
        return rand(rng, dtype, shape)
    return rand(rng, I32, shape, lo, hi).astype(dtype)


def _uniform(lo: float = -3.0, hi: float = 3.0, n: int = 1) -> ArgMaker:
    return lambda rng, d, s: [rand(rng, d, s, lo, hi) for _ in range(n)]


def _away_from_zero(lo: float, hi: float, n: int = 1) -> ArgMaker:
    """Values with lo <= |x| <= hi and random signs."""
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        out = []
        for _ in range(n):
            mag = rand(rng, d, s, lo, hi)
            if d.kind != "u" and d != BOOL:
                sign = np.where(rng.random(s) < 0.5, -1, 1)
                mag = (mag * np.asarray(sign).astype(d)).astype(d)
            out.append(np.asarray(mag))
        return out
    return make


def float_specials(dtype: DType) -> list[float]:
    """Edge values of a float dtype: NaN, infinities, signed zeros, extremes, halves."""
    fi = ml_dtypes.finfo(dtype)
    # The smallest normals, but no subnormals: see the module docstring.
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0,
            float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny)]


def int_specials(dtype: DType) -> list[int]:
    """Edge values of an integer dtype: zero, +-1, extremes."""
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 7, int(info.max), int(info.max) - 1]
    if info.min < 0:
        vals += [-1, -2, -7, int(info.min), int(info.min) + 1]
    return vals


def specials(dtype: DType) -> np.ndarray:
    """Edge values of ``dtype`` as a vector."""
    if dtype == BOOL:
        return np.array([False, True])
    if dtype.kind in "iu":
        return np.array(int_specials(dtype), dtype)
    if dtype.kind == "c":
        f = [v for v in float_specials(np.dtype(np.float32)) if abs(v) < 1e30]
        return np.array([complex(a, b) for a in f[:8] for b in f[:8:3]], dtype)
    return np.array(float_specials(dtype)).astype(dtype)


def _special_unary(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [specials(d)]


def _special_pairs(n: int = 2) -> ArgMaker:
    """Every combination of edge values across ``n`` operands (in flat vectors)."""
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        v = specials(d)
        grids = np.meshgrid(*([v] * n), indexing="ij")
        return [g.reshape(-1) for g in grids]
    return make


def _special_shape(d: DType, n: int = 1) -> Shape:
    return (len(specials(d)) ** n,)


# ----------------------------------------------------------------------------- spec builders

SPECS: list[PrimSpec] = []


def spec(name: str, primitive: Primitive, params: Mapping[str, Any] | ParamsFn,
         make_args: ArgMaker, dtypes: Sequence[DType], **kw: Any) -> PrimSpec:
    """Create a spec, add it to :data:`SPECS`, and return it."""
    s = PrimSpec(name, primitive, params, make_args, tuple(dtypes), **kw)
    if any(t.name == name for t in SPECS):
        raise ValueError(f"duplicate spec name {name!r}")
    SPECS.append(s)
    return s


def special_spec(name: str, primitive: Primitive, params: Mapping[str, Any] | ParamsFn,
                 dtypes: Sequence[DType], n: int = 1, **kw: Any) -> None:
    """Specs over every combination of edge values (one per dtype: the vector lengths differ)."""
    for d in dtypes:
        maker = _special_unary if n == 1 else _special_pairs(n)
        spec(f"{name}_special_{d.name}", primitive, params, maker, (d,),
             shapes=(_special_shape(d, n),), **kw)


ACC: Mapping[str, Any] = {"accuracy": None}

# -- unary math (accuracy param) ------------------------------------------------------------

_TRANSCENDENTAL: list[tuple[Primitive, ArgMaker, float]] = [
    (P.exp_p, _uniform(-4, 4), 2),
    (P.exp2_p, _uniform(-4, 4), 2),
    (P.log_p, _uniform(0.05, 5), 2),
    (P.log1p_p, _uniform(-0.9, 4), 2),
    (P.expm1_p, _uniform(-3, 3), 2),
    (P.tanh_p, _uniform(-3, 3), 2),
    (P.logistic_p, _uniform(-6, 6), 2),
    (P.sin_p, _uniform(-4, 4), 2),
    (P.cos_p, _uniform(-4, 4), 2),
    (P.tan_p, _uniform(-1.3, 1.3), 2),
    (P.sqrt_p, _uniform(0.01, 5), 1),
    (P.rsqrt_p, _uniform(0.05, 5), 2),
]
for _p, _maker, _tol in _TRANSCENDENTAL:
    spec(_p.name, _p, ACC, _maker, INEXACT, tol=_tol, differentiable=True)
spec("cbrt", P.cbrt_p, ACC, _uniform(-4, 4), FLOATS, tol=2, differentiable=True)

_INVERSE_TRIG: list[tuple[Primitive, ArgMaker]] = [
    (P.asin_p, _uniform(-0.95, 0.95)),
    (P.acos_p, _uniform(-0.95, 0.95)),
    (P.atan_p, _uniform(-4, 4)),
    (P.sinh_p, _uniform(-3, 3)),
    (P.cosh_p, _uniform(-3, 3)),
    (P.asinh_p, _uniform(-4, 4)),
    (P.acosh_p, _uniform(1.05, 5)),
    (P.atanh_p, _uniform(-0.95, 0.95)),
]
for _p, _maker in _INVERSE_TRIG:
    spec(_p.name, _p, {}, _maker, INEXACT, tol=2, differentiable=True)

for _p in [P.exp_p, P.log_p, P.log1p_p, P.expm1_p, P.tanh_p, P.logistic_p, P.sin_p, P.sqrt_p,
           P.rsqrt_p, P.cbrt_p]:
    special_spec(_p.name, _p, ACC, (F32, F16), tol=2)
for _p in [P.asin_p, P.atan_p, P.sinh_p, P.cosh_p, P.asinh_p, P.acosh_p, P.atanh_p]:
    special_spec(_p.name, _p, {}, (F32,), tol=2)

# -- special functions ----------------------------------------------------------------------
# The reference computes in float64; XLA's float32 approximations are within a few ulps
# away from poles.

for _p, _maker in [(P.erf_p, _uniform(-3, 3)), (P.erfc_p, _uniform(-2, 3)),
                   (P.erf_inv_p, _uniform(-0.95, 0.95)), (P.lgamma_p, _uniform(0.1, 8)),
                   (P.digamma_p, _uniform(0.2, 8))]:
    spec(_p.name, _p, {}, _maker, (F32, F16), tol=32, differentiable=True)
spec("lgamma_negative", P.lgamma_p, {}, _uniform(-3.9, -3.1), (F32,), tol=64,
     differentiable=True)
for _p in [P.erf_p, P.erfc_p, P.erf_inv_p, P.lgamma_p, P.digamma_p]:
    special_spec(_p.name, _p, {}, (F32,), tol=32)
def _gamma_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [rand(rng, d, s, 0.5, 6), rand(rng, d, s, 0.1, 9)]


# The incomplete gamma family (series below x = a, continued fraction above); their
# derivatives in one operand, and betainc's, are in tests/frontend/test_special.py.
for _p, _diff in [(P.igamma_p, True), (P.igammac_p, True), (P.igamma_grad_a_p, False)]:
    spec(_p.name, _p, {}, _gamma_args, (F32, F16), tol=64, differentiable=_diff,
         jax_fn=getattr(lax, _p.name))
spec("betainc", P.regularized_incomplete_beta_p, {},
     lambda rng, d, s: [rand(rng, d, s, 0.5, 6), rand(rng, d, s, 0.5, 6),
                        rand(rng, d, s, 0.02, 0.98)], (F32, F16), tol=64)
for _p in [P.bessel_i0e_p, P.bessel_i1e_p]:
    spec(_p.name, _p, {}, _uniform(-12, 12), (F32, F16, BF16), tol=8, differentiable=True)
    special_spec(_p.name, _p, {}, (F32,), tol=8)


def _polygamma_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [rng.integers(0, 4, s).astype(d), rand(rng, d, s, 0.5, 6)]


# (Their derivatives exist in one operand only: tests/frontend/test_special.py.)
spec("polygamma", P.polygamma_p, {}, _polygamma_args, (F32,), tol=64)
spec("zeta", P.zeta_p, {}, lambda rng, d, s: [rand(rng, d, s, 1.5, 6), rand(rng, d, s, 0.5, 6)],
     (F32,), tol=64)


# -- bit operations -------------------------------------------------------------------------


def _shift_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    if d.kind not in "iu":  # (the typing tests probe other dtypes too)
        return [rand(rng, d, s), rand(rng, d, s)]
    info = np.iinfo(d)
    x = rng.integers(int(info.min), int(info.max), s, endpoint=True).astype(d)
    # Amounts past the width (and negative ones) as well as ordinary ones.
    lo = -2 if info.min < 0 else 0
    return [x, rng.integers(lo, info.bits + 3, s).astype(d)]


for _p in (P.shift_left_p, P.shift_right_arithmetic_p, P.shift_right_logical_p):
    spec(_p.name, _p, {}, _shift_args, (I32, I8, I16, U8, U16, U32), shapes=NONSCALAR)
for _p in (P.population_count_p, P.clz_p):
    spec(_p.name, _p, {}, lambda rng, d, s: _shift_args(rng, d, s)[:1],
         (I32, I8, U8, U32), shapes=NONSCALAR)
    special_spec(_p.name, _p, {}, (I32, U8))
spec("stop_gradient", P.stop_gradient_p, {}, _uniform(-3, 3), ALL,
     jax_fn=lambda x: lax.stop_gradient(x))


# -- unary, no params ------------------------------------------------------------------------

spec("neg", P.neg_p, {}, _uniform(-100, 100), NUM, differentiable=True, linear_in=(0,))
spec("square", P.square_p, {}, _uniform(-10, 10), NUM, tol=2, differentiable=True)
special_spec("square", P.square_p, {}, (F32, I32, U8, C64))
special_spec("neg", P.neg_p, {}, (F32, I32, U8))
spec("sign", P.sign_p, {}, _uniform(-3, 3), (F32, I32, I8, U8, F16, BF16, C64))
special_spec("sign", P.sign_p, {}, (F32, I32, C64))
spec("floor", P.floor_p, {}, _uniform(-5, 5), FLOATS)
spec("ceil", P.ceil_p, {}, _uniform(-5, 5), FLOATS)
special_spec("floor", P.floor_p, {}, (F32,))
special_spec("ceil", P.ceil_p, {}, (BF16,))
spec("is_finite", P.is_finite_p, {}, _uniform(-5, 5), FLOATS)
special_spec("is_finite", P.is_finite_p, {}, FLOATS)
spec("abs", P.abs_p, {}, _away_from_zero(0.1, 5), (F32, I32, I8, F16, BF16, C64),
     differentiable=True)
special_spec("abs", P.abs_p, {}, (F32, I8, C64))
spec("real", P.real_p, {}, _uniform(), (C64,), differentiable=True, linear_in=(0,))
spec("imag", P.imag_p, {}, _uniform(), (C64,), differentiable=True, linear_in=(0,))
spec("conj", P.conj_p, lambda d, shape: {"input_dtype": np.dtype(d)}, _uniform(), (C64,),
     differentiable=True, linear_in=(0,))
spec("copy", P.copy_p, {}, _uniform(-5, 5), ALL, differentiable=True, linear_in=(0,))
spec("name", P.name_p, {"name": "h1"}, _uniform(-5, 5), ALL, differentiable=True,
     jax_fn=lambda x, name: jax.ad_checkpoint.checkpoint_name(x, name))
spec("not", P.not_p, {}, _uniform(-100, 100), BOOL_INT + (U32,))


def _halves(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    """Many exact ties (k + 1/2) mixed with random values."""
    ties = rand(rng, I32, s, -8, 8) / 2.0
    return [np.asarray(np.where(rng.random(s) < 0.6, ties, rng.uniform(-5, 5, s))).astype(d)]


for _m in P.RoundingMethod:
    _rp = {"rounding_method": _m}
    spec(f"round_{_m.name.lower()}", P.round_p, _rp, _halves, FLOATS)
    special_spec(f"round_{_m.name.lower()}", P.round_p, _rp, (F32,))


def _round_hard(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    # The float just below 0.5, and values at 2**23 where x + 0.5 is not exact.
    below = np.nextafter(np.float32(0.5), np.float32(0))
    vals = [below, -below, 2.0**23 + 1, -(2.0**23 + 1), 2.0**22 + 0.5, 1.5, 2.5]
    return [np.array(vals, d)]


for _m in P.RoundingMethod:
    spec(f"round_{_m.name.lower()}_hard", P.round_p, {"rounding_method": _m}, _round_hard,
         (F32,), shapes=((7,),))

# -- integer_pow ---------------------------------------------------------------------------

for _y, _dts in [(0, NUM), (1, NUM), (2, NUM), (3, NUM), (5, (F32, I32, U8, F16, C64)),
                 (-1, INEXACT), (-2, INEXACT), (-3, (F32, F16, BF16, C64))]:
    spec(f"integer_pow_{'m' if _y < 0 else ''}{abs(_y)}", P.integer_pow_p, {"y": _y},
         _away_from_zero(0.2, 2.5) if _y < 0 else _uniform(-3, 3), _dts, tol=2,
         differentiable=_y != 0, linear_in=(0,) if _y == 1 else ())
special_spec("integer_pow_m2", P.integer_pow_p, {"y": -2}, (F32,))
special_spec("integer_pow_3", P.integer_pow_p, {"y": 3}, (F32, I32))

# -- binary arithmetic --------------------------------------------------------------------

spec("add", P.add_p, {}, _uniform(-100, 100, 2), NUM, differentiable=True, linear_in=(0, 1))
spec("sub", P.sub_p, {}, _uniform(-100, 100, 2), NUM, differentiable=True, linear_in=(0, 1))
spec("mul", P.mul_p, {"out_dtype": None}, _uniform(-100, 100, 2), NUM, differentiable=True,
     linear_in=(0, 1), multilinear=True)
spec("mul_out_int32", P.mul_p, {"out_dtype": I32}, _uniform(-120, 120, 2), (I8, U8, I16))
spec("mul_out_float32", P.mul_p, {"out_dtype": F32}, _uniform(-100, 100, 2), (F16, BF16),
     differentiable=True, linear_in=(0, 1), multilinear=True)
spec("add_any", P.add_any_p, {}, _uniform(-100, 100, 2), NUM,
     jax_fn=lambda x, y: jax._src.ad_util.add_jaxvals_p.bind(x, y),
     differentiable=True, linear_in=(0, 1))
for _p in [P.add_p, P.sub_p]:
    special_spec(_p.name, _p, {}, (F32, I32, U8), n=2)
special_spec("mul", P.mul_p, {"out_dtype": None}, (F32, I32, U8), n=2)


def _div_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    if d.kind in "iu":  # both signs, and divisors of both signs including zero
        return [rand(rng, d, s, -50, 50), rand(rng, d, s, -6, 6)]
    return [rand(rng, d, s, -5, 5), _away_from_zero(0.3, 4)(rng, d, s)[0]]


spec("div", P.div_p, {}, _div_args, NUM, differentiable=True, linear_in=(0,))
spec("rem", P.rem_p, {}, _div_args, (F32, I32, I8, U8, U32, F16, BF16), differentiable=True)
for _p in [P.div_p, P.rem_p]:
    special_spec(_p.name, _p, {}, (F32, I32, I8, U8), n=2)
spec("max", P.max_p, {}, _uniform(-5, 5, 2), ALL, differentiable=True)
spec("min", P.min_p, {}, _uniform(-5, 5, 2), ALL, differentiable=True)
for _p in [P.max_p, P.min_p]:
    special_spec(_p.name, _p, {}, (F32, I32, BOOL, C64), n=2)
spec("atan2", P.atan2_p, {}, _uniform(-3, 3, 2), FLOATS, tol=2, differentiable=True)
special_spec("atan2", P.atan2_p, {}, (F32,), n=2, tol=2)
spec("nextafter", P.nextafter_p, {}, _uniform(-3, 3, 2), FLOATS)
special_spec("nextafter", P.nextafter_p, {}, FLOATS, n=2)


def _pow_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    base = rand(rng, d, s, 0.2, 3) if d.kind != "c" else rand(rng, d, s, -2, 2)
    return [base, rand(rng, d, s, -2.5, 2.5)]


def _pow_int_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [_away_from_zero(0.3, 2.5)(rng, d, s)[0], rand(rng, I32, s, -4, 4)]


spec("pow", P.pow_p, {}, _pow_args, INEXACT, tol=4, differentiable=True)
spec("pow_int_exponent", P.pow_p, {}, _pow_int_args, INEXACT, tol=4, differentiable=True)
special_spec("pow", P.pow_p, {}, (F32,), n=2, tol=2)

for _p in [P.and_p, P.or_p, P.xor_p]:
    spec(_p.name, _p, {}, _uniform(-100, 100, 2), BOOL_INT + (U32,))

spec("complex", P.complex_p, {}, _uniform(-3, 3, 2), (F32,), differentiable=True,
     linear_in=(0, 1))
special_spec("complex", P.complex_p, {}, (F32,), n=2)

# -- comparisons --------------------------------------------------------------------------


def _ties(n: int) -> ArgMaker:
    return lambda rng, d, s: [ints_as(rng, d, s) for _ in range(n)]


for _p in [P.eq_p, P.ne_p]:
    spec(_p.name, _p, {}, _ties(2), ALL)
    special_spec(_p.name, _p, {}, (F32, C64), n=2)
for _p in [P.lt_p, P.le_p, P.gt_p, P.ge_p]:
    spec(_p.name, _p, {}, _ties(2), ORDERED + (I8,))
    special_spec(_p.name, _p, {}, (F32, I8), n=2)

# -- select_n, clamp -------------------------------------------------------------------------


def _select_args(n_cases: int, pred: DType, scalar_pred: bool = False) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        ps = () if scalar_pred else s
        which = rand(rng, pred, ps, 0, n_cases - 1)
        if n_cases == 1:
            which = np.zeros(ps, pred)
        return [which] + [rand(rng, d, s, -5, 5) for _ in range(n_cases)]
    return make


spec("select_n", P.select_n_p, {}, _select_args(2, BOOL), ALL, differentiable=True,
     linear_in=(1, 2))
spec("select_n_one_case", P.select_n_p, {}, _select_args(1, BOOL), (F32, I32),
     differentiable=True, linear_in=(1,))
spec("select_n_int32_3", P.select_n_p, {}, _select_args(3, I32), (F32, I32, BOOL, C64),
     differentiable=True, linear_in=(1, 2, 3))
spec("select_n_uint8_4", P.select_n_p, {}, _select_args(4, U8), (F32, F16),
     differentiable=True, linear_in=(1, 2, 3, 4))
spec("select_n_scalar_pred", P.select_n_p, {}, _select_args(2, BOOL, scalar_pred=True),
     (F32, I32), shapes=NONSCALAR, differentiable=True, linear_in=(1, 2))
spec("select_n_scalar_int_pred", P.select_n_p, {}, _select_args(3, I32, scalar_pred=True),
     (F32,), shapes=NONSCALAR, differentiable=True, linear_in=(1, 2, 3))


def _clamp_args(scalar_bounds: bool) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        bs = () if scalar_bounds else s
        lo = rand(rng, d, bs, -2, 0)
        hi = np.asarray(lo + rand(rng, d, bs, 0, 3)).astype(d)
        return [lo, rand(rng, d, s, -5, 5), hi]
    return make


spec("clamp", P.clamp_p, {}, _clamp_args(False), ORDERED, differentiable=True)
spec("clamp_scalar_bounds", P.clamp_p, {}, _clamp_args(True), ORDERED, shapes=NONSCALAR,
     differentiable=True)
special_spec("clamp", P.clamp_p, {}, (F32, I8), n=3)

# -- convert_element_type --------------------------------------------------------------------


def _convert_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    """Mostly in-range values, some far out of range, and edge values when there is room."""
    if d.kind in "iu" or d == BOOL:
        x = rand(rng, d, s, -1e9, 1e9)
    elif d.kind == "c":
        x = rand(rng, d, s, -300, 300)
    else:
        small = rng.uniform(-300, 300, s)
        big = rng.uniform(-1e10, 1e10, s)
        with np.errstate(over="ignore"):  # to float16: infinities are fine inputs too
            x = np.asarray(np.where(rng.random(s) < 0.7, small, big)).astype(d)
    flat = np.array(x).reshape(-1)
    sp = specials(d)
    k = min(flat.size // 2, sp.size)
    if k:
        flat[rng.choice(flat.size, k, replace=False)] = rng.choice(sp, k, replace=False)
    return [flat.reshape(s)]


def _convert(new: DType, weak: bool = False) -> Mapping[str, Any]:
    return {"new_dtype": new, "weak_type": weak, "sharding": None}


for _name, _new, _from, _diff in [
    ("convert_to_float32", F32, (F32, F16, BF16), True),
    ("convert_to_float16", F16, (F32, BF16, F16), True),
    ("convert_to_bfloat16", BF16, (F32, F16), True),
    ("convert_to_complex64", C64, (F32, C64), True),
    ("convert_complex_to_float32", F32, (C64,), True),
    ("convert_int_to_float32", F32, (I32, I8, U8, U32, BOOL), False),
    ("convert_int_to_bfloat16", BF16, (I32, U8, U32, BOOL), False),
    ("convert_int_to_float16", F16, (I32, I16, U32), False),
    ("convert_to_int32", I32, (F32, F16, BF16, I8, U8, U32, BOOL, C64), False),
    ("convert_to_uint8", U8, (F32, F16, BF16, I32, I8, BOOL), False),
    ("convert_to_int8", I8, (F32, F16, BF16, I32, U8), False),
    ("convert_to_uint32", U32, (F32, I32, I8), False),
    ("convert_to_int16", I16, (F32, BF16, I32), False),
    ("convert_to_bool", BOOL, (F32, F16, BF16, I32, U8, C64), False),
]:
    spec(_name, P.convert_element_type_p, _convert(_new), _convert_args, _from,
         shapes=SHAPES + ((40,),), differentiable=_diff, linear_in=(0,) if _diff else ())
spec("convert_weak_type", P.convert_element_type_p, _convert(F32, weak=True), _uniform(),
     (F32, I32), differentiable=False)

# -- reductions -----------------------------------------------------------------------------


def _axes(which: str) -> ParamsFn:
    def params(d: DType, s: Shape) -> dict[str, Any]:
        n = len(s)
        axes = {"all": tuple(range(n)), "first": (0,) if n else (), "none": (),
                "last": (n - 1,) if n else (), "outer": (0, n - 1) if n > 1 else tuple(range(n))}
        return {"axes": axes[which]}
    return params


def _with(fn: ParamsFn, **extra: Any) -> ParamsFn:
    return lambda d, s: {**fn(d, s), **extra}


for _which in ["all", "last", "outer", "none"]:
    spec(f"reduce_sum_{_which}", P.reduce_sum_p, _with(_axes(_which), out_sharding=None),
         _uniform(-3, 3), NUM, shapes=WITH_EMPTY, tol=8, differentiable=True, linear_in=(0,))
spec("reduce_prod_all", P.reduce_prod_p, _axes("all"), _uniform(0.5, 1.5),
     (F32, I32, F16, C64, U8), shapes=WITH_EMPTY, tol=8, differentiable=True)
spec("reduce_prod_outer", P.reduce_prod_p, _axes("outer"), _uniform(-2, 2),
     (F32, I32, I8, BF16), shapes=WITH_EMPTY, tol=8, differentiable=True)
for _p in [P.reduce_max_p, P.reduce_min_p]:
    for _which in ["all", "outer"]:
        spec(f"{_p.name}_{_which}", _p, _axes(_which), _uniform(-5, 5),
             ORDERED + (I8, C64), shapes=WITH_EMPTY, differentiable=True)
    spec(f"{_p.name}_ties", _p, _axes("last"), _ties(1), (F32, I32), shapes=NONSCALAR)
    special_spec(_p.name, _p, _axes("all"), (F32, I8))
for _p in [P.reduce_and_p, P.reduce_or_p, P.reduce_xor_p]:
    for _which in ["all", "outer"]:
        spec(f"{_p.name}_{_which}", _p, _axes(_which), _uniform(-100, 100),
             BOOL_INT + (U32,), shapes=WITH_EMPTY)


def _argminmax_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [ints_as(rng, d, s, -3, 3) if rng.random() < 0.5 else rand(rng, d, s)]


_idx: np.dtype[Any]
_index_choices: list[tuple[str, np.dtype[Any]]] = [("first", I32), ("last", U8)]
for _p in [P.argmax_p, P.argmin_p]:
    for _which, _idx in _index_choices:
        spec(f"{_p.name}_{_which}_{_idx.name}", _p, _with(_axes(_which), index_dtype=_idx),
             _argminmax_args, ORDERED + (I8,), shapes=NONSCALAR + ((1,), (2, 7)))
    special_spec(_p.name, _p, {"axes": (0,), "index_dtype": I32}, (F32, F16, I8))


def _nan_rows(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    """Rows with ties, NaNs (some all-NaN), infinities and signed zeros."""
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1.0, 0.0])
    return [np.asarray(rng.choice(pool, s)).astype(d)]


for _p in [P.argmax_p, P.argmin_p]:
    spec(f"{_p.name}_nan_ties", _p, _with(_axes("last"), index_dtype=I32), _nan_rows,
         FLOATS, shapes=((40, 3), (6, 5, 2)))

# -- cumulative reductions ---------------------------------------------------------------------


def _cum(which: str, reverse: bool) -> ParamsFn:
    return lambda d, s: {"axis": 0 if which == "first" else len(s) - 1, "reverse": reverse}


for _p, _maker, _dts, _lin in [
    (P.cumsum_p, _uniform(-3, 3), NUM, (0,)),
    (P.cumprod_p, _uniform(0.6, 1.5), (F32, I32, F16, C64, U8), ()),
    (P.cummax_p, _uniform(-5, 5), NUM, ()),
    (P.cummin_p, _uniform(-5, 5), NUM, ()),
]:
    for _which, _rev in [("first", False), ("last", True)]:
        spec(f"{_p.name}_{_which}{'_reverse' if _rev else ''}", _p, _cum(_which, _rev), _maker,
             _dts, shapes=NONSCALAR + ((3, 0),), tol=8, differentiable=True, linear_in=_lin)
for _p in [P.cummax_p, P.cummin_p, P.cumsum_p]:
    spec(f"{_p.name}_nan", _p, _cum("last", False), _nan_rows, (F32, F16), shapes=((4, 6),))

# -- sort -----------------------------------------------------------------------------------


def _dim(which: str) -> Callable[[Shape], int]:
    return lambda s: 0 if which == "first" else len(s) - 1


def _sort_params(which: str, num_keys: int = 1, stable: bool = True) -> ParamsFn:
    return lambda d, s: {"dimension": _dim(which)(s), "is_stable": stable, "num_keys": num_keys}


def _sort_args(n_keys: int, n_payload: int, ties: bool) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        keys = [ints_as(rng, d, s, -2, 2) if ties else rand(rng, d, s, -5, 5)
                for _ in range(n_keys)]
        payload = [np.arange(int(np.prod(s)), dtype=np.int32).reshape(s)] * n_payload
        if n_payload > 1:
            payload[1] = rand(rng, F32, s)
        return keys + payload
    return make


for _which in ["first", "last"]:
    spec(f"sort_{_which}", P.sort_p, _sort_params(_which), _sort_args(1, 0, False),
         ORDERED + (I8,), shapes=NONSCALAR, differentiable=True)
    spec(f"sort_{_which}_payload", P.sort_p, _sort_params(_which), _sort_args(1, 2, True),
         ORDERED, shapes=NONSCALAR, differentiable=True, linear_in=(1, 2))
spec("sort_num_keys_2", P.sort_p, _sort_params("last", 2), _sort_args(2, 1, True),
     (F32, I32, BOOL, U8), shapes=NONSCALAR + ((3, 0),), differentiable=True)
spec("sort_num_keys_2_of_2", P.sort_p, _sort_params("first", 2), _sort_args(2, 0, True),
     (F32, I32), shapes=NONSCALAR, differentiable=True)
spec("sort_complex", P.sort_p, _sort_params("last", 1), lambda rng, d, s: [
    (ints_as(rng, np.dtype(np.float32), s) + 1j * ints_as(rng, np.dtype(np.float32), s)).astype(d),
    np.arange(math.prod(s), dtype=np.int32).reshape(s)], (C64,), shapes=NONSCALAR,
     differentiable=True, linear_in=(1,))
spec("sort_unstable", P.sort_p, _sort_params("last", 1, stable=False), _sort_args(1, 1, False),
     (F32, F16), shapes=NONSCALAR, differentiable=True)


def _sort_nan_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    key = _nan_rows(rng, d, s)[0]
    flat = key.reshape(-1)
    flat[rng.random(flat.size) < 0.15] = -np.nan  # sign bit set: still sorted last by XLA
    return [flat.reshape(s), np.arange(flat.size, dtype=np.int32).reshape(s)]


spec("sort_nan", P.sort_p, _sort_params("last"), _sort_nan_args, FLOATS,
     shapes=((40,), (3, 9)))
spec("sort_nan_keys_2", P.sort_p, _sort_params("last", 2),
     lambda rng, d, s: _sort_nan_args(rng, d, s)[:1] + _nan_rows(rng, d, s)
     + _sort_nan_args(rng, d, s)[1:], (F32,), shapes=((60,),))

# -- dot_general ------------------------------------------------------------------------------


def _dot_dims(s: Shape) -> tuple[Shape, Shape, Any]:
    """Operand shapes and dimension numbers for a case shape: scalar product,
    inner product, and batched matmul contracting a middle dimension."""
    if len(s) == 0:
        return (), (), (((), ()), ((), ()))
    if len(s) == 1:
        return s, s, (((0,), (0,)), ((), ()))
    if len(s) == 2:
        return s, (s[1], 3), (((1,), (0,)), ((), ()))
    b, m, k = s
    return s, (b, 5, k), (((2,), (2,)), ((0,), (0,)))


def _dot_params(pref: DType | None = None, precision: Any = None) -> ParamsFn:
    return lambda d, s: {"dimension_numbers": _dot_dims(s)[2], "precision": precision,
                         "preferred_element_type": pref, "out_sharding": None}


def _jax_dot(x: Any, y: Any, *, precision: Any, **params: Any) -> Any:
    jp = None if precision is None else tuple(lax.Precision(int(p)) for p in precision)
    return lax.dot_general_p.bind(x, y, precision=jp, **params)


def _dot_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    ls, rs, _ = _dot_dims(s)
    return [rand(rng, d, ls, -3, 3), rand(rng, d, rs, -3, 3)]


spec("dot_general", P.dot_general_p, _dot_params(), _dot_args,
     (F32, I32, I8, F16, BF16, C64, BOOL),
     shapes=SHAPES + ((4, 6), (3, 0)), tol=8, differentiable=True, linear_in=(0, 1),
     multilinear=True)
spec("dot_general_preferred_f32", P.dot_general_p, _dot_params(F32), _dot_args, (F16, BF16),
     shapes=((4, 6), (2, 3, 4)), tol=8, differentiable=True, linear_in=(0, 1), multilinear=True)
spec("dot_general_preferred_i32", P.dot_general_p, _dot_params(I32), _dot_args, (I8, U8, I16),
     shapes=((4, 6), (2, 3, 4)))
spec("dot_general_precision", P.dot_general_p,
     _dot_params(precision=(P.Precision.HIGHEST, P.Precision.HIGH)), _dot_args, (F32, F16),
     shapes=((4, 6), (2, 3, 4)), jax_fn=_jax_dot, tol=8, differentiable=True,
     linear_in=(0, 1), multilinear=True)


def _dot_multi_params(d: DType, s: Shape) -> dict[str, Any]:
    return {"dimension_numbers": (((0, 2), (2, 1)), ((), ())), "precision": None,
            "preferred_element_type": None, "out_sharding": None}


spec("dot_general_two_contracting", P.dot_general_p, _dot_multi_params,
     lambda rng, d, s: [rand(rng, d, (3, 2, 4)), rand(rng, d, (5, 4, 3))], (F32, I32),
     shapes=((3, 2, 4),), tol=8, differentiable=True, linear_in=(0, 1), multilinear=True)
spec("dot_general_outer", P.dot_general_p, lambda d, s: {
    "dimension_numbers": (((), ()), ((), ())), "precision": None,
    "preferred_element_type": None, "out_sharding": None},
     lambda rng, d, s: [rand(rng, d, (4,)), rand(rng, d, (2, 3))], (F32, I32),
     shapes=((4,),), differentiable=True, linear_in=(0, 1), multilinear=True)

# -- structural -------------------------------------------------------------------------------

_STRUCT = ALL


def _bcast_params(d: DType, s: Shape) -> dict[str, Any]:
    return {"shape": (3,) + s, "broadcast_dimensions": tuple(range(1, len(s) + 1)),
            "sharding": None}


def _bcast_expand_params(d: DType, s: Shape) -> dict[str, Any]:
    # Operand dimension 0 has size 1 and is stretched; a new dimension goes in the middle.
    out = s[:1] + (2,) + s[1:] if s else (4,)
    dims = (0,) + tuple(range(2, len(s) + 1)) if s else ()
    return {"shape": out, "broadcast_dimensions": dims, "sharding": None}


spec("broadcast_in_dim", P.broadcast_in_dim_p, _bcast_params, _uniform(), _STRUCT,
     shapes=WITH_EMPTY, differentiable=True, linear_in=(0,))
spec("broadcast_in_dim_expand", P.broadcast_in_dim_p, _bcast_expand_params,
     lambda rng, d, s: [rand(rng, d, (1,) + s[1:] if s else ())], (F32, I32, BOOL),
     differentiable=True, linear_in=(0,))
spec("reshape", P.reshape_p, lambda d, s: {"new_sizes": s[::-1] + (1,), "dimensions": None,
                                           "sharding": None},
     _uniform(), _STRUCT, shapes=WITH_EMPTY, differentiable=True, linear_in=(0,))
spec("reshape_flatten", P.reshape_p, lambda d, s: {
    "new_sizes": (int(np.prod(s)),), "dimensions": None, "sharding": None},
     _uniform(), (F32, I32), shapes=WITH_EMPTY, differentiable=True, linear_in=(0,))
spec("reshape_dimensions", P.reshape_p, lambda d, s: {  # transposes first
    "new_sizes": (s[2] * s[1], s[0]), "dimensions": (2, 1, 0), "sharding": None},
     _uniform(), (F32, I32), shapes=((2, 3, 4),), differentiable=True, linear_in=(0,))
spec("transpose", P.transpose_p, lambda d, s: {"permutation": tuple(reversed(range(len(s))))},
     _uniform(), _STRUCT, shapes=WITH_EMPTY, differentiable=True, linear_in=(0,))
spec("transpose_rotate", P.transpose_p, {"permutation": (1, 2, 0)}, _uniform(), (F32, I32),
     shapes=((2, 3, 4),), differentiable=True, linear_in=(0,))
spec("squeeze", P.squeeze_p, lambda d, s: {"dimensions": (0, len(s) + 1)},
     lambda rng, d, s: [rand(rng, d, (1,) + s + (1,))], _STRUCT, differentiable=True,
     linear_in=(0,))
spec("squeeze_none", P.squeeze_p, {"dimensions": ()}, _uniform(), (F32,), differentiable=True,
     linear_in=(0,))
spec("rev", P.rev_p, lambda d, s: {"dimensions": (0,) if s else ()}, _uniform(), _STRUCT,
     shapes=WITH_EMPTY, differentiable=True, linear_in=(0,))
spec("rev_outer", P.rev_p, lambda d, s: {"dimensions": (0, len(s) - 1)}, _uniform(),
     (F32, I32), shapes=((2, 3, 4), (4, 5)), differentiable=True, linear_in=(0,))


def _concat_args(n: int) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        return [rand(rng, d, (k,) + s[1:]) for k in [s[0], 2, 0, 1][:n]]
    return make


spec("concatenate", P.concatenate_p, {"dimension": 0}, _concat_args(3), _STRUCT,
     shapes=NONSCALAR, differentiable=True, linear_in=(0, 1, 2))
spec("concatenate_one", P.concatenate_p, {"dimension": 0}, _concat_args(1), (F32,),
     shapes=NONSCALAR, differentiable=True, linear_in=(0,))
spec("concatenate_last", P.concatenate_p, {"dimension": 2},
     lambda rng, d, s: [rand(rng, d, (2, 3, k)) for k in (4, 1, 2, 0)], (F32, I32, BOOL),
     shapes=((2, 3, 4),), differentiable=True, linear_in=(0, 1, 2, 3))


def _split_params(d: DType, s: Shape) -> dict[str, Any]:
    n = s[0] if s else 0
    return {"sizes": (1, n - 3, 0, 2) if n >= 3 else (n,), "axis": 0}


spec("split", P.split_p, _split_params, _uniform(), _STRUCT, shapes=NONSCALAR + ((3, 0),),
     differentiable=True, linear_in=(0,))
spec("split_last", P.split_p, lambda d, s: {"sizes": (2, 1, 1), "axis": len(s) - 1},
     _uniform(), (F32, I32), shapes=((2, 3, 4), (4,)), differentiable=True, linear_in=(0,))
spec("stack", P.stack_p, {"axis": 0}, _uniform(n=3), _STRUCT, shapes=WITH_EMPTY,
     differentiable=True, linear_in=(0, 1, 2))
spec("stack_last", P.stack_p, lambda d, s: {"axis": len(s)}, _uniform(n=2), (F32, BOOL),
     differentiable=True, linear_in=(0, 1))
spec("unstack", P.unstack_p, {"axis": 0}, _uniform(), _STRUCT, shapes=NONSCALAR + ((3, 0),),
     differentiable=True, linear_in=(0,))
spec("unstack_last", P.unstack_p, lambda d, s: {"axis": len(s) - 1}, _uniform(), (F32,),
     shapes=((2, 3, 4),), differentiable=True, linear_in=(0,))
spec("tile", P.tile_p, lambda d, s: {"reps": tuple((2, 1, 3, 0)[:len(s)])}, _uniform(),
     _STRUCT, shapes=WITH_EMPTY, differentiable=True, linear_in=(0,))


def _pad_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [rand(rng, d, s), rand(rng, d, (), -9, 9)]


def _pad_params(configs: Sequence[tuple[int, int, int]]) -> ParamsFn:
    return lambda d, s: {"padding_config": tuple(configs[i % len(configs)] for i in range(len(s)))}


for _name, _cfg in [("pad", [(1, 2, 0)]), ("pad_interior", [(0, 0, 2), (1, 0, 1)]),
                    ("pad_negative", [(-1, 2, 0), (2, -3, 0)]),
                    ("pad_negative_interior", [(-2, -1, 2), (-1, 1, 1), (-3, -4, 3)])]:
    spec(_name, P.pad_p, _pad_params(_cfg), _pad_args, _STRUCT,
         shapes=((), (5,), (2, 3, 4), (6, 7, 5)), differentiable=True, linear_in=(0, 1))
spec("pad_negative_to_empty", P.pad_p, lambda d, s: {
    "padding_config": tuple((-(n // 2), n // 2 - n, 0) for n in s)}, _pad_args, (F32, I32),
     shapes=((5,), (2, 3, 4)), differentiable=True, linear_in=(0, 1))
spec("pad_empty", P.pad_p, _pad_params([(1, 1, 2)]), _pad_args, (F32,), shapes=((3, 0), (0,)),
     differentiable=True, linear_in=(0, 1))


def _slice_params(strided: bool) -> ParamsFn:
    def params(d: DType, s: Shape) -> dict[str, Any]:
        start = tuple(min(1, n) for n in s)
        limit = tuple(n - (1 if n > 2 else 0) for n in s)
        strides = tuple(2 if i % 2 == 0 else 1 for i in range(len(s))) if strided else None
        return {"start_indices": start, "limit_indices": limit, "strides": strides}
    return params


spec("slice", P.slice_p, _slice_params(False), _uniform(), _STRUCT, shapes=WITH_EMPTY,
     differentiable=True, linear_in=(0,))
spec("slice_strided", P.slice_p, _slice_params(True), _uniform(), _STRUCT,
     shapes=WITH_EMPTY + ((9, 8, 7),), differentiable=True, linear_in=(0,))
spec("slice_stride_3", P.slice_p, {"start_indices": (2, 0), "limit_indices": (9, 4),
                                   "strides": (3, 5)}, _uniform(), (F32,), shapes=((10, 4),),
     differentiable=True, linear_in=(0,))


def _ds_sizes(s: Shape) -> Shape:
    return tuple(max(n - 2, 0) if i % 2 == 0 else n for i, n in enumerate(s))


def _start_indices(rng: np.random.Generator, s: Shape, sizes: Shape,
                   idx: DType) -> list[np.ndarray]:
    out = []
    for n in s[:len(sizes)]:
        lo, hi = (-4, n + 4) if np.dtype(idx).kind == "i" else (0, n + 4)
        out.append(np.asarray(rng.integers(lo, hi, endpoint=True)).astype(idx))
    return out


def _ds_args(idx: DType) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        return [rand(rng, d, s)] + _start_indices(rng, s, _ds_sizes(s), idx)
    return make


def _dus_args(idx: DType) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        sizes = _ds_sizes(s)
        return [rand(rng, d, s), rand(rng, d, sizes, 10, 20)] + _start_indices(rng, s, sizes, idx)
    return make


for _which, _idx in _index_choices:
    _sfx = "" if _idx == I32 else f"_{_idx.name}_indices"
    spec(f"dynamic_slice{_sfx}", P.dynamic_slice_p, lambda d, s: {"slice_sizes": _ds_sizes(s)},
         _ds_args(_idx), _STRUCT if _idx == I32 else (F32,),
         shapes=WITH_EMPTY + ((6, 5, 4),) if _idx == I32 else NONSCALAR + ((6, 5, 4),),
         differentiable=True, linear_in=(0,))
    spec(f"dynamic_update_slice{_sfx}", P.dynamic_update_slice_p, {}, _dus_args(_idx),
         _STRUCT if _idx == I32 else (F32,),
         shapes=WITH_EMPTY + ((6, 5, 4),) if _idx == I32 else NONSCALAR + ((6, 5, 4),),
         differentiable=True, linear_in=(0, 1))


def _far_starts(rng: np.random.Generator, d: DType, s: Shape) -> list[Any]:
    # Extreme start indices, clamped as well.
    x = rand(rng, d, s)
    return [x, np.int32(np.iinfo(np.int32).max), np.int32(np.iinfo(np.int32).min)]


spec("dynamic_slice_extreme_indices", P.dynamic_slice_p, {"slice_sizes": (2, 3)}, _far_starts,
     (F32,), shapes=((5, 6),))
spec("dynamic_slice_full", P.dynamic_slice_p, lambda d, s: {"slice_sizes": s},
     lambda rng, d, s: [rand(rng, d, s)] + [np.int32(3)] * len(s), (F32,), shapes=NONSCALAR)

spec("iota", P.iota_p, lambda d, s: {"dtype": d, "shape": s, "dimension": len(s) - 1,
                                     "sharding": None},
     lambda rng, d, s: [], (I32, F32, U8, I8, F16, BF16, C64),
     shapes=((5,), (2, 3, 4), (300,), (0, 2)))
spec("empty", P.empty_p, lambda d, s: {"dtype": d, "shape": s, "out_sharding": None},
     lambda rng, d, s: [], (F32, I32, BOOL, C64), shapes=((5,), (2, 3, 4), (0, 2)),
     jax_fn=lambda **p: lax.empty(p["shape"], p["dtype"]))
spec("platform_index", P.platform_index_p,
     {"platforms": (("tpu",), ("cpu", "cuda"), None)}, lambda rng, d, s: [], (I32,), shapes=((),),
     jax_fn=lambda **p: jax_conditionals.platform_index_p.bind(**p))
spec("platform_index_default", P.platform_index_p, {"platforms": (("tpu",), None)},
     lambda rng, d, s: [], (I32,), shapes=((),),
     jax_fn=lambda **p: jax_conditionals.platform_index_p.bind(**p))
spec("iota_first", P.iota_p, lambda d, s: {"dtype": d, "shape": s, "dimension": 0,
                                           "sharding": None},
     lambda rng, d, s: [], (I32, F32), shapes=((2, 3, 4),))

# -- gather and scatter -----------------------------------------------------------------------
# Case shape (5,): rows of a vector.  Case shape (2, 3, 4): index vectors into
# dimensions (0, 2) with a (1, 2, 2) window (gather), or scatters into dimension 1
# of windows (2, 4).

_GDN_1 = P.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
_GDN_3 = P.GatherDimensionNumbers(offset_dims=(2, 3), collapsed_slice_dims=(0,),
                                  start_index_map=(0, 2))
_SDN_1 = P.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
_SDN_3 = P.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(1,),
                                   scatter_dims_to_operand_dims=(1,))
_MODES = {m.name: m for m in P.GatherScatterMode}


def _gather_params(mode: str, fill: Any = None) -> ParamsFn:
    def make(d: DType, s: Shape) -> dict[str, Any]:
        one = len(s) == 1
        return {"dimension_numbers": _GDN_1 if one else _GDN_3,
                "slice_sizes": (1,) if one else (1, 2, 2), "indices_are_sorted": False,
                "unique_indices": False, "mode": _MODES[mode],
                "fill_value": fill if mode == "FILL_OR_DROP" else None}
    return make


def _gather_args(lo: int, hi: int, idx: DType = I32) -> ArgMaker:
    # Starts drawn from [lo, size - window + hi]: hi > 0 or lo < 0 reaches out of bounds.
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        if len(s) == 1:
            i = rng.integers(lo, s[0] + hi, size=(3, 1))
        else:
            i = np.stack([rng.integers(lo, 2 + hi, size=(2, 2)),
                          rng.integers(lo, 3 + hi, size=(2, 2))], -1)
        return [rand(rng, d, s), i.astype(idx)]
    return make


def _jax_gather(x: Any, i: Any, *, dimension_numbers: Any, mode: Any, **kw: Any) -> Any:
    return lax.gather(x, i, lax.GatherDimensionNumbers(*dimension_numbers),
                      mode=lax.GatherScatterMode(mode.value), **kw)


# A fill value makes the gather affine, not linear; out-of-bounds promises break the
# transpose (JAX: "gradients will not be correct").
for _mode, _lo, _hi, _lin in [("PROMISE_IN_BOUNDS", 0, 0, (0,)), ("CLIP", -3, 3, (0,)),
                              ("FILL_OR_DROP", -3, 3, ()), ("PROMISE_IN_BOUNDS", -3, 3, ())]:
    _sfx = "" if _hi == 0 else f"_{_mode.lower()}_out_of_bounds"
    spec(f"gather{_sfx}", P.gather_p, _gather_params(_mode, 0.5 if _hi else None),
         _gather_args(_lo, _hi), ALL if _hi == 0 else (F32, I32, BOOL), shapes=NONSCALAR,
         jax_fn=_jax_gather, differentiable=_mode != "PROMISE_IN_BOUNDS" or not _hi,
         linear_in=_lin)
spec("gather_fill_zero", P.gather_p, _gather_params("FILL_OR_DROP", 0), _gather_args(-3, 3),
     (F32,), shapes=NONSCALAR, jax_fn=_jax_gather, differentiable=True, linear_in=(0,))
spec("gather_fill_default", P.gather_p, _gather_params("FILL_OR_DROP"), _gather_args(-3, 3),
     (F32, I8, U8, BOOL), shapes=NONSCALAR, jax_fn=_jax_gather)
spec("gather_uint8_indices", P.gather_p, _gather_params("CLIP"), _gather_args(0, 3, U8), (F32,),
     shapes=NONSCALAR, jax_fn=_jax_gather, differentiable=True, linear_in=(0,))


def _scatter_params(prim: Primitive, mode: str, unique: bool = False) -> ParamsFn:
    def make(d: DType, s: Shape) -> dict[str, Any]:
        return {"dimension_numbers": _SDN_1 if len(s) == 1 else _SDN_3,
                "indices_are_sorted": False, "unique_indices": unique, "mode": _MODES[mode],
                "update_jaxpr": combiner_jaxpr(prim, d), "update_consts": ()}
    return make


def _scatter_args(lo: int, hi: int, unique: bool) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        n = s[0] if len(s) == 1 else s[1]
        if unique:
            i = rng.permutation(n)[:3]
        else:
            i = rng.integers(lo, n + hi, size=3)
        ushape = (3,) if len(s) == 1 else (3, 2, 4)
        return [rand(rng, d, s), i.astype(np.int32)[:, None], rand(rng, d, ushape)]
    return make


def _jax_scatter(name: str) -> Callable[..., Any]:
    def run(x: Any, i: Any, u: Any, *, dimension_numbers: Any, mode: Any, update_jaxpr: Any,
            update_consts: Any, **kw: Any) -> Any:
        return getattr(lax, name)(x, i, u, lax.ScatterDimensionNumbers(*dimension_numbers),
                                  mode=lax.GatherScatterMode(mode.value), **kw)
    return run


_SCATTER_SPECS = [
    ("scatter", P.scatter_p, ALL, True, (0, 2)),
    ("scatter_add", P.scatter_add_p, NUM, False, (0, 2)),
    ("scatter_sub", P.scatter_sub_p, NUM, False, (0, 2)),
    ("scatter_mul", P.scatter_mul_p, NUM, True, (0,)),
    ("scatter_min", P.scatter_min_p, ORDERED, False, ()),
    ("scatter_max", P.scatter_max_p, ORDERED, False, ()),
]
for _name, _prim, _dtypes, _unique, _linear in _SCATTER_SPECS:
    spec(_name, _prim, _scatter_params(_prim, "FILL_OR_DROP", _unique),
         _scatter_args(0, 0, _unique), _dtypes, shapes=NONSCALAR, jax_fn=_jax_scatter(_name),
         differentiable=True, linear_in=_linear)
    if not _unique:
        for _mode in ("FILL_OR_DROP", "CLIP"):
            spec(f"{_name}_{_mode.lower()}_out_of_bounds", _prim, _scatter_params(_prim, _mode),
                 _scatter_args(-4, 4, False), (F32, I32), shapes=NONSCALAR,
                 jax_fn=_jax_scatter(_name), linear_in=_linear,
                 differentiable=_prim in (P.scatter_add_p, P.scatter_sub_p))
spec("scatter_repeated_indices", P.scatter_p, _scatter_params(P.scatter_p, "FILL_OR_DROP"),
     _scatter_args(0, 0, False), (F32,), shapes=NONSCALAR, jax_fn=_jax_scatter("scatter"),
     differentiable=True)



# -- top_k ---------------------------------------------------------------------------------


def _top_k_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    # Distinct values (ties are exercised by the lax tests): derivatives are well defined.
    n = math.prod(s)
    return [(rng.permutation(n).reshape(s) % 120).astype(d) if d.kind in "iub"
            else (rng.permutation(n).reshape(s) * 0.25 - 3).astype(d)]


def _top_k_params(which: str) -> ParamsFn:
    return lambda d, s: {"k": min(2, s[_dim(which)(s)]), "axis": _dim(which)(s)}


for _axis in ("first", "last"):
    spec(f"top_k_{_axis}", P.top_k_p, _top_k_params(_axis), _top_k_args, (F32, I32, U8, F16),
         shapes=NONSCALAR,
         jax_fn=lambda x, k, axis: lax.top_k(x, k, axis=axis), differentiable=True)


def _approx_params(which: str, is_max_k: bool) -> ParamsFn:
    def make(d: DType, s: Shape) -> dict[str, Any]:
        dim = _dim(which)(s)
        return {"k": min(2, s[dim]), "reduction_dimension": dim - len(s) if dim else dim,
                "recall_target": 0.95, "is_max_k": is_max_k,
                "reduction_input_size_override": -1, "aggregate_to_topk": True}
    return make


def _jax_approx(x: Any, k: int, reduction_dimension: int, recall_target: float,
                is_max_k: bool, reduction_input_size_override: int,
                aggregate_to_topk: bool) -> Any:
    fn = lax.approx_max_k if is_max_k else lax.approx_min_k
    return tuple(fn(x, k, reduction_dimension, recall_target, reduction_input_size_override,
                    aggregate_to_topk))


for _axis in ("first", "last"):
    for _max in (True, False):
        spec(f"approx_{'max' if _max else 'min'}_k_{_axis}", P.approx_top_k_p,
             _approx_params(_axis, _max), _top_k_args, (F32, F16, BF16), shapes=NONSCALAR,
             jax_fn=_jax_approx, differentiable=True)


# -- conv_general_dilated ---------------------------------------------------------------------
# Case shape (5,): a 1-d NCH convolution with input dilation and negative padding;
# (2, 3, 4): a 2-d NHWC one with strides, kernel dilation and two feature groups.


def _conv_params(d: DType, s: Shape) -> dict[str, Any]:
    common = {"precision": None, "preferred_element_type": None, "out_sharding": None,
              "batch_group_count": 1}
    if len(s) == 1:
        return {**common, "window_strides": (1,), "padding": ((1, -1),), "lhs_dilation": (2,),
                "rhs_dilation": (1,), "feature_group_count": 1,
                "dimension_numbers": P.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))}
    return {**common, "window_strides": (2, 1), "padding": ((1, 0), (0, 1)),
            "lhs_dilation": (1, 1), "rhs_dilation": (1, 2), "feature_group_count": 2,
            "dimension_numbers": P.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1),
                                                        (0, 3, 1, 2))}


def _conv_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    if len(s) == 1:
        return [rand(rng, d, (2, 3, s[0])), rand(rng, d, (4, 3, 2))]
    return [rand(rng, d, (2, 5, 6, 4)), rand(rng, d, (2, 2, 2, 6))]


def _jax_conv(x: Any, w: Any, *, dimension_numbers: Any, **kw: Any) -> Any:
    return lax.conv_general_dilated(x, w, dimension_numbers=lax.ConvDimensionNumbers(
        *dimension_numbers), **{k: v for k, v in kw.items() if k != "out_sharding"})


spec("conv_general_dilated", P.conv_general_dilated_p, _conv_params, _conv_args,
     (F32, F16, C64), shapes=NONSCALAR, jax_fn=_jax_conv, tol=32, differentiable=True,
     linear_in=(0, 1), multilinear=True)


# -- windowed reductions ----------------------------------------------------------------------
# Case shape (5,): a 1-d window of 3 with negative low padding; (2, 3, 4): a 2-d (3, 2)
# window over dimensions 1 and 2 with strides, SAME-like padding and both dilations.
# Operands hold distinct values, so that each window has one winner.


def _window_params(d: DType, s: Shape, base: bool = True,
                   window: bool = True) -> dict[str, Any]:
    """``base``/``window``: whether the 2-d case dilates the operand / the window (JAX has
    no reverse-mode derivative of max/min windows with window dilation; select_and_scatter
    has neither, nor negative padding)."""
    if len(s) == 1:  # negative padding, except where a derivative is taken
        return {"window_dimensions": (3,), "window_strides": (2,),
                "padding": ((-1, 2),) if window else ((1, 2),), "base_dilation": (1,),
                "window_dilation": (1,)}
    return {"window_dimensions": (1, 3, 2), "window_strides": (1, 2, 1),
            "padding": ((0, 0), (1, 1), (0, 1)), "base_dilation": (1, 2 if base else 1, 1),
            "window_dilation": (1, 1, 2 if window else 1)}


def _no_dilation(d: DType, s: Shape) -> dict[str, Any]:
    p = _window_params(d, s, False, False)
    del p["base_dilation"], p["window_dilation"]
    return p


def _distinct(rng: np.random.Generator, d: DType, s: Shape) -> np.ndarray:
    n = math.prod(s)
    if d == BOOL:
        return rng.random(s) > 0.5
    if d.kind in "iu":
        return (rng.permutation(n).reshape(s) % 100).astype(d)
    return (rng.permutation(n).reshape(s) * 0.25 - 3).astype(d)


def _window_out(s: Shape, **params: Any) -> Shape:
    return window_output_shape(s, params["window_dimensions"], params["window_strides"],
                                 params["padding"], params.get("base_dilation"),
                                 params.get("window_dilation"))


_W = importlib.import_module("jax._src.lax.windowed_reductions")


def _jax_reduce_window(op: Any, init: Any) -> Callable[..., Any]:
    def run(x: Any, **p: Any) -> Any:
        return lax.reduce_window(x, init(x.dtype), op, p["window_dimensions"],
                                 p["window_strides"], p["padding"], p["base_dilation"],
                                 p["window_dilation"])
    return run


def _window_identity(is_max: bool) -> Callable[[DType], Any]:
    def make(d: DType) -> Any:
        if d == BOOL:
            return np.bool_(not is_max)
        if d.kind in "iu":
            return np.iinfo(d).min if is_max else np.iinfo(d).max
        return np.array(-np.inf if is_max else np.inf, d)
    return make


spec("reduce_window_sum", P.reduce_window_sum_p, _window_params, _uniform(-3, 3), NUM,
     shapes=NONSCALAR, jax_fn=_bind_jax("reduce_window_sum"), tol=8, differentiable=True,
     linear_in=(0,))
for _p, _is_max in [(P.reduce_window_max_p, True), (P.reduce_window_min_p, False)]:
    spec(_p.name, _p, _window_params, lambda r, d, s: [_distinct(r, d, s)],
         (F32, I32, U8, BOOL, F16, BF16), shapes=NONSCALAR, jax_fn=_bind_jax(_p.name))
    spec(f"{_p.name}_grad", _p, lambda d, s: _window_params(d, s, window=False),
         lambda r, d, s: [_distinct(r, d, s)], (F32, F16), shapes=NONSCALAR,
         jax_fn=_bind_jax(_p.name), differentiable=True)
    spec(f"{_p.name}_special", _p, _window_params, _special_unary, (F32, I8, C64),
         shapes=((6,),), jax_fn=_jax_reduce_window(lax.max if _is_max else lax.min,
                                                   _window_identity(_is_max)))


def _mul_window_params(d: DType, s: Shape) -> dict[str, Any]:
    return {**_window_params(d, s), "jaxpr": combiner_jaxpr(P.scatter_mul_p, d), "consts": ()}


def _jax_mul_window(x: Any, init: Any, **p: Any) -> Any:
    return [lax.reduce_window(x, init, lax.mul, p["window_dimensions"], p["window_strides"],
                              p["padding"], p["base_dilation"], p["window_dilation"])]


spec("reduce_window_mul", P.reduce_window_p, _mul_window_params,
     lambda r, d, s: [rand(r, d, s, 0.5, 1.5), np.array(1, d)], (F32, I32, F16),
     shapes=NONSCALAR, jax_fn=_jax_mul_window, tol=8, unmapped=(1,))


def _reduce_mul_params(which: str) -> ParamsFn:
    def make(d: DType, s: Shape) -> dict[str, Any]:
        dims = (0,) if which == "first" else tuple(range(1, len(s)))
        mul = combiner_jaxpr(P.scatter_mul_p, d)
        assert mul is not None
        return {"jaxpr": ClosedJaxpr(mul), "dimensions": dims}
    return make


def _jax_reduce_mul(x: Any, init: Any, *, jaxpr: Any, dimensions: Any) -> Any:
    return [lax.reduce(x, init, lambda a, b: a * b, dimensions)]


for _which in ("first", "rest"):
    spec(f"reduce_mul_{_which}", P.reduce_p, _reduce_mul_params(_which),
         lambda r, d, s: [rand(r, d, s, 0.5, 1.5), np.array(1, d)], (F32, I32, F16),
         shapes=NONSCALAR + ((3, 0),), jax_fn=_jax_reduce_mul, tol=8, unmapped=(1,))
# (JAX differentiates reduce in its operands but not its init values, and these specs'
# derivatives are taken in all float operands: tests/frontend/test_windowed.py has them.)


def _pool_select_params(select: Primitive, scatter: bool) -> ParamsFn:
    if scatter:
        return lambda d, s: {**_no_dilation(d, s), "select_prim": select}
    return lambda d, s: {**_window_params(d, s, window=False), "select_prim": select}


def _pool_select_args(scatter: bool) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        x = _distinct(rng, d, s)
        shape = _window_out(s, **_no_dilation(d, s)) if scatter else s
        return [rand(rng, d, shape), x]
    return make


def _jax_pool_select(scatter: bool) -> Callable[..., Any]:
    def run(t: Any, x: Any, *, select_prim: Primitive, **p: Any) -> Any:
        jp = lax.ge_p if select_prim is P.ge_p else lax.le_p
        if scatter:
            return _W._select_and_scatter_add(t, x, jp, p["window_dimensions"],
                                              p["window_strides"], p["padding"])
        return _W._select_and_gather_add(t, x, jp, p["window_dimensions"], p["window_strides"],
                                         p["padding"], p["base_dilation"], p["window_dilation"])
    return run


for _sel in (P.ge_p, P.le_p):
    spec(f"select_and_gather_add_{_sel.name}", P.select_and_gather_add_p,
         _pool_select_params(_sel, False), _pool_select_args(False), (F32, F16), shapes=NONSCALAR,
         jax_fn=_jax_pool_select(False), differentiable=True, linear_in=(0,))
    spec(f"select_and_scatter_add_{_sel.name}", P.select_and_scatter_add_p,
         _pool_select_params(_sel, True), _pool_select_args(True), (F32, F16), shapes=NONSCALAR,
         jax_fn=_jax_pool_select(True), tol=4, differentiable=True, linear_in=(0,))
for _which, _rev in [("first", False), ("last", True)]:
    spec(f"cumlogsumexp_{_which}{'_reverse' if _rev else ''}", P.cumlogsumexp_p,
         _cum(_which, _rev), _uniform(-4, 4), (F32, F16, BF16, C64),
         shapes=NONSCALAR + ((3, 0),),
         tol=8, differentiable=True)


# -- jit ------------------------------------------------------------------------------------


def _jit_params(d: DType, s: Shape) -> dict[str, Any]:
    a = ShapedArray(s, d)
    x, y = Var(a), Var(a)
    b = Builder()
    t, = b.bind(P.sin_p, (x,), ACC)
    out, = b.bind(P.mul_p, (t, y), {"out_dtype": None})
    inner = ClosedJaxpr(b.build([x, y], [out, x]))
    return {"name": "f", "jaxpr": inner, "donated_invars": (False, False), "keep_unused": False,
            "inline": False}


spec("jit", P.jit_p, _jit_params, _uniform(-3, 3, 2), (F32, F16, C64), tol=2,
     jax_fn=lambda x, y, **_: jax.jit(lambda a, b: (lax.sin(a) * b, a))(x, y),
     differentiable=True)



# -- control flow, custom derivatives, remat -----------------------------------------------


def closed(fn: Callable[..., Sequence[Any]], *avals: ShapedArray) -> ClosedJaxpr:
    """A closed jaxpr built by ``fn(builder, *invars) -> outvars``."""
    invars = [Var(a) for a in avals]
    b = Builder()
    return ClosedJaxpr(b.build(invars, list(fn(b, *invars))))


def _emit(b: Builder, prim: Primitive, *xs: Any, **params: Any) -> Any:
    return b.bind1(prim, *xs, **params)


_MUL = {"out_dtype": None}


def _cond_branches(a: ShapedArray) -> tuple[ClosedJaxpr, ...]:
    return (
        closed(lambda b, x, y: [_emit(b, P.mul_p, x, y, **_MUL), _emit(b, P.add_p, x, y)], a, a),
        closed(lambda b, x, y: [_emit(b, P.sub_p, x, y), _emit(b, P.neg_p, x)], a, a),
        closed(lambda b, x, y: [y, x], a, a),
    )


def _jax_cond(index: Any, x: Any, y: Any) -> Any:
    # cond_p itself, not lax.switch: the wrapper clamps the index, the primitive runs
    # the last branch for any index out of range.
    fns = [lambda x, y: (x * y, x + y), lambda x, y: (x - y, -x), lambda x, y: (y, x)]
    structs = [jax.ShapeDtypeStruct(np.shape(v), v.dtype) for v in (x, y)]
    branches = tuple(jax.make_jaxpr(f)(*structs) for f in fns)
    return lax.cond_p.bind(index, x, y, branches=branches)


def _cond_args(indices: Sequence[int]) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[Any]:
        return [np.int32(rng.choice(indices)), rand(rng, d, s), rand(rng, d, s)]
    return make


# Out of range, XLA runs the last branch: a clamp would agree for too-large indices only.
for _name, _indices in [("cond", [0, 1, 2]), ("cond_negative_index", [-7, -1]),
                        ("cond_index_too_large", [3, 99])]:
    spec(_name, P.cond_p, lambda d, s: {"branches": _cond_branches(ShapedArray(s, d))},
         _cond_args(_indices), (F32, I32), shapes=((), (2, 3)),
         jax_fn=lambda i, x, y, **_: _jax_cond(i, x, y), differentiable=True)


def _while_params(d: DType, s: Shape) -> dict[str, Any]:
    i32, a = ShapedArray((), I32), ShapedArray(s, d)
    cond = closed(lambda b, bound, i, x: [_emit(b, P.lt_p, i, bound)], i32, i32, a)
    one = Literal(1, i32)
    body = closed(lambda b, c, i, x: [_emit(b, P.add_p, i, one), _emit(b, P.mul_p, x, c, **_MUL)],
                  a, i32, a)
    return {"cond_jaxpr": cond, "body_jaxpr": body, "cond_nconsts": 1, "body_nconsts": 1}


def _while_args(rng: np.random.Generator, d: DType, s: Shape) -> list[Any]:
    # bound, factor, i0, x0: x0 * factor**max(bound - i0, 0)
    return [np.int32(rng.integers(-1, 5)), rand(rng, d, s, -1.5, 1.5), np.int32(0), rand(rng, d, s)]


def _jax_while(bound: Any, c: Any, i: Any, x: Any, **_: Any) -> Any:
    return lax.while_loop(lambda st: st[0] < bound, lambda st: (st[0] + 1, st[1] * c), (i, x))


# Not `differentiable`: JAX differentiates while loops in forward mode only.
spec("while", P.while_p, _while_params, _while_args, (F32, I32), shapes=((), (2, 3)),
     jax_fn=_jax_while, tol=8)


def _scan_params(reverse: bool) -> ParamsFn:
    def params(d: DType, s: Shape) -> dict[str, Any]:
        a = ShapedArray(s, d)
        body = closed(lambda b, c, carry, x: [
            _emit(b, P.add_p, carry, _emit(b, P.mul_p, x, c, **_MUL)),
            _emit(b, P.mul_p, carry, x, **_MUL)], a, a, a)
        return {"jaxpr": body, "length": 4, "num_carry": 1, "num_consts": 1, "reverse": reverse,
                "unroll": 1}
    return params


def _jax_scan(c: Any, init: Any, xs: Any, *, reverse: bool, **_: Any) -> Any:
    carry, ys = lax.scan(lambda carry, x: (carry + x * c, carry * x), init, xs, reverse=reverse)
    return carry, ys


for _rev in (False, True):
    spec("scan_reverse" if _rev else "scan", P.scan_p, _scan_params(_rev),
         lambda rng, d, s: [rand(rng, d, s, -2, 2), rand(rng, d, s), rand(rng, d, (4,) + s)],
         (F32, I32), shapes=((), (2, 3)), jax_fn=_jax_scan, tol=8, differentiable=True)


@jax.custom_jvp
def _jax_custom_jvp_sin(x: Any) -> Any:
    return lax.sin(x)


@_jax_custom_jvp_sin.defjvp
def _jax_custom_jvp_sin_rule(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return lax.sin(x), t * x  # not the true derivative: tests can tell the rule was used


def _custom_jvp_params(d: DType, s: Shape) -> dict[str, Any]:
    a = ShapedArray(s, d)
    call = closed(lambda b, x: [_emit(b, P.sin_p, x, accuracy=None)], a)
    jvp = closed(lambda b, x, t: [_emit(b, P.sin_p, x, accuracy=None),
                                  _emit(b, P.mul_p, t, x, **_MUL)], a, a)
    return {"name": "f", "call_jaxpr": call, "jvp_jaxpr": jvp, "num_consts": 0,
            "symbolic_zeros": False}


spec("custom_jvp_call", P.custom_jvp_call_p, _custom_jvp_params, _uniform(), (F32, F16),
     jax_fn=lambda x, **_: [_jax_custom_jvp_sin(x)], tol=2, differentiable=True)


@jax.custom_vjp
def _jax_custom_vjp_sin(x: Any) -> Any:
    return lax.sin(x)


_jax_custom_vjp_sin.defvjp(lambda x: (lax.sin(x), x), lambda r, ct: (ct * r,))


def _custom_vjp_params(d: DType, s: Shape) -> dict[str, Any]:
    a = ShapedArray(s, d)
    call = closed(lambda b, x: [_emit(b, P.sin_p, x, accuracy=None)], a)
    fwd = closed(lambda b, x: [_emit(b, P.sin_p, x, accuracy=None), x], a)
    bwd = closed(lambda b, r, ct: [_emit(b, P.mul_p, ct, r, **_MUL)], a, a)
    return {"name": "f", "call_jaxpr": call, "fwd_jaxpr": fwd, "bwd_jaxpr": bwd,
            "num_consts": 0, "symbolic_zeros": False}


spec("custom_vjp_call", P.custom_vjp_call_p, _custom_vjp_params, _uniform(), (F32, F16),
     jax_fn=lambda x, **_: [_jax_custom_vjp_sin(x)], tol=2, differentiable=True)


def _custom_lin_params(d: DType, s: Shape) -> dict[str, Any]:
    a = ShapedArray(s, d)
    bwd = closed(lambda b, r, ct: [_emit(b, P.mul_p, ct, r, **_MUL)], a, a)
    return {"name": "f", "num_res": 1, "bwd_jaxpr": bwd, "fwd_lin_jaxpr": bwd}


# JAX's custom_lin is internal with other params; its value is the forward linear map.
spec("custom_lin", P.custom_lin_p, _custom_lin_params, _uniform(n=2), (F32, F16),
     jax_fn=lambda r, t, **_: [t * r], linear_in=(1,))


def _remat_params(d: DType, s: Shape) -> dict[str, Any]:
    a = ShapedArray(s, d)
    body = closed(lambda b, x, y: [_emit(b, P.mul_p, _emit(b, P.sin_p, x, accuracy=None), y,
                                         **_MUL)], a, a)
    return {"jaxpr": body, "prevent_cse": True, "differentiated": False, "policy": None}


spec("remat", P.remat_p, _remat_params, _uniform(n=2), (F32, F16),
     jax_fn=lambda x, y, **_: [jax.checkpoint(lambda x, y: lax.sin(x) * y)(x, y)], tol=2,
     differentiable=True)


def _linear_solve_params(d: DType, s: Shape) -> dict[str, Any]:
    a = ShapedArray(s, d)
    scale = closed(lambda b, c, x: [_emit(b, P.mul_p, c, x, **_MUL)], a, a)
    unscale = closed(lambda b, c, x: [_emit(b, P.div_p, x, c)], a, a)
    return {"const_lengths": P.LinearSolveTuple(1, 1, 1, 1),
            "jaxprs": P.LinearSolveTuple(scale, scale, unscale, unscale)}


def _jax_linear_solve(mv: Any, vm: Any, sv: Any, ts: Any, b: Any, **_: Any) -> list[Any]:
    # JAX's primitive bound with the same four jaxprs (its custom_linear_solve would
    # derive vecmat from matvec, leaving vm out of the program).
    scale = jax.make_jaxpr(lambda c, x: c * x)(mv, b)
    unscale = jax.make_jaxpr(lambda c, x: x / c)(mv, b)
    return list(jax_solves.linear_solve_p.bind(
        mv, vm, sv, ts, b, const_lengths=jax_solves._LinearSolveTuple(1, 1, 1, 1),
        jaxprs=jax_solves._LinearSolveTuple(scale, scale, unscale, unscale)))


# The derivative is implicit (through matvec's constants, never solve's): not the finite
# difference of the operation with its four constants moved separately, so the spec is not
# "differentiable"; tests/frontend/test_solves.py checks JVPs and gradients against JAX.
def _linear_solve_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    a, b = rand(rng, d, s, 0.5, 2), rand(rng, d, s, -3, 3)
    return [a, a, a, a, b]  # one operator, passed to each of the four functions


spec("custom_linear_solve", P.custom_linear_solve_p, _linear_solve_params,
     _linear_solve_args, (F32, F16), jax_fn=_jax_linear_solve, tol=1, linear_in=(4,))

# -- fft: each kind over one to three trailing dimensions; the inverse real transform of
# a spectrum of m frequencies has 2 (m - 1) points (even) in one spec, 2 m - 1 (odd) in another.
def _fft_params(fft_type: P.FftType, k: int, odd: bool = False) -> ParamsFn:
    def params(d: DType, s: Shape) -> dict[str, Any]:
        lengths = s[len(s) - k:]
        if fft_type == P.FftType.IRFFT:
            lengths = lengths[:-1] + (2 * lengths[-1] - (1 if odd else 2),)
        return {"fft_type": fft_type, "fft_lengths": lengths}
    return params


def _jax_fft(x: Any, fft_type: P.FftType, fft_lengths: tuple[int, ...]) -> Any:
    # JAX's rules want its own enum; its lax.fft is a jit (a call in the lowered module).
    return jax_fft.fft_p.bind(x, fft_type=lax.FftType(int(fft_type)), fft_lengths=fft_lengths)


_FFT_SHAPES = ((5,), (2, 3, 4), (3, 1, 6))
for _k in (1, 2, 3):
    spec(f"fft_{_k}d", P.fft_p, _fft_params(P.FftType.FFT, _k), _uniform(), (C64,),
         shapes=tuple(s for s in _FFT_SHAPES if len(s) >= _k), tol=8, differentiable=True,
         linear_in=(0,), jax_fn=_jax_fft)
    spec(f"ifft_{_k}d", P.fft_p, _fft_params(P.FftType.IFFT, _k), _uniform(), (C64,),
         shapes=tuple(s for s in _FFT_SHAPES if len(s) >= _k), tol=8, differentiable=True,
         linear_in=(0,), jax_fn=_jax_fft)
    spec(f"rfft_{_k}d", P.fft_p, _fft_params(P.FftType.RFFT, _k), _uniform(), (F32,),
         shapes=tuple(s for s in _FFT_SHAPES if len(s) >= _k), tol=8, differentiable=True,
         linear_in=(0,), jax_fn=_jax_fft)
    spec(f"irfft_{_k}d", P.fft_p, _fft_params(P.FftType.IRFFT, _k), _uniform(), (C64,),
         shapes=tuple(s for s in _FFT_SHAPES if len(s) >= _k), tol=8, differentiable=True,
         linear_in=(0,), jax_fn=_jax_fft)
spec("irfft_odd", P.fft_p, _fft_params(P.FftType.IRFFT, 1, odd=True), _uniform(), (C64,),
     shapes=((2, 4),), tol=8, differentiable=True, linear_in=(0,), jax_fn=_jax_fft)

# -- dense linear algebra (LAPACK custom calls) ---------------------------------------------
def _spd_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    a = rand(rng, d, s, -1, 1)
    n = s[-1]
    return [(a @ np.swapaxes(a.conj(), -1, -2) / n + np.eye(n)).astype(d)]


def _triangular_args(left_side: bool) -> ArgMaker:
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        m = s[-1]
        a = (0.3 * rand(rng, d, s, -1, 1) + 2 * np.eye(m)).astype(d)
        return [a, rand(rng, d, s[:-2] + ((m, 3) if left_side else (3, m)), -1, 1)]
    return make


_LINALG_SHAPES = ((3, 3), (2, 4, 4))
# JAX's cholesky derivative assumes symmetric tangents (finite differences of the raw
# factorization, which reads one triangle, differ): tests/frontend/test_lax_linalg.py
# checks its jvp and grad against JAX through lax.linalg.cholesky.
spec("cholesky", P.cholesky_p, {}, _spd_args, (F32, C64), shapes=_LINALG_SHAPES, tol=16,
     jax_fn=lambda x: lax.linalg.cholesky_p.bind(x))
for _name, _flags in [
        ("left_lower", (True, True, False, False, False)),
        ("right_upper_transposed", (False, False, True, False, False)),
        ("left_upper_adjoint_unit", (True, False, True, True, True)),
        ("right_lower_conjugate", (False, True, False, True, False))]:
    _kw = dict(zip(("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal"),
                   _flags))
    spec(f"triangular_solve_{_name}", P.triangular_solve_p, _kw,
         _triangular_args(_kw["left_side"]), (F32, C64), shapes=_LINALG_SHAPES, tol=16,
         differentiable=True, linear_in=(1,),
         jax_fn=lambda a, b, **kw: lax.linalg.triangular_solve_p.bind(a, b, **kw))


# -- matrix factorizations (LAPACK custom calls) ----------------------------------------------
def _matrix_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    return [rand(rng, d, s, -1, 1)]


def _hermitian_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    a = rand(rng, d, s, -1, 1)
    return [((a + np.swapaxes(a.conj(), -1, -2)) / 2).astype(d)]


def _pivots_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    # Row swaps as LU makes them: pivot i in [i, m), with m = s[-1] + 2.
    k, m = s[-1], s[-1] + 2
    if k == 0:
        return [np.zeros(s, np.int32)]
    return [np.stack([rng.integers(i, m, s[:-1]) for i in range(k)], -1).astype(np.int32)]


def _householder_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    x = rand(rng, d, s, -1, 1)
    x = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)  # (NumPy's dtypes)
    a, taus = np.linalg.qr(x, mode="raw")  # geqrf's, transposed
    return [np.ascontiguousarray(np.swapaxes(a, -1, -2)).astype(d), taus.astype(d)]


def _ormqr_args(left: bool) -> ArgMaker:
    """geqrf's reflectors of an ``[..., m, n]`` matrix and a ``c`` of ``m`` rows (``left``)
    or columns."""
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        a, taus = _householder_args(rng, d, s)
        m = s[-2]
        c_shape = s[:-2] + ((m, 3) if left else (2, m))
        return [a, taus, rand(rng, d, c_shape, -1, 1)]
    return make


_FACTOR_SHAPES = ((3, 3), (4, 2), (2, 4), (2, 3, 3))
_TALL_SHAPES = ((3, 3), (4, 2), (2, 4, 3))
# lu, qr and singular values: JAX's derivatives are the true ones (pivots and signs do not
# change near the drawn inputs).  eigh's derivative assumes Hermitian tangents and the
# singular vectors' depends on their phases: tests/frontend/test_lax_linalg_factorizations.py
# checks those against JAX through lax.linalg.
spec("lu", P.lu_p, {}, _matrix_args, (F32, C64), shapes=_FACTOR_SHAPES, tol=16,
     differentiable=True, jax_fn=lambda x: lax.linalg.lu_p.bind(x))
spec("lu_pivots_to_permutation", P.lu_pivots_to_permutation_p,
     lambda d, s: {"permutation_size": s[-1] + 2}, _pivots_args, (I32,),
     shapes=((3,), (2, 4), (0,)),
     jax_fn=lambda p, **kw: lax.linalg.lu_pivots_to_permutation_p.bind(p, **kw))
spec("geqrf", P.geqrf_p, {}, _matrix_args, (F32, C64), shapes=_FACTOR_SHAPES, tol=16,
     jax_fn=lambda x: jax_linalg.geqrf_p.bind(x))
spec("householder_product", P.householder_product_p, {}, _householder_args, (F32, C64),
     shapes=_TALL_SHAPES, tol=16,
     jax_fn=lambda a, t: lax.linalg.householder_product_p.bind(a, t))
for _left in (True, False):
    for _transpose in (True, False):
        spec(f"ormqr_{'left' if _left else 'right'}{'_t' if _transpose else ''}", P.ormqr_p,
             {"left": _left, "transpose": _transpose}, _ormqr_args(_left), (F32, C64),
             shapes=_FACTOR_SHAPES, tol=16,
             jax_fn=lambda a, t, c, **kw: lax.linalg.ormqr(a, t, c, **kw))
for _full in (True, False):
    spec(f"qr_{'full' if _full else 'reduced'}", P.qr_p,
         {"pivoting": False, "full_matrices": _full, "use_magma": None}, _matrix_args,
         (F32, C64), shapes=_FACTOR_SHAPES, tol=16, differentiable=True,
         jax_fn=lambda x, **kw: lax.linalg.qr_p.bind(x, **kw))


def _geqp3_args(fixed: bool) -> ArgMaker:
    """A matrix and jpvt: all columns free, or some (random ones) fixed at the front."""
    def make(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
        jpvt = rng.integers(0, 2, s[:-2] + s[-1:]) if fixed else np.zeros(s[:-2] + s[-1:])
        return [rand(rng, d, s, -1, 1), jpvt.astype(np.int32)]
    return make


# geqp3 has no derivative (nor in JAX).  qr with pivoting: JAX's derivative for wide
# matrices keeps the unpermuted x in R's tangent (wrong) and fails on batches of matrices;
# plait's is checked against finite differences in tests/frontend/test_qr_pivoting.py, so
# wide and batched shapes are values only here.  (jaxlib's geqp3 kernel crashes on empty
# matrices: no empty shapes for geqp3.)
for _fixed in (False, True):
    spec(f"geqp3{'_fixed_columns' if _fixed else ''}", P.geqp3_p, {"use_magma": None},
         _geqp3_args(_fixed), (F32, C64), shapes=_FACTOR_SHAPES, tol=16,
         jax_fn=lambda a, j, **kw: jax_linalg.geqp3_p.bind(a, j, **kw))
for _full in (True, False):
    spec(f"qr_pivoted_{'full' if _full else 'reduced'}", P.qr_p,
         {"pivoting": True, "full_matrices": _full, "use_magma": None}, _matrix_args,
         (F32, C64), shapes=((3, 3), (4, 2)), tol=16, differentiable=True,
         jax_fn=lambda x, **kw: lax.linalg.qr_p.bind(x, **kw))
spec("qr_pivoted_wide_and_empty", P.qr_p,
     {"pivoting": True, "full_matrices": True, "use_magma": None}, _matrix_args, (F32, C64),
     shapes=((2, 4), (2, 3, 5), (2, 4, 3), (0, 3), (3, 0), (2, 0, 2)), tol=16,
     jax_fn=lambda x, **kw: lax.linalg.qr_p.bind(x, **kw))
for _uv, _full in ((True, True), (True, False), (False, False)):
    spec(f"svd_empty{'_uv' if _uv else ''}{'_full' if _full else ''}", P.svd_p,
         {"full_matrices": _full, "compute_uv": _uv, "subset_by_index": None, "algorithm": None},
         _matrix_args, (F32, C64), shapes=((0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0)),
         jax_fn=lambda x, **kw: lax.linalg.svd_p.bind(x, **kw))
spec("eigh", P.eigh_p, {"lower": True, "sort_eigenvalues": True, "subset_by_index": None,
                        "algorithm": None}, _hermitian_args, (F32, C64),
     shapes=((3, 3), (2, 4, 4)), tol=16, jax_fn=lambda x, **kw: lax.linalg.eigh_p.bind(x, **kw))
spec("svd_values", P.svd_p, {"full_matrices": False, "compute_uv": False,
                             "subset_by_index": None, "algorithm": None}, _matrix_args,
     (F32, C64), shapes=_FACTOR_SHAPES, tol=16, differentiable=True,
     jax_fn=lambda x, **kw: lax.linalg.svd_p.bind(x, **kw))
spec("svd", P.svd_p, {"full_matrices": True, "compute_uv": True, "subset_by_index": None,
                      "algorithm": None}, _matrix_args, (F32, C64), shapes=_FACTOR_SHAPES,
     tol=16, jax_fn=lambda x, **kw: lax.linalg.svd_p.bind(x, **kw))


# -- eig and tridiagonal_solve (LAPACK custom calls) ------------------------------------------
# eig's eigenvalues have JAX's derivative, the true one for the distinct eigenvalues drawn;
# its eigenvectors' derivatives need enable_eigvec_derivs (and depend on LAPACK's phases):
# tests/frontend/test_linalg_eig.py checks those against JAX through lax.linalg.eig.
def _tridiagonal_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    # Diagonally dominant: no pivoting surprises, a well-conditioned solve.
    diags = s[:-1]
    d_main = (rand(rng, d, diags, -1, 1) + 4).astype(d)
    return [rand(rng, d, diags, -1, 1), d_main, rand(rng, d, diags, -1, 1),
            rand(rng, d, s, -1, 1)]


_EIG_SHAPES = ((3, 3), (2, 4, 4))
spec("eig", P.eig_p, {"compute_left_eigenvectors": True, "compute_right_eigenvectors": True,
                      "enable_eigvec_derivs": False, "implementation": None}, _matrix_args,
     (F32, C64), shapes=_EIG_SHAPES, tol=64, jax_fn=lambda x, **kw: lax.linalg.eig_p.bind(x, **kw))
spec("eigvals", P.eig_p, {"compute_left_eigenvectors": False, "compute_right_eigenvectors": False,
                          "enable_eigvec_derivs": False, "implementation": None}, _matrix_args,
     (F32, C64), shapes=_EIG_SHAPES, tol=64, differentiable=True,
     jax_fn=lambda x, **kw: lax.linalg.eig_p.bind(x, **kw))
spec("tridiagonal_solve", P.tridiagonal_solve_p, {"perturb_singular": False}, _tridiagonal_args,
     (F32, C64), shapes=((4, 2), (2, 5, 3), (1, 1)), tol=16, differentiable=True, linear_in=(3,),
     jax_fn=lambda dl, d, du, b, **kw: lax.linalg.tridiagonal_solve_p.bind(dl, d, du, b, **kw))
spec("tridiagonal_solve_perturbed", P.tridiagonal_solve_p, {"perturb_singular": True},
     _tridiagonal_args, (F32, C64), shapes=((4, 2), (2, 5, 3)), tol=16,
     jax_fn=lambda dl, d, du, b, **kw: lax.linalg.tridiagonal_solve_p.bind(dl, d, du, b, **kw))


# -- hessenberg, tridiagonal and schur (LAPACK custom calls) ----------------------------------
# No derivatives (nor in JAX); tests/frontend/test_linalg_schur.py checks reconstructions.
spec("hessenberg", P.hessenberg_p, {}, _matrix_args, (F32, C64), shapes=((3, 3), (2, 4, 4)),
     tol=16, jax_fn=lambda x: jax_linalg.hessenberg_p.bind(x))
for _lower in (True, False):
    spec(f"tridiagonal_{'lower' if _lower else 'upper'}", P.tridiagonal_p, {"lower": _lower},
         _hermitian_args, (F32, C64), shapes=((3, 3), (2, 4, 4), (1, 1)), tol=16,
         jax_fn=lambda x, **kw: jax_linalg.tridiagonal_p.bind(x, **kw))
for _vectors in (True, False):
    spec(f"schur{'' if _vectors else '_form_only'}", P.schur_p,
         {"compute_schur_vectors": _vectors, "sort_eig_vals": False, "select_callable": None},
         _matrix_args, (F32, C64), shapes=((3, 3), (2, 4, 4)), tol=16,
         jax_fn=lambda x, **kw: jax_linalg.schur_p.bind(x, **kw))


SPECS_BY_NAME: dict[str, PrimSpec] = {s.name: s for s in SPECS}


# -- conversions, barriers and rng (added) ---
# bitcast_convert_type: random bits (NaN payloads and subnormals included: a bitcast moves
# bits, it does no arithmetic) to dtypes of the same, a narrower and a wider width.
# reduce_precision: values of every magnitude and the edge values; its derivative is
# JAX's (the tangent reduced too), which is the true one only where the op is a no-op:
# the autodiff spec uses (8, 23), which keeps float32, float16 and bfloat16 values.
# rng_bit_generator: results equal to JAX's bit for bit; vmap uses the first key only (as
# JAX's rule does), so the specs leave the key unmapped (tests/frontend/test_conversions.py
# checks JAX's batching).  rng_uniform is not reproducible (XLA seeds it per compilation):
# the specs draw from [a, a), which is a whatever the seed; it has no batching rule (as
# in JAX).

_SAME_WIDTH: dict[DType, DType] = {F32: I32, I32: F32, U32: F32, F16: I16, I16: F16,
                                   BF16: U16, U16: BF16, I8: U8, U8: I8, BOOL: BOOL, C64: C64}
_NARROWER: dict[DType, DType] = {F32: U8, I32: I16, U32: BF16, F16: I8, I16: U8, BF16: U8,
                                 U16: I8}
_WIDER: dict[DType, DType] = {U8: F32, I8: I16, I16: I32, F16: U32, BF16: F32, U16: F32}


def _random_bits(rng: np.random.Generator, d: DType, s: Shape) -> np.ndarray:
    """Random bits of ``d``, except that no float (of ``d`` or of any width it is read
    as) is a NaN: the tests cast results to float64, where signaling NaNs warn."""
    if d == BOOL:
        return rand(rng, d, s)
    raw = np.ascontiguousarray(rng.integers(0, 256, (*s, d.itemsize), dtype=np.uint8))
    flat = raw.reshape(-1)
    for f in (F16, F32):  # exponent bits all set (Inf or NaN) at either width: clear one
        w = f.itemsize
        if flat.size % w == 0:
            words = flat.view(f"u{w}")
            e_mask = 0x7C00 if w == 2 else 0x7F800000
            bad = (words & e_mask) == e_mask
            words[bad] ^= 1 << (10 if w == 2 else 23)
    for w in (2,):  # bfloat16 words: the same
        if flat.size % w == 0:
            words = flat.view(np.uint16)
            bad = (words & 0x7F80) == 0x7F80
            words[bad] ^= 1 << 7
    return raw.view(d).reshape(s)


def _bitcast_params(table: dict[DType, DType]) -> ParamsFn:
    return lambda d, s: {"new_dtype": table.get(d, d)}


def _widen_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    ratio = _WIDER.get(d, d).itemsize // d.itemsize
    return [_random_bits(rng, d, (*s, ratio))]


spec("bitcast_convert_type", P.bitcast_convert_type_p, _bitcast_params(_SAME_WIDTH),
     lambda rng, d, s: [_random_bits(rng, d, s)], (F32, I32, U32, F16, BF16, I16, U8, BOOL, C64))
spec("bitcast_convert_type_narrow", P.bitcast_convert_type_p, _bitcast_params(_NARROWER),
     lambda rng, d, s: [_random_bits(rng, d, s)], (F32, I32, F16, BF16, U16))
spec("bitcast_convert_type_widen", P.bitcast_convert_type_p, _bitcast_params(_WIDER),
     _widen_args, (U8, I8, I16, F16, BF16))


def _precision_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    """Values of every magnitude (random bits, no NaNs), and edge values where there is room."""
    if d not in FLOATS:  # (the typing tests probe other dtypes too)
        return [rand(rng, d, s)]
    x = _random_bits(rng, d, s)
    flat = np.array(x).reshape(-1)
    sp = specials(d)
    k = min(flat.size // 2, sp.size)
    if k:
        flat[rng.choice(flat.size, k, replace=False)] = rng.choice(sp, k, replace=False)
    return [flat.reshape(s)]


for _eb, _mb in [(5, 10), (8, 7), (4, 3), (11, 52), (2, 0)]:
    spec(f"reduce_precision_e{_eb}m{_mb}" if (_eb, _mb) != (5, 10) else "reduce_precision",
         P.reduce_precision_p, {"exponent_bits": _eb, "mantissa_bits": _mb}, _precision_args,
         FLOATS, shapes=SHAPES + ((64,),))
special_spec("reduce_precision", P.reduce_precision_p, {"exponent_bits": 5, "mantissa_bits": 2},
             FLOATS)
# (Not ``differentiable``: the finite differences are taken in float64, where (8, 23) rounds;
# tests/frontend/test_conversions.py compares its derivatives with JAX's.)
spec("reduce_precision_noop", P.reduce_precision_p, {"exponent_bits": 8, "mantissa_bits": 23},
     _uniform(), FLOATS, linear_in=(0,))


def _full_range(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    if d.kind not in "iu":  # (the typing tests probe other dtypes too)
        return [rand(rng, d, s), rand(rng, d, s)]
    info = np.iinfo(d)
    return [rng.integers(int(info.min), int(info.max), s, endpoint=True).astype(d)
            for _ in range(2)]


spec("mulhi", P.mulhi_p, {}, _full_range, (I32, U32, I8, U8, I16, U16))
special_spec("mulhi", P.mulhi_p, {}, (I32, U32), n=2)

spec("optimization_barrier", P.optimization_barrier_p, {}, _uniform(n=2), (F32, F16, BF16, C64),
     jax_fn=lambda *xs: lax.optimization_barrier(xs), differentiable=True, linear_in=(0, 1))
spec("optimization_barrier_mixed", P.optimization_barrier_p, {},
     lambda rng, d, s: [rand(rng, d, s), rand(rng, I32, s[:1]), rand(rng, BOOL, ())],
     (F32, U8), jax_fn=lambda *xs: lax.optimization_barrier(xs))

_RNG_BITS = (U32, U8, U16)


def _rng_params(algorithm: int) -> ParamsFn:
    return lambda d, s: {"shape": s, "dtype": d if d in _RNG_BITS else U32,
                         "algorithm": P.RandomAlgorithm(algorithm), "out_sharding": None}


def _rng_key(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    key = rng.integers(0, 2 ** 32, 4, dtype=np.uint64).astype(U32)
    if rng.random() < 0.5:  # a counter about to wrap
        key[2:] = 0xFFFFFFFF
    return [key]


def _jax_rng_bits(key: Any, *, algorithm: Any, **params: Any) -> Any:
    return lax.rng_bit_generator_p.bind(key, algorithm=lax.RandomAlgorithm(int(algorithm)),
                                        **params)


for _alg, _suffix in [(0, ""), (1, "_threefry"), (2, "_philox")]:
    spec(f"rng_bit_generator{_suffix}", P.rng_bit_generator_p, _rng_params(_alg), _rng_key,
         _RNG_BITS, shapes=WITH_EMPTY + ((7,), (3, 5), (5, 1, 3)), jax_fn=_jax_rng_bits,
         unmapped=(0,))


def _same_bounds(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    a = rand(rng, d, ())
    return [a, a.copy()]


spec("rng_uniform", P.rng_uniform_p, lambda d, s: {"shape": s}, _same_bounds, FLOATS,
     shapes=WITH_EMPTY, unmapped=(0, 1))

SPECS_BY_NAME.update({s.name: s for s in SPECS})


# -- threefry2x32 ---------------------------------------------------------------------------
# The key primitives (random_seed, random_split, ...) take key arrays, which the spec table's
# NumPy operands cannot stand for: tests/frontend/test_random.py checks them against JAX,
# and tests/frontend/test_random.py checks them and their reference rules.

def _threefry_args(rng: np.random.Generator, d: DType, s: Shape) -> list[np.ndarray]:
    # Scalar key words (as the key primitives use it) and counters of the case's shape.
    key = rng.integers(0, 2 ** 32, size=2, dtype=np.uint64).astype(np.uint32)
    counts = rng.integers(0, 2 ** 32, size=(2, *s), dtype=np.uint64).astype(np.uint32)
    return [key[0], key[1], counts[0], counts[1]]


_THREEFRY = importlib.import_module("jax._src.random.threefry2x32")
spec("threefry2x32", P.threefry2x32_p, {}, _threefry_args, (U32,),
     jax_fn=lambda *xs: _THREEFRY.threefry2x32_p.bind(*xs))

SPECS_BY_NAME.update({s.name: s for s in SPECS})


# -- composite --------------------------------------------------------------------------------
# (No derivative and no batching rule, as in JAX: tests/frontend/test_composite.py checks
# the errors; tests/transforms/test_rules.py leaves it out of the batching checks.)

def _composite_params(d: DType, s: Shape) -> dict[str, Any]:
    from plait.ir.primitives.composite import flatten_attribute
    a = ShapedArray(s, d)
    x, y = Var(a), Var(a)
    b = Builder()
    t, = b.bind(P.sin_p, (x,), ACC)
    out, = b.bind(P.mul_p, (t, y), {"out_dtype": None})
    return {"name": "my.sin_mul", "attributes": (flatten_attribute("k", 2.0),),
            "jaxpr": ClosedJaxpr(b.build([x, y], [out, x])), "version": 1}


spec("composite", P.composite_p, _composite_params, _uniform(-3, 3, 2), (F32, F16), tol=2,
     jax_fn=lambda x, y, **_: lax.composite(lambda a, b, k: (lax.sin(a) * b, a), name="my.sin_mul",
                                            version=1)(x, y, k=2.0))

SPECS_BY_NAME.update({s.name: s for s in SPECS})


# Primitives without a spec: an exported call applies a StableHLO module, which no
# one-equation spec can build (tests/frontend/test_export.py checks them against JAX);
# dim_as_value needs symbolic shapes (tests/frontend/test_shape_poly.py); host callbacks
# need Python functions (tests/frontend/test_callbacks.py).
UNSPECIFIED = frozenset({P.call_exported_p, P.call_exported_lin_p, P.dim_as_value_p,
                         P.pure_callback_p, P.io_callback_p, P.debug_callback_p,
                         # A native handler: tests/frontend/test_ffi.py compares it with JAX.
                         P.ffi_call_p,
                         # Its rule is Python (traced when vmap reaches it): tested in
                         # tests/frontend/test_custom_batching.py.
                         P.custom_vmap_call_p,
                         # They need a mesh (or named axes) around them, which a spec table
                         # cannot give: tests/frontend/test_multi_device.py (and
                         # test_pcast.py) compare them
                         # with JAX, the reference interpreter and finite differences.
                         P.psum_p, P.pmax_p, P.pmin_p, P.all_gather_p, P.reduce_scatter_p,
                         P.ppermute_p, P.axis_index_p, P.all_to_all_p, P.pbroadcast_p, P.pvary_p,
                         P.shard_map_p, P.sharding_constraint_p,
                         # Its param is a sharding in types (an Explicit mesh around it):
                         # tests/frontend/test_explicit_sharding.py compares it with JAX.
                         P.reshard_p,
                         # Made into error values by checkify; compared with JAX's checkify
                         # in tests/frontend/test_checkify.py.
                         P.check_p,
                         # sparse.todense's marker, the identity on dense arrays:
                         # tests/frontend/test_sparse_bcoo.py compares it with JAX.
                         todense_p,
                         # They make tokens, which specs (of arrays) cannot feed or compare:
                         # tests/frontend/test_tokens.py compares them with JAX.
                         P.create_token_p, P.after_all_p})
