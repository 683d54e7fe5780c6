"""``plait.experimental.rnn``: the LSTM of ``jax.experimental.rnn`` (cuDNN's packed
weights, ``lstm``, ``lstm_ref``), running on any device (see
:mod:`plait.frontend.nn.lstm`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.nn.lstm import get_num_params_in_lstm as get_num_params_in_lstm
from plait.frontend.nn.lstm import init_lstm_weight as init_lstm_weight
from plait.frontend.nn.lstm import lstm as lstm
from plait.frontend.nn.lstm import lstm_ref as lstm_ref
from plait.frontend.nn.lstm import swap_lstm_gates as swap_lstm_gates
from plait.frontend.nn.lstm import unpack_lstm_weights as unpack_lstm_weights

__all__ = ["get_num_params_in_lstm", "init_lstm_weight", "lstm", "lstm_ref",
           "swap_lstm_gates", "unpack_lstm_weights"]
