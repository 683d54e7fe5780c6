"""Global configuration (``plait.config.update(name, value)``; public as :mod:`plait.config`).

It lives in the bottom layer and imports nothing from plait, so that every layer
may read it.  Options:

``enable_x64`` (bool, env ``PLAIT_ENABLE_X64``)
    Keep 64-bit dtypes instead of narrowing them to 32 bits.
``numpy_dtype_promotion`` (``'standard'`` or ``'strict'``)
    ``'strict'`` refuses implicit promotion between different dtypes.
``explain_cache_misses`` (bool)
    Log why a trace, compile or eager-op cache missed.
``traceback_filtering`` (``'on'`` or ``'off'``, env ``PLAIT_TRACEBACK_FILTERING``)
    Hide plait's own frames from tracebacks of user-facing errors.
``source_info`` (bool)
    Record the user source line of every traced equation.
``check_jaxprs`` (bool)
    Type-check every jaxpr a transformation produces (slow; tests turn it on).
``disable_jit`` (bool)
    ``jit`` calls the Python function instead of compiling it, and control flow with
    concrete predicates and bounds runs as Python (``plait.disable_jit``).
``eager_constant_folding`` (bool)
    While tracing, an operation none of whose operands is traced is computed at once
    instead of staged (``plait.ensure_compile_time_eval``).
``default_matmul_precision`` (``None`` or str)
    The precision of contractions called with ``precision=None`` (``'highest'``,
    ``'float32'``, a ``DotAlgorithmPreset`` name...; ``plait.default_matmul_precision``).
``numpy_rank_promotion`` (``'allow'``, ``'warn'`` or ``'raise'``)
    What ``plait.numpy`` does when operands of different ranks broadcast.
``log_compiles`` (bool)
    Log (at WARNING level, logger ``plait.compiles``) each compilation and its times,
    in JAX's words (``plait.log_compiles``).
``debug_nans``, ``debug_infs`` (bool)
    Raise ``FloatingPointError`` where an operation (or a jitted call, then run again
    operation by operation) produces a NaN (an infinity).
``export_calling_convention_version`` (9 or 10)
    The calling convention of the modules ``plait.export`` writes (JAX's; 10 is
    JAX 0.10.2's default; the two differ only for effects, which plait does not export).
``platform_name``, ``platforms`` (str)
    The platform to run on: plait has only ``'cpu'`` (the empty string means the
    default); accepted so that programs which pin JAX to the CPU run unchanged.
``merge_equations`` (bool, env ``PLAIT_MERGE_EQUATIONS``)
    The builder merges an equation that repeats an earlier one (same primitive, inputs
    and params) into it (the default).  Off, every operation traced is kept, as in JAX:
    gradients then round exactly as JAX's where a program computes a value twice (merged,
    the backward pass sums the two cotangents before the value's derivative rule, where
    JAX applies the rule twice and sums after).  ``python -m plait run`` turns it off.
``default_device`` (``None``, ``'cpu'`` or a device)
    The device that arrays are created on and computations on uncommitted data run on
    (``plait.default_device``).  plait supports this process's first device only (what
    ``None`` and ``'cpu'`` mean): programs that pin JAX to the CPU run unchanged; another
    device is refused (place data with ``device_put``).
``debug_key_reuse`` (bool, env ``PLAIT_DEBUG_KEY_REUSE``)
    Check that no typed PRNG key is consumed twice: every trace is analysed
    (:mod:`plait.transforms.key_reuse`; equations are then never merged, so that two
    identical draws stay two), and concrete keys remember their consumption between
    calls (``plait.debug_key_reuse``; a ``KeyReuseError`` on reuse).
``check_tracer_leaks`` (bool, env ``PLAIT_CHECK_TRACER_LEAKS``)
    End every trace with a search for its tracers still alive other than its results,
    raising ``UnexpectedTracerError`` for a leak at once (slow: a garbage collection per
    trace; ``plait.checking_leaks``).
``remat3`` (bool)
    JAX's switch to its newer ``checkpoint`` implementation, which saves and
    recomputes the same values; plait has one implementation, so the option is
    accepted and changes nothing (programs that turn it on run unchanged).
``threefry_partitionable`` (bool)
    How threefry2x32 numbers the counters it hashes for ``random_bits`` and ``split``
    (and rbg's ``split``): on (JAX 0.10.2's default), by each result's index; off, JAX's
    older scheme (``plait.threefry_partitionable``).  Recorded in the traced program.
``default_prng_impl`` (``'threefry2x32'``, ``'rbg'`` or ``'unsafe_rbg'``)
    The implementation of keys made without ``impl`` and of raw keys given to
    ``plait.random`` (``plait.default_prng_impl``); JAX's other names (``threefry4x32``,
    ``philox2x32``, ``philox4x32``) raise ``NotImplementedError``.
``legacy_prng_key`` (``'allow'``, ``'warn'`` or ``'error'``)
    What ``plait.random`` does when given a raw ``uint32`` key instead of a typed one:
    accept it, warn (``UserWarning``) or raise ``ValueError`` (``plait.legacy_prng_key``).
``enable_custom_prng`` (bool)
    JAX's upgrade switch for typed keys: on, ``PRNGKey`` and the functions given raw
    keys return typed keys, and raw keys given to ``plait.random`` raise a
    ``FutureWarning`` (``plait.enable_custom_prng``).

``transfer_guard_host_to_device``, ``..._device_to_host``, ``..._device_to_device``
    What a transfer of array data in that direction does (JAX's levels): ``None`` (the
    default) or ``'allow'``: it happens; ``'log'``: an implicit transfer (a NumPy array or
    Python scalar given to a computation, an array moved to another device because a
    computation needs it there) is logged at WARNING level, ``'disallow'``: it raises
    ``JaxRuntimeError``, while explicit ones (``plait.device_put``, ``plait.device_get``)
    go ahead; ``'log_explicit'``, ``'disallow_explicit'``: explicit ones are logged or
    refused too (``plait.transfer_guard_host_to_device`` ...).  As in JAX on the CPU,
    reading an array's value on the host shares its memory and is no transfer, except
    for the sub-byte dtypes (``int4``, ``uint4``, ``int2``, ``uint2``,
    ``float4_e2m1fn``), which are unpacked by a copy.
``transfer_guard`` (the same levels)
    Sets the three above at once (``plait.transfer_guard``).
``no_tracing`` (bool)
    Tracing a function to a jaxpr raises ``RuntimeError`` (for tests that a program is
    not retraced: ``plait.no_tracing``); a call served from a cache does not trace.
``no_execution`` (bool)
    Running a computation (a jitted call, an eager operation) raises ``RuntimeError``;
    tracing, lowering and compiling still work (``plait.no_execution``).
``enable_checks`` (bool)
    JAX's switch for its internal checks: here the same option as ``check_jaxprs`` (both
    names read and set it; ``plait.enable_checks``).
``allow_f16_reductions`` (bool)
    Off, ``lax.reduce_sum`` of a ``float16`` or ``bfloat16`` operand over a dimension
    longer than 1 raises ``ValueError``, as JAX's (``plait.numpy``'s sums accumulate in
    ``float32`` and are not affected; ``plait.allow_f16_reductions``).
``softmax_custom_jvp`` (bool)
    How ``nn.softmax`` is differentiated: off (JAX 0.10.2's default), through its
    operations with the maximum's derivative cut; on, with a custom JVP rule
    ``y * (t - sum(y * t))`` (``plait.softmax_custom_jvp``).
``remove_size_one_mesh_axis_from_type`` (bool)
    Mesh axes of size 1 are left out of the shardings in array types made while it is on
    (``float32[4@x,2]`` rather than ``float32[4@x,2@y]`` over a mesh whose ``y`` has
    size 1; ``plait.remove_size_one_mesh_axis_from_type``).
``array_garbage_collection_guard`` (``None``, ``'allow'``, ``'log'`` or ``'fatal'``)
    What happens when an array's buffer is freed by Python's cycle collector rather
    than by reference counting: nothing, an error logged with where the array was made
    (``'log'``), or the process aborts (``'fatal'``), as in JAX
    (``plait.array_garbage_collection_guard``).
``thread_guard`` (bool)
    In a multi-process run (``plait.distributed``), a computation started from a thread
    other than the one that turned the option on raises (``plait.thread_guard``); a
    single process has no such computations, so it changes nothing there.
``auto_pcast`` (bool)
    JAX inserts ``pvary`` where a ``shard_map`` body mixes values varying over different
    mesh axes; plait's values carry no varying-axes type (see ``plait.shard_map``), so
    there is nothing to insert and the option is accepted and changes nothing.
``jax2tf_associative_scan_reductions`` (bool)
    A switch of jax2tf, which JAX 0.10.2 no longer reads; accepted, changes nothing.

Options read as attributes too: ``plait.config.jax_enable_x64``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final

__all__ = ["update", "check", "read", "values", "enable_x64", "numpy_dtype_promotion", "on_update",
           "MATMUL_PRECISIONS", "TRANSFER_GUARD_LEVELS", "GC_GUARD_LEVELS",
           "PRNG_IMPLS", "MISSING_PRNG_IMPLS", "LEGACY_PRNG_KEY_MODES"]


def _env_bool(name: str, default: bool) -> bool:
    v = os.environ.get(name)
    return default if v is None else v.lower() in ("1", "true", "yes", "on")


class _Values:
    """Current option values, as attributes (cheap to read on hot paths)."""

    def __init__(self) -> None:
        self.enable_x64 = _env_bool("PLAIT_ENABLE_X64", False)
        self.numpy_dtype_promotion = "standard"
        self.explain_cache_misses = False
        self.traceback_filtering = os.environ.get("PLAIT_TRACEBACK_FILTERING", "on")
        self.source_info = True
        self.check_jaxprs = False
        self.disable_jit = False
        self.eager_constant_folding = False
        self.default_matmul_precision: str | None = None
        self.numpy_rank_promotion = "allow"
        self.log_compiles = False
        self.debug_nans = False
        self.debug_infs = False
        self.check_values = False
        """``debug_nans or debug_infs`` (read on every eager operation)."""
        self.platform_name = ""
        self.platforms = ""
        self.export_calling_convention_version = 10
        self.compilation_cache_dir: str | None = os.environ.get("PLAIT_COMPILATION_CACHE_DIR")
        """Where compiled programs are kept between processes (``None``: nowhere)."""
        self.enable_compilation_cache = True
        self.persistent_cache_min_compile_time_secs = 1.0
        """Programs compiled faster than this are not stored."""
        self.persistent_cache_min_entry_size_bytes = 0
        """Programs whose serialized size is below this are not stored."""
        self.merge_equations = _env_bool("PLAIT_MERGE_EQUATIONS", True)
        self.default_device: Any = None
        self.check_tracer_leaks = _env_bool("PLAIT_CHECK_TRACER_LEAKS", False)
        self.debug_key_reuse = _env_bool("PLAIT_DEBUG_KEY_REUSE", False)
        """``None``, ``'cpu'`` or the first local device (all three mean the same)."""
        self.remat3 = False
        """Accepted for JAX's ``jax_remat3``; plait's ``checkpoint`` does not read it."""
        self.num_cpu_devices = int(os.environ.get("PLAIT_NUM_CPU_DEVICES", "-1"))
        """How many CPU devices the runtime makes (-1: as ``XLA_FLAGS`` says, else 1);
        read once, when the runtime starts."""
        self.threefry_partitionable = True
        self.default_prng_impl = "threefry2x32"
        self.legacy_prng_key = "allow"
        self.enable_custom_prng = False
        self.transfer_guard: str | None = None
        """The level last set for all three directions (set-only in effect: the three
        ``transfer_guard_*`` options are what the guards read)."""
        self.transfer_guard_host_to_device: str | None = None
        self.transfer_guard_device_to_host: str | None = None
        self.transfer_guard_device_to_device: str | None = None
        self.guard_host_to_device = False
        """Whether host-to-device transfers are guarded (a level other than ``None`` and
        ``'allow'``): cached scalar buffers are then transferred again, so that the guard
        sees each transfer JAX makes."""
        self.guard_device_to_host = False
        """The same for device-to-host transfers."""
        self.no_tracing = False
        self.no_execution = False
        self.allow_f16_reductions = True
        self.softmax_custom_jvp = False
        self.remove_size_one_mesh_axis_from_type = False
        self.array_garbage_collection_guard: str | None = None
        self.thread_guard = False
        self.auto_pcast = True
        """Accepted for JAX's ``jax_auto_pcast``; plait's values have no varying-axes type."""
        self.jax2tf_associative_scan_reductions = False
        """Accepted for JAX's option of that name, which JAX 0.10.2 does not read."""
        self.trace_context: tuple[Any, ...] = ()
        self._refresh()

    def _refresh(self) -> None:
        # The options that change what tracing produces for the same argument types:
        # trace caches include this tuple in their keys.
        self.trace_context = (self.enable_x64, self.numpy_dtype_promotion, self.disable_jit,
                              self.eager_constant_folding, self.default_matmul_precision,
                              self.numpy_rank_promotion, self.debug_nans, self.debug_infs,
                              self.merge_equations, self.debug_key_reuse,
                              self.threefry_partitionable,
                              self.default_prng_impl, self.legacy_prng_key,
                              self.enable_custom_prng)
        # (no_execution: so that jit's C++ fast path, keyed on this tuple, never runs
        # a program while it is set, as JAX keys its fast path on it.)
        self.trace_context += (self.no_execution, self.allow_f16_reductions,
                               self.softmax_custom_jvp,
                               self.remove_size_one_mesh_axis_from_type)
        self.check_values = self.debug_nans or self.debug_infs
        self.guard_host_to_device = self.transfer_guard_host_to_device not in (None, "allow")
        self.guard_device_to_host = self.transfer_guard_device_to_host not in (None, "allow")
        for listener in _listeners:
            listener()


