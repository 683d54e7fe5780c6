"""``plait.ad_checkpoint`` against ``jax.ad_checkpoint`` 0.10.2: ``checkpoint_name``,
every policy of ``checkpoint_policies`` (and a user's policy function), and
``saved_residuals``, whose list of saved values is compared with JAX's one by one
(type and origin; source lines aside)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.ad_checkpoint as jac
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.ad_checkpoint as pac
import plait.numpy as pnp
from plait.ir import check_jaxpr, parse_jaxpr
from tests.frontend.jax_oracle import assert_close

LIBS = {"jax": (jax, jac, jnp), "plait": (plait, pac, pnp)}
W = ((np.arange(16, dtype=np.float32).reshape(4, 4) - 7.5) / 10.0)
X = np.linspace(-1.0, 1.0, 4, dtype=np.float32)


def block(lib: str) -> Callable[[Any, Any], Any]:
    """Two named layers: h1 after a matrix product, h2 after a batched one."""
    L, A, np_ = LIBS[lib]

    def f(w: Any, x: Any) -> Any:
        h1 = A.checkpoint_name(np_.sin(w @ x), "h1")
        h2 = A.checkpoint_name(np_.tanh(np_.einsum("ij,bj->bi", w, h1[None, :] * w)), "h2")
        return np_.sum(np_.cos(h2) * h1)
    return f


def policies(lib: str) -> dict[str, Any]:
    cp = LIBS[lib][1].checkpoint_policies
    return {
        "nothing": cp.nothing_saveable, "everything": cp.everything_saveable,
        "dots": cp.dots_saveable, "checkpoint_dots": cp.checkpoint_dots,
        "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
        "only_h1": cp.save_only_these_names("h1"),
        "only_h1_h2": cp.save_only_these_names("h1", "h2"),
        "names_but_h1": cp.save_any_names_but_these("h1"),
        "both": cp.save_from_both_policies(cp.dots_with_no_batch_dims_saveable,
                                           cp.save_only_these_names("h2")),
        "custom": lambda prim, *avals, **params: prim.name == "tanh",
        "custom_answers": lambda prim, *_, **__: (jac.Saveable if lib == "jax" else pac.Saveable)
        if prim.name == "sin" else (jac.Recompute if lib == "jax" else pac.Recompute),
    }


def _origin(text: str) -> str:
    """A residual's description without its source location (JAX gives a column)."""
    return re.sub(r" from (?!the argument|a constant).*$", "", text)


def residuals(lib: str, fn: Callable[..., Any], *args: Any) -> list[tuple[str, str]]:
    A = LIBS[lib][1]
    saved = (jax._src.ad_checkpoint.saved_residuals if lib == "jax" else A.saved_residuals)(
        fn, *args)
    return sorted((aval.str_short(short_dtypes=True), _origin(what)) for aval, what in saved)


@pytest.mark.parametrize("name", list(policies("jax")))
def test_each_policy_saves_what_jax_saves_and_gives_jax_gradient(name: str) -> None:
    def program(lib: str) -> tuple[Any, Any, Callable[..., Any]]:
        L = LIBS[lib][0]
        f = L.checkpoint(block(lib), policy=policies(lib)[name])
        return L.grad(f, argnums=(0, 1))(W, X), L.jit(L.grad(f))(W, X), f
    (jg, jjit, jf), (pg, pjit, pf) = program("jax"), program("plait")
    assert_close(pg, jg, rtol=1e-5, atol=1e-6)
    assert_close(pjit, jjit, rtol=1e-5, atol=1e-6)
    got, want = residuals("plait", pf, W, X), residuals("jax", jf, W, X)
    if name == "everything":
        # What the function saves without checkpoint, where plait saves less than JAX:
        # one broadcast where JAX has two equal ones.
        assert got == residuals("plait", block("plait"), W, X)
        assert not set(got) - set(want) and len(got) == len(want) - 1
    else:
        assert got == want


def test_saved_residuals_through_jit_and_names_match_jax() -> None:
    def program(lib: str) -> Callable[..., Any]:
        L, A, np_ = LIBS[lib]

        def g(w: Any, x: Any) -> Any:
            return np_.sin(A.checkpoint_name(np_.sin(w @ x), "z"))

        def f(ws: Any, x: Any) -> Any:
            x = g(ws[0], x)
            x = L.jit(g)(ws[1], x)
            pol = A.checkpoint_policies.save_only_these_names("z")
            return L.checkpoint(g, policy=pol)(ws[2], x)
        return f
    ws = (W, W * 2.0, W * 3.0)
    got = residuals("plait", program("plait"), ws, X)
    assert got == residuals("jax", program("jax"), ws, X)
    assert ("f32[4,4]", "from the argument ws[1]") in got  # passed on through the jit
    out = pac.saved_residuals(program("plait"), ws, X)
    assert any(re.search(r"named 'z' from .*test_ad_checkpoint\.py:\d+:\d+ \(.*<locals>\.g\)", w)
               for _, w in out)


