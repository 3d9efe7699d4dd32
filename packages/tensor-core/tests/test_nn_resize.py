"""Focused tests of bicubic, nearest-exact and antialiased resizing: hand-derived taps,
PyTorch's values, the NumPy references of the optable rows, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau_testing.optable.nn_resize import aa_matrix, cubic_matrix, nearest_exact_matrix

X = np.array([[[[1.0, 4.0, 2.0, 8.0], [0.0, 3.0, 5.0, 1.0], [2.0, 2.0, 7.0, 6.0]]]])


def T(a):
    return flambeau.from_numpy(np.ascontiguousarray(a))


def test_antialias_bilinear_by_hand():
    # 4 -> 2: scale 2, so the tent filter is stretched to 2 input pixels each side. Output 0
    # (centre 1.0) reads pixels 0..2, whose centres lie 0.5, 0.5, 1.5 away: tent(0.25),
    # tent(0.25), tent(0.75) = 0.75, 0.75, 0.25, normalized (3, 3, 1) / 7; output 1
    # mirrors it on pixels 1..3: (1, 3, 3) / 7.
    x = T(np.array([[[[1.0, 2.0, 3.0, 4.0]]]]))
    got = flambeau._upsample_bilinear2d_aa(x, [1, 2], False).numpy().ravel()
    np.testing.assert_allclose(got, [12 / 7, 23 / 7], rtol=1e-14)
    np.testing.assert_allclose(aa_matrix(4, 2, False)[0], [3 / 7, 3 / 7, 1 / 7, 0])


def test_antialias_matches_pytorch():
    # PyTorch 2.13: F.interpolate(X, size=(2, 2), mode="bicubic", antialias=True) and
    # F.interpolate(X, scale_factor=0.6, mode="bilinear", antialias=True).
    cub = flambeau._upsample_bicubic2d_aa(T(X), [2, 2], False).numpy().ravel()
    np.testing.assert_allclose(
        cub, [2.1108671716434744, 4.23695660825385, 2.2591764721488934, 4.995615722377725]
    )
    lin = flambeau._upsample_bilinear2d_aa(T(X), [1, 2], False, 0.6, 0.6).numpy().ravel()
    np.testing.assert_allclose(lin, [1.857142857142857, 3.73015873015873])


def test_antialias_rows_sum_to_one_and_upscale_is_bilinear_inside():
    for n_in, n_out in ((9, 4), (10, 3), (5, 5), (3, 7)):
        for cubic in (False, True):
            np.testing.assert_allclose(aa_matrix(n_in, n_out, False, cubic=cubic).sum(1), 1.0)
    x = np.random.default_rng(0).standard_normal((1, 1, 9, 10))
    for cubic in (False, True):
        fn = flambeau._upsample_bicubic2d_aa if cubic else flambeau._upsample_bilinear2d_aa
        got = fn(T(x), [4, 3], False).numpy()[0, 0]
        mh, mw = aa_matrix(9, 4, False, cubic=cubic), aa_matrix(10, 3, False, cubic=cubic)
        np.testing.assert_allclose(got, mh @ x[0, 0] @ mw.T, rtol=1e-12)


def test_bicubic_matches_pytorch():
    got = flambeau.upsample_bicubic2d(T(X), [2, 5], False).numpy().ravel()
    want = [0.5144677734375, 3.0743818359375004, 3.159912109375, 3.4896259765625,
            6.458737304687505, 1.4704277343750007, 1.5099550781250006, 4.676025390625,
            6.577443359374999, 4.497695312500004]  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = flambeau.upsample_bicubic2d(T(X), [2, 5], True).numpy().ravel()
    want = [1.0, 3.53125, 2.71875, 3.1484375, 8.0, 2.0, 1.47265625, 4.59375, 7.30078125, 6.0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_bicubic_weights_sum_to_one_and_identity_at_same_size():
    np.testing.assert_allclose(cubic_matrix(5, 11, False).sum(1), 1.0)
    np.testing.assert_allclose(flambeau.upsample_bicubic2d(T(X), [3, 4], False).numpy(), X)
    np.testing.assert_allclose(flambeau.upsample_bicubic2d(T(X), [3, 4], True).numpy(), X)


def test_nearest_exact_picks_centres():
    x = T(np.arange(5.0).reshape(1, 1, 5))
    assert flambeau._upsample_nearest_exact1d(x, [3]).numpy().ravel().tolist() == [0, 2, 4]
    assert flambeau.upsample_nearest1d(x, [3]).numpy().ravel().tolist() == [0, 1, 3]
    # scale_factor 1.7 used for the mapping (PyTorch), vs the recomputed 8 / 5.
    got = flambeau._upsample_nearest_exact1d(x, [8], 1.7).numpy().ravel().tolist()
    assert got == [0, 0, 1, 2, 2, 3, 3, 4]
    assert flambeau._upsample_nearest_exact1d(x, [8]).numpy().ravel().tolist() == [
        0, 0, 1, 2, 2, 3, 4, 4
    ]  # fmt: skip
    assert nearest_exact_matrix(5, 3).argmax(1).tolist() == [0, 2, 4]


def test_backward_is_the_adjoint():
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal((1, 2, 6, 7)), rng.standard_normal((1, 2, 3, 4))
    for name in ("upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"):
        fwd = getattr(flambeau, name)(T(x), [3, 4], False).numpy()
        bwd = getattr(flambeau, name + "_backward")(T(g), [3, 4], list(x.shape), False).numpy()
        assert (fwd * g).sum() == pytest.approx((x * bwd).sum(), rel=1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: flambeau.upsample_bicubic2d(T(X[0]), [2, 2], False),
         "upsample_bicubic2d: expected a"),
        (lambda: flambeau._upsample_bilinear2d_aa(T(X), [0, 2], False), "greater than 0"),
        (lambda: flambeau._upsample_nearest_exact3d(T(X), [2, 2, 2]),
         "_upsample_nearest_exact3d: expected a"),
        (lambda: flambeau.upsample_bicubic2d(T(X).int(), [2, 2], False), "floating"),
        (lambda: flambeau._upsample_bicubic2d_aa_backward(T(X), [2, 2], [1, 1, 3, 4], False),
         "grad_output of size"),
    ],
)  # fmt: skip
def test_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()
