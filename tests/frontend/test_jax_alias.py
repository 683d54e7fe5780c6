"""``plait.compat.alias_jax`` and ``python -m plait run``: a program written for JAX, and
the JAX libraries it imports, run on plait unchanged; compared with the same program under
JAX 0.10.2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

import plait
from plait.errors import JaxAliasError

from .jax_programs import advi_steps, optax_train

PROGRAMS = Path(__file__).parent / "jax_programs"


def _plait_run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(plait.__file__).parent.parent))
    return subprocess.run([sys.executable, "-m", "plait", "run", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=600)


# (Each optimizer compiles its own step under both libraries: the default run takes five.)
FEW = ["adam", "adamw_clipped", "adafactor", "multi_steps", "masked"]


@pytest.mark.parametrize("names", [FEW, pytest.param([], marks=pytest.mark.slow)],
                         ids=["five", "all"])
def test_an_optax_program_gives_jaxs_losses_on_plait(names: list[str]) -> None:
    done = _plait_run(str(PROGRAMS / "optax_train.py"), *names)
    assert done.returncode == 0, done.stderr
    ours = json.loads(done.stdout)
    theirs = optax_train.main(names)
    assert ours["jax"] == jax.__version__
    assert set(ours["losses"]) == set(theirs) == set(names or optax_train.optimizers())
    for name, losses in theirs.items():
        np.testing.assert_allclose(ours["losses"][name], losses, rtol=1e-5, err_msg=name)
        assert losses[-1] < losses[0], name  # (the problem is one an optimizer can solve)


def test_the_alias_serves_plaits_modules_under_jaxs_names() -> None:
    done = _python("""
        import sys
        import plait, plait.compat
        plait.compat.alias_jax()
        plait.compat.alias_jax()  # a second call does nothing
        import jax, jax.numpy as jnp, jax.lax.linalg, jax.version
        from jax import lax, random, tree_util
        from jax.scipy.special import logsumexp
        print(jnp is plait.numpy, lax is plait.lax, jax.lax.linalg is plait.lax.linalg,
              random is plait.random, logsumexp is plait.scipy.special.logsumexp,
              jax.jit is plait.jit, jnp.__spec__.name, plait.compat.jax_alias_installed())
        print(jax.__version__, jax.__version_info__, jax.version.__version__)
        print(float(jax.grad(lambda x: jnp.sin(x) * 2)(0.0)))
        try:
            import jax._src.core
        except ModuleNotFoundError as e:
            print(type(e).__name__, e)
        try:
            jax.no_such_thing
        except AttributeError as e:
            print(e)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "True True True True True True plait.numpy True"
    assert lines[1] == f"{jax.__version__} {jax.__version_info__} {jax.version.__version__}"
    assert lines[2] == "2.0"
    assert lines[3] == ("ModuleNotFoundError No module named 'jax._src': plait, serving 'jax' "
                        "(plait.compat.alias_jax), has no plait._src")
    assert lines[4] == ("module 'jax' (plait, by plait.compat.alias_jax) has no attribute "
                        "'no_such_thing': plait has no counterpart of jax.no_such_thing")


def test_alias_refuses_once_jax_itself_is_imported() -> None:
    assert "jax" in sys.modules  # (the oracle, imported above)
    with pytest.raises(JaxAliasError, match=r"expected JAX not to be imported yet, but got "
                       r"jax.* in sys.modules: call plait.compat.alias_jax\(\) first thing"):
        plait.compat.alias_jax()
    assert not plait.compat.jax_alias_installed()


def test_plait_run_passes_arguments_and_runs_modules(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        "import sys, jax, jax.numpy as jnp\n"
        "print(sys.argv[1:], jax.numpy.sum(jnp.arange(int(sys.argv[1]))))\n")
    by_path = _plait_run(str(tmp_path / "prog.py"), "5", "x")
    assert (by_path.returncode, by_path.stdout) == (0, "['5', 'x'] 10\n"), by_path.stderr
    by_module = _plait_run("-m", "prog", "4", cwd=tmp_path)
    assert (by_module.returncode, by_module.stdout) == (0, "['4'] 6\n"), by_module.stderr
    usage = _plait_run()
    assert usage.returncode == 2 and "usage: python -m plait run" in usage.stderr


def test_a_program_computing_a_value_twice_gets_jaxs_gradients_bit_for_bit() -> None:
    # `plait run` keeps repeated equations apart (merge_equations off), as JAX does: the
    # gradients round as JAX's, and 12 optimizer steps give JAX's parameters exactly.
    done = _plait_run(str(PROGRAMS / "advi_steps.py"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == advi_steps.main()
    # With merging on, the two exp(log_std) are one equation and the bits differ.
    merged = subprocess.run([sys.executable, "-m", "plait", "run",
                             str(PROGRAMS / "advi_steps.py")], capture_output=True, text=True,
                            timeout=600, env=dict(os.environ, PLAIT_MERGE_EQUATIONS="1",
                                                  PYTHONPATH=str(Path(plait.__file__).parent
                                                                 .parent)))
    assert merged.returncode == 0, merged.stderr
    assert json.loads(merged.stdout) != advi_steps.main()
