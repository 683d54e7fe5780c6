"""``plait.example_libraries.optimizers``: first-order optimizers over pytrees, as
``jax.example_libraries.optimizers`` (see :mod:`plait.frontend.example_libraries.optimizers`).
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.example_libraries.optimizers import JoinPoint as JoinPoint
from plait.frontend.example_libraries.optimizers import Optimizer as Optimizer
from plait.frontend.example_libraries.optimizers import OptimizerState as OptimizerState
from plait.frontend.example_libraries.optimizers import Schedule as Schedule
from plait.frontend.example_libraries.optimizers import Step as Step
from plait.frontend.example_libraries.optimizers import adagrad as adagrad
from plait.frontend.example_libraries.optimizers import adam as adam
from plait.frontend.example_libraries.optimizers import adamax as adamax
from plait.frontend.example_libraries.optimizers import clip_grads as clip_grads
from plait.frontend.example_libraries.optimizers import constant as constant
from plait.frontend.example_libraries.optimizers import exponential_decay as exponential_decay
from plait.frontend.example_libraries.optimizers import inverse_time_decay as inverse_time_decay
from plait.frontend.example_libraries.optimizers import l2_norm as l2_norm
from plait.frontend.example_libraries.optimizers import make_schedule as make_schedule
from plait.frontend.example_libraries.optimizers import momentum as momentum
from plait.frontend.example_libraries.optimizers import nesterov as nesterov
from plait.frontend.example_libraries.optimizers import optimizer as optimizer
from plait.frontend.example_libraries.optimizers import pack_optimizer_state as pack_optimizer_state
from plait.frontend.example_libraries.optimizers import piecewise_constant as piecewise_constant
from plait.frontend.example_libraries.optimizers import polynomial_decay as polynomial_decay
from plait.frontend.example_libraries.optimizers import rmsprop as rmsprop
from plait.frontend.example_libraries.optimizers import rmsprop_momentum as rmsprop_momentum
from plait.frontend.example_libraries.optimizers import sgd as sgd
from plait.frontend.example_libraries.optimizers import sm3 as sm3
from plait.frontend.example_libraries.optimizers import (
    unpack_optimizer_state as unpack_optimizer_state,
)
