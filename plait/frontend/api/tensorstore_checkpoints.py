"""Arrays written to and read from TensorStore (zarr) checkpoints, as
``jax.experimental.array_serialization.serialization`` writes them: flax's
``training.checkpoints`` saves multi-process arrays this way.  The files are JAX's
(zarr with zstd, one chunk per shard), so either library reads what the other wrote.

plait runs in one process: a manager writes each array whole, from the host, in a
background thread (``wait_until_finished`` waits; the commit callback runs once every
write is done), and reads each back onto the sharding asked for.  TensorStore is not a
dependency of plait (orbax brings it); without it these functions raise ``ImportError``.
See ``docs/compat.md``.
"""

from __future__ import annotations

import abc
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.api.device_put import device_put
from plait.frontend.core.host_values import as_host_array
from plait.frontend.core.tree_util import tree_map
from plait.ir import dtypes as dt

try:
    import tensorstore as ts
except ImportError:  # (not a dependency of plait; orbax, which uses these, brings it)
    ts = None  # type: ignore[assignment]  # (checked where used: _tensorstore)

__all__ = ["GlobalAsyncCheckpointManager", "GlobalAsyncCheckpointManagerBase",
           "get_tensorstore_spec"]


def _kvstore(path: str) -> dict[str, Any]:
    for scheme, driver in (("gs", "gcs"), ("s3", "s3")):
        if path.startswith(f"{scheme}://"):
            m = re.fullmatch(f"^{scheme}://([^/]*)/(.*)$", path, re.DOTALL)
            if m is None:
                raise ValueError(f"expected a path with a bucket name and a path inside the "
                                 f"bucket, but got {path!r}")
            return {"driver": driver, "bucket": m.group(1), "path": m.group(2)}
    return {"driver": "file", "path": path}


def get_tensorstore_spec(ckpt_path: str | os.PathLike[str], ocdbt: bool = False,
                         process_idx: int | None = None, arr: Any = None,
                         driver: str = "zarr") -> dict[str, Any]:
    """The TensorStore spec of an array stored at ``ckpt_path`` (a local path, or
    ``gs://bucket/...``/``s3://bucket/...``); with ``ocdbt``, as an entry of an OCDBT
    store in the parent directory."""
    path = re.sub(r"^(gs|s3):/", r"\1://", os.path.normpath(str(ckpt_path)))
    if process_idx is not None:
        parent, name = os.path.split(path)
        path = os.path.join(parent, f"process_{process_idx}", name)
    if not ocdbt:
        return {"driver": driver, "kvstore": _kvstore(path)}
    parent, entry = os.path.split(path)
    if "://" not in parent and not os.path.isabs(parent):
        raise ValueError(f"Checkpoint path should be absolute. Got {parent}")
    return {"driver": driver, "kvstore": {"driver": "ocdbt", "base": _kvstore(parent),
                                          "path": entry}}


def _tensorstore() -> Any:
    if ts is None:
        raise ImportError("writing arrays to TensorStore checkpoints needs the tensorstore "
                          "package: pip install tensorstore")
    return ts


def _has_metadata(spec: Any) -> bool:
    return isinstance(spec, dict) and ("metadata" in spec or any(
        _has_metadata(v) for v in spec.values()))


def _write(arr: Any, spec: dict[str, Any]) -> Any:
    """Start writing ``arr`` where ``spec`` says; returns the commit future."""
    host = as_host_array(arr)
    shape = tuple(host.shape)
    spec = dict(spec)
    if not _has_metadata(spec):
        sharding = getattr(arr, "sharding", None)
        chunks = sharding.shard_shape(shape) if sharding is not None else shape
        spec["metadata"] = {"compressor": {"id": "zstd"}, "shape": list(shape),
                            "chunks": [max(1, int(n)) for n in chunks]}
    if spec.get("driver") == "zarr" and "dtype" not in spec:
        spec["dtype"] = np.dtype(host.dtype).name
    store = _tensorstore().open(ts.Spec(spec), create=True, open=True).result()
    return store.write(host).commit


