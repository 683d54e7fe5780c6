"""The PJRT runtime: one CPU client (created lazily), device buffers, executables.

Device buffers are ``jaxlib`` arrays; plait keeps its own abstract values
beside them and never asks jaxlib for one (that would import ``jax``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
import jaxlib._jax as _jax
import numpy as np
from jaxlib import _hlo  # type: ignore[attr-defined]  # a compiled module, no stub
from jaxlib import xla_client as _xc
from jaxlib._jax import JaxRuntimeError

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.caches import BoundedDict, clear_caches
from plait.ir.config import guard as _guard
from plait.ir.config import values as _config
from plait.ir.errors import CallbackError
from plait.ir.sharding import (
    Mesh,
    NamedSharding,
    memory_kind_checked,
    same_layout,
    set_device_resolver,
)
from plait.ir.sharding import Sharding as _AnySharding
from plait.lowering import compiler, guards, multi_device
from plait.lowering.compilation_cache import compile_cached
from plait.lowering.emitter import tensor_type

__all__ = ["client", "devices", "default_device", "device_put", "Executable", "compile_text",
           "compile_count", "Sharding", "to_numpy", "parse_module", "mlir_context",
           "refine_shapes", "SpmdLayout", "device_by_id", "local_devices", "started",
           "start_distributed", "release_client", "copy_to_host_async", "copy_to_device",
           "hlo_cost_analysis", "make_single_device_sharding"]

_lock = threading.Lock()
_client: Any = None
_compile_count = [0]


def client() -> Any:
    """The PJRT CPU client (created on first use)."""
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                n = _config.num_cpu_devices
                _client = _xc.make_cpu_client(num_devices=n if n > 0 else None)
    return _client


def _refuse_after_start(value: Any) -> None:
    if _client is not None and value != _config.num_cpu_devices:
        raise RuntimeError("num_cpu_devices: expected the option set before the runtime "
                           f"starts, but {len(_client.devices())} devices are running already;"
                           " set it right after `import plait` (or set "
                           "PLAIT_NUM_CPU_DEVICES in the environment)")


_guard("num_cpu_devices", _refuse_after_start)


def _refuse_other_default(value: Any) -> None:
    if value is None or isinstance(value, str) or value == default_device():
        return
    raise NotImplementedError(
        f"default_device: plait runs computations on uncommitted data on the first device "
        f"({default_device()}) only, but got {value}; place the data on {value} with "
        "plait.device_put instead (computations follow their data)")


_guard("default_device", _refuse_other_default)


def started() -> bool:
    """Whether the client exists (computations have run)."""
    return _client is not None


def start_distributed(distributed_client: Any, process_id: int, num_processes: int,
                      collectives: Any, num_devices: int | None) -> None:
    """Create the client as one process of a distributed run (``plait.distributed``)."""
    global _client
    with _lock:
        if _client is not None:
            raise RuntimeError("the runtime has started already")
        _client = _xc.make_cpu_client(distributed_client=distributed_client, node_id=process_id,
                                      num_nodes=num_processes, collectives=collectives,
                                      num_devices=num_devices)


def release_client() -> None:
    """Drop the client and what holds on to it (before a distributed shutdown)."""
    global _client
    clear_caches()
    Sharding._interned.clear()
    _client = None


def device_by_id(i: int) -> Any:
    """The device with id ``i``.

    Raises:
      ValueError: no device has that id.
    """
    for d in client().devices():
        if d.id == i:
            return d
    raise ValueError(f"expected the id of one of the devices {client().devices()}, but got {i}")


set_device_resolver(device_by_id)


def devices() -> list[Any]:
    """The devices plait runs on (CPU devices)."""
    return list(client().devices())


def local_devices() -> list[Any]:
    """The devices this process drives."""
    return list(client().local_devices())


def default_device() -> Any:
    """The device used when none is given (this process's first)."""
    return client().local_devices()[0]


# Every jaxlib layout (one device, or XLA's over several) is a plait.sharding.Sharding.
_AnySharding.register(_xc.Sharding)


class Sharding(_xc.SingleDeviceSharding):  # type: ignore[misc]  # jaxlib has no stubs for it
    """A single-device placement, with the attributes jaxlib's C++ side reads.

    The base class stores the device as ``_device``.  There is one instance per
    device, so equality is identity and the hash is the object's: jaxlib's dispatcher
    hashes every argument's sharding on every call, and a hash written in Python
    cost about 0.15 us per argument there.
    """

    _interned: dict[Any, Sharding] = {}

    def __new__(cls, device: Any, memory_kind: str | None = None) -> Sharding:
        if memory_kind is not None:  # (sharding_for makes one per eager call: kept cheap)
            memory_kind_checked(memory_kind)
        s = cls._interned.get(device)
        if s is None:
            s = _xc.SingleDeviceSharding.__new__(cls, device)
            _xc.SingleDeviceSharding.__init__(s, device)
            cls._interned[device] = s
        return s

    def __init__(self, device: Any, memory_kind: str | None = None) -> None:
        pass  # (initialized once, in __new__)

    def with_memory_kind(self, kind: str | None) -> Sharding:
        """This sharding in memory ``kind``: only ``'device'`` (see
        :func:`~plait.ir.sharding.memory_kind_checked`)."""
        return Sharding(self._device, kind)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"  # JAX's

    @property
    def memory_kind(self) -> str:
        """The device's default memory, ``'device'`` (as JAX names it)."""
        return "device"

    @property
    def num_devices(self) -> int:
        """One device."""
        return 1

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return (self._device,)

    @property
    def _addressable_device_assignment(self) -> tuple[Any, ...]:
        return (self._device,)  # (one local device)

    @property
    def device_set(self) -> set[Any]:
        """The set holding the one device."""
        return {self._device}

    @property
    def is_fully_replicated(self) -> bool:
        """Trivially true for one device."""
        return True

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        """The one device, holding the whole array."""
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of the one shard: the whole array's."""
        return tuple(global_shape)

    @property
    def is_fully_addressable(self) -> bool:
        """Trivially true for one local device."""
        return True

    def is_equivalent_to(self, other: Any, ndim: int) -> bool:
        """Whether ``other`` (any sharding) also places a whole array of ``ndim``
        dimensions on this device (and nowhere else)."""
        return same_layout(self, other, ndim)

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return _xc.HloSharding.replicate()

# Named as JAX's class: type(x.sharding).__name__ and messages say SingleDeviceSharding.
Sharding.__name__ = Sharding.__qualname__ = "SingleDeviceSharding"


def make_single_device_sharding(device: Any, *, memory_kind: str | None = None) -> Sharding:
    """The placement of whole arrays on ``device`` (in its ``memory_kind``: only
    ``'device'``), as ``jax.sharding.make_single_device_sharding``."""
    return Sharding(device, memory_kind)


def sharding_for(device: Any) -> Sharding:
    """The sharding placing a whole array on ``device`` (one per device)."""
    return Sharding(device)


def device_put(value: np.ndarray, aval: ShapedArray, device: Any = None) -> Any:
    """Copy a host array (of ``aval``'s dtype and shape) to a device buffer."""
    dev = device if device is not None else default_device()
    if aval.dtype == dt.float0:
        value = np.zeros(aval.shape, np.bool_)
    elif dt.is_key(aval.dtype):
        value = np.ascontiguousarray(np.asarray(value)[dt.key_field(aval.dtype)])
    # Always a copy: by default jaxlib lets a CPU buffer alias a suitably aligned NumPy
    # array, and writing to that array later would change an immutable Array.
    try:
        return _xc.batched_device_put(_as_stored(aval), sharding_for(dev), [value], [dev],
                                      force_copy=True, enable_x64=_config.enable_x64)
    except JaxRuntimeError as e:  # (a transfer guard's refusal: say what to do)
        raise guards.advised(e) from None


def _as_stored(aval: ShapedArray) -> ShapedArray:
    """The type a buffer of ``aval`` has on the device: float0 (which carries no data)
    is stored as bool, as in JAX and as the lowering types it; PRNG keys as their data
    (``uint32``, one trailing dimension more)."""
    if aval.dtype == dt.float0:
        return ShapedArray(aval.shape, np.dtype(np.bool_))
    if dt.is_key(aval.dtype):
        return ShapedArray(aval.shape + dt.key_shape(aval.dtype), dt.uint32)
    return aval


def to_numpy(buffer: Any, aval: ShapedArray) -> np.ndarray:
    """Copy a device buffer of type ``aval`` to a NumPy array.

    Buffers reach NumPy through the buffer protocol, which has no format for the
    ml_dtypes types (bfloat16, the float8s, ``int4`` ...); those are bit-cast on the
    device to unsigned integers of their width first and viewed back on the host.
    The sub-byte ones (``int4``, ``float4_e2m1fn``, ``int2`` ...) have no NumPy
    unsigned integer of their width: their bits are widened on the device to ``uint8``
    (the layout ml_dtypes stores them in: the value's bits low, zeros above).
    """
    s = buffer._sharding
    if type(s) is not Sharding:
        if type(s) is multi_device.MeshSharding:
            return multi_device.gather(buffer, aval, _host_value)
        with multi_device.no_jax(s._device):  # (a piece of a multi-device buffer)
            return _host_value(buffer, aval)
    return _host_value(buffer, aval)


def _host_value(buffer: Any, aval: ShapedArray) -> np.ndarray:
    if aval.dtype.kind != "V" and aval.dtype not in _VIEWED:
        return np.asarray(buffer)
    if aval.dtype == dt.float0:
        return np.zeros(aval.shape, dt.float0)
    if dt.is_key(aval.dtype):  # a record per key, over the key data
        return np.ascontiguousarray(np.asarray(buffer)).view(aval.dtype)[..., 0]
    if _config.guard_device_to_host:
        # (plait reads these dtypes through a program of its own: let jaxlib check the
        # copy it would make, as it does for JAX)
        copy_to_host_async(buffer)
    exe = _bitcasts.get(aval)
    if exe is None:
        exe = _bitcasts[aval] = _bitcast_executable(aval)
    (bits,) = exe.execute([buffer])
    return np.asarray(bits).view(aval.dtype)


def copy_to_host_async(buffer: Any) -> None:
    """Start copying ``buffer`` to the host.  jaxlib applies the device-to-host guard
    (on the CPU it reads most dtypes in place, which is no transfer; it copies the
    sub-byte ones).

    Raises:
      JaxRuntimeError: the device-to-host transfer guard refuses the copy.
    """
    parts = multi_device.pieces(buffer) if type(buffer._sharding) is \
        multi_device.MeshSharding else [buffer]
    try:
        for part in parts:
            with multi_device.no_jax(multi_device.piece_device(part)):
                part._copy_single_device_array_to_host_async()
    except JaxRuntimeError as e:
        raise guards.advised(e) from None


def copy_to_device(buffer: Any, aval: ShapedArray, device: Any) -> Any:
    """A copy on ``device`` of ``buffer`` (of type ``aval``, on another device), made
    through the host; a device-to-device transfer for the transfer guards.

    Raises:
      JaxRuntimeError: the device-to-device transfer guard refuses the copy.
    """
    with guards.device_to_device(aval, buffer._sharding, sharding_for(device)):
        return device_put(to_numpy(buffer, aval), aval, device)


# ml_dtypes types NumPy calls floating ("f": float8_e5m2), viewed all the same.
_VIEWED: Final = frozenset(d for d in (*dt.NARROW_FLOATS, *dt.NARROW_INTS) if d.kind != "V")
_bitcasts: BoundedDict[ShapedArray, Executable] = BoundedDict("ml_dtypes bitcast programs", 256)


def _bitcast_executable(aval: ShapedArray) -> Executable:
    bits = dt.bit_width(aval.dtype)
    uint = np.dtype(f"uint{aval.dtype.itemsize * 8}")
    src, dst = tensor_type(aval), tensor_type((aval.shape, uint))
    if bits < 8:  # bitcast to ui4 (or ui2), then zero-extend to ui8
        mid = tensor_type((aval.shape, dt.uint4 if bits == 4 else dt.uint2))
        body = (f"  %b = stablehlo.bitcast_convert %x : ({src}) -> {mid}\n"
                f"  %y = stablehlo.convert %b : ({mid}) -> {dst}\n")
    else:
        body = f"  %y = stablehlo.bitcast_convert %x : ({src}) -> {dst}\n"
    text = (f"func.func public @main(%x: {src}) -> {dst} {{\n{body}"
            f"  return %y : {dst}\n}}\n")
    return compile_text(text, [ShapedArray(aval.shape, uint)])


def compile_count() -> int:
    """How many executables have been compiled (for tests of caching)."""
    return _compile_count[0]


class Executable:
    """A compiled module, loaded on one device or (an SPMD program) on a mesh's devices."""

    __slots__ = ("loaded", "device", "handlers", "callbacks", "in_shardings", "out_shardings",
                 "in_avals", "out_avals")

    def __init__(self, loaded: Any, device: Any, out_avals: Sequence[ShapedArray],
                 callbacks: _Callbacks | None = None,
                 in_shardings: Sequence[Any] | None = None,
                 out_shardings: Sequence[Any] | None = None,
                 in_avals: Sequence[ShapedArray] = ()) -> None:
        self.loaded = loaded
        self.device = device
        """The device (the mesh's first device for an SPMD program)."""
        self.callbacks = callbacks
        """The module's host callbacks (``None`` if it has none): such a program runs to
        completion in :meth:`execute`, so that its effects happen in call order and a
        callback's exception surfaces there."""
        sharding = sharding_for(device)
        self.in_shardings: list[Any] | None = None if in_shardings is None else \
            list(in_shardings)
        """Per argument, the layout an SPMD program takes it in (``None``: one device)."""
        self.out_shardings: list[Any] = list(out_shardings) if out_shardings is not None \
            else [sharding] * len(out_avals)
        """Per result, its layout."""
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        """The results' types, as the compiled module has them."""
        # Result handlers built from plait's avals: jaxlib then needs no aval of
        # its own, which it would otherwise make by importing ``jax``.  (Public for
        # callers that run ``loaded`` themselves, sparing a call per run.)
        self.handlers = [_xc.array_result_handler(_as_stored(a), s, True, _skip_checks=True)
                         for a, s in zip(out_avals, self.out_shardings)]

    def execute(self, buffers: list[Any]) -> list[Any]:
        """Run on device buffers; returns the output buffers.  An SPMD program's
        arguments are first laid out as it takes them."""
        if self.in_shardings is not None:
            buffers = self._placed(buffers)
        # jaxlib has no type stubs: the annotation states what it returns.
        if self.callbacks is not None:
            return self.callbacks.run(self.loaded, buffers, self.handlers)
        outs: list[Any] = self.loaded.execute_sharded(buffers).consume_with_handlers(self.handlers)
        return outs

    def _placed(self, buffers: list[Any]) -> list[Any]:
        assert self.in_shardings is not None
        out = []
        for b, s, a in zip(buffers, self.in_shardings, self.in_avals):
            if not multi_device.same_layout(b._sharding, s):
                b = multi_device.reshard(b, _as_stored(a), s, to_numpy)
            out.append(b)
        return out

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimates (``flops``, ``bytes accessed``, ...)."""
        cost = self.loaded.cost_analysis()
        return dict(cost) if cost is not None else {}

    def memory_analysis(self) -> Any:
        """XLA's memory statistics of the compiled program."""
        return self.loaded.get_compiled_memory_stats()

    def hlo_text(self) -> str:
        """The optimized HLO of the compiled program."""
        return "\n\n".join(m.to_string() for m in self.loaded.hlo_modules())


class _Callbacks:
    """A module's host callbacks, each recording the exception it raises."""

    __slots__ = ("functions", "error")

    def __init__(self, functions: Sequence[Callable[..., Any]]) -> None:
        self.error: BaseException | None = None
        self.functions = [self._recording(f) for f in functions]

    def _recording(self, f: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            try:
                return f(*args)
            except BaseException as e:
                self.error = e
                raise
        return call

    def run(self, loaded: Any, buffers: list[Any], handlers: list[Any]) -> list[Any]:
        """Run ``loaded`` to completion; a callback's exception is raised as
        :class:`CallbackError`."""
        self.error = None
        try:
            results = loaded.execute_sharded(buffers, with_tokens=True)
            token = results.consume_token()
            outs: list[Any] = results.consume_with_handlers(handlers)
            token.block_until_ready()
            for o in outs:
                o.block_until_ready()
        except Exception:
            cause, self.error = self.error, None
            if cause is None:
                raise
            raise _FailedCallback(f"a host callback raised {type(cause).__name__}: {cause}"
                                  ) from cause
        return outs


class _FailedCallback(CallbackError, JaxRuntimeError):  # type: ignore[misc]  # (jaxlib has no stubs)
    """The :class:`CallbackError` raised: also jaxlib's ``JaxRuntimeError``, which JAX
    raises when a callback fails (equinox catches that to report its ``error_if``).
    Named as the public class in tracebacks."""


_FailedCallback.__name__ = _FailedCallback.__qualname__ = "CallbackError"
_FailedCallback.__module__ = "plait.errors"


CompilerOptions = tuple[tuple[str, Any], ...]
"""XLA's debug options to override, as sorted ``(name, value)`` pairs (``jit``'s
``compiler_options``)."""


def compile_text(text: str, out_avals: Sequence[ShapedArray], device: Any = None,
                 host_callbacks: Sequence[Callable[..., Any]] = (), *,
                 spmd: SpmdLayout | None = None,
                 compiler_options: CompilerOptions = ()) -> Executable:
    """Compile a StableHLO module given as MLIR text; ``out_avals`` type its results;
    its host-callback custom calls call ``host_callbacks`` by index.  With ``spmd``, the
    module is an SPMD program over a mesh.  ``compiler_options`` override XLA's."""
    if spmd is not None:
        return _compile_spmd(text, out_avals, spmd, host_callbacks, compiler_options)
    dev = device if device is not None else default_device()
    # (A dynamic dimension: refined into bytecode, which compile_and_load takes too.)
    module_code: str | bytes = refine_shapes(text) if "?x" in text else text
    devices = _xc.DeviceList((dev,))
    options = with_overrides(single_device_options(dev), compiler_options)
    if host_callbacks:
        callbacks = _Callbacks(host_callbacks)
        # (Only the overload taking a parsed module accepts Python callables.)
        module = parse_module(module_code)
        loaded = compiler.backend_compile_and_load(client(), module, devices, options,
                                                   callbacks.functions)
        _compile_count[0] += 1
        return Executable(loaded, dev, out_avals, callbacks)
    loaded = compile_cached(client(), module_code, devices, options, _compile)
    return Executable(loaded, dev, out_avals)


def _compile(module: str | bytes, devices: Any, options: Any) -> Any:
    loaded = compiler.backend_compile_and_load(client(), module, devices, options)
    _compile_count[0] += 1
    return loaded


def with_overrides(options: Any, compiler_options: CompilerOptions) -> Any:
    """``options`` with XLA's debug options in ``compiler_options`` overridden (an unknown
    name is XLA's error when compiling, as in JAX)."""
    if compiler_options:
        options.env_option_overrides = list(compiler_options)
    return options


def single_device_options(device: Any) -> Any:
    """Compile options placing a one-device program on ``device`` (without a device
    assignment, XLA assigns the first device whatever ``devices`` says)."""
    options = _xc.CompileOptions()
    options.executable_build_options.device_assignment = _xc.DeviceAssignment.create(
        np.array([[device.id]]))
    return options


@attrs.frozen
class SpmdLayout:
    """Where an SPMD program's arguments and results live."""

    mesh: Mesh
    """The devices (one partition each)."""
    in_avals: tuple[ShapedArray, ...]
    """The arguments' types."""
    in_shardings: tuple[NamedSharding, ...]
    """The arguments' layouts."""
    out_shardings: tuple[NamedSharding | None, ...]
    """The results' layouts (``None``: the partitioner's choice)."""


def _compile_spmd(text: str, out_avals: Sequence[ShapedArray], spmd: SpmdLayout,
                  host_callbacks: Sequence[Callable[..., Any]],
                  compiler_options: CompilerOptions) -> Executable:
    mesh = spmd.mesh
    devices = multi_device.device_list(mesh)
    options = with_overrides(multi_device.compile_options(mesh), compiler_options)
    callbacks = None
    if host_callbacks:
        callbacks = _Callbacks(host_callbacks)
        loaded = compiler.backend_compile_and_load(client(), parse_module(text), devices,
                                                   options, callbacks.functions)
        _compile_count[0] += 1
    else:
        loaded = compile_cached(client(), text, devices, options, _compile)
    chosen = loaded.get_output_shardings()
    outs = []
    for i, (a, named) in enumerate(zip(out_avals, spmd.out_shardings)):
        stored = _as_stored(a)
        if named is None:
            # (XLA reports no layouts for a program of one partition.)
            hlo = _xc.HloSharding.from_proto(chosen[i]) if chosen else \
                _xc.HloSharding.replicate()
            named = multi_device.named_from_hlo(mesh, hlo, stored.ndim)
            if named is None:
                s = multi_device.MeshSharding(multi_device.device_list(mesh), hlo)
                s.named, s.mesh = None, mesh
                outs.append(s)
                continue
        outs.append(multi_device.mesh_sharding(named, stored.ndim))
    ins = [multi_device.mesh_sharding(s, _as_stored(a).ndim)
           for s, a in zip(spmd.in_shardings, spmd.in_avals)]
    first = mesh.devices.flat[0]
    return Executable(loaded, first, out_avals, callbacks, in_shardings=ins,
                      out_shardings=outs, in_avals=spmd.in_avals)


def refine_shapes(text: str) -> bytes:
    """The module with its dynamic shapes made static (they follow from ``@main``'s static
    argument types, as in a module calling a shape-polymorphic exported function); its
    shape assertions are checked on the way.

    Raises:
      ValueError: a shape assertion failed, or a shape stays dynamic.
    """
    from jaxlib import _jax
    try:
        refined: bytes = _jax.mlir.refine_polymorphic_shapes(
            text.encode(), enable_shape_assertions=True, validate_static_shapes=True)
        return refined
    except Exception as exc:  # (jaxlib raises its own error type)
        raise ValueError(str(exc)) from None


_context: Any = None


def hlo_cost_analysis(text: str) -> dict[str, float]:
    """XLA's cost estimates (``flops``, ``transcendentals``, ``bytes accessed`` ...) of a
    StableHLO module before optimization, as JAX's ``Lowered.cost_analysis`` gives them."""
    cost: dict[str, float] = _jax.hlo_module_cost_analysis(
        client(), hlo_computation(text).get_hlo_module())
    return cost


def hlo_computation(text: str) -> Any:
    """A StableHLO module as XLA's HLO (a jaxlib ``XlaComputation``), as JAX's
    ``Lowered.compiler_ir("hlo")`` gives it."""
    return _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False,
                                                    return_tuple=False)


def hlo_text(text: str, debug_info: bool) -> str:
    """A StableHLO module printed as HLO text, in XLA's short parsable form (with the
    source metadata when ``debug_info``)."""
    options = _hlo.HloPrintOptions.short_parsable()
    options.print_metadata = debug_info
    return str(hlo_computation(text).as_hlo_module().to_string(options))


def parse_module(text: str | bytes) -> Any:
    """Parse MLIR text (or bytecode) into a ``jaxlib.mlir.ir.Module`` (for printing and
    verification)."""
    global _context
    from jaxlib.mlir import ir
    if _context is None:
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, sdy, stablehlo
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        ctx = ir.Context()
        ctx.append_dialect_registry(registry)
        ctx.load_all_available_dialects()
        stablehlo.register_dialect(ctx)
        chlo.register_dialect(ctx)
        sdy.register_dialect(ctx)  # (Shardy's attributes appear in JAX's exported modules)
        _context = ctx
    with _context:
        return ir.Module.parse(text)


def mlir_context() -> Any:
    """The MLIR context plait parses modules in (all of jaxlib's dialects loaded)."""
    if _context is None:
        parse_module("module {}")
    return _context
