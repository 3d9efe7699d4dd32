"""nn.init: fans, gains, and the distributions' bounds and moments (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import flambeau
from flambeau import nn
from flambeau.nn import init


def arr(t):
    return t.detach().numpy().astype(np.float64)


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fans():
    assert init._calculate_fan_in_and_fan_out(flambeau.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(flambeau.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(flambeau.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(flambeau.empty(3, 3), mode="fan_avg")


def test_uniform_normal_constant():
    flambeau.manual_seed(0)
    u = arr(init.uniform_(flambeau.empty(200, 200), -2.0, 3.0))
    assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.05
    n = arr(init.normal_(flambeau.empty(200, 200), 1.0, 2.0))
    assert abs(n.mean() - 1.0) < 0.03 and abs(n.std() - 2.0) < 0.03
    assert (arr(init.constant_(flambeau.empty(3), 4.5)) == 4.5).all()
    assert (arr(init.ones_(flambeau.empty(3))) == 1).all()
    assert (arr(init.zeros_(flambeau.ones(3))) == 0).all()
    g = flambeau.Generator().manual_seed(3)
    a = arr(init.uniform_(flambeau.empty(5), generator=g))
    g.manual_seed(3)
    assert (arr(init.uniform_(flambeau.empty(5), generator=g)) == a).all()


def test_init_does_not_record_and_returns_the_tensor():
    p = nn.Parameter(flambeau.empty(3, 3))
    assert init.normal_(p) is p and p.grad_fn is None and p.is_leaf


def test_xavier_and_kaiming_moments():
    flambeau.manual_seed(1)
    t = flambeau.empty(300, 200)
    bound = math.sqrt(6 / 500)
    x = arr(init.xavier_uniform_(t))
    assert x.max() <= bound and x.min() >= -bound and abs(x.std() - bound / math.sqrt(3)) < 5e-3
    x = arr(init.xavier_normal_(t, gain=2.0))
    assert abs(x.std() - 2 * math.sqrt(2 / 500)) < 5e-3
    k = arr(init.kaiming_uniform_(t, nonlinearity="relu"))
    bound = math.sqrt(2) * math.sqrt(3 / 200)
    assert k.max() <= bound and abs(k.std() - math.sqrt(2 / 200)) < 2e-3
    k = arr(init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"))
    assert abs(k.std() - math.sqrt(2 / 300)) < 2e-3
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(flambeau.empty(0, 3))


def test_trunc_normal_is_truncated_and_distributed():
    flambeau.manual_seed(2)
    t = arr(init.trunc_normal_(flambeau.empty(100_000), mean=0.5, std=1.0, a=-1.0, b=1.5))
    assert t.min() >= -1.0 and t.max() <= 1.5
    ref = stats.truncnorm(-1.5, 1.0, loc=0.5, scale=1.0)
    assert abs(t.mean() - ref.mean()) < 0.01 and abs(t.std() - ref.std()) < 0.01
    assert stats.kstest(t[:5000], ref.cdf).pvalue > 1e-3


def test_eye_and_dirac():
    assert (arr(init.eye_(flambeau.empty(2, 3))) == np.eye(2, 3)).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(flambeau.empty(2, 2, 2))
    w = arr(init.dirac_(flambeau.empty(4, 2, 3, 3), groups=2))
    assert w.sum() == 4 and w[0, 0, 1, 1] == 1 and w[1, 1, 1, 1] == 1 and w[2, 0, 1, 1] == 1
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(flambeau.empty(2, 2))
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(flambeau.empty(3, 2, 3), groups=2)


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 3), (4, 2, 2)])
def test_orthogonal(shape):
    flambeau.manual_seed(3)
    w = arr(init.orthogonal_(flambeau.empty(*shape), gain=2.0)).reshape(shape[0], -1)
    rows, cols = w.shape
    if rows <= cols:
        np.testing.assert_allclose(w @ w.T, 4 * np.eye(rows), atol=1e-5)
    else:
        np.testing.assert_allclose(w.T @ w, 4 * np.eye(cols), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(flambeau.empty(3))


def test_sparse():
    flambeau.manual_seed(4)
    w = arr(init.sparse_(flambeau.empty(10, 20), sparsity=0.3, std=0.5))
    assert ((w == 0).sum(axis=0) >= 3).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(flambeau.empty(3), 0.1)
