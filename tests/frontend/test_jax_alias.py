"""``plait.compat.alias_jax`` and ``python -m plait run``: a program written for JAX, and
the JAX libraries it imports, run on plait unchanged; compared with the same program under
JAX 0.10.2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import plait
from plait.errors import JaxAliasError

from .jax_programs import (
    advi_steps,
    blackjax_samplers,
    deepmind_libs,
    diffrax_models,
    equinox_models,
    flax_models,
    haiku_models,
    jax_md_sims,
    jaxopt_solvers,
    nnx_models,
    numpyro_models,
    optax_train,
    orbax_checkpoints,
    pallas_ops,
    quax_models,
    tfp_models,
    tutorial_internals,
)

PROGRAMS = Path(__file__).parent / "jax_programs"


def _plait_run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(plait.__file__).parent.parent))
    return subprocess.run([sys.executable, "-m", "plait", "run", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=600)


# (Each optimizer compiles its own step under both libraries: the default run takes two.)
FEW = ["adam", "masked"]


@pytest.mark.parametrize("names", [FEW, pytest.param([], marks=pytest.mark.slow)],
                         ids=["two", "all"])
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


def _program_gives_jaxs_numbers(module: Any, catalog: Callable[[], dict[str, Any]],
                                names: list[str], rtol: float = 1e-5, atol: float = 1e-6
                                ) -> None:
    """Run ``module``'s program under plait (a subprocess) and under JAX (here), and
    compare the numbers of each entry named (all of ``catalog()`` when none are)."""
    _compare_runs(module.__name__.rsplit(".", 1)[1] + ".py", module.main(names),
                  set(names or catalog()), rtol, atol)


def _compare_runs(program: str, theirs: dict[str, Any], names: set[str], rtol: float,
                  atol: float) -> None:
    done = _plait_run(str(PROGRAMS / program), *sorted(names))
    assert done.returncode == 0, done.stderr
    ours = json.loads(done.stdout)
    assert ours["jax"] == jax.__version__
    assert set(ours["results"]) == set(theirs) == names
    for name, numbers in theirs.items():
        np.testing.assert_allclose(ours["results"][name], numbers, rtol=rtol, atol=atol,
                                   err_msg=name)


# (Each sampler compiles its own programs under both libraries: the default run takes one.)
FEW_SAMPLERS = ["nuts_window"]


@pytest.mark.parametrize("names", [FEW_SAMPLERS, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_blackjax_samplers_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # blackjax imports jax._src.flatten_util, uses jit(inline=True) on Python scalars and
    # lax.cond's five-argument form: the alias and the API serve all three.
    _program_gives_jaxs_numbers(blackjax_samplers, blackjax_samplers.samplers, names)


# (Each case compiles its own programs under both libraries: the default run takes one.)
FEW_NUMPYRO = ["hmc_vectorized"]


@pytest.mark.parametrize("names", [FEW_NUMPYRO, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_numpyro_models_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # numpyro imports jax.api_util, jax.extend.linear_util, call_p/closed_call_p and
    # jax._src.core.trace_state_clean; its NUTS gradients need JAX's broadcasts (one
    # broadcast_in_dim per use) to round as JAX's.
    _program_gives_jaxs_numbers(numpyro_models, numpyro_models.models, names)


def test_the_alias_serves_parts_of_jaxs_internals() -> None:
    done = _python("""
        import plait, plait.compat
        plait.compat.alias_jax()
        import jax, jax._src.core
        from jax._src.core import trace_state_clean
        from jax._src import dtypes, traceback_util
        print(trace_state_clean is plait.core.trace_state_clean, trace_state_clean())
        print(jax.jit(lambda x: x + trace_state_clean())(1))
        try:
            jax._src.core.call_p
        except AttributeError as e:
            print(e)
        print(dtypes.supports_inf(jax.numpy.float8_e4m3fn),
              isinstance(jax.numpy.dtype("float32"), dtypes.DType))
        traceback_util.register_exclusion("/nowhere/lib")
        print(traceback_util._exclude_paths, jax.version.__version__ == jax.__version__)
        print(jax._src.distributed.global_state.client)
        print(jax._src.xla_bridge.backends_are_initialized())  # (after the jit above)
        print(list(jax._src.xla_bridge._backends), jax._src.xla_bridge._backends.get("cpu")
              is plait.lowering.runtime.client())  # (chex's question)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["True True", "1"]  # (under jit it is False: 1 + False)
    assert "has no attribute 'call_p': of JAX's internals it serves only" in lines[2]
    assert lines[3:] == ["False True", "['/nowhere/lib'] True", "None", "True",
                         "['cpu'] True"]