def _read(sharding: Any, spec: Any, shape: Sequence[int] | None, dtype: Any) -> Any:
    """The array at ``spec`` laid out by ``sharding``: cut or padded with zeros to
    ``shape``, converted to ``dtype``."""
    store = _tensorstore().open(spec, open=True).result()
    data = np.asarray(store.read().result())
    if shape is not None and tuple(shape) != data.shape:
        out = np.zeros(tuple(shape), data.dtype)
        common = tuple(slice(0, min(a, b)) for a, b in zip(shape, data.shape))
        out[common] = data[common]
        data = out
    if dtype is not None:
        data = data.astype(dt.canonicalize(dtype))
    return device_put(data, sharding)


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """A manager of checkpoints written in the background: ``serialize`` starts one,
    ``check_for_errors`` reports a failure without waiting, ``wait_until_finished``
    waits, ``deserialize`` reads one back."""

    @abc.abstractmethod
    def check_for_errors(self) -> None:
        """Raise an error a background write hit, without waiting."""

    @abc.abstractmethod
    def wait_until_finished(self) -> None:
        """Wait until the pending writes are done."""

    @abc.abstractmethod
    def serialize(self, arrays: Any, tensorstore_specs: Any, *,
                  on_commit_callback: Any) -> None:
        """Start writing ``arrays`` to ``tensorstore_specs``."""

    @abc.abstractmethod
    def deserialize(self, shardings: Any, tensorstore_specs: Any,
                    global_shapes: Any = None, dtypes: Any = None) -> Any:
        """Read arrays back, laid out by ``shardings``."""


class GlobalAsyncCheckpointManager(GlobalAsyncCheckpointManagerBase):
    """Writes arrays to TensorStore in a background thread and reads them back."""

    def __init__(self, timeout_secs: int = 300) -> None:
        self.timeout_secs = timeout_secs
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def serialize(self, arrays: Any, tensorstore_specs: Any, *,
                  on_commit_callback: Callable[[], None] | None = None,
                  transaction: Any = None) -> None:
        """Start writing each of ``arrays`` to the matching spec; ``on_commit_callback``
        runs (in the background) once all are written."""
        self.wait_until_finished()
        commits: list[Any] = []
        tree_map(lambda a, s: commits.append(_write(a, s)), arrays, tensorstore_specs,
                 is_leaf=lambda x: isinstance(x, dict) and "driver" in x)
        self._thread = threading.Thread(target=self._commit, args=(commits, on_commit_callback),
                                        daemon=True)
        self._thread.start()

    def _commit(self, commits: list[Any], callback: Callable[[], None] | None) -> None:
        try:
            for c in commits:
                c.result()
            if callback is not None:
                callback()
        except BaseException as e:  # noqa: BLE001  (reported by check_for_errors)
            self._error = e

    def serialize_with_paths(self, arrays: Sequence[Any], paths: Sequence[str], *,
                             on_commit_callback: Callable[[], None] | None = None,
                             transaction: Any = None) -> None:
        """:meth:`serialize` to the specs of ``paths``."""
        self.serialize(arrays, [get_tensorstore_spec(p) for p in paths],
                       on_commit_callback=on_commit_callback)

    def check_for_errors(self) -> None:
        """Raise the error a background write hit, if any."""
        if self._error is not None:
            error, self._error = self._error, None
            raise RuntimeError(f"a checkpoint write failed: {error}") from error

    def wait_until_finished(self) -> None:
        """Wait for the pending writes (and their commit callback)."""
        if self._thread is not None:
            self._thread.join(self.timeout_secs)
            if self._thread.is_alive():
                raise TimeoutError(f"checkpoint writes did not finish within "
                                   f"{self.timeout_secs} s")
            self._thread = None
        self.check_for_errors()

    def deserialize(self, shardings: Sequence[Any], tensorstore_specs: Sequence[Any],
                    global_shapes: Sequence[Sequence[int]] | None = None,
                    dtypes: Sequence[Any] | None = None, concurrent_gb: int = 32) -> list[Any]:
        """The arrays at ``tensorstore_specs``, each laid out by its sharding."""
        self.wait_until_finished()
        n = len(tensorstore_specs)
        shapes = list(global_shapes) if global_shapes is not None else [None] * n
        types = list(dtypes) if dtypes is not None else [None] * n
        return [_read(s, spec, shape, d) for s, spec, shape, d in
                zip(shardings, tensorstore_specs, shapes, types, strict=True)]

    def deserialize_with_paths(self, shardings: Sequence[Any], paths: Sequence[str],
                               global_shapes: Sequence[Sequence[int]] | None = None,
                               dtypes: Sequence[Any] | None = None,
                               concurrent_gb: int = 32) -> list[Any]:
        """:meth:`deserialize` from the specs of ``paths``."""
        return self.deserialize(shardings, [get_tensorstore_spec(p) for p in paths],
                                global_shapes, dtypes)
