"""The LSTM of JAX 0.10.2's ``jax.experimental.rnn``: cuDNN's packed weight layout, its
initialization, unpacking and gate swapping, the reference LSTM (``lstm_ref``), and
``lstm`` itself.

JAX's ``lstm`` calls cuDNN and runs on GPUs only; plait's runs everywhere, as the
reference LSTM on the unpacked weights (a ``scan`` per layer and direction), so its
gradients come from differentiating that ``scan``.

The packed layout (cuDNN's, for ``num_layers * num_directions`` pseudo-layers, a reverse
layer after each forward one): every pseudo-layer's ``W_ih`` then ``W_hh``, then every
pseudo-layer's ``b_ih`` then ``b_hh``.  Each holds the four gates (input, forget, cell,
output) stacked on its leading axis.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import scan
from plait.frontend.api.jit import jit
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.nn.activations import sigmoid
from plait.frontend.random.samplers import uniform

__all__ = ["get_num_params_in_lstm", "init_lstm_weight", "swap_lstm_gates",
           "unpack_lstm_weights", "lstm_ref", "lstm"]

Shape = tuple[int, ...]
Weights = dict[int, Array]


def _shapes(input_size: int, hidden_size: int, num_layers: int, bidirectional: bool
            ) -> list[Shape]:
    """The shapes of the packed weights, in their order."""
    directions = 2 if bidirectional else 1
    pseudo = num_layers * directions
    gates = 4 * hidden_size
    linear: list[Shape] = []
    for i in range(pseudo):
        # The first layer (both directions) reads the input; later ones the layer below.
        width = input_size if i < directions else directions * hidden_size
        linear += [(gates, width), (gates, hidden_size)]
    return linear + [(gates,), (gates,)] * pseudo


def get_num_params_in_lstm(input_size: int, hidden_size: int, num_layers: int,
                           bidirectional: bool) -> int:
    """The number of packed LSTM weights."""
    return sum(math.prod(s) for s in _shapes(input_size, hidden_size, num_layers,
                                             bidirectional))


def init_lstm_weight(rng: Any, input_size: int, hidden_size: int, num_layers: int,
                     bidirectional: bool) -> Array:
    """Packed LSTM weights drawn from ``U(-k, k)``, ``k = sqrt(1 / hidden_size)`` (JAX's
    draw, bit for bit)."""
    k = np.sqrt(1.0 / hidden_size)
    count = get_num_params_in_lstm(input_size, hidden_size, num_layers, bidirectional)
    return uniform(rng, shape=(count,), dtype=np.float32, minval=-k, maxval=k)


def _blocks(weights: Any, input_size: int, hidden_size: int, num_layers: int,
            bidirectional: bool) -> list[Array]:
    """The packed weights cut into their blocks, each of its shape."""
    weights = pnp.asarray(weights)
    shapes = _shapes(input_size, hidden_size, num_layers, bidirectional)
    count = sum(math.prod(s) for s in shapes)
    if weights.shape != (count,):
        raise ValueError(f"LSTM weights: expected shape ({count},) for input_size="
                         f"{input_size}, hidden_size={hidden_size}, num_layers={num_layers}, "
                         f"bidirectional={bidirectional}, but got {tuple(weights.shape)}")
    offsets = np.cumsum([0] + [math.prod(s) for s in shapes])
    return [weights[int(a):int(b)].reshape(s) for a, b, s in zip(offsets, offsets[1:], shapes)]


def swap_lstm_gates(weights: Any, input_size: int, hidden_size: int, num_layers: int,
                    bidirectional: bool) -> Array:
    """The packed weights with the cell and output gates swapped in every block (between
    gate orders such as PyTorch's and others)."""
    blocks = _blocks(weights, input_size, hidden_size, num_layers, bidirectional)
    swapped = []
    for b in blocks:
        i, f, g, o = pnp.split(b, 4, axis=0)
        swapped.append(pnp.concatenate([i, f, o, g], axis=0).ravel())
    return pnp.concatenate(swapped)


def unpack_lstm_weights(weights: Any, input_size: int, hidden_size: int, num_layers: int,
                        bidirectional: bool) -> tuple[Weights, Weights, Weights, Weights]:
    """The packed weights as ``W_ih, W_hh, b_ih, b_hh``, each a dict from pseudo-layer
    (``2 * layer + direction`` when bidirectional) to its four gates stacked.

    Raises:
      ValueError: ``weights`` is not of the packed size.
    """
    blocks = _blocks(weights, input_size, hidden_size, num_layers, bidirectional)
    pseudo = num_layers * (2 if bidirectional else 1)
    linear, bias = blocks[:2 * pseudo], blocks[2 * pseudo:]
    layers = range(pseudo)
    return ({i: linear[2 * i] for i in layers}, {i: linear[2 * i + 1] for i in layers},
            {i: bias[2 * i] for i in layers}, {i: bias[2 * i + 1] for i in layers})


def _cell(carry: tuple[Array, Array], x: Array, *, W_ih: Array, W_hh: Array,  # noqa: N803
          b_ih: Array, b_hh: Array) -> tuple[tuple[Array, Array], tuple[tuple[Array, Array],
                                                                        Array]]:
    """One LSTM step (PyTorch's equations, JAX's order of operations); the carry is
    also an output, to pick each sequence's last state afterwards."""
    h, c = carry
    gx, gh = pnp.split(W_ih, 4, axis=0), pnp.split(W_hh, 4, axis=0)
    bx, bh = pnp.split(b_ih, 4, axis=0), pnp.split(b_hh, 4, axis=0)
    pre = [x @ gx[k].T + bx[k][None] + h @ gh[k].T + bh[k][None] for k in range(4)]
    i, f, o = sigmoid(pre[0]), sigmoid(pre[1]), sigmoid(pre[3])
    g = pnp.tanh(pre[2])
    c = f * c + i * g
    h = o * pnp.tanh(c)
    return (h, c), ((h, c), h)


def _last_and_masked(seq_lengths: Array, out: Any) -> tuple[tuple[Array, Array], Array]:
    """Each sequence's state at its last step, and the outputs zeroed past each end."""
    _, ((hs, cs), ys) = out
    rows = pnp.arange(hs.shape[1])
    h_t, c_t = hs[seq_lengths - 1, rows], cs[seq_lengths - 1, rows]
    live = seq_lengths[None] > pnp.arange(ys.shape[0], dtype=np.int32)[:, None]
    return (h_t, c_t), pnp.where(live[..., None], ys, 0)


def _reverse_sequences(seqs: Array, seq_lengths: Array) -> Array:
    """Each sequence (time-major) reversed within its length, padding kept at the end."""
    shift = seqs.shape[0] - seq_lengths
    rolled = vmap(functools.partial(pnp.roll, axis=0), in_axes=(1, 0), out_axes=1)(seqs, shift)
    return rolled[::-1]


def _check(x: Array, h_0: Array, c_0: Array, seq_lengths: Array, input_size: int,
           hidden_size: int, num_layers: int, dropout: float, bidirectional: bool) -> None:
    if seq_lengths.dtype != np.dtype(np.int32):
        raise NotImplementedError("`seq_lengths` can only be int32.")
    if dropout != 0.0:
        raise NotImplementedError("Dropout not supported in LSTM reference because we cannot "
                                  "determine CUDNN dropout mask.")
    if x.ndim != 3 or x.shape[2] != input_size:
        raise ValueError(f"LSTM: expected x of shape (batch, seq_len, {input_size}), but got "
                         f"{tuple(x.shape)}")
    state = ((2 if bidirectional else 1) * num_layers, x.shape[0], hidden_size)
    for name, s in (("h_0", h_0), ("c_0", c_0)):
        if tuple(s.shape) != state:
            raise ValueError(f"LSTM: expected {name} of shape {state} (num_directions * "
                             f"num_layers, batch, hidden_size), but got {tuple(s.shape)}")
    if tuple(seq_lengths.shape) != (x.shape[0],):
        raise ValueError(f"LSTM: expected seq_lengths of shape ({x.shape[0]},), but got "
                         f"{tuple(seq_lengths.shape)}")


@functools.partial(jit, static_argnums=(8, 9, 10, 11, 12))
def lstm_ref(x: Array, h_0: Array, c_0: Array, W_ih: Weights, W_hh: Weights,  # noqa: N803
             b_ih: Weights, b_hh: Weights, seq_lengths: Array, input_size: int,
             hidden_size: int, num_layers: int, dropout: float, bidirectional: bool
             ) -> tuple[Array, Array, Array]:
    """The reference LSTM over batch-first ``x`` (``(batch, seq_len, input_size)``),
    from states ``h_0``, ``c_0`` (``(num_directions * num_layers, batch,
    hidden_size)``) with unpacked weights: ``(y, h_n, c_n)``.  Each sequence stops at
    its length in ``seq_lengths`` (int32): its outputs past it are zeros, its final
    state is the one at its last step.

    Raises:
      NotImplementedError: ``dropout`` is not 0 or ``seq_lengths`` is not int32 (JAX's).
      ValueError: the shapes do not fit the sizes.
    """
    _check(x, h_0, c_0, seq_lengths, input_size, hidden_size, num_layers, dropout,
           bidirectional)
    ys = x.transpose(1, 0, 2)  # time-major
    final_h, final_c = [], []
    forward: Array | None = None
    for layer in range(num_layers * (2 if bidirectional else 1)):
        cell = functools.partial(_cell, W_ih=W_ih[layer], W_hh=W_hh[layer], b_ih=b_ih[layer],
                                 b_hh=b_hh[layer])
        reverse = bidirectional and layer % 2 == 1
        inputs = _reverse_sequences(ys, seq_lengths) if reverse else ys
        (h_t, c_t), out = _last_and_masked(seq_lengths, scan(cell, (h_0[layer], c_0[layer]),
                                                              inputs))
        final_h.append(h_t)
        final_c.append(c_t)
        if not bidirectional:
            ys = out
        elif reverse:
            assert forward is not None
            ys = pnp.concatenate([forward, _reverse_sequences(out, seq_lengths)], axis=-1)
        else:
            forward = out
    return ys.transpose(1, 0, 2), pnp.stack(final_h), pnp.stack(final_c)


def lstm(x: Any, h_0: Any, c_0: Any, weights: Any, seq_lengths: Any, input_size: int,
         hidden_size: int, num_layers: int, dropout: float, bidirectional: bool,
         precision: Any = None) -> tuple[Array, Array, Array]:
    """The LSTM of packed ``weights`` (see :func:`lstm_ref` for the rest): JAX's
    ``jax.experimental.rnn.lstm``, which needs cuDNN, computed on any device.
    ``precision`` is accepted for JAX's signature; the products use the default.

    Raises:
      NotImplementedError: ``dropout`` is not 0 (cuDNN's dropout mask cannot be
        reproduced), or ``seq_lengths`` is not int32.
      ValueError: the shapes do not fit the sizes.
    """
    del precision
    out: tuple[Array, Array, Array] = _packed_lstm(
        x, h_0, c_0, weights, seq_lengths, input_size, hidden_size, num_layers, dropout,
        bidirectional)
    return out


@functools.partial(jit, static_argnums=(5, 6, 7, 8, 9))
def _packed_lstm(x: Array, h_0: Array, c_0: Array, weights: Array, seq_lengths: Array,
                 input_size: int, hidden_size: int, num_layers: int, dropout: float,
                 bidirectional: bool) -> tuple[Array, Array, Array]:
    # (one program: the weights are cut in the compiled code, not by eager slices per call)
    unpacked = unpack_lstm_weights(weights, input_size, hidden_size, num_layers,
                                   bidirectional)
    out: tuple[Array, Array, Array] = lstm_ref(x, h_0, c_0, *unpacked, seq_lengths,
                                               input_size, hidden_size, num_layers, dropout,
                                               bidirectional)
    return out
