"""``plait.numpy``: a NumPy-compatible namespace over plait's primitives.

Binary functions broadcast like NumPy and promote dtypes by the lattice of
JAX's "Type promotion semantics" (Python scalars are weakly typed).  Every function works the same
on concrete arrays and inside traces.
"""

from collections.abc import Sequence as _Sequence

import ml_dtypes as _ml_dtypes
import numpy as _np

from plait.frontend.core.array_base import Array as ndarray
from plait.frontend.core.dtype_queries import issubdtype
from plait.frontend.core.promotion import promote_types, result_type
from plait.frontend.numpy import bit_views  # noqa: F401  (Array.view reads it here)
from plait.frontend.numpy._core import canonical_axis as _canonical_axis
from plait.frontend.numpy._core import ndim, shape
from plait.frontend.numpy._scalar_types import scalar_type as _scalar_type
from plait.frontend.numpy.arithmetic import (
    deg2rad,
    floor_divide,
    fmod,
    heaviside,
    hypot,
    mod,
    power,
    rad2deg,
    remainder,
)
from plait.frontend.numpy.array_api import (
    ArrayNamespaceInfo,
    __array_api_version__,
    __array_namespace_info__,
    array_repr,
    array_str,
    can_cast,
    character,
    complexfloating,
    flexible,
    floating,
    from_dlpack,
    generic,
    get_printoptions,
    inexact,
    integer,
    iscomplexobj,
    isdtype,
    isrealobj,
    isscalar,
    iterable,
    matvec,
    number,
    object_,
    printoptions,
    set_printoptions,
    signedinteger,
    unsignedinteger,
    unstack,
    vecmat,
)
from plait.frontend.numpy.array_methods import install_array_methods
from plait.frontend.numpy.assembling import block, resize
from plait.frontend.numpy.bitwise import (
    bitwise_count,
    bitwise_left_shift,
    bitwise_right_shift,
    left_shift,
    right_shift,
)
from plait.frontend.numpy.builtin_ufuncs import (
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    subtract,
)
from plait.frontend.numpy.calculus import (
    diagflat,
    ediff1d,
    fill_diagonal,
    geomspace,
    gradient,
    logspace,
    spacing,
    trapezoid,
    unwrap,
)
from plait.frontend.numpy.composite_ufuncs import (
    angle,
    divmod,
    fabs,
    float_power,
    frexp,
    gcd,
    i0,
    iscomplex,
    isneginf,
    isposinf,
    isreal,
    lcm,
    ldexp,
    modf,
    nan_to_num,
    sinc,
)
from plait.frontend.numpy.counting import (
    bincount,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
)
from plait.frontend.numpy.creation import (
    arange,
    array,
    asarray,
    astype,
    copy,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    meshgrid,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from plait.frontend.numpy.einsum import einsum, einsum_path
from plait.frontend.numpy.functional import (
    apply_along_axis,
    apply_over_axes,
    fromfunction,
    frompyfunc,
    piecewise,
    ufunc,
    vectorize,
)
from plait.frontend.numpy.host_io import (
    frombuffer,
    fromfile,
    fromiter,
    fromstring,
    load,
    save,
    savez,
)
from plait.frontend.numpy.index_tricks import (
    c_,
    diag_indices,
    diag_indices_from,
    index_exp,
    indices,
    ix_,
    mgrid,
    ogrid,
    r_,
    ravel_multi_index,
    s_,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    unravel_index,
)
from plait.frontend.numpy.insert_delete import delete, insert
from plait.frontend.numpy.interpolation import interp
from plait.frontend.numpy.joining import (
    append,
    array_split,
    atleast_3d,
    column_stack,
    dsplit,
    dstack,
    hsplit,
    vsplit,
)
from plait.frontend.numpy.linalg_ops import dot, inner, matmul, outer, tensordot, vdot
from plait.frontend.numpy.logic import (
    allclose,
    array_equal,
    array_equiv,
    choose,
    isclose,
    select,
)
from plait.frontend.numpy.manipulation import (
    argsort,
    atleast_1d,
    atleast_2d,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    concatenate,
    expand_dims,
    flip,
    hstack,
    moveaxis,
    permute_dims,
    ravel,
    repeat,
    reshape,
    sort,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    trim_zeros,
    vstack,
)
from plait.frontend.numpy.matrices import (
    cross,
    diag,
    diagonal,
    kron,
    matrix_transpose,
    trace,
    tri,
    tril,
    triu,
    vecdot,
)
from plait.frontend.numpy.nan_functions import (
    fmax,
    fmin,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanstd,
    nanvar,
)
from plait.frontend.numpy.nonzero import argwhere, flatnonzero, mask_indices, nonzero, where
from plait.frontend.numpy.packing import packbits, unpackbits
from plait.frontend.numpy.padding import pad
from plait.frontend.numpy.partitioning import argpartition, lexsort, partition, sort_complex
from plait.frontend.numpy.polynomial_fits import poly, polyfit, roots
from plait.frontend.numpy.polynomials import (
    polyadd,
    polyder,
    polydiv,
    polyint,
    polymul,
    polysub,
    polyval,
    vander,
)
from plait.frontend.numpy.quantiles import (
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    percentile,
    quantile,
)
from plait.frontend.numpy.rearranging import fliplr, flipud, roll, rollaxis, rot90
from plait.frontend.numpy.reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    diff,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from plait.frontend.numpy.searching import digitize, isin, searchsorted
from plait.frontend.numpy.setops import (
    intersect1d,
    setdiff1d,
    setxor1d,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from plait.frontend.numpy.signal import (
    bartlett,
    blackman,
    convolve,
    correlate,
    hamming,
    hanning,
    kaiser,
)
from plait.frontend.numpy.statistics import (
    average,
    corrcoef,
    cov,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nansum,
    ptp,
)
from plait.frontend.numpy.take_put import (
    compress,
    extract,
    place,
    put,
    put_along_axis,
    take,
    take_along_axis,
)
from plait.frontend.numpy.ufuncs import (
    abs,
    absolute,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    bitwise_not,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    copysign,
    cos,
    cosh,
    divide,
    equal,
    exp,
    exp2,
    expm1,
    floor,
    greater,
    greater_equal,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_not,
    nextafter,
    not_equal,
    positive,
    real,
    reciprocal,
    rint,
    round,
    rsqrt,
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    tan,
    tanh,
    true_divide,
    trunc,
)
from plait.ir import dtypes as _dt

bool_ = _scalar_type(_dt.bool_)
int8, int16, int32, int64 = (_scalar_type(d) for d in (_dt.int8, _dt.int16, _dt.int32,
                                                       _dt.int64))
uint8, uint16, uint32, uint64 = (_scalar_type(d) for d in (_dt.uint8, _dt.uint16, _dt.uint32,
                                                           _dt.uint64))
bfloat16, float16, float32, float64 = (_scalar_type(d) for d in (_dt.bfloat16, _dt.float16,
                                                                 _dt.float32, _dt.float64))
complex64, complex128 = _scalar_type(_dt.complex64), _scalar_type(_dt.complex128)
# NumPy's C-named aliases, as jax.numpy has them (64-bit, so narrowed unless x64 is on).
double = float_ = float64
single = float32
csingle = complex64
cdouble = complex_ = complex128
int_ = int64
uint = uint64
# The narrow types of ml_dtypes, as jax.numpy has them (its float6s are left out: XLA's CPU
# client cannot hold their buffers).
int2, int4, uint2, uint4 = (_scalar_type(d) for d in (_dt.int2, _dt.int4, _dt.uint2,
                                                      _dt.uint4))
(float8_e4m3fn, float8_e5m2, float8_e4m3b11fnuz, float8_e4m3fnuz, float8_e5m2fnuz, float8_e3m4,
 float8_e4m3, float8_e8m0fnu) = (_scalar_type(d) for d in _dt.FLOAT8)
float4_e2m1fn = _scalar_type(_dt.float4_e2m1fn)
dtype = _np.dtype
iinfo = _ml_dtypes.iinfo
finfo = _ml_dtypes.finfo


pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None
ComplexWarning = _np.exceptions.ComplexWarning  # (jax.numpy's is NumPy's)


install_array_methods()


# The array API standard's names (NumPy 2 has both spellings).
acos = arccos
acosh = arccosh
asin = arcsin
asinh = arcsinh
atan = arctan
atanh = arctanh
atan2 = arctan2
pow = power
degrees = rad2deg
radians = deg2rad
bitwise_invert = invert


def size(a: object, axis: int | _Sequence[int] | None = None) -> int:
    """The number of elements of an array-like value (along ``axis`` if given)."""
    dims = shape(a)
    axes = range(len(dims)) if axis is None else (
        [axis] if isinstance(axis, int) else list(axis))
    n = 1
    for i in axes:
        n *= dims[_canonical_axis(i, len(dims))]
    return n


__all__ = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "pow", "degrees", "radians",
    "bitwise_invert", "ndim", "shape", "size", "arange", "array", "asarray", "astype", "empty",
    "empty_like",
    "eye", "full", "full_like", "identity", "linspace", "ones", "ones_like", "zeros",
    "zeros_like", "dot", "inner", "matmul", "outer", "tensordot", "vdot", "argsort",
    "atleast_1d", "atleast_2d", "broadcast_arrays", "broadcast_shapes", "broadcast_to",
    "concat", "concatenate", "expand_dims", "flip", "hstack", "moveaxis", "permute_dims",
    "ravel", "repeat", "reshape", "sort", "split", "squeeze", "stack", "swapaxes", "tile",
    "transpose", "vstack", "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero",
    "cumprod", "cumsum", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    "abs", "absolute", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "around", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt",
    "ceil", "clip", "conj", "conjugate", "copysign", "cos", "cosh", "deg2rad", "divide",
    "equal", "exp", "exp2", "expm1", "floor", "floor_divide", "fmod", "greater",
    "greater_equal", "heaviside", "hypot", "imag", "invert", "isfinite", "isinf", "isnan",
    "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply",
    "negative", "nextafter", "not_equal", "positive", "power", "rad2deg", "real",
    "reciprocal", "remainder", "rint", "round", "rsqrt", "sign", "signbit", "sin", "sinh",
    "sqrt", "square", "subtract", "tan", "tanh", "true_divide", "trunc", "where",
    "nonzero", "flatnonzero", "argwhere", "take", "take_along_axis",
    "put", "put_along_axis", "place", "compress", "extract", "lexsort", "partition",
    "argpartition", "sort_complex", "insert", "delete", "interp", "mask_indices",
    "histogram2d", "histogramdd", "left_shift", "right_shift", "bitwise_left_shift",
    "bitwise_right_shift", "bitwise_count", "unique", "unique_values", "unique_counts",
    "unique_inverse", "unique_all", "union1d", "intersect1d", "setdiff1d", "setxor1d",
    "promote_types", "result_type", "bool_", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
    "complex128", "int2", "int4", "uint2", "uint4", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3",
    "float8_e8m0fnu", "float4_e2m1fn", "dtype", "iinfo", "finfo", "issubdtype", "pi", "e", "inf",
    "nan", "newaxis", "ComplexWarning",
    # Composite elementwise functions.
    "divmod", "float_power", "frexp", "gcd", "isneginf", "isposinf", "lcm", "ldexp",
    "logaddexp2", "modf", "nan_to_num", "sinc",
    # Creation, joining, splitting and rearranging.
    "copy", "meshgrid", "append", "array_split", "atleast_3d", "column_stack", "dsplit",
    "dstack", "hsplit", "vsplit", "fliplr", "flipud", "roll", "rollaxis", "rot90", "pad",
    # Logic.
    "allclose", "array_equal", "array_equiv", "choose", "isclose", "select",
    # Matrices and products.
    "cross", "diag", "diagonal", "kron", "matrix_transpose", "trace", "tri", "tril", "triu",
    "vecdot", "einsum", "einsum_path",
    # Reductions, differences and statistics.
    "cumulative_prod", "diff", "average", "corrcoef", "cov", "nanmax", "nanmean", "nanmin",
    "nanprod", "nansum",
    # Quantiles.
    "median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile",
    # NaN-aware functions, polynomials, differences, integrals and spaced samples.
    "fmax", "fmin", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanstd", "nanvar",
    "polyadd", "polyder", "polyint", "polymul", "polysub", "polyval", "roots", "polyfit",
    "vander", "diagflat",
    "ediff1d", "fill_diagonal", "geomspace", "gradient", "logspace", "spacing", "trapezoid",
    "unwrap",
    # Index arrays and grids.
    "c_", "diag_indices", "diag_indices_from", "index_exp", "indices", "ix_", "mgrid", "ogrid",
    "r_",
    "ravel_multi_index", "s_", "tril_indices", "tril_indices_from", "triu_indices",
    "triu_indices_from", "unravel_index",
    # Searching and membership.
    "digitize", "isin", "searchsorted",
    # Counting into bins.
    "bincount", "histogram", "histogram_bin_edges",
    # Convolution, correlation and window functions.
    "convolve", "correlate", "bartlett", "blackman", "hamming", "hanning", "kaiser", "i0",
    # Bit packing.
    "packbits", "unpackbits",
    # Polynomial division.
    "polydiv",
    # Functional programming.
    "vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "frompyfunc", "ufunc",
    "fromfunction",
    # Assembling arrays.
    "resize", "block",
    # The array API standard's namespace metadata and additions (array_api.py).
    "__array_api_version__", "__array_namespace_info__", "ArrayNamespaceInfo", "isdtype",
    "can_cast", "unstack", "matvec", "vecmat", "iscomplexobj", "isrealobj", "isscalar",
    "iterable", "array_repr", "array_str", "printoptions", "set_printoptions",
    "get_printoptions", "from_dlpack", "number", "inexact", "floating", "integer",
    "signedinteger", "unsignedinteger", "complexfloating", "generic", "character",
    "flexible", "object_", "bool",
    # Host bytes and files; more elementwise, statistics, polynomial and scalar-type names.
    "frombuffer", "fromfile", "fromiter", "fromstring", "load", "save", "savez", "angle",
    "fabs", "iscomplex", "isreal", "ptp", "poly", "trim_zeros", "euler_gamma", "ndarray",
    "double", "single", "csingle", "cdouble", "float_", "complex_", "int_", "uint",
]

# The array API's name of the boolean dtype (bound last: it shadows the builtin here).
bool = bool_  # noqa: A001
