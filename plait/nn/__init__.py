"""``plait.nn``: common functions of neural-network libraries, as JAX 0.10.2's
``jax.nn``: activations (``relu``, ``gelu``, ``silu``...), ``softmax``/``log_softmax``,
``logsumexp``, ``standardize``, ``one_hot`` and ``dot_product_attention`` (see
:mod:`plait.frontend.nn`).  Parameter initializers are in :mod:`plait.nn.initializers`.
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.nn.activations import celu as celu
from plait.frontend.nn.activations import elu as elu
from plait.frontend.nn.activations import gelu as gelu
from plait.frontend.nn.activations import glu as glu
from plait.frontend.nn.activations import hard_sigmoid as hard_sigmoid
from plait.frontend.nn.activations import hard_silu as hard_silu
from plait.frontend.nn.activations import hard_swish as hard_swish
from plait.frontend.nn.activations import hard_tanh as hard_tanh
from plait.frontend.nn.activations import identity as identity
from plait.frontend.nn.activations import leaky_relu as leaky_relu
from plait.frontend.nn.activations import log1mexp as log1mexp
from plait.frontend.nn.activations import log_sigmoid as log_sigmoid
from plait.frontend.nn.activations import mish as mish
from plait.frontend.nn.activations import relu as relu
from plait.frontend.nn.activations import relu6 as relu6
from plait.frontend.nn.activations import selu as selu
from plait.frontend.nn.activations import sigmoid as sigmoid
from plait.frontend.nn.activations import silu as silu
from plait.frontend.nn.activations import soft_sign as soft_sign
from plait.frontend.nn.activations import softplus as softplus
from plait.frontend.nn.activations import sparse_plus as sparse_plus
from plait.frontend.nn.activations import sparse_sigmoid as sparse_sigmoid
from plait.frontend.nn.activations import squareplus as squareplus
from plait.frontend.nn.activations import swish as swish
from plait.frontend.nn.activations import tanh as tanh
from plait.frontend.nn.attention import dot_product_attention as dot_product_attention
from plait.frontend.nn.one_hot import one_hot as one_hot
from plait.frontend.nn.softmax import log_softmax as log_softmax
from plait.frontend.nn.softmax import logmeanexp as logmeanexp
from plait.frontend.nn.softmax import logsumexp as logsumexp
from plait.frontend.nn.softmax import softmax as softmax
from plait.frontend.nn.softmax import standardize as standardize

__all__ = ["identity", "relu", "relu6", "squareplus", "softplus", "sparse_plus",
           "soft_sign", "sigmoid", "sparse_sigmoid", "silu", "swish", "mish",
           "log_sigmoid", "elu", "leaky_relu", "hard_tanh", "celu", "selu", "gelu", "glu",
           "hard_sigmoid", "hard_silu", "hard_swish", "log1mexp", "tanh",
           "dot_product_attention", "one_hot", "logsumexp", "logmeanexp", "log_softmax",
           "softmax", "standardize"]
from plait.nn import initializers as initializers
