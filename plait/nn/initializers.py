"""``plait.nn.initializers``: initializers of neural-network parameters, as
``jax.nn.initializers``: ``init(key, shape, dtype=None) -> Array``, most made by a factory
of their hyperparameters (``glorot_uniform()``, ``variance_scaling(2.0, "fan_in",
"normal")``).  For the same key the values equal JAX's bit for bit.
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.nn.initializers import Initializer as Initializer
from plait.frontend.nn.initializers import constant as constant
from plait.frontend.nn.initializers import delta_orthogonal as delta_orthogonal
from plait.frontend.nn.initializers import glorot_normal as glorot_normal
from plait.frontend.nn.initializers import glorot_uniform as glorot_uniform
from plait.frontend.nn.initializers import he_normal as he_normal
from plait.frontend.nn.initializers import he_uniform as he_uniform
from plait.frontend.nn.initializers import kaiming_normal as kaiming_normal
from plait.frontend.nn.initializers import kaiming_uniform as kaiming_uniform
from plait.frontend.nn.initializers import lecun_normal as lecun_normal
from plait.frontend.nn.initializers import lecun_uniform as lecun_uniform
from plait.frontend.nn.initializers import normal as normal
from plait.frontend.nn.initializers import ones as ones
from plait.frontend.nn.initializers import orthogonal as orthogonal
from plait.frontend.nn.initializers import truncated_normal as truncated_normal
from plait.frontend.nn.initializers import uniform as uniform
from plait.frontend.nn.initializers import variance_scaling as variance_scaling
from plait.frontend.nn.initializers import xavier_normal as xavier_normal
from plait.frontend.nn.initializers import xavier_uniform as xavier_uniform
from plait.frontend.nn.initializers import zeros as zeros

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "xavier_uniform", "glorot_normal",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "kaiming_uniform",
           "he_normal", "kaiming_normal", "orthogonal", "delta_orthogonal"]
