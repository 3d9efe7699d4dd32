"""A Torch7-style training loop: Sequential MLP + ClassNLLCriterion + optim.sgd over
flattenParameters, learning scikit-learn's digits."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau.legacy import nn, optim


def test_mlp_learns_digits():
    datasets = pytest.importorskip("sklearn.datasets")
    digits = datasets.load_digits()
    rng = np.random.default_rng(0)
    order = rng.permutation(len(digits.target))
    x_all = flambeau.from_numpy((digits.data[order] / 16.0).astype(np.float32))
    y_all = flambeau.from_numpy(digits.target[order].astype(np.int64))
    x_train, y_train = x_all[:1400], y_all[:1400]
    x_test, y_test = x_all[1400:], y_all[1400:]

    flambeau.manual_seed(0)
    model = nn.Sequential()
    model.add(nn.Linear(64, 48)).add(nn.Tanh()).add(nn.Linear(48, 10)).add(nn.LogSoftMax())
    criterion = nn.ClassNLLCriterion()
    params, grad_params = model.flattenParameters()
    config = {"learningRate": 0.2, "momentum": 0.9, "dampening": 0}

    batch = {}

    def feval(x):
        # The closure Torch7 code passes to optim: loss and gradient at the current batch.
        inputs, targets = batch["inputs"], batch["targets"]
        grad_params.zero_()
        output = model.forward(inputs)
        loss = criterion.forward(output, targets)
        model.backward(inputs, criterion.backward(output, targets))
        return loss, grad_params

    losses = []
    for _epoch in range(12):
        perm = flambeau.randperm(1400)
        for start in range(0, 1400, 50):
            idx = perm[start : start + 50]
            batch["inputs"], batch["targets"] = x_train[idx], y_train[idx]
            _, fs = optim.sgd(feval, params, config)
            losses.append(fs[0])

    model.evaluate()
    predicted = model.forward(x_test).argmax(1)
    accuracy = float((predicted == y_test).float().mean())
    assert np.mean(losses[:10]) > 1.5 and np.mean(losses[-10:]) < 0.2
    assert accuracy > 0.93, accuracy
