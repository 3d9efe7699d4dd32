"""nn.init: Kolmogorov-Smirnov tests of the random initialisers, exact identities for
eye/dirac/orthogonal/sparse, the deprecated aliases, and the skip switch of skip_init."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import flambeau
from flambeau.nn import functional as F
from flambeau.nn import init


def sample(fill, *shape, seed=0, **kwargs):
    flambeau.manual_seed(seed)
    return fill(flambeau.empty(*shape, dtype=flambeau.float64), **kwargs).numpy().ravel()


@pytest.mark.parametrize(
    "fill, kwargs, reference",
    [
        (init.uniform_, {"a": -2.0, "b": 3.0}, stats.uniform(-2.0, 5.0)),
        (init.normal_, {"mean": 1.0, "std": 2.0}, stats.norm(1.0, 2.0)),
        # 300 x 200: fan_in 200, fan_out 300.
        (init.xavier_uniform_, {"gain": 2.0}, stats.uniform(-2 * math.sqrt(6 / 500),
                                                            4 * math.sqrt(6 / 500))),
        (init.xavier_normal_, {}, stats.norm(0, math.sqrt(2 / 500))),
        (init.kaiming_uniform_, {"a": math.sqrt(5)}, stats.uniform(-1 / math.sqrt(200),
                                                                   2 / math.sqrt(200))),
        (init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"},
         stats.norm(0, math.sqrt(2 / 300))),
        (init.trunc_normal_, {"mean": 0.2, "std": 0.5, "a": -0.5, "b": 0.6},
         stats.truncnorm(-1.4, 0.8, loc=0.2, scale=0.5)),
    ],
)  # fmt: skip
def test_random_initialisers_follow_their_distributions(fill, kwargs, reference):
    values = sample(fill, 300, 200, **kwargs)
    assert stats.kstest(values[:20_000], reference.cdf).pvalue > 1e-3


def test_orthogonal_is_haar_distributed():
    """The first entry of a Haar-random 3x3 orthogonal matrix is uniform on [-1, 1] (a
    coordinate of a uniform point on the 2-sphere); without the sign fix of the QR factors
    the distribution would be skewed."""
    flambeau.manual_seed(1)
    firsts = [init.orthogonal_(flambeau.empty(3, 3, dtype=flambeau.float64))[0, 0].item()
              for _ in range(2000)]  # fmt: skip
    assert stats.kstest(firsts, stats.uniform(-1, 2).cdf).pvalue > 1e-3


@pytest.mark.parametrize("shape", [(5, 5), (3, 8), (8, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    flambeau.manual_seed(2)
    w = init.orthogonal_(flambeau.empty(*shape, dtype=flambeau.float64), gain=0.5).numpy()
    w = w.reshape(shape[0], -1)
    gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(gram, 0.25 * np.eye(min(w.shape)), atol=1e-12)
    assert init.orthogonal_(flambeau.empty(0, 3)).numel() == 0


def test_sparse_zeroes_an_exact_fraction_of_each_column():
    flambeau.manual_seed(3)
    w = init.sparse_(flambeau.empty(40, 300, dtype=flambeau.float64), sparsity=0.25, std=0.3)
    w = w.numpy()
    assert ((w == 0).sum(axis=0) == 10).all()  # ceil(0.25 * 40) per column
    assert stats.kstest(w[w != 0], stats.norm(0, 0.3).cdf).pvalue > 1e-3


def test_eye_and_dirac_are_identities():
    np.testing.assert_array_equal(init.eye_(flambeau.empty(3, 5)).numpy(), np.eye(3, 5))
    x = flambeau.randn(2, 3, 5, 6)
    w = init.dirac_(flambeau.empty(3, 3, 3, 3))
    np.testing.assert_array_equal(F.conv2d(x, w, padding=1).numpy(), x.numpy())
    # groups=2, 4 output channels of 2 inputs each: channel 2g+k of the output is input
    # channel k of group g's slice, i.e. (with groups=2 in the conv) input channel 2g+k.
    x = flambeau.randn(1, 4, 7)
    w = init.dirac_(flambeau.empty(4, 2, 3), groups=2)
    np.testing.assert_array_equal(F.conv1d(x, w, padding=1, groups=2).numpy(), x.numpy())
    # More outputs than inputs: the extra output channels are zero.
    w = init.dirac_(flambeau.empty(5, 2, 1, 1, 1)).numpy()
    assert w.sum() == 2 and w[0, 0].sum() == 1 and w[1, 1].sum() == 1 and not w[2:].any()


@pytest.mark.parametrize(
    "old, new, args",
    [
        ("uniform", "uniform_", (-1.0, 2.0)),
        ("normal", "normal_", (0.5, 3.0)),
        ("constant", "constant_", (4.0,)),
        ("eye", "eye_", ()),
        ("dirac", "dirac_", ()),
        ("xavier_uniform", "xavier_uniform_", ()),
        ("xavier_normal", "xavier_normal_", ()),
        ("kaiming_uniform", "kaiming_uniform_", ()),
        ("kaiming_normal", "kaiming_normal_", ()),
        ("orthogonal", "orthogonal_", ()),
        ("sparse", "sparse_", (0.5,)),
    ],
)
def test_deprecated_aliases_warn_and_match(old, new, args):
    shape = (4, 4, 3) if old == "dirac" else (6, 4)
    flambeau.manual_seed(7)
    t = flambeau.empty(*shape)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                           f"`nn.init.{new}`") as record:  # fmt: skip
        assert getattr(init, old)(t, *args) is t
    assert record[0].filename == __file__
    flambeau.manual_seed(7)
    expected = getattr(init, new)(flambeau.empty(*shape), *args)
    np.testing.assert_array_equal(t.numpy(), expected.numpy())
    assert getattr(init, old).__name__ == old


def test_skip_switch_leaves_tensors_untouched():
    t = flambeau.full((3, 4), 7.0)
    with init._skip_initialization():
        for fill in (init.uniform_, init.normal_, init.zeros_, init.kaiming_uniform_,
                     init.xavier_normal_, init.orthogonal_, init.eye_):  # fmt: skip
            assert fill(t) is t
    assert (t.numpy() == 7).all()
    init.zeros_(t)
    assert not t.numpy().any()
    with pytest.warns(UserWarning, match="zero-element") as record:
        init.kaiming_normal_(flambeau.empty(0, 3))
    assert record[0].filename == __file__
