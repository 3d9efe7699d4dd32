"""End to end: an MLP and a small CNN learn scikit-learn's digits (ships offline)."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
import flambeau.nn as nn

datasets = pytest.importorskip("sklearn.datasets")
optim = pytest.importorskip("flambeau.optim")


def digits():
    data = datasets.load_digits()
    x = (data.images / 16.0).astype(np.float32)[:, None]
    y = data.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:1400], order[1400:]
    t = flambeau.from_numpy
    return (t(x[train]), t(y[train])), (t(x[test]), t(y[test]))


def fit(model, opt, train, epochs, batch=64):
    x, y = train
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(epochs):
        model.train()
        order = flambeau.randperm(len(y))
        for start in range(0, len(y), batch):
            idx = order[start : start + batch]
            opt.zero_grad()
            loss_fn(model(x[idx]), y[idx]).backward()
            opt.step()


def accuracy(model, test):
    model.eval()
    with flambeau.no_grad():
        return (model(test[0]).argmax(dim=1) == test[1]).float().mean().item()


def test_mlp_learns_digits():
    flambeau.manual_seed(0)
    train, test = digits()
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    fit(model, optim.Adam(model.parameters(), lr=1e-2), train, epochs=15)
    assert accuracy(model, test) >= 0.94


def test_cnn_learns_digits():
    flambeau.manual_seed(0)
    train, test = digits()
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(128, 10),
    )
    fit(model, optim.SGD(model.parameters(), lr=0.05, momentum=0.9), train, epochs=10)
    assert accuracy(model, test) >= 0.95