def test_the_alias_has_no_backends_before_the_runtime_starts() -> None:
    done = _python("""
        import plait, plait.compat
        plait.compat.alias_jax()
        import jax, chex
        print(dict(jax._src.xla_bridge._backends))
        chex.set_n_cpu_devices(2)  # (refused once a backend exists)
        print(len(jax.devices()))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["{}", "2"]


def test_jaxs_tutorials_on_primitives_and_interpreters_run_on_plait() -> None:
    # The internals they import: jax._src.{api, lax.lax, lib.mlir.dialects, util}.
    _program_gives_jaxs_numbers(tutorial_internals, tutorial_internals.uses, [])


# (Each model compiles its programs under both libraries: the default run takes the lifted
# scan, which traces with jax.interpreters.partial_eval.)
FEW_FLAX = ["scan_rnn"]


@pytest.mark.parametrize("names", [FEW_FLAX, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_flax_models_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # flax imports jax.interpreters.partial_eval, jax._src.traceback_util/dtypes/core,
    # jax.experimental.layout; it calls vmap(spmd_axis_name=), jit(device=),
    # lax.scan(_split_transpose=), jnp.einsum(_dot_general=), NamedSharding.update.
    # (The attention gradients are taken outside jit: JAX runs them operation by
    # operation, plait compiles them, and a few last bits differ.)
    _program_gives_jaxs_numbers(flax_models, flax_models.models, names, atol=1e-5)


# (The default run takes equinox's loops: its own primitives, with batching, JVP and
# transpose rules, custom_vjp with symbolic zeros and Python residuals, error_if.)
FEW_EQUINOX = ["loops"]


@pytest.mark.parametrize("names", [FEW_EQUINOX, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_equinox_models_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # equinox imports jax._src.dispatch and traceback_util, jax.extend.core's
    # mapped_aval/unmapped_aval and batching.axis_primitive_batchers.
    _program_gives_jaxs_numbers(equinox_models, equinox_models.uses, names, atol=1e-6)


# (The default run takes the MLP's training: nnx.Optimizer, nnx.jit, value_and_grad.)
FEW_NNX = ["mlp_train"]


@pytest.mark.parametrize("names", [FEW_NNX, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_flax_nnx_models_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # flax nnx imports jax.extend.core.Effect, jax.experimental.hijax's types,
    # jax._src.state.types, jax._src.checkify and jax._src.tree_util._registry; it reads
    # getattr(tracer, "sharding", None), jax.typeof of Refs and the mesh's axis types.
    _program_gives_jaxs_numbers(nnx_models, nnx_models.uses, names, rtol=0.0, atol=0.0)


# (The default run takes Haiku's lifted transforms: hk.vmap, remat, scan, fori_loop, cond,
# switch and layer_stack under jit and grad.)
FEW_HAIKU = ["lifted"]


@pytest.mark.parametrize("names", [FEW_HAIKU, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_haiku_rlax_and_distrax_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # Haiku imports jax.extend.core's TraceTag, take/set_current_trace and DropVar, and
    # subclasses jax.core.Trace; distrax (TensorFlow Probability's JAX substrate) imports
    # valid_jaxtype and registers a type in jax.core.pytype_aval_mappings and
    # jax.interpreters.xla.canonicalize_dtype_handlers, reached as attributes of jax.
    # (jnp.var is a jit of its own in JAX, whose gradient sums in another order: Haiku's
    # LayerNorm and GroupNorm gradients differ in their last bits.)
    _program_gives_jaxs_numbers(haiku_models, haiku_models.uses, names, atol=1e-6)


# (The default run takes HMC with step-size adaptation under jit.)
FEW_TFP = ["hmc"]


@pytest.mark.parametrize("names", [FEW_TFP, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_tensorflow_probability_gives_jaxs_numbers_on_plait(names: list[str]) -> None:
    # TensorFlow Probability's JAX substrate caches by weak references to arrays and
    # traced values. (One gradient, of Gamma samples, is taken outside jit: its last bits
    # may differ.)
    _program_gives_jaxs_numbers(tfp_models, tfp_models.uses, names, atol=1e-6)


# (The default run takes the LoRA training steps.)
FEW_QUAX = ["lora_train"]


@pytest.mark.parametrize("names", [FEW_QUAX, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_quax_gives_jaxs_numbers_on_plait(names: list[str]) -> None:
    # quax's quaxify is a trace of its own (jax._src.core.Trace): its process_primitive
    # dispatches on the operands' types, handles jit, scan and while with rules of its own,
    # and passes custom_jvp on with bind_with_trace. Equinox's MLP (a custom_jvp relu)
    # with LoRA weights is trained under filter_jit and filter_value_and_grad.
    _program_gives_jaxs_numbers(quax_models, quax_models.uses, names, rtol=0, atol=0)


# (The default run takes the checkpoint manager over a training loop, and arrays over four
# devices restored with two layouts.)
FEW_ORBAX = ["manager_training", "sharded"]


@pytest.mark.parametrize("names", [FEW_ORBAX, pytest.param([], marks=pytest.mark.slow)],
                         ids=["two", "all"])
def test_orbax_checkpoints_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # orbax imports jax.experimental.colocated_python (with its func and serialization
    # modules), jax.experimental.array_serialization, jax.extend.ifrt_programs and
    # jax.interpreters.pxla, reads jax._src.distributed.global_state, and restores arrays
    # with device_put(x, Format(...)), Sharding.shard_shape and
    # make_array_from_single_device_arrays on a single-device sharding.
    _program_gives_jaxs_numbers(orbax_checkpoints, orbax_checkpoints.uses, names, rtol=0,
                                atol=0)


def _both_in_own_processes(program: str, names: list[str], expected: set[str]) -> None:
    """Run ``program`` under JAX and under plait, each in a process of its own, and
    compare the numbers of the uses named."""
    done = subprocess.run([sys.executable, str(PROGRAMS / program), *names],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)["results"]
    _compare_runs(program, theirs, expected, rtol=1e-5, atol=1e-6)


# (The default run takes flash attention, forward and backward kernels.)
FEW_PALLAS = ["attention"]


@pytest.mark.parametrize("names", [FEW_PALLAS, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_jaxs_own_pallas_kernels_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # The kernels of jax/experimental/pallas/ops/gpu, read from JAX's installed files as
    # user code, in interpret mode: Triton-style masked loads and stores on Ref views, dot,
    # fori_loop over Refs, custom_vjp backward kernels, None inputs with None specs, vmap
    # of pallas_call. Each is also checked against its reference implementation.
    _program_gives_jaxs_numbers(pallas_ops, pallas_ops.uses, names, rtol=1e-5, atol=1e-6)


# (Slow only, both ways: its two processes import jax-md for 21 s in CI, the default run's
# most expensive test. ``-m slow`` runs the Lennard-Jones NVE run with a neighbor list
# alone, ``-m ''`` every simulation.)
FEW_MD = ["nve_neighbors"]


@pytest.mark.parametrize("names", [pytest.param(FEW_MD, marks=pytest.mark.slow),
                                   pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_jax_md_gives_jaxs_numbers_on_plait(names: list[str]) -> None:
    # jax-md imports jax.experimental.pallas and its triton module (its GPU kernels are
    # only called on a GPU); its Nose-Hoover chain deep-copies traced values
    # (dataclasses.astuple). FIRE and the Hessian of a pair energy differ in last bits.
    # JAX runs the program in a process of its own: run twice in one process, JAX 0.10.2
    # fails on the neighbor list's second allocation (plait does not).
    _both_in_own_processes("jax_md_sims.py", names, set(names or jax_md_sims.uses()))


# (The default run takes einops, the cheapest; importing the program imports every library,
# e3nn-jax's decorators calling infer_argnums_and_argnames among them.)
RESEARCH_USES = ["einops", "gymnax", "evosax", "dynamax", "ott", "e3nn", "gpjax"]


@pytest.mark.parametrize("names", [["einops"], pytest.param(RESEARCH_USES,
                                                            marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_research_libraries_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # e3nn-jax imports jax._src.api_util.infer_argnums_and_argnames. (dynamax's EM, ott's
    # Sinkhorn and e3nn's tensor products run partly outside jit: last bits may differ.)
    # dynamax sets JAX's default matmul precision when imported, so JAX runs the program
    # in a process of its own too, not in the test's.
    _both_in_own_processes("research_libs.py", names, set(names))


# (The default run takes optimistix's solvers: Newton, BFGS, Levenberg-Marquardt over
# lineax's QR, and implicit differentiation.)
FEW_DIFFRAX = ["nonlinear_solves"]


@pytest.mark.parametrize("names", [FEW_DIFFRAX, pytest.param([], marks=pytest.mark.slow)],
                         ids=["one", "all"])
def test_diffrax_lineax_optimistix_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # lineax imports jax._src.ad_util.stop_gradient_p and gives it a transpose rule,
    # calls lax.linalg.ormqr and linearize(has_aux=); equinox's filter_jvp asks
    # jax.extend.core.find_top_trace and ad.JVPTracer, its custom_vjps read .perturbed;
    # optimistix's custom_jvp rule applies its function to tangents.  (BacksolveAdjoint's
    # gradient is taken outside jit: the last bits differ.)
    _program_gives_jaxs_numbers(diffrax_models, diffrax_models.uses, names, rtol=1e-6,
                                atol=0.0)


# (jaxopt runs its iterations as separate jitted calls: the default run takes two quick ones.)
FEW_SOLVERS = ["lasso", "bisection"]


@pytest.mark.parametrize("names", [FEW_SOLVERS, pytest.param([], marks=pytest.mark.slow)],
                         ids=["two", "all"])
def test_jaxopt_solvers_give_jaxs_solutions_on_plait(names: list[str]) -> None:
    _program_gives_jaxs_numbers(jaxopt_solvers, jaxopt_solvers.solvers, names)


@pytest.mark.parametrize("names", [["chex", "jraph"], pytest.param([], marks=pytest.mark.slow)],
                         ids=["two", "all"])
def test_deepmind_libraries_give_jaxs_numbers_on_plait(names: list[str]) -> None:
    # (chex imports jax._src.compiler; jraph repeats by traced counts to a fixed length;
    # dm-pix and mctx, in the slow run, compile many small programs under both libraries)
    _program_gives_jaxs_numbers(deepmind_libs, deepmind_libs.uses, names, rtol=1e-6, atol=0.0)


def test_chex_restrict_backends_restricts_plaits_compilations() -> None:
    done = _python("""
        import plait.compat
        plait.compat.alias_jax()
        import chex, jax, jax.numpy as jnp
        x = jnp.arange(3.0)
        with chex.restrict_backends(forbidden=["cpu"]):
            try:
                jax.jit(lambda v: v * 7.0)(x)
            except RuntimeError as e:
                print(type(e).__name__, e)
        print(jax.jit(lambda v: v * 7.0)(x))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "RestrictedBackendError Compiling a JAX program for cpu is forbidden by "
        "restrict_backends().", "[ 0.  7. 14.]"]


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
            import jax._src.prng
        except ModuleNotFoundError as e:
            print(type(e).__name__, e)
        try:
            jax.no_such_thing
        except AttributeError as e:
            print(e)
        from jax._src.flatten_util import ravel_pytree
        from jax._src import tree_util as private_tree_util
        print(ravel_pytree is plait.flatten_util.ravel_pytree,
              private_tree_util.tree_map is plait.tree_util.tree_map)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "True True True True True True plait.numpy True"
    assert lines[1] == f"{jax.__version__} {jax.__version_info__} {jax.version.__version__}"
    assert lines[2] == "2.0"
    assert lines[3] == ("ModuleNotFoundError No module named 'jax._src.prng': plait, serving "
                        "'jax' (plait.compat.alias_jax), has no plait._src.prng")
    assert lines[4] == ("module 'jax' (plait, by plait.compat.alias_jax) has no attribute "
                        "'no_such_thing': plait has no counterpart of jax.no_such_thing")
    assert lines[5] == "True True"


