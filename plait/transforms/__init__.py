"""Jaxpr-to-jaxpr rewrites: JVP, partial evaluation, transposition, batching, DCE.

Each transformation is a pure function of a :class:`~plait.ir.Jaxpr` driven by
a rule table keyed by primitive, cached on the jaxpr's structure.  Depends
only on :mod:`plait.ir`.
"""

from plait.transforms import assembly_rules as _assembly_rules  # noqa: F401  (registers rules)
from plait.transforms import batching_rules as _batching_rules  # noqa: F401
from plait.transforms import call_rules as _call_rules  # noqa: F401
from plait.transforms import callback_rules as _callback_rules  # noqa: F401
from plait.transforms import checkify as _checkify  # noqa: F401
from plait.transforms import composite_rules as _composite_rules  # noqa: F401
from plait.transforms import control_flow_rules as _control_flow_rules  # noqa: F401
from plait.transforms import conversion_rules as _conversion_rules  # noqa: F401
from plait.transforms import convolution_rules as _convolution_rules  # noqa: F401
from plait.transforms import custom_batching_rules as _custom_batching_rules  # noqa: F401
from plait.transforms import custom_rules as _custom_rules  # noqa: F401
from plait.transforms import exported_rules as _exported_rules  # noqa: F401
from plait.transforms import fft_rules as _fft_rules  # noqa: F401
from plait.transforms import foreign_rules as _foreign_rules  # noqa: F401
from plait.transforms import indexing_rules as _indexing_rules  # noqa: F401
from plait.transforms import jet_control_flow_rules as _jet_control_flow_rules  # noqa: F401
from plait.transforms import jet_rules as _jet_rules  # noqa: F401
from plait.transforms import jvp_rules as _jvp_rules  # noqa: F401
from plait.transforms import jvp_rules_structural as _jvp_rules_structural  # noqa: F401
from plait.transforms import linalg_eig_rules as _linalg_eig_rules  # noqa: F401
from plait.transforms import linalg_factorization_rules as _linalg_factorization_rules  # noqa: F401,E501
from plait.transforms import linalg_rules as _linalg_rules  # noqa: F401
from plait.transforms import linalg_schur_rules as _linalg_schur_rules  # noqa: F401
from plait.transforms import parallel_rules as _parallel_rules  # noqa: F401
from plait.transforms import random_rules as _random_rules  # noqa: F401
from plait.transforms import solve_rules as _solve_rules  # noqa: F401
from plait.transforms import transpose_rules as _transpose_rules  # noqa: F401
from plait.transforms import windowed_rules as _windowed_rules  # noqa: F401
from plait.transforms.dce import dce_jaxpr, dce_rules
from plait.transforms.emit import Emitter, Zero
from plait.transforms.inline import inline_calls, inline_jaxpr
from plait.transforms.jvp import jvp_jaxpr, jvp_rules, tangent_aval
from plait.transforms.partial_eval import partial_eval_jaxpr, pe_rules
from plait.transforms.physicalize import physicalize
from plait.transforms.transpose import UndefPrimal, backward_pass, transpose_jaxpr, transpose_rules
from plait.transforms.vmap import batching_rules, vmap_jaxpr

__all__ = [
    "dce_jaxpr", "dce_rules", "Emitter", "Zero", "jvp_jaxpr", "jvp_rules", "tangent_aval",
    "partial_eval_jaxpr", "pe_rules", "UndefPrimal", "backward_pass", "transpose_jaxpr",
    "transpose_rules", "batching_rules", "vmap_jaxpr", "inline_calls", "inline_jaxpr",
    "physicalize",
]
