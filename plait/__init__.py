"""plait: composable transformations of numerical programs over a typed, printable IR.

``plait.make_jaxpr`` traces a Python function over arrays into a jaxpr
(:mod:`plait.ir`); :mod:`plait.numpy` and :mod:`plait.lax` are the array
namespaces; :mod:`plait.tree_util` handles pytrees.
"""

from plait import config
from plait.frontend import eager as _eager  # noqa: F401  (installs eager execution)
from plait.frontend.api import make_jaxpr
from plait.frontend.api_util import ShapeDtypeStruct
from plait.frontend.array_base import Array
from plait.frontend.promotion import numpy_dtype_promotion
from plait.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Primitive, ShapedArray, Var

__all__ = [
    "config", "make_jaxpr", "ShapeDtypeStruct", "Array", "numpy_dtype_promotion",
    "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "Primitive", "ShapedArray", "Var",
]
__version__ = "0.1.0"
