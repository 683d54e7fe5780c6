"""``python -m plait bench``: runs bench/run_all.py in a source checkout, refuses clearly
elsewhere (no benchmark is run here)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from plait.__main__ import bench, main

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_bench_outside_a_source_checkout(tmp_path: pathlib.Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(["--help"], root=tmp_path) == 2
    err = capsys.readouterr().err
    assert "source checkout" in err and "jax" in err


def test_unknown_command_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plait", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert "python -m plait demo" in err and "python -m plait bench" in err


def test_bench_help_in_this_checkout(tmp_path: pathlib.Path) -> None:
    # Run from elsewhere: the command finds the checkout from the package's location.
    proc = subprocess.run([sys.executable, "-m", "plait", "bench", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "python -m bench.run_all" in proc.stdout and "--only" in proc.stdout


def test_run_help_and_a_missing_script(tmp_path: pathlib.Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Checked before the alias is installed: neither call touches sys.modules.
    assert main(["plait", "run", "--help"]) == 0
    assert "run script.py [args]" in capsys.readouterr().out
    missing = tmp_path / "nope.py"
    assert main(["plait", "run", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "can't open file" in err and "nope.py" in err