def test_print_saved_residuals_prints_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    pac.print_saved_residuals(lambda w, x: pnp.sum(pnp.sin(w @ x)), W, X)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["f32[4,4] from the argument w", "f32[4] from the argument x"]
    assert re.fullmatch(r"f32\[4\] output of cos from .*test_ad_checkpoint\.py:\d+:\d+ "
                        r"\(.*<locals>\.<lambda>\)", lines[2])
    assert len(lines) == 3


def test_checkpoint_name_is_the_identity_on_pytrees_and_stages_name_equations() -> None:
    tree = {"a": X, "b": (W,)}
    assert pac.checkpoint_name(tree, "t") is tree
    closed = plait.make_jaxpr(lambda t: pac.checkpoint_name(t, "t"))(tree)
    assert str(closed) == str(jax.make_jaxpr(lambda t: jac.checkpoint_name(t, "t"))(tree))
    out = plait.jit(lambda t: pac.checkpoint_name(t, "t"))(tree)
    assert_close(out, tree)
    v = plait.vmap(lambda x: pac.checkpoint_name(x * 2.0, "v"))(W)
    assert_close(v, W * 2.0)
    assert_close(plait.jvp(lambda x: pac.checkpoint_name(pnp.sin(x), "s"), (X,), (X,)),
                 jax.jvp(lambda x: jac.checkpoint_name(jnp.sin(x), "s"), (X,), (X,)))


_NAMES = st.lists(st.sampled_from(["h1", "h2", "attn_out"]), min_size=1, max_size=3)


def _policy_strategy() -> st.SearchStrategy[Any]:
    cp = pac.checkpoint_policies
    leaf = st.one_of(
        st.sampled_from([cp.nothing_saveable, cp.everything_saveable, cp.dots_saveable,
                         cp.dots_with_no_batch_dims_saveable]),
        _NAMES.map(lambda n: cp.save_only_these_names(*n)),
        _NAMES.map(lambda n: cp.save_any_names_but_these(*n)),
        _NAMES.map(lambda n: cp.save_anything_except_these_names(*n)))
    return st.recursive(leaf, lambda inner: st.tuples(inner, inner).map(
        lambda p: cp.save_from_both_policies(*p)), max_leaves=4)


@settings(max_examples=25, deadline=None)
@given(_policy_strategy())
def test_policies_print_and_parse_back(policy: Any) -> None:
    closed = plait.make_jaxpr(plait.checkpoint(block("plait"), policy=policy))(W, X)
    parsed = parse_jaxpr(str(closed))
    check_jaxpr(parsed)
    assert parsed == closed.jaxpr
    assert parsed.eqns[0].params["policy"] == policy
    # and the differentiated program is still well typed
    check_jaxpr(plait.make_jaxpr(plait.grad(plait.checkpoint(block("plait"), policy=policy)))(
        W, X).jaxpr)


def test_offloading_policies_save_on_the_device() -> None:
    # plait has one memory kind: what JAX offloads to the host, plait saves.
    cp = pac.checkpoint_policies
    off = cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["h1"], names_which_can_be_offloaded=["h2"],
        offload_src="device", offload_dst="pinned_host")
    both = cp.save_only_these_names("h1", "h2")
    f = block("plait")
    assert residuals("plait", plait.checkpoint(f, policy=off), W, X) == \
        residuals("plait", plait.checkpoint(f, policy=both), W, X)
    g = plait.grad(plait.checkpoint(f, policy=cp.offload_dot_with_no_batch_dims("device",
                                                                               "pinned_host")))
    assert_close(g(W, X), jax.grad(jax.checkpoint(block("jax")))(W, X), rtol=1e-5)


def test_policy_errors() -> None:
    cp = pac.checkpoint_policies
    with pytest.raises(ValueError, match=r"not to intersect, but both have \['h1'\]"):
        cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["h1"], names_which_can_be_offloaded=["h1"],
            offload_src="device", offload_dst="pinned_host")
    with pytest.raises(ValueError):  # JAX raises ValueError too
        jac.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["h1"], names_which_can_be_offloaded=["h1"],
            offload_src="device", offload_dst="pinned_host")
    with pytest.raises(TypeError, match="expected names"):
        cp.save_only_these_names(3)
    with pytest.raises(TypeError, match="expected a str name"):
        pac.checkpoint_name(X, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a policy"):
        plait.checkpoint(block("plait"), policy="dots")  # type: ignore[arg-type]
    bad = plait.checkpoint(block("plait"), policy=lambda prim, *_, **__: "yes")
    with pytest.raises(TypeError, match="expected a bool, Saveable, Recompute or Offloadable, "
                                        "but got 'yes'"):
        plait.grad(bad)(W, X)
