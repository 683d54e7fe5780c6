"""``plait.experimental.checkify``: run-time errors as values, as
``jax.experimental.checkify``.  See ``docs/checkify.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.checkify import DivisionByZeroError as DivisionByZeroError
from plait.frontend.api.checkify import Error as Error
from plait.frontend.api.checkify import ErrorCategory as ErrorCategory
from plait.frontend.api.checkify import FailedCheckError as FailedCheckError
from plait.frontend.api.checkify import JaxRuntimeError as JaxRuntimeError
from plait.frontend.api.checkify import NaNError as NaNError
from plait.frontend.api.checkify import OOBError as OOBError
from plait.frontend.api.checkify import all_checks as all_checks
from plait.frontend.api.checkify import automatic_checks as automatic_checks
from plait.frontend.api.checkify import check as check
from plait.frontend.api.checkify import check_error as check_error
from plait.frontend.api.checkify import checkify as checkify
from plait.frontend.api.checkify import debug_check as debug_check
from plait.frontend.api.checkify import div_checks as div_checks
from plait.frontend.api.checkify import float_checks as float_checks
from plait.frontend.api.checkify import index_checks as index_checks
from plait.frontend.api.checkify import init_error as init_error
from plait.frontend.api.checkify import nan_checks as nan_checks
from plait.frontend.api.checkify import user_checks as user_checks

__all__ = ["DivisionByZeroError", "Error", "FailedCheckError", "JaxRuntimeError", "NaNError",
           "OOBError", "all_checks", "automatic_checks", "check", "checkify", "debug_check",
           "div_checks", "float_checks", "index_checks", "nan_checks", "user_checks",
           "check_error", "init_error", "ErrorCategory"]
