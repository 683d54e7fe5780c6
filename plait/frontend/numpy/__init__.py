"""``plait.numpy``: a NumPy-compatible namespace over plait's primitives.

Binary functions broadcast like NumPy and promote dtypes by the lattice of
seed 003 (Python scalars are weakly typed).  Every function works the same
on concrete arrays and inside traces.
"""

import numpy as _np

from plait.ir import dtypes as _dt
from plait.frontend.numpy._core import ndim, shape
from plait.frontend.numpy.creation import (arange, array, asarray, astype, empty, empty_like, eye,
                                           full, full_like, identity, linspace, ones, ones_like,
                                           zeros, zeros_like)
from plait.frontend.numpy.indexing import getitem as _getitem
from plait.frontend.numpy.linalg_ops import dot, inner, matmul, outer, tensordot, vdot
from plait.frontend.numpy.manipulation import (argsort, atleast_1d, atleast_2d, broadcast_arrays,
                                               broadcast_shapes, broadcast_to, concat,
                                               concatenate, expand_dims, flip, hstack, moveaxis,
                                               permute_dims, ravel, repeat, reshape, sort, split,
                                               squeeze, stack, swapaxes, tile, transpose, vstack)
from plait.frontend.numpy.reductions import (all, amax, amin, any, argmax, argmin, count_nonzero,
                                             cumprod, cumsum, cumulative_sum, max, mean, min,
                                             prod, std, sum, var)
from plait.frontend.numpy.ufuncs import (abs, absolute, add, arccos, arccosh, arcsin, arcsinh,
                                         arctan, arctan2, arctanh, around, bitwise_and,
                                         bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip,
                                         conj, conjugate, copysign, cos, cosh, deg2rad, divide,
                                         equal, exp, exp2, expm1, floor, floor_divide, fmod,
                                         greater, greater_equal, heaviside, hypot, imag, invert,
                                         isfinite, isinf, isnan, less, less_equal, log, log1p,
                                         log2, log10, logaddexp, logical_and, logical_not,
                                         logical_or, logical_xor, maximum, minimum, mod, multiply,
                                         negative, nextafter, not_equal, positive, power,
                                         rad2deg, real, reciprocal, remainder, rint, round,
                                         rsqrt, sign, signbit, sin, sinh, sqrt, square, subtract,
                                         tan, tanh, true_divide, trunc, where)
from plait.frontend.promotion import promote_types, result_type

bool_ = _dt.bool_
int8, int16, int32, int64 = _dt.int8, _dt.int16, _dt.int32, _dt.int64
uint8, uint16, uint32, uint64 = _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64
bfloat16, float16, float32, float64 = _dt.bfloat16, _dt.float16, _dt.float32, _dt.float64
complex64, complex128 = _dt.complex64, _dt.complex128
dtype = _np.dtype
iinfo = _np.iinfo
finfo = _np.finfo
issubdtype = _np.issubdtype
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None


def _register_with_array_base() -> None:
    import sys

    from plait.frontend import array_base
    array_base._pnp = sys.modules[__name__]


_register_with_array_base()


def size(a: object) -> int:
    """The number of elements of an array-like value."""
    n = 1
    for d in shape(a):
        n *= d
    return n


__all__ = [
    "ndim", "shape", "size", "arange", "array", "asarray", "astype", "empty", "empty_like",
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
    "promote_types", "result_type", "bool_", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
    "complex128", "dtype", "iinfo", "finfo", "issubdtype", "pi", "e", "inf", "nan", "newaxis",
]
