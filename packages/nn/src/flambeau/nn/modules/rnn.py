"""Recurrent layers: RNN, LSTM, GRU and their single-step cells.

The sequence layers run each layer and direction as one core operator, _rnn_layer: the
input projection of every step in one GEMM, one small GEMM and the fused gate arithmetic
per step, and in backward the weight gradients as GEMMs over all steps (gate chunks in
PyTorch's order: LSTM i, f, g, o; GRU r, z, n). Padded and packed inputs share one kernel:
a padded batch is a packed one whose every step holds the whole batch. The cells run the
core's fused cells (_thnn_fused_lstm_cell / _thnn_fused_gru_cell) after their two products.
"""

from __future__ import annotations

import math
import warnings

import flambeau

from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
# PyTorch's autocast runs LSTM and the plain RNNs in its lower precision (GRU is not on
# its list): inputs, states and weights are cast, so the outputs have that dtype too.
_AUTOCAST_MODES = frozenset({"LSTM", "RNN_TANH", "RNN_RELU"})


def _autocast_dtype(mode: str, t):
    device = t.device.type
    if mode in _AUTOCAST_MODES and t.is_floating_point() and flambeau.is_autocast_enabled(device):
        return flambeau.get_autocast_dtype(device)
    return None


def _lin(x, weight):
    return flambeau.matmul(x, weight.t())


def _rnn_step(mode, igates, h, c, w_hh, b_ih, b_hh):
    """One step of a cell (LSTMCell, GRUCell, RNNCell): returns (h, c)."""
    hgates = _lin(h, w_hh)
    if mode == "LSTM":
        if igates.dtype in (flambeau.float32, flambeau.float64):
            h, c, _ = flambeau._thnn_fused_lstm_cell(igates, hgates, c, b_ih, b_hh)
        else:  # autocast's 16-bit dtypes: the cell's arithmetic in float32, as oneDNN's
            low = igates.dtype
            up = [None if t is None else t.float() for t in (igates, hgates, c, b_ih, b_hh)]
            h, c, _ = flambeau._thnn_fused_lstm_cell(*up)
            h, c = h.to(low), c.to(low)
        return h, c
    if mode == "GRU":
        h, _ = flambeau._thnn_fused_gru_cell(igates, hgates, h, b_ih, b_hh)
        return h, None
    pre = igates + hgates
    if b_ih is not None:
        pre = pre + b_ih + b_hh
    return (flambeau.tanh(pre) if mode == "RNN_TANH" else flambeau.relu(pre)), None


