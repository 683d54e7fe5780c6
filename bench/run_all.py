"""Run every benchmark of bench/ and collect their figures into one JSON file.

Each ``bench/bench_*.py`` (sorted by name, every one found) runs in its own process,
``python -m bench.<module>`` from the repository root, with ``PLAIT_BENCH_RESULTS``
naming a temporary file that :func:`bench._timing.record` appends its figures to.  The
benchmarks' own output is forwarded as it comes.  A failing benchmark is reported (its
exit code and the last lines of its standard error) and the run goes on; the runner
then exits with status 1.

The results file (default ``bench/results.json``) holds the machine (platform,
processor, core count, Python version, 1-minute load average before and after the
run), the date (UTC), plait's commit and whether the work tree was dirty, the jax,
jaxlib and plait versions, and per benchmark its wall time, exit code and figures
(seconds per operation in each library and the ratio plait / jax, lower is better).

Run from the repository root (or ``python -m plait bench [args]`` from anywhere):
python -m bench.run_all [--out PATH] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.metadata
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, TextIO

from bench._timing import _UNITS, RESULTS_ENV

ROOT = pathlib.Path(__file__).resolve().parent.parent
"""The repository root: the working directory of every benchmark process."""

BENCH_DIR = ROOT / "bench"
DEFAULT_OUT = BENCH_DIR / "results.json"
STDERR_TAIL = 15
"""How many of a failing benchmark's last standard-error lines are repeated."""


def discover() -> list[str]:
    """The module names of every benchmark in bench/, sorted."""
    return sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))


def _select(only: list[str] | None, available: list[str],
            parser: argparse.ArgumentParser) -> list[str]:
    """The benchmarks ``--only`` names (``bench_cnn``, ``cnn`` or ``bench_cnn.py``)."""
    if not only:
        return available
    chosen: list[str] = []
    for name in only:
        stem = pathlib.Path(name).stem
        module = stem if stem.startswith("bench_") else f"bench_{stem}"
        if module not in available:
            parser.error(f"no benchmark {name!r}; available: {', '.join(available)}")
        if module not in chosen:
            chosen.append(module)
    return sorted(chosen)


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (platform.processor() is often empty)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _load_1min() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:  # not available on this platform
        return None


def _forward(stream: TextIO, tail: collections.deque[str]) -> None:
    """Copy a benchmark's standard error to ours as it comes, keeping its last lines."""
    for line in stream:
        sys.stderr.write(line)
        sys.stderr.flush()
        tail.append(line.rstrip("\n"))


def _read_figures(path: str) -> list[dict[str, Any]]:
    figures = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                figures.append(json.loads(line))
            except json.JSONDecodeError:
                print(f"  (ignored a malformed results line: {line[:80]!r})", file=sys.stderr)
    return figures


def run_one(module: str) -> dict[str, Any]:
    """Run ``python -m bench.<module>`` from the repository root; its wall time, exit code,
    figures and (when it failed) the last lines of its standard error."""
    fd, path = tempfile.mkstemp(prefix=f"plait-{module}-", suffix=".jsonl")
    os.close(fd)
    try:
        env = dict(os.environ, **{RESULTS_ENV: path})
        tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", f"bench.{module}"], cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        reader = threading.Thread(target=_forward, args=(proc.stderr, tail), daemon=True)
        reader.start()
        rc = proc.wait()
        reader.join()
        seconds = time.perf_counter() - t0
        figures = _read_figures(path)
    finally:
        os.unlink(path)
    result: dict[str, Any] = {"seconds": round(seconds, 3), "returncode": rc,
                              "figures": figures}
    if rc != 0:
        result["stderr_tail"] = list(tail)
    return result


def _fmt_time(seconds: float, unit: str) -> str:
    return f"{seconds * _UNITS.get(unit, 1e3):.3f} {unit}"


def summary(benchmarks: dict[str, dict[str, Any]]) -> list[str]:
    """The table of every figure (module, name, plait, jax, plait/jax) and the counts."""
    rows = [("module", "figure", "plait", "jax", "plait/jax")]
    ratios: list[float] = []
    names: collections.Counter[str] = collections.Counter()
    for module in sorted(benchmarks):
        result = benchmarks[module]
        if not result["figures"]:
            status = "no figures" if result["returncode"] == 0 else (
                f"FAILED, exit code {result['returncode']}")
            rows.append((module, f"({status})", "", "", ""))
        for fig in result["figures"]:
            unit = fig.get("unit", "ms")
            rows.append((module, fig["name"], _fmt_time(fig["plait_s"], unit),
                         _fmt_time(fig["jax_s"], unit), f"{fig['ratio']:.2f}"))
            ratios.append(fig["ratio"])
            names[fig["name"]] += 1
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for i, r in enumerate(rows):
        lines.append(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  "
                     f"{r[3]:>{widths[3]}}  {r[4]:>{widths[4]}}".rstrip())
        if i == 0:
            lines.append("-" * len(lines[0]))
    slower = sum(r > 1.0 for r in ratios)
    lines.append(f"{slower} of {len(ratios)} figure(s) have plait/jax > 1.0 "
                 "(plait slower than jax; lower is better)")
    dupes = sorted(n for n, c in names.items() if c > 1)
    if dupes:
        lines.append("figure names used more than once: " + "; ".join(dupes))
    failed = [m for m in sorted(benchmarks) if benchmarks[m]["returncode"] != 0]
    if failed:
        lines.append("failed: " + ", ".join(
            f"{m} (exit code {benchmarks[m]['returncode']})" for m in failed))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run_all",
        description="Run plait's side-by-side benchmarks (plait and jax), each in its own "
                    "process, and write their figures to one JSON file. Ratios are plait / jax "
                    "(lower is better); run on a quiet machine, several times.")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help="the JSON results file (default: bench/results.json in the "
                             "repository; a relative path is relative to the current "
                             "directory, the repository root under `python -m plait bench`)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="run only these benchmarks (bench_cnn, or just cnn)")
    args = parser.parse_args(argv)
    modules = _select(args.only, discover(), parser)

    sha = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain")
    results: dict[str, Any] = {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpu_model": _cpu_model(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg_1min_before": _load_1min(),
            "loadavg_1min_after": None,
        },
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "plait_commit": sha.strip() if sha is not None else None,
        "dirty": bool(status.strip()) if status is not None else None,
        "jax_version": _version("jax"),
        "jaxlib_version": _version("jaxlib"),
        "plait_version": _version("plait"),
        "benchmarks": {},
    }
    n = len(modules)
    for i, module in enumerate(modules, 1):
        print(f"[{i}/{n}] {module} ...", flush=True)
        result = run_one(module)
        results["benchmarks"][module] = result
        k = len(result["figures"])
        if result["returncode"] == 0:
            print(f"[{i}/{n}] {module} ... done in {result['seconds']:.1f} s, {k} figure(s)",
                  flush=True)
        else:
            print(f"[{i}/{n}] {module} ... FAILED with exit code {result['returncode']} "
                  f"after {result['seconds']:.1f} s, {k} figure(s); last lines of its "
                  "standard error:", flush=True)
            for line in result["stderr_tail"]:
                print(f"    {line}", flush=True)
    results["machine"]["loadavg_1min_after"] = _load_1min()

    out: pathlib.Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print()
    for line in summary(results["benchmarks"]):
        print(line)
    print(f"results written to {out}")
    failed = any(r["returncode"] != 0 for r in results["benchmarks"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
