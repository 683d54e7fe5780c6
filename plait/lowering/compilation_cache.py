"""The persistent compilation cache: compiled programs kept on disk between processes.

With the option ``compilation_cache_dir`` set (``jax_compilation_cache_dir`` in
JAX's spelling), a program whose compilation took at least
``persistent_cache_min_compile_time_secs`` is serialized into that directory, under
a key that hashes everything the compiled code depends on: the StableHLO text, the
compile options (devices included), jaxlib's version and the platform.  A later
process compiling the same program loads it instead.  Programs that call back into
Python (host callbacks) are never cached: their callables cannot be stored.

A file that cannot be read or loaded is treated as a miss (with a warning) and
rewritten; writes go through a temporary file, so concurrent processes never see
half a file.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

from jaxlib import version as _jaxlib_version

from plait.ir.config import values as _config

__all__ = ["compile_cached", "cache_key", "reset_cache"]

_stats = {"hits": 0, "misses": 0, "writes": 0}


@functools.cache
def _host() -> bytes:
    """The machine's architecture and CPU features: XLA compiles for the host's
    instruction set, so a program compiled on another machine may not run here."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln for ln in f if ln.startswith(("flags", "Features"))), "")
    except OSError:
        pass
    return f"{platform.machine()}|{flags.strip()}".encode()


def cache_key(module: str | bytes, options: Any, device_ids: tuple[int, ...],
              platform_version: str) -> str:
    """The file name of a program's entry: a hash of what its compiled code depends on."""
    h = hashlib.sha256()
    for part in (module.encode() if isinstance(module, str) else module,
                 options.SerializeAsString(), repr(device_ids).encode(),
                 platform_version.encode(), _jaxlib_version.__version__.encode(), _host()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _directory() -> str | None:
    d = _config.compilation_cache_dir
    return os.fspath(d) if d and _config.enable_compilation_cache else None


def compile_cached(client: Any, module: str | bytes, devices: Any, options: Any,
                   compile_fn: Callable[[str | bytes, Any, Any], Any]) -> Any:
    """``compile_fn(module, devices, options)``'s loaded executable, read from the cache
    when it holds the program, else compiled (and stored, if it took long enough)."""
    directory = _directory()
    if directory is None:
        return compile_fn(module, devices, options)
    ids = tuple(d.id for d in devices)
    path = os.path.join(directory, cache_key(module, options, ids, client.platform_version))
    loaded = _read(client, path, devices, options)
    if loaded is not None:
        _stats["hits"] += 1
        return loaded
    _stats["misses"] += 1
    start = time.perf_counter()
    loaded = compile_fn(module, devices, options)
    took = time.perf_counter() - start
    if took >= _config.persistent_cache_min_compile_time_secs:
        _write(client, path, loaded)
    return loaded


def _read(client: Any, path: str, devices: Any, options: Any) -> Any:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        warnings.warn(f"plait's compilation cache could not read {path}: {e}", stacklevel=3)
        return None
    try:
        return client.deserialize_executable(data, devices, options)
    except Exception as e:  # noqa: BLE001  (jaxlib raises its own error types)
        warnings.warn(f"plait's compilation cache could not load {path} ({e}); compiling "
                      "again", stacklevel=3)
        return None


def _write(client: Any, path: str, loaded: Any) -> None:
    data: bytes = client.serialize_executable(loaded)
    if len(data) < _config.persistent_cache_min_entry_size_bytes:
        return
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        _stats["writes"] += 1
    except OSError as e:
        warnings.warn(f"plait's compilation cache could not write {path}: {e}", stacklevel=3)


def stats() -> dict[str, int]:
    """Hits, misses and writes of the cache in this process."""
    return dict(_stats)


def reset_cache() -> None:
    """Forget this process's counts (the files stay; delete the directory to clear it)."""
    for k in _stats:
        _stats[k] = 0
