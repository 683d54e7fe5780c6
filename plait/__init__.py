"""plait: composable transformations of numerical programs over a typed, printable IR.

``plait.make_jaxpr`` traces a Python function over arrays into a jaxpr
(:mod:`plait.ir`); :mod:`plait.numpy` and :mod:`plait.lax` are the array
namespaces; :mod:`plait.tree_util` handles pytrees.
"""

import os as _os

# PJRT logs at INFO level when the client starts; JAX hides that too.  Must be
# set before jaxlib is first imported.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from plait import config, errors, ir, lax, numpy, transforms, tree_util, typing  # noqa: E402
from plait.frontend.core import eager as _eager  # noqa: E402,F401  (installs eager execution)
from plait.frontend.api.make_jaxpr import eval_shape, make_jaxpr  # noqa: E402
from plait.frontend.api.device_put import device_put  # noqa: E402
from plait.frontend.api.autodiff import (grad, hessian, jacfwd, jacrev, jvp, linear_transpose,  # noqa: E402
                               linearize, value_and_grad, vjp)
from plait.frontend.api.vmap import vmap  # noqa: E402
from plait.frontend.api.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: E402
from plait.frontend.api.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402
from plait.frontend.api.jit import jit  # noqa: E402
from plait.frontend.api.stages import Compiled, Lowered, Traced  # noqa: E402
from plait.lowering.runtime import devices  # noqa: E402
from plait.frontend.core.arguments import ShapeDtypeStruct  # noqa: E402
from plait.frontend.core.array_base import Array  # noqa: E402
from plait.frontend.core.promotion import numpy_dtype_promotion  # noqa: E402
from plait.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Primitive, ShapedArray, Var  # noqa: E402
from plait.ir.caches import cache_info, clear_caches  # noqa: E402

__all__ = [
    "config", "errors", "ir", "lax", "numpy", "transforms", "tree_util", "typing", "make_jaxpr", "eval_shape", "jit", "device_put", "devices",
    "grad", "hessian", "jacfwd", "jacrev", "jvp", "linear_transpose", "linearize",
    "value_and_grad", "vjp", "vmap", "checkpoint", "checkpoint_policies", "remat", "custom_jvp",
    "custom_vjp",
    "Traced", "Lowered", "Compiled", "ShapeDtypeStruct", "Array", "numpy_dtype_promotion",
    "clear_caches", "cache_info", "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "Primitive", "ShapedArray", "Var",
]
__version__ = "0.1.0"