_REGISTRY_PROBE = """
    import collections, dataclasses, typing
    import jax
    from jax._src.tree_util import _registry
    from jax._src.state.types import AbstractRef
    from jax._src import checkify
    from jax.experimental import checkify as public_checkify

    @dataclasses.dataclass
    class D:
        a: int

    class N(typing.NamedTuple):
        a: int

    class R:
        pass

    class Rt(typing.NamedTuple):
        a: int

    jax.tree_util.register_dataclass(D, ["a"], [])
    jax.tree_util.register_pytree_node(R, lambda r: ((), None), lambda a, c: R())
    jax.tree_util.register_pytree_node(Rt, lambda r: ((r.a,), None), lambda a, c: Rt(*c))
    kinds = [tuple, list, dict, type(None), collections.OrderedDict, collections.defaultdict,
             D, N, R, Rt, int, float, jax.Array, "tuple", None]
    print([k in _registry for k in kinds])
    print(isinstance(jax.typeof(jax.new_ref(jax.numpy.ones(2))), AbstractRef),
          checkify.user_checks == public_checkify.user_checks)
"""


def test_private_registry_and_state_types_answer_as_jaxs() -> None:
    # (flax nnx asks `type(x) in jax._src.tree_util._registry`, and imports
    # jax._src.state.types.AbstractRef and jax._src.checkify)
    _prints_the_same_under_both(_REGISTRY_PROBE)


_JAXTYPING_PROBE = """
    import jax, jax.numpy as jnp
    from jaxtyping import Array, Float, Key, PRNGKeyArray

    values = [jnp.ones((2, 3)), jnp.ones((2, 3), jnp.int32), jax.random.key(0),
              jax.random.split(jax.random.key(1), 4), jax.random.PRNGKey(2)]
    kinds = [Float[Array, "b n"], Key[Array, ""], Key[Array, "4"], PRNGKeyArray]
    print([[isinstance(v, k) for k in kinds] for v in values])
"""


def test_jaxtyping_annotations_check_plaits_arrays_as_jaxs() -> None:
    _prints_the_same_under_both(_JAXTYPING_PROBE)


def _prints_the_same_under_both(probe: str) -> None:
    """Run ``probe`` under JAX and under plait (by the alias), in subprocesses: the same
    output, with some ``True`` in it."""
    theirs = _python(probe)
    ours = _python("import plait.compat\nplait.compat.alias_jax()\n" + textwrap.dedent(probe))
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
    assert "True" in theirs.stdout


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
