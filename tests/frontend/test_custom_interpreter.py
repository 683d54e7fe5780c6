"""Seed 001's custom interpreter, written against plait's public IR API."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.extend
import plait.lax as plax
import plait.numpy as pnp
from plait.ir import Atom, Literal

inverse_registry = {plax.exp_p: pnp.log, plax.tanh_p: pnp.arctanh}


def inverse_jaxpr(jaxpr, consts, *args):
    env: dict[Atom, Any] = {}

    def read(var):
        return var.val if type(var) is Literal else env[var]

    def write(var, val):
        env[var] = val

    for v, x in zip(jaxpr.outvars, args):
        write(v, x)
    for v, c in zip(jaxpr.constvars, consts):
        write(v, c)
    for eqn in jaxpr.eqns[::-1]:
        invals = [read(v) for v in eqn.outvars]
        if eqn.primitive not in inverse_registry:
            raise NotImplementedError(f"{eqn.primitive} does not have registered inverse.")
        outval = inverse_registry[eqn.primitive](*invals)
        for v, x in zip(eqn.invars, [outval]):
            write(v, x)
    return [read(v) for v in jaxpr.invars]


def inverse(fun):
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        closed_jaxpr = plait.make_jaxpr(fun)(*args, **kwargs)
        out = inverse_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, *args)
        return out[0]
    return wrapped


def f(x):
    return pnp.exp(pnp.tanh(x))


def test_inverse_inverts_exp_tanh() -> None:
    f_inv = inverse(f)
    assert np.allclose(f_inv(f(1.0)), 1.0)
    xs = np.linspace(-0.9, 0.9, 7).astype(np.float32)
    np.testing.assert_allclose(np.asarray(f_inv(f(xs))), xs, rtol=1e-5, atol=1e-5)


def test_traced_inverse_prints_like_jax() -> None:
    ours = str(plait.make_jaxpr(inverse(f))(f(1.0)))
    # The same interpreter in JAX gives the oracle text.
    jax_registry = {jax.lax.exp_p: jnp.log, jax.lax.tanh_p: jnp.arctanh}

    def jax_inverse(fun):
        def wrapped(*args):
            cj = jax.make_jaxpr(fun)(*args)
            env = {}
            for v, x in zip(cj.jaxpr.outvars, args):
                env[v] = x
            for eqn in cj.jaxpr.eqns[::-1]:
                env[eqn.invars[0]] = jax_registry[eqn.primitive](env[eqn.outvars[0]])
            return env[cj.jaxpr.invars[0]]
        return wrapped

    theirs = str(jax.make_jaxpr(jax_inverse(lambda x: jnp.exp(jnp.tanh(x))))(np.float32(2.0)))
    assert ours == theirs == "{ lambda ; a:f32[]. let b:f32[] = log a; c:f32[] = atanh b in (c,) }"


def test_examine_jaxpr_api_of_seed_001() -> None:
    def bar(w, b, x):
        return pnp.dot(w, x) + b + pnp.ones(5), x

    closed = plait.make_jaxpr(bar)(np.ones((5, 10), np.float32), np.ones(5, np.float32),
                                   np.ones(10, np.float32))
    jaxpr = closed.jaxpr
    assert len(jaxpr.invars) == 3 and len(jaxpr.outvars) == 2 and jaxpr.constvars == ()
    eqn = jaxpr.eqns[0]
    assert eqn.primitive is plax.dot_general_p
    assert eqn.params["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert eqn.params["preferred_element_type"] == np.float32
    assert jaxpr.outvars[1] is jaxpr.invars[2]


def test_inverse_composes_with_jit_vmap_grad() -> None:
    out = plait.jit(plait.vmap(plait.grad(inverse(f))))((pnp.arange(5) + 1.0) / 5.0)
    # The values and type seed 001 prints.
    expected = np.array([-3.1440797, 15.584931, 2.2551253, 1.3155028, 1.0], np.float32)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6)
    assert out.dtype == np.float32 and out.weak_type
    assert repr(out).endswith("dtype=float32, weak_type=True)")


def test_jaxprs_in_params_finds_jaxs_sub_programs() -> None:
    # (equinox's interpreters recurse through jax.core.jaxprs_in_params, which JAX 0.10.2
    # serves from jax.extend.core, and from jax.core with a warning, as plait does.)
    for lib in (plait, jax):
        with pytest.warns(DeprecationWarning, match="jaxprs_in_params is deprecated"):
            assert lib.core.jaxprs_in_params is lib.extend.core.jaxprs_in_params

    def f(lib: Any, np_: Any) -> Any:
        def g(x: Any) -> Any:
            y = lib.lax.cond(x.sum() > 0, np_.sin, np_.cos, x)
            return lib.lax.fori_loop(0, 3, lambda i, c: c * 2, y)
        closed = lib.make_jaxpr(g)(np.ones(3, np.float32))
        return [[str(j) for j in lib.extend.core.jaxprs_in_params(e.params)]
                for e in closed.jaxpr.eqns]
    assert f(plait, pnp) == f(jax, jnp)
