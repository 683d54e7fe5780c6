"""Every exception plait raises on purpose (public as :mod:`plait.errors`).

It lives in the bottom layer and imports nothing, so that every layer (``ir``,
``transforms``, ``lowering``, ``frontend``) may raise these.  Messages follow
one shape: what was expected, what was got, where (argument path or the
offending equation), and what to do about it.
"""

from __future__ import annotations

__all__ = [
    "PlaitError",
    "JaxprTypeError",
    "ShardingTypeError",
    "JaxAliasError",
    "JaxprParseError",
    "UnboundVariableError",
    "RuleNotImplementedError",
    "IncompatibleShapesError",
    "TreePrefixError",
    "TransformError",
    "CheckError",
    "CheckifyRuntimeError",
    "CallbackError",
    "InconclusiveDimensionOperation",
    "UnsupportedTransformError",
    "MissingTransposeError",
    "ForwardModeError",
    "JAXTypeError",
    "JAXIndexError",
    "KeyReuseError",
    "TracerError",
    "UnexpectedTracerError",
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "NonConcreteBooleanIndexError",
    "TypePromotionError",
    "ArgumentError",
    "StaticArgumentError",
    "RefError",
    "PallasError",
]


class PlaitError(Exception):
    """Base class of the errors that carry plait-specific context."""


class JaxprTypeError(PlaitError, TypeError):
    """A jaxpr or an equation is ill-typed (raised by typing rules and ``check_jaxpr``)."""


class ShardingTypeError(PlaitError, TypeError):
    """An operation's result sharding (the sharding in its type) is ambiguous or
    unsupported for its operands' shardings; the message says how to annotate it."""


class UnboundVariableError(JaxprTypeError):
    """A variable is used before it is bound, or bound twice."""


class JaxprParseError(PlaitError, ValueError):
    """Text given to :func:`plait.ir.parse_jaxpr` is not a valid jaxpr.

    Attributes:
      line: 1-based line of the offending token.
      column: 1-based column of the offending token.
    """

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.line = line
        self.column = column


class RuleNotImplementedError(PlaitError, NotImplementedError):
    """A transformation has no rule for a primitive.

    The message is uniform: ``"JVP rule for 'sin' not implemented"``.
    """

    def __init__(self, transform: str, primitive: str) -> None:
        super().__init__(f"{transform} rule for '{primitive}' not implemented")
        self.transform = transform
        self.primitive = primitive


def missing_rule(transform: str, primitive: str, user_defined: bool = False
                 ) -> NotImplementedError:
    """The error for ``primitive`` lacking its ``transform`` rule: a
    :class:`RuleNotImplementedError`, or, for a primitive defined outside plait
    (``plait.extend.core.Primitive``), a plain ``NotImplementedError`` with the same
    message and attributes, as JAX raises (its primitives tutorial checks the exact
    type)."""
    if not user_defined:
        return RuleNotImplementedError(transform, primitive)
    error = NotImplementedError(f"{transform} rule for '{primitive}' not implemented")
    error.transform = transform  # type: ignore[attr-defined]  # (read by getattr)
    error.primitive = primitive  # type: ignore[attr-defined]  # (read by getattr)
    return error


class CheckError(PlaitError, RuntimeError):
    """A ``checkify.check`` failed where the reference interpreter evaluated it."""


class CheckifyRuntimeError(PlaitError, ValueError):
    """A failed ``checkify`` check, raised by ``Error.throw``, ``check_error`` or a
    ``check`` run outside any trace.  JAX's ``checkify.JaxRuntimeError``, a
    ``ValueError`` (not the runtime's ``JaxRuntimeError``): ``plait.experimental.checkify``
    exports it by that name."""


class TransformError(PlaitError, ValueError):
    """A transformation cannot be applied to this program (for example, reverse-mode
    differentiation of a loop whose trip count is only known at run time)."""


class CallbackError(PlaitError, RuntimeError):
    """A host callback (``pure_callback``, ``io_callback``, ``debug.callback``) raised
    while the program ran; the callback's exception is the ``__cause__``.  The runtime
    stays usable."""