def _run_layer(mode, x, batch_sizes, h0, c0, weights, reverse):
    """One layer in one direction over the whole sequence: the core's fused _rnn_layer, one
    operator and one autograd node. x is (steps, batch, features) with batch_sizes empty,
    or packed data with its batch_sizes. The kernel computes in float32 or float64; 16-bit
    inputs (autocast's) run in float32 and come back in their dtype, as oneDNN's RNNs do."""
    low = x.dtype if x.dtype not in (flambeau.float32, flambeau.float64) else None
    if low is not None:
        x, h0 = x.float(), h0.float()
        c0 = None if c0 is None else c0.float()
        weights = tuple(None if w is None else w.float() for w in weights)
    out, h, c, _ = flambeau._rnn_layer(x, h0, c0, *weights, batch_sizes, mode, reverse)
    if mode != "LSTM":
        c = None
    if low is not None:
        out, h = out.to(low), h.to(low)
        c = None if c is None else c.to(low)
    return out, h, c


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU.

    >>> import flambeau.nn as nn
    >>> rnn = nn.RNNBase("GRU", input_size=4, hidden_size=6, num_layers=2)
    >>> isinstance(nn.LSTM(4, 6), nn.RNNBase)
    True
    >>> [name for name, _ in rnn.named_parameters()][:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        cls = type(self).__name__
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(f"{cls}: dropout should be a number in [0, 1], got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(
                f"{cls}: hidden_size ({hidden_size}) and num_layers ({num_layers}) must be positive"
            )
        if proj_size < 0:
            raise ValueError(f"{cls}: proj_size should be a positive integer or zero")
        if proj_size and mode != "LSTM":
            raise ValueError(
                f"{cls}: proj_size argument is only supported for LSTM, not RNN or GRU"
            )
        if proj_size >= hidden_size:
            raise ValueError(f"{cls}: proj_size ({proj_size}) has to be smaller than hidden_size")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_in = input_size if layer == 0 else real_hidden * num_directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [(f"weight_ih{suffix}", (gate_size, layer_in)),
                          (f"weight_hh{suffix}", (gate_size, real_hidden))]  # fmt: skip
                if bias:
                    shapes += [(f"bias_ih{suffix}", (gate_size,)),
                               (f"bias_hh{suffix}", (gate_size,))]  # fmt: skip
                if proj_size > 0:
                    shapes.append((f"weight_hr{suffix}", (proj_size, hidden_size)))
                for name, shape in shapes:
                    param = flambeau.empty(shape, dtype=dtype, device=device)
                    setattr(self, name, Parameter(param))
                self._flat_weights_names.extend(name for name, _ in shapes)
                self._all_weights.append([name for name, _ in shapes])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch compatibility (there is no cuDNN weight buffer)."""

    def _layer_weights(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        get = lambda n: getattr(self, f"{n}{suffix}", None)  # noqa: E731
        b_ih, b_hh = (get("bias_ih"), get("bias_hh")) if self.bias else (None, None)
        w_hr = get("weight_hr") if self.proj_size > 0 else None
        weights = (get("weight_ih"), get("weight_hh"), b_ih, b_hh, w_hr)
        dtype = _autocast_dtype(self.mode, weights[0])
        if dtype is None:
            return weights
        return tuple(None if w is None else w.to(dtype) for w in weights)

    def _check_hidden(self, hx, expected, what: str):
        if tuple(hx.shape) != expected:
            raise RuntimeError(
                f"{type(self).__name__}: expected {what} size {expected}, got {tuple(hx.shape)}"
            )

    def forward(self, input, hx=None):
        cls = type(self).__name__
        lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            data, batch_sizes = input.data, input.batch_sizes
            sizes = [int(v) for v in batch_sizes.tolist()]
            batch = sizes[0]
            if data.dim() != 2:
                raise ValueError(
                    f"{cls}: packed input data must be 2-D (sum of lengths, input_size), got "
                    f"shape {tuple(data.shape)}"
                )
        else:
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{cls}: expected input to be 2-D (unbatched) or 3-D, got {input.dim()}-D "
                    f"tensor of shape {tuple(input.shape)}"
                )
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else (
                input.transpose(0, 1) if self.batch_first else input)  # fmt: skip
            batch = x.shape[1]
            sizes, data = [], x  # padded: every step holds the whole batch
        if data.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{cls}: input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {data.shape[-1]} (input of shape "
                f"{tuple((input.data if packed else input).shape)})"
            )
        h_shape = (self.num_layers * num_directions, batch, real_hidden)
        c_shape = (self.num_layers * num_directions, batch, self.hidden_size)
        if hx is None:
            h0 = flambeau.zeros(h_shape, dtype=data.dtype, device=data.device)
            c0 = flambeau.zeros(c_shape, dtype=data.dtype, device=data.device) if lstm else None
        else:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError(f"{cls}: expected hx to be a tuple (h_0, c_0)")
                h0, c0 = hx
            else:
                if isinstance(hx, (tuple, list)):
                    raise RuntimeError(f"{cls}: expected hx to be a Tensor, got a tuple")
                h0, c0 = hx, None
            if unbatched:
                if h0.dim() != 2 or (lstm and c0.dim() != 2):
                    raise RuntimeError(
                        f"{cls}: for unbatched 2-D input, hx should also be 2-D but got "
                        f"{h0.dim()}-D tensor"
                    )
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if lstm else None
            self._check_hidden(h0, h_shape, "hidden")
            if lstm:
                self._check_hidden(c0, c_shape, "cell state")
            if packed and input.sorted_indices is not None:
                h0 = h0.index_select(1, input.sorted_indices)
                c0 = c0.index_select(1, input.sorted_indices) if lstm else None
        dtype = _autocast_dtype(self.mode, data)
        if dtype is not None:
            data, h0 = data.to(dtype), h0.to(dtype)
            c0 = c0.to(dtype) if lstm else None
        h_n, c_n = [], []
        layer_in = data
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                out, h, c = _run_layer(self.mode, layer_in, sizes, h0[idx],
                                       c0[idx] if lstm else None,
                                       self._layer_weights(layer, direction),
                                       reverse=direction == 1)  # fmt: skip
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            layer_in = outs[0] if num_directions == 1 else flambeau.cat(outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = flambeau.dropout(layer_in, self.dropout, True)
        h_n = flambeau.stack(h_n, 0)
        c_n = flambeau.stack(c_n, 0) if lstm else None
        if packed:
            if input.unsorted_indices is not None:
                h_n = h_n.index_select(1, input.unsorted_indices)
                c_n = c_n.index_select(1, input.unsorted_indices) if lstm else None
            output = PackedSequence(layer_in, input.batch_sizes, input.sorted_indices,
                                    input.unsorted_indices)  # fmt: skip
        else:
            output = layer_in
            if unbatched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if lstm else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if lstm else h_n)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> rnn = nn.RNN(input_size=10, hidden_size=20, num_layers=2)
    >>> x, h0 = flambeau.randn(5, 3, 10), flambeau.randn(2, 3, 20)
    >>> output, hn = rnn(x, h0)
    >>> output.shape, hn.shape
    (flambeau.Size([5, 3, 20]), flambeau.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None, proj_size: int = 0):  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r} (use 'tanh' or 'relu')")
        self.nonlinearity = nonlinearity
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)  # fmt: skip

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s + (", nonlinearity='relu'" if self.nonlinearity == "relu" else "")


class LSTM(RNNBase):
    """Long short-term memory; returns output, (h_n, c_n). proj_size > 0 projects h_t.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> lstm = nn.LSTM(input_size=10, hidden_size=20, num_layers=2, batch_first=True)
    >>> output, (hn, cn) = lstm(flambeau.randn(3, 5, 10))
    >>> output.shape, hn.shape, cn.shape
    (flambeau.Size([3, 5, 20]), flambeau.Size([2, 3, 20]), flambeau.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):  # fmt: skip
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)  # fmt: skip