_listeners: list[Callable[[], None]] = []

values: Final = _Values()


def on_update(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every change of an option (for state kept outside
    Python that mirrors the options, such as jit's C++ dispatch keys)."""
    _listeners.append(listener)


MATMUL_PRECISIONS: Final = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    # The names of the DotAlgorithmPreset members (a test checks they agree).
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
"""The values ``default_matmul_precision`` takes besides ``None`` (JAX's list)."""

PRNG_IMPLS: Final = ("threefry2x32", "rbg", "unsafe_rbg")
"""The PRNG implementations plait has (the values of ``default_prng_impl``)."""
MISSING_PRNG_IMPLS: Final = ("threefry4x32", "philox2x32", "philox4x32")
"""JAX 0.10.2's other PRNG implementations, which plait lacks."""
LEGACY_PRNG_KEY_MODES: Final = ("allow", "warn", "error")
"""The values of ``legacy_prng_key``."""

TRANSFER_GUARD_LEVELS: Final = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
"""The levels of the transfer guards besides ``None`` (JAX's)."""
GC_GUARD_LEVELS: Final = ("allow", "log", "fatal")
"""The levels of ``array_garbage_collection_guard`` besides ``None`` (JAX's)."""
_TRANSFER_DIRECTIONS: Final = ("transfer_guard_host_to_device", "transfer_guard_device_to_host",
                               "transfer_guard_device_to_device")
_ALIASES: Final = {"enable_checks": "check_jaxprs"}
"""JAX's names of plait options that plait names otherwise."""

_CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "enable_x64": lambda v: isinstance(v, bool),
    "numpy_dtype_promotion": lambda v: v in ("standard", "strict"),
    "explain_cache_misses": lambda v: isinstance(v, bool),
    "traceback_filtering": lambda v: v in ("on", "off"),
    "source_info": lambda v: isinstance(v, bool),
    "check_jaxprs": lambda v: isinstance(v, bool),
    "disable_jit": lambda v: isinstance(v, bool),
    "eager_constant_folding": lambda v: isinstance(v, bool),
    "default_matmul_precision": lambda v: v is None or v in MATMUL_PRECISIONS,
    "numpy_rank_promotion": lambda v: v in ("allow", "warn", "raise"),
    "log_compiles": lambda v: isinstance(v, bool),
    "debug_nans": lambda v: isinstance(v, bool),
    "debug_infs": lambda v: isinstance(v, bool),
    "platform_name": lambda v: v in ("", "cpu"),
    "export_calling_convention_version": lambda v: type(v) is int and v in (9, 10),
    "platforms": lambda v: v in ("", "cpu"),
    "transfer_guard": lambda v: v is None or v in TRANSFER_GUARD_LEVELS,
    "transfer_guard_host_to_device": lambda v: v is None or v in TRANSFER_GUARD_LEVELS,
    "transfer_guard_device_to_host": lambda v: v is None or v in TRANSFER_GUARD_LEVELS,
    "transfer_guard_device_to_device": lambda v: v is None or v in TRANSFER_GUARD_LEVELS,
    "array_garbage_collection_guard": lambda v: v is None or v in GC_GUARD_LEVELS,
    "no_tracing": lambda v: isinstance(v, bool),
    "no_execution": lambda v: isinstance(v, bool),
    "allow_f16_reductions": lambda v: isinstance(v, bool),
    "softmax_custom_jvp": lambda v: isinstance(v, bool),
    "remove_size_one_mesh_axis_from_type": lambda v: isinstance(v, bool),
    "thread_guard": lambda v: isinstance(v, bool),
    "auto_pcast": lambda v: isinstance(v, bool),
    "jax2tf_associative_scan_reductions": lambda v: isinstance(v, bool),
    "remat3": lambda v: isinstance(v, bool),
    "merge_equations": lambda v: isinstance(v, bool),
    "threefry_partitionable": lambda v: isinstance(v, bool),
    "default_prng_impl": lambda v: v in PRNG_IMPLS,
    "legacy_prng_key": lambda v: v in LEGACY_PRNG_KEY_MODES,
    "enable_custom_prng": lambda v: isinstance(v, bool),
    "check_tracer_leaks": lambda v: isinstance(v, bool),
    "debug_key_reuse": lambda v: isinstance(v, bool),
    # (a device is recognized by its attributes: this layer imports no jaxlib types)
    "default_device": lambda v: v is None or v == "cpu" or (
        hasattr(v, "platform") and hasattr(v, "id") and v.platform == "cpu"),
    "num_cpu_devices": lambda v: type(v) is int and (v == -1 or v >= 1),
    "compilation_cache_dir": lambda v: v is None or isinstance(v, str | os.PathLike),
    "enable_compilation_cache": lambda v: isinstance(v, bool),
    "persistent_cache_min_compile_time_secs": lambda v: isinstance(v, int | float)
    and not isinstance(v, bool) and v >= 0,
    "persistent_cache_min_entry_size_bytes": lambda v: type(v) is int and v >= -1,
}

_guards: dict[str, Callable[[Any], None]] = {}


def guard(name: str, check_update: Callable[[Any], None]) -> None:
    """Have ``check_update(value)`` run before option ``name`` changes; it raises to
    refuse the change (an option that a layer above reads only once)."""
    _guards[name] = check_update


def _option(name: str) -> str:
    for prefix in ("jax_", "plait_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    name = _ALIASES.get(name, name)
    if name not in _CHECKS:
        raise KeyError(f"expected a config option among {sorted(_CHECKS)}, but got {name!r}")
    return name


def check(name: str, value: Any) -> str:
    """Option ``name``'s canonical name, if ``value`` is allowed for it.

    Raises:
      KeyError: no such option.
      ValueError: the value is not allowed for the option.
      NotImplementedError: a value JAX allows that plait lacks (a PRNG implementation).
    """
    name = _option(name)
    if _CHECKS[name](value):
        return name
    if name.startswith("platform"):
        raise ValueError(f"invalid value {value!r} for config option {name!r}: plait "
                         "runs on 'cpu' only")
    if name == "default_device":
        raise ValueError(f"expected None, 'cpu' or a device (plait.devices()) for config "
                         f"option {name!r}, but got {value!r}")
    if name == "num_cpu_devices":
        raise ValueError(f"expected -1 or a positive int for config option {name!r}, but got "
                         f"{value!r}")
    if name == "default_prng_impl" and value in MISSING_PRNG_IMPLS:
        raise NotImplementedError(f"the {value!r} PRNG implementation is not available in "
                                  f"plait; expected one of {list(PRNG_IMPLS)}")
    if name in ("default_prng_impl", "legacy_prng_key"):
        allowed = PRNG_IMPLS if name == "default_prng_impl" else LEGACY_PRNG_KEY_MODES
        raise ValueError(f"expected one of {list(allowed)} for config option {name!r}, but "
                         f"got {value!r}")
    if name.startswith(("transfer_guard", "array_garbage")):
        levels = TRANSFER_GUARD_LEVELS if name.startswith("transfer") else GC_GUARD_LEVELS
        raise ValueError(f"expected None or one of {list(levels)} for config option "
                         f"{name!r}, but got {value!r}")
    if name == "default_matmul_precision":
        raise ValueError(f"expected None or one of {list(MATMUL_PRECISIONS)} for config "
                         f"option {name!r}, but got {value!r}")
    raise ValueError(f"invalid value {value!r} for config option {name!r}")


def update(name: str, value: Any) -> None:
    """Set option ``name`` (a leading ``jax_``/``plait_`` is accepted and ignored).

    Raises:
      KeyError: no such option.
      ValueError: the value is not allowed for the option.
      NotImplementedError: a value JAX allows that plait lacks (a PRNG implementation).
    """
    name = check(name, value)
    if name in _guards:
        _guards[name](value)
    setattr(values, name, value)
    if name == "transfer_guard":  # (JAX's: it sets the three directions)
        for direction in _TRANSFER_DIRECTIONS:
            setattr(values, direction, value)
    values._refresh()


def read(name: str) -> Any:
    """The current value of option ``name`` (a leading ``jax_``/``plait_`` is ignored).

    Raises:
      KeyError: no such option.
    """
    return getattr(values, _option(name))


def enable_x64() -> bool:
    """Whether x64 mode is on."""
    return values.enable_x64


def numpy_dtype_promotion() -> str:
    """The current promotion mode: ``'standard'`` or ``'strict'``."""
    return values.numpy_dtype_promotion
