"""plait.experimental.rnn against jax.experimental.rnn 0.10.2: the packed weights (their
count, initialization, gate swap and unpacking), the LSTM (``lstm``, which JAX runs on
GPUs only, against JAX's ``lstm_ref`` on the unpacked weights; and ``lstm_ref`` against
``lstm_ref``), its gradients, ragged and bidirectional sequences, and bad input."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.experimental import rnn as jrnn

import plait
from plait.experimental import rnn

CONFIGS = [(3, 4, 1, False), (3, 4, 2, False), (3, 4, 2, True), (5, 2, 1, True)]


def _inputs(input_size: int, hidden_size: int, num_layers: int, bidirectional: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    batch, steps, states = 3, 6, (2 if bidirectional else 1) * num_layers
    return (rng.standard_normal((batch, steps, input_size)).astype(np.float32),
            rng.standard_normal((states, batch, hidden_size)).astype(np.float32),
            rng.standard_normal((states, batch, hidden_size)).astype(np.float32),
            np.array([6, 3, 1], np.int32))


def _jax_lstm(w: Any, x: Any, h: Any, c: Any, lengths: Any, cfg: tuple[int, int, int, bool]
              ) -> Any:
    ins, hid, layers, bi = cfg
    return jrnn.lstm_ref(x, h, c, *jrnn.unpack_lstm_weights(w, ins, hid, layers, bi), lengths,
                         ins, hid, layers, 0.0, bi)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_packed_weights_match_jax(cfg: tuple[int, int, int, bool]) -> None:
    """Count, initialization (bit for bit), gate swap and unpacking."""
    ins, hid, layers, bi = cfg
    assert rnn.get_num_params_in_lstm(*cfg) == jrnn.get_num_params_in_lstm(*cfg)
    w = rnn.init_lstm_weight(plait.random.key(1), *cfg)
    jw = jrnn.init_lstm_weight(jax.random.key(1), *cfg)
    np.testing.assert_array_equal(np.asarray(w), np.asarray(jw))
    np.testing.assert_array_equal(np.asarray(rnn.swap_lstm_gates(w, *cfg)),
                                  np.asarray(jrnn.swap_lstm_gates(jw, *cfg)))
    for ours, theirs in zip(rnn.unpack_lstm_weights(w, *cfg),
                            jrnn.unpack_lstm_weights(jw, *cfg)):
        assert ours.keys() == theirs.keys()
        for k in ours:
            np.testing.assert_array_equal(np.asarray(ours[k]), np.asarray(theirs[k]))


@pytest.mark.parametrize("cfg", CONFIGS)
def test_lstm_matches_jaxs_reference_bit_for_bit(cfg: tuple[int, int, int, bool]) -> None:
    """Outputs and final states, ragged lengths, every layout; and the gradients with
    respect to the weights, the inputs and the initial state."""
    ins, hid, layers, bi = cfg
    w = np.asarray(jrnn.init_lstm_weight(jax.random.key(2), *cfg))
    x, h, c, lengths = _inputs(*cfg)
    got = rnn.lstm(x, h, c, w, lengths, ins, hid, layers, 0.0, bi)
    want = _jax_lstm(w, x, h, c, lengths, cfg)
    for g, v in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(v))

    def loss(lib: Any, lstm: Any) -> Any:
        return lib.jit(lib.grad(lambda w, x, h: sum((o * o).sum() for o in lstm(w, x, h)),
                                argnums=(0, 1, 2)))(w, x, h)
    ours = loss(plait, lambda w, x, h: rnn.lstm(x, h, c, w, lengths, ins, hid, layers, 0.0,
                                                bi))
    theirs = loss(jax, lambda w, x, h: _jax_lstm(w, x, h, c, lengths, cfg))
    for g, v in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-6, atol=1e-6)


def test_lstm_ref_matches_jax_under_jit_and_vmap() -> None:
    """``lstm_ref`` on unpacked weights, inside ``jit`` and mapped over weight sets."""
    cfg = (3, 4, 2, True)
    ins, hid, layers, bi = cfg
    ws = np.stack([np.asarray(jrnn.init_lstm_weight(jax.random.key(k), *cfg))
                   for k in range(2)])
    x, h, c, lengths = _inputs(*cfg)

    def run(lib: Any, mod: Any, w: Any) -> Any:
        return mod.lstm_ref(x, h, c, *mod.unpack_lstm_weights(w, *cfg), lengths, ins, hid,
                            layers, 0.0, bi)
    got = plait.jit(plait.vmap(lambda w: run(plait, rnn, w)))(ws)
    want = jax.jit(jax.vmap(lambda w: run(jax, jrnn, w)))(ws)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-6, atol=1e-6)


def test_bad_input_is_refused() -> None:
    """Dropout and non-int32 lengths raise JAX's NotImplementedError; shapes that do not
    fit the sizes a ValueError naming the argument and both shapes."""
    cfg = (3, 4, 1, False)
    w = rnn.init_lstm_weight(plait.random.key(0), *cfg)
    x, h, c, lengths = _inputs(*cfg)
    with pytest.raises(NotImplementedError, match="Dropout not supported"):
        rnn.lstm(x, h, c, w, lengths, 3, 4, 1, 0.5, False)
    with pytest.raises(NotImplementedError, match="can only be int32"):
        rnn.lstm(x, h, c, w, lengths.astype(np.int16), 3, 4, 1, 0.0, False)
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(1, 3, 4\).*got \(2, 3, 4\)"):
        rnn.lstm(x, np.concatenate([h, h]), c, w, lengths, 3, 4, 1, 0.0, False)
    w5 = rnn.init_lstm_weight(plait.random.key(0), 5, 4, 1, False)
    with pytest.raises(ValueError, match=r"expected x of shape \(batch, seq_len, 5\)"):
        rnn.lstm(x, h, c, w5, lengths, 5, 4, 1, 0.0, False)
    with pytest.raises(ValueError, match=r"weights: expected shape \(144,\).*got \(10,\)"):
        rnn.lstm(x, h, c, w[:10], lengths, 3, 4, 1, 0.0, False)
