"""The distributions on the core's shared functions (binary_cross_entropy_with_logits,
one_hot, tril_indices): values against hand-derived references and SciPy, gradients where
the old private copies were wrong (logits = 0)."""

import numpy as np
import pytest
import scipy.special as sp

import flambeau as F
import flambeau.distributions as D
from flambeau.autograd import gradcheck
from flambeau.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix


def t64(x, requires_grad=False):
    return F.tensor(np.asarray(x, dtype=np.float64), requires_grad=requires_grad)


LOGITS = [-3.0, -0.5, 0.0, 0.0, 1.5]


def test_bernoulli_log_prob_gradient_at_zero_logit():
    # d/dl log p(v | l) = v - sigmoid(l): at l = 0 it is v - 1/2 (a clamp/abs composition
    # gets 1 - v there).
    value = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    logits = t64(LOGITS, requires_grad=True)
    D.Bernoulli(logits=logits).log_prob(t64(value)).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), value - sp.expit(LOGITS), rtol=1e-12)


@pytest.mark.parametrize("family", [D.Bernoulli, D.Geometric, D.ContinuousBernoulli])
def test_entropy_gradcheck_through_zero_logits(family):
    assert gradcheck(lambda lg: family(logits=lg).entropy(), (t64(LOGITS, requires_grad=True),))


def test_bernoulli_log_prob_broadcasts_value_against_logits():
    logits = np.array([-1.0, 0.0, 2.0])
    value = np.array([[0.0], [1.0]])
    got = D.Bernoulli(logits=t64(logits)).log_prob(t64(value)).numpy()
    want = value * sp.log_expit(logits) + (1 - value) * sp.log_expit(-logits)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_one_hot_modes_and_samples():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    oh = D.OneHotCategorical(t64(p))
    assert oh.mode.dtype == F.float64
    np.testing.assert_array_equal(oh.mode.numpy(), [[0, 0, 1], [1, 0, 0]])
    sample = oh.sample((50,)).numpy()
    assert sample.shape == (50, 2, 3) and (sample.sum(-1) == 1).all()
    assert set(np.unique(sample)) <= {0.0, 1.0}
    # Every concentration below one: the mode is the vertex of the largest.
    mode = D.Dirichlet(t64([[0.5, 0.9, 0.2], [2.0, 3.0, 5.0]])).mode.numpy()
    np.testing.assert_allclose(mode, [[0.0, 1.0, 0.0], [0.1, 0.2, 0.4] / np.float64(0.7)])


@pytest.mark.parametrize("diag", [-1, 0, 1])
def test_tril_vector_round_trip(diag):
    n = 4
    mat = np.arange(2 * n * n, dtype=np.float64).reshape(2, n, n)
    rows, cols = np.tril_indices(n, diag)
    vec = tril_matrix_to_vec(t64(mat), diag)
    np.testing.assert_array_equal(vec.numpy(), mat[:, rows, cols])
    back = vec_to_tril_matrix(vec, diag).numpy()
    np.testing.assert_array_equal(back, np.tril(mat, diag))
