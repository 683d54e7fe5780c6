"""Two processes on loopback, four CPU devices each, one run of eight devices: a psum
across all of them (``plait.distributed``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

CHILD = r'''
import os, sys
pid, port = int(sys.argv[1]), sys.argv[2]
import numpy as np
import plait
import plait.numpy as jnp
from plait.sharding import NamedSharding, PartitionSpec as P

plait.distributed.initialize(f"127.0.0.1:{port}", 2, pid, local_device_count=4)
assert plait.distributed.is_initialized()
assert (plait.process_index(), plait.process_count()) == (pid, 2)
assert (plait.device_count(), plait.local_device_count()) == (8, 4)
assert all(d.process_index == pid for d in plait.local_devices())

mesh = plait.make_mesh((8,), ("i",))
rows = NamedSharding(mesh, P("i"))
# Each process holds its half of the global array [1, 2, ..., 8].
x = plait.make_array_from_process_local_data(rows, np.arange(4, dtype=np.float32) + 4 * pid + 1)
assert x.shape == (8,) and not x.is_fully_addressable
total = plait.shard_map(lambda v: plait.lax.psum(v, "i"), mesh=mesh, in_specs=P("i"),
                        out_specs=P("i"))(x)
assert [float(np.asarray(s.data)[0]) for s in total.addressable_shards] == [36.0] * 4
# A sharded jit: the partitioner's all-reduce crosses the processes too.
mean = plait.jit(lambda v: jnp.mean(v * 2), out_shardings=NamedSharding(mesh, P()))(x)
assert float(np.asarray(mean.addressable_shards[0].data)) == 9.0
# pmap over the local devices only.
local = plait.pmap(lambda v: plait.lax.psum(v, "j"), axis_name="j")(np.ones((4, 2)))
assert np.asarray(local).tolist() == [[4.0, 4.0]] * 4
from plait.experimental import multihost_utils
gathered = multihost_utils.process_allgather({"pid": np.array([pid, 10 + pid], np.int32)})
assert gathered["pid"].tolist() == [[0, 10], [1, 11]]
multihost_utils.sync_global_devices("end of test")
plait.distributed.shutdown()
assert "jax" not in sys.modules
print("ok", pid)
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_psum_across_two_processes(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    port = str(_free_port())
    children = [subprocess.Popen([sys.executable, str(script), str(pid), port], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for pid in (0, 1)]
    deadline = time.monotonic() + 180
    try:
        while any(c.poll() is None for c in children) and time.monotonic() < deadline:
            if any(c.poll() not in (None, 0) for c in children):
                break  # one failed: the other would wait for it forever
            time.sleep(0.05)
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
    outputs = [c.communicate() for c in children]
    for pid, (c, (out, err)) in enumerate(zip(children, outputs)):
        assert c.returncode == 0, f"process {pid} failed:\n{out[-2000:]}\n{err[-4000:]}"
        assert out.strip().splitlines()[-1] == f"ok {pid}"
