"""_rnn_layer and its backward refuse inconsistent arguments with PyTorch's error types
(their values are checked against NumPy in optable/nn_rnn.py)."""

import pytest

import flambeau as F


def args(mode="LSTM", steps=3, batch=2, inp=3, hidden=2, sizes=(), **change):
    k = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    a = {
        "input": F.randn(sum(sizes), inp) if sizes else F.randn(steps, batch, inp),
        "hx": F.randn(sizes[0] if sizes else batch, hidden),
        "cx": F.randn(sizes[0] if sizes else batch, hidden) if mode == "LSTM" else None,
        "weight_ih": F.randn(k * hidden, inp),
        "weight_hh": F.randn(k * hidden, hidden),
        "bias_ih": F.randn(k * hidden),
        "bias_hh": F.randn(k * hidden),
        "weight_hr": None,
        "batch_sizes": list(sizes),
        "mode": mode,
    }
    a.update(change)
    return a


def test_valid_arguments_run():
    out, hy, cy, ws = F._rnn_layer(**args())
    assert out.shape == (3, 2, 2) and hy.shape == (2, 2) and cy.shape == (2, 2)
    assert ws.shape == (6, 10)
    out, hy, cy, ws = F._rnn_layer(**args("GRU", sizes=(2, 2, 1)))
    assert out.shape == (5, 2) and cy.shape == (0,) and ws.shape == (5, 8)


@pytest.mark.parametrize(
    "change, error, match",
    [
        ({"mode": "LSTMX"}, ValueError, "unknown mode"),
        ({"input": F.randn(3, 3), "batch_sizes": [1, 2]}, RuntimeError, "non-increasing"),
        ({"input": F.randn(2, 3), "batch_sizes": [2, 0]}, RuntimeError, "positive"),
        ({"input": F.randn(4, 3), "batch_sizes": [2, 1]}, RuntimeError, "sum to 3"),
        ({"input": F.randn(6, 3)}, RuntimeError, "3-D input"),
        ({"cx": None}, RuntimeError, "cell state"),
        ({"hx": F.randn(3, 2)}, RuntimeError, "hx of shape"),
        ({"weight_hh": F.randn(8, 3)}, RuntimeError, "weight_hh of shape"),
        ({"weight_ih": F.randn(7, 3)}, RuntimeError, "multiple"),
        ({"bias_hh": None}, RuntimeError, "both biases"),
        ({"hx": F.randn(2, 2, dtype=F.float64)}, RuntimeError, "float32"),
        ({"input": F.randint(0, 3, (3, 2, 3))}, RuntimeError, "float32 or float64"),
        (
            {"weight_hr": F.randn(1, 3), "weight_hh": F.randn(8, 1), "hx": F.randn(2, 1)},
            RuntimeError,
            "weight_hr of shape",
        ),
    ],
)
def test_inconsistent_arguments_raise(change, error, match):
    with pytest.raises(error, match=match):
        F._rnn_layer(**args(**change))


def test_gru_takes_no_cell_state_or_projection():
    with pytest.raises(RuntimeError, match="only LSTM takes a cell state"):
        F._rnn_layer(**args("GRU", cx=F.randn(2, 2)))
    with pytest.raises(RuntimeError, match="only supported for LSTM"):
        F._rnn_layer(**args("GRU", weight_hr=F.randn(1, 2)))


def test_backward_checks_its_saved_tensors():
    a = args()
    out, hy, cy, ws = F._rnn_layer(**a)
    rest = {k: a[k] for k in ("batch_sizes", "mode")}
    tensors = [a[k] for k in ("input", "hx", "cx", "weight_ih", "weight_hh", "bias_ih",
                              "bias_hh", "weight_hr")]  # fmt: skip
    grads = F._rnn_layer_backward(out, hy, cy, *tensors, out, ws, **rest, reverse=False)
    assert [tuple(g.shape) for g in grads[:3]] == [(3, 2, 3), (2, 2), (2, 2)]
    with pytest.raises(RuntimeError, match="workspace of shape"):
        F._rnn_layer_backward(out, hy, cy, *tensors, out, ws[:, :4], **rest, reverse=False)
    with pytest.raises(RuntimeError, match="grad_output of shape"):
        F._rnn_layer_backward(out[:1], hy, cy, *tensors, out, ws, **rest, reverse=False)
    gru = args("GRU")
    out, hy, _, ws = F._rnn_layer(**gru)
    tensors = [gru[k] for k in ("input", "hx", "cx", "weight_ih", "weight_hh", "bias_ih",
                                "bias_hh", "weight_hr")]  # fmt: skip
    with pytest.raises(RuntimeError, match="no cell state"):
        F._rnn_layer_backward(out, hy, hy, *tensors, out, ws, [], "GRU", False)