class GRU(RNNBase):
    """Gated recurrent unit; returns output, h_n.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> gru = nn.GRU(input_size=10, hidden_size=20, bidirectional=True)
    >>> output, hn = gru(flambeau.randn(5, 3, 10))
    >>> output.shape, hn.shape
    (flambeau.Size([5, 3, 40]), flambeau.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, proj_size: int = 0):  # fmt: skip
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)  # fmt: skip


# ---- cells ----------------------------------------------------------------------------------


class RNNCellBase(Module):
    """weight_ih (gates*hidden, input), weight_hh (gates*hidden, hidden), optional biases.

    >>> import flambeau.nn as nn
    >>> cell = nn.GRUCell(4, 6)
    >>> isinstance(cell, nn.RNNCellBase)
    True
    >>> cell.weight_ih.shape, cell.weight_hh.shape
    (flambeau.Size([18, 4]), flambeau.Size([18, 6]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(flambeau.empty((g, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(flambeau.empty((g, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(flambeau.empty(g, dtype=dtype, device=device))
            self.bias_hh = Parameter(flambeau.empty(g, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, n_states: int):
        cls = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{cls}: expected input to be 1-D or 2-D, got {input.dim()}-D tensor of shape "
                f"{tuple(input.shape)}"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{cls}: input has inconsistent input_size: got {input.shape[-1]} (input of shape "
                f"{tuple(input.shape)}), expected {self.input_size}"
            )
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        shape = (x.shape[0], self.hidden_size)
        if hx is None:
            states = [flambeau.zeros(shape, dtype=x.dtype, device=x.device)] * n_states
        else:
            states = list(hx) if n_states == 2 else [hx]
            if len(states) != n_states:
                raise RuntimeError(f"{cls}: expected hx to be a tuple (h_0, c_0)")
            states = [s.unsqueeze(0) if unbatched else s for s in states]
            for s in states:
                if tuple(s.shape) != shape:
                    raise RuntimeError(
                        f"{cls}: hidden state has shape {tuple(s.shape)}, expected {shape} "
                        f"for input of shape {tuple(input.shape)}"
                    )
        return x, states, unbatched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        return s + (f", nonlinearity={nl}" if nl != "tanh" else "")


class RNNCell(RNNCellBase):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> cell = nn.RNNCell(10, 20)
    >>> x, h = flambeau.randn(6, 3, 10), flambeau.zeros(3, 20)
    >>> for t in range(6):
    ...     h = cell(x[t], h)
    >>> h.shape
    flambeau.Size([3, 20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h, _ = _rnn_step(mode, _lin(x, self.weight_ih), h, None, self.weight_hh, self.bias_ih,
                         self.bias_hh)  # fmt: skip
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c').

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> cell = nn.LSTMCell(10, 20)
    >>> x = flambeau.randn(6, 3, 10)
    >>> h, c = flambeau.zeros(3, 20), flambeau.zeros(3, 20)
    >>> for t in range(6):
    ...     h, c = cell(x[t], (h, c))
    >>> h.shape, c.shape
    (flambeau.Size([3, 20]), flambeau.Size([3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        h, c = _rnn_step("LSTM", _lin(x, self.weight_ih), h, c, self.weight_hh, self.bias_ih,
                         self.bias_hh)  # fmt: skip
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step: returns h'.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> cell = nn.GRUCell(10, 20)
    >>> x, h = flambeau.randn(6, 3, 10), flambeau.zeros(3, 20)
    >>> for t in range(6):
    ...     h = cell(x[t], h)
    >>> h.shape
    flambeau.Size([3, 20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        h, _ = _rnn_step("GRU", _lin(x, self.weight_ih), h, None, self.weight_hh, self.bias_ih,
                         self.bias_hh)  # fmt: skip
        return h.squeeze(0) if unbatched else h


def _apply_permutation(tensor, permutation, dim: int = 1):
    """tensor reordered along dim by permutation (a packed sequence's sort order)."""
    return tensor.index_select(dim, permutation)


def apply_permutation(tensor, permutation, dim: int = 1):
    """Deprecated form of tensor.index_select(dim, permutation)."""
    warnings.warn(
        "`apply_permutation` is deprecated, please use `tensor.index_select(dim, permutation)` "
        "instead",
        FutureWarning,
        stacklevel=2,
    )
    return _apply_permutation(tensor, permutation, dim)
