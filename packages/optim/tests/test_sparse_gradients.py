"""Optimizers given the sparse gradients of an embedding (sparse=True), as PyTorch: SGD and
Adagrad step on them (checked against the NumPy rules applied to the scattered dense
gradient), LBFGS flattens them densely, and the others refuse them with PyTorch's
errors."""

from __future__ import annotations

import numpy as np
import pytest
import reference as R

import flambeau
from flambeau import optim

RNG = np.random.default_rng(3)
X0 = RNG.standard_normal((6, 3))
TARGET = RNG.standard_normal((2, 4, 3))
# Rows 0 and 2 twice, row 5 never: an uncoalesced gradient that leaves a row alone.
BATCHES = [np.array([[0, 2, 2, 1], [3, 2, 4, 0]]), np.array([[1, 1, 3, 4], [0, 2, 2, 2]])]


def loss(w, idx, sparse):
    rows = flambeau.embedding(w, flambeau.tensor(idx.tolist()), -1, False, sparse)
    return ((rows - flambeau.tensor(TARGET.tolist(), dtype=flambeau.float64)) ** 2).sum()


def numpy_grad(x, idx):
    g = np.zeros_like(x)
    np.add.at(g, idx.reshape(-1), (2 * (x[idx] - TARGET)).reshape(-1, x.shape[1]))
    return g


@pytest.mark.parametrize(
    "name, step, opts",
    [
        ("SGD", R.step_sgd, dict(lr=0.1)),
        ("SGD", R.step_sgd, dict(lr=0.1, momentum=0.9, dampening=0.2)),
        ("SGD", R.step_sgd, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
        ("SGD", R.step_sgd, dict(lr=0.1, momentum=0.9, foreach=False)),
        ("Adagrad", R.step_adagrad, dict(lr=0.1)),
        ("Adagrad", R.step_adagrad, dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5)),
        ("Adagrad", R.step_adagrad, dict(lr=0.1, maximize=True, eps=1e-3, foreach=False)),
    ],
)
def test_sparse_gradient_steps_follow_the_dense_rule(name, step, opts):
    w = flambeau.tensor(X0.tolist(), dtype=flambeau.float64, requires_grad=True)
    opt = getattr(optim, name)([w], **opts)
    x, state = X0.copy(), {}
    ref_opts = {k: v for k, v in opts.items() if k != "foreach"}
    for t in range(1, 7):
        idx = BATCHES[t % 2]
        opt.zero_grad()
        loss(w, idx, sparse=True).backward()
        assert w.grad.is_sparse
        opt.step()
        step(x, numpy_grad(x, idx), state, t, **ref_opts)
        np.testing.assert_allclose(w.detach().numpy(), x, rtol=1e-12, atol=1e-12)
    assert np.array_equal(w.detach().numpy()[5], X0[5])  # never named: never moved


@pytest.mark.parametrize("name", ["SGD", "Adagrad"])
def test_a_group_mixing_sparse_and_dense_gradients(name):
    w = flambeau.tensor(X0.tolist(), dtype=flambeau.float64, requires_grad=True)
    b = flambeau.tensor([1.0, -2.0, 0.5], dtype=flambeau.float64, requires_grad=True)
    opt = getattr(optim, name)([w, b], lr=0.1)
    x, xb, sw, sb = X0.copy(), np.array([1.0, -2.0, 0.5]), {}, {}
    step = R.step_sgd if name == "SGD" else R.step_adagrad
    for t in range(1, 4):
        idx = BATCHES[t % 2]
        opt.zero_grad()
        (loss(w, idx, sparse=True) + (b**2).sum()).backward()
        opt.step()
        step(x, numpy_grad(x, idx), sw, t, lr=0.1)
        step(xb, 2 * xb, sb, t, lr=0.1)
    np.testing.assert_allclose(w.detach().numpy(), x, rtol=1e-12)
    np.testing.assert_allclose(b.detach().numpy(), xb, rtol=1e-12)


def test_weight_decay_with_sparse_gradients_raises_as_in_pytorch():
    w = flambeau.tensor(X0.tolist(), dtype=flambeau.float64, requires_grad=True)
    loss(w, BATCHES[0], sparse=True).backward()
    with pytest.raises(RuntimeError, match="weight_decay option is not compatible"):
        optim.Adagrad([w], weight_decay=0.1).step()
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        optim.SGD([w], lr=0.1, weight_decay=0.1).step()


@pytest.mark.parametrize(
    "name, message",
    [
        ("Adam", "Adam does not support sparse gradients, please consider SparseAdam instead"),
        ("AdamW", "Adam does not support sparse gradients, please consider SparseAdam instead"),
        ("Adamax", "Adamax does not support sparse gradients"),
        ("Adadelta", "Adadelta does not support sparse gradients"),
        ("ASGD", "ASGD does not support sparse gradients"),
        ("NAdam", "NAdam does not support sparse gradients"),
        ("RAdam", "RAdam does not support sparse gradients"),
        ("RMSprop", "RMSprop does not support sparse gradients"),
        ("Rprop", "Rprop does not support sparse gradients"),
        ("Adafactor", "Adafactor does not support sparse gradients"),
        ("Muon", "Muon does not support sparse gradients"),
    ],
)
def test_other_optimizers_refuse_sparse_gradients(name, message):
    w = flambeau.tensor(X0.tolist(), dtype=flambeau.float64, requires_grad=True)
    loss(w, BATCHES[0], sparse=True).backward()
    opt = getattr(optim, name)([w], lr=0.1)
    with pytest.raises(RuntimeError, match=f"^{message}$"):
        opt.step()
    np.testing.assert_array_equal(w.detach().numpy(), X0)


def test_lbfgs_flattens_a_sparse_gradient_densely():
    def run(sparse):
        w = flambeau.tensor(X0.tolist(), dtype=flambeau.float64, requires_grad=True)
        opt = optim.LBFGS([w], lr=1, max_iter=5)

        def closure():
            opt.zero_grad()
            out = loss(w, BATCHES[0], sparse)
            out.backward()
            return out

        opt.step(closure)
        return w.detach().numpy()

    np.testing.assert_allclose(run(sparse=True), run(sparse=False), rtol=1e-12)