class InconclusiveDimensionOperation(PlaitError):
    """A comparison or operation on symbolic dimensions whose result depends on the
    values of the dimension variables (``b >= 5``), or a symbolic dimension used where
    a constant is needed."""


class UnsupportedTransformError(TransformError, NotImplementedError):
    """A transformation a primitive does not support by design (an exported function
    is opaque to every transformation but reverse-mode differentiation)."""


class MissingTransposeError(TransformError, TypeError):
    """Reverse mode needs a transpose the program does not define (a
    ``custom_linear_solve`` without ``transpose_solve``); a ``TypeError`` as in JAX."""


class ForwardModeError(TransformError, TypeError):
    """Forward mode through a ``custom_vjp`` function whose backward function is not
    linear in its cotangent (so has no transpose); a ``TypeError``, as JAX's refusal of
    forward mode through any ``custom_vjp`` function is."""


class JAXTypeError(PlaitError, TypeError):
    """JAX's base class of the type errors it documents (``jax.errors.JAXTypeError``):
    the tracer errors below and :class:`KeyReuseError` derive from it, as in JAX."""


class JAXIndexError(PlaitError, IndexError):
    """JAX's base class of the index errors it documents (``jax.errors.JAXIndexError``)."""


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice where the key-reuse checker forbids it."""


class TracerError(PlaitError):
    """Base class of misuses of traced values."""


class UnexpectedTracerError(TracerError, JAXTypeError):
    """A tracer was used after the trace that created it had ended (a leak); a
    ``TypeError``, as JAX's."""


class ConcretizationTypeError(TracerError, JAXTypeError):
    """A concrete Python value was needed from a traced (abstract) value."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if``, ``while``, ``and``/``or``) was applied to a traced value."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()``/``__index__`` was applied to a traced value."""


class TracerArrayConversionError(TracerError, JAXTypeError):
    """A traced value was passed where a NumPy array was needed."""


class NonConcreteBooleanIndexError(TracerError, JAXIndexError):
    """A traced boolean mask was used as an index: the number of its true values, the
    result's size, is unknown while tracing (JAX's error of the same name)."""


class TypePromotionError(PlaitError, ValueError):
    """Implicit dtype promotion was refused (``numpy_dtype_promotion='strict'``); a
    ``ValueError``, as JAX's is."""


class ArgumentError(PlaitError, TypeError):
    """An argument of a public function is invalid; the message names its path."""


class IncompatibleShapesError(PlaitError, TypeError, ValueError):
    """Array shapes that do not fit together (they do not broadcast, a reshape changes
    the size).  JAX raises a ``TypeError`` or a ``ValueError`` for these depending on
    the function; this is both."""


class TreePrefixError(ArgumentError, ValueError):
    """A tree does not have the structure it must have (the same as, or a prefix of,
    another); the message names the key path where the two differ.  It is both a
    ``TypeError`` (as :class:`ArgumentError`) and a ``ValueError`` (as JAX's pytree
    structure errors)."""


class StaticArgumentError(ArgumentError, ValueError):
    """A static argument is not hashable.  jit's C++ dispatcher raises a plain
    ``ValueError`` with the same message (JAX's) before any plait code runs."""


class JaxAliasError(PlaitError, RuntimeError):
    """``plait.compat.alias_jax`` cannot make ``import jax`` give plait: JAX itself is
    already imported in the process."""


class RefError(PlaitError, ValueError):
    """A mutable array reference (:class:`plait.Ref`) used where it may not be: a
    value of the wrong shape or dtype written to it, a Ref returned from or passed
    twice to a transformed function, a Ref closed over by a transformation that
    cannot carry it (``vmap``), or a Ref used after the trace that created it ended."""


class PallasError(PlaitError, ValueError):
    """A Pallas kernel call (``plait.experimental.pallas.pallas_call``) given block
    specs, a grid, aliases or values that do not fit its operands, or a kernel
    primitive (``program_id``) used outside a kernel."""
