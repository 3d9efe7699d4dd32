"""Focused tests of the CTC loss: the NumPy recursion of the optable rows against a
brute-force sum over every alignment, log_alpha, PyTorch's values, finite differences,
zero_infinity and the errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import flambeau
from flambeau_testing.optable.nn_ctc import ctc_forward_ref, ctc_grad_ref, ctc_loss_ref, log_softmax

rng = np.random.default_rng(0)


def T(a):
    return flambeau.from_numpy(np.ascontiguousarray(a))


def brute_force_nll(lp, labels, blank):
    """-log of the summed probability of every path (T frames) that collapses to labels."""
    total = -np.inf
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total = np.logaddexp(total, sum(lp[t, c] for t, c in enumerate(path)))
    return -total


@pytest.mark.parametrize(
    "labels,frames,blank",
    [([1, 2], 4, 0), ([1, 1], 4, 0), ([2], 3, 0), ([], 3, 0), ([0, 1], 4, 2), ([1, 1], 2, 0)],
)
def test_recursion_matches_brute_force(labels, frames, blank):
    lp = log_softmax(rng.standard_normal((frames, 1, 3)))
    tg = np.array([labels + [1] * (2 - len(labels))], dtype=np.int64)
    want = brute_force_nll(lp[:, 0], labels, blank)
    ref = ctc_forward_ref(lp, tg, [frames], [len(labels)], blank)[0][0]
    got = flambeau._ctc_loss(T(lp), T(tg), [frames], [len(labels)], blank)[0].numpy()[0]
    assert ref == pytest.approx(want, rel=1e-12)  # inf for [1, 1] in 2 frames
    assert got == pytest.approx(want, rel=1e-12)


def test_log_alpha_layout():
    lp = log_softmax(rng.standard_normal((5, 2, 4)))
    tg = np.array([[1, 2, 3], [3, 1, 0]], dtype=np.int64)
    nll, alpha = flambeau._ctc_loss(T(lp), T(tg), [5, 3], [3, 2])
    want_nll, want_alpha = ctc_forward_ref(lp, tg, [5, 3], [3, 2])
    assert tuple(alpha.shape) == (2, 5, 7)
    np.testing.assert_allclose(nll.numpy(), want_nll, rtol=1e-12)
    np.testing.assert_array_equal(np.isinf(alpha.numpy()), np.isinf(want_alpha))
    fin = np.isfinite(want_alpha)
    np.testing.assert_allclose(alpha.numpy()[fin], want_alpha[fin], rtol=1e-12)


# Values from PyTorch 2.13: F.ctc_loss(LP, [[1, 2]], (3,), (2,), reduction="sum") and its grad.
LP = log_softmax(np.array([[[-1.2, -0.9, -1.3]], [[-0.5, -1.5, -1.6]], [[-2.0, -0.4, -1.4]]]))
TORCH_LOSS = 2.093862683030801
TORCH_GRAD = [0.18084012145302647, -0.45884991263279373, 0.2780097911797676,
              0.1241464705775957, -0.08073728047964374, -0.04340919009795205,
              0.04388090147145052, 0.6370335805952996, -0.6809144820667503]  # fmt: skip


def test_matches_pytorch_values():
    lp = T(LP).requires_grad_(True)
    loss = flambeau.ctc_loss(lp, T(np.array([[1, 2]])), [3], [2], reduction=2)
    assert loss.item() == pytest.approx(TORCH_LOSS, rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(lp.grad.numpy().ravel(), TORCH_GRAD, rtol=1e-10, atol=1e-14)
    none = flambeau.ctc_loss(T(LP), T(np.array([[1, 1]])), [3], [2], reduction=0)
    assert none.numpy()[0] == pytest.approx(1.8621014927035624, rel=1e-12)


def test_gradient_through_log_softmax_matches_finite_differences():
    x = rng.standard_normal((6, 2, 4))
    tg = np.array([[1, 3, 3], [2, 1, 0]], dtype=np.int64)

    def loss(a):
        return ctc_loss_ref(log_softmax(a), tg, [6, 5], [3, 2], reduction=1)

    xt = T(x).requires_grad_(True)
    out = flambeau.ctc_loss(flambeau.log_softmax(xt, -1), T(tg), [6, 5], [3, 2])
    out.backward()
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        num[i] = (loss(x + e) - loss(x - e)) / 2e-6
    np.testing.assert_allclose(xt.grad.numpy(), num, atol=1e-7)


def test_backward_kernel_matches_reference_and_zeroes_padding_frames():
    lp = log_softmax(rng.standard_normal((5, 2, 3)))
    tg = np.array([[1, 2], [2, 2]], dtype=np.int64)
    nll, alpha = flambeau._ctc_loss(T(lp), T(tg), [5, 3], [2, 1])
    g = flambeau._ctc_loss_backward(T(np.ones(2)), T(lp), T(tg), [5, 3], [2, 1], nll, alpha, 0)
    want = ctc_grad_ref(np.ones(2), lp, tg, [5, 3], [2, 1], nll.numpy())
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-10, atol=1e-14)
    assert not g.numpy()[3:, 1].any()


def test_impossible_alignment_is_inf_and_zero_infinity_zeroes_it():
    lp = T(log_softmax(rng.standard_normal((3, 2, 3)))).requires_grad_(True)
    tg = T(np.array([[1, 1, 1], [2, 0, 0]]))  # sample 0 needs 5 frames
    nll = flambeau._ctc_loss(lp, tg, [3, 3], [3, 1])[0].detach()
    assert np.isinf(nll.numpy()[0]) and np.isfinite(nll.numpy()[1])
    loss = flambeau.ctc_loss(lp, tg, [3, 3], [3, 1], reduction=2, zero_infinity=True)
    assert loss.item() == pytest.approx(nll.numpy()[1])
    loss.backward()
    assert not lp.grad.numpy()[:, 0].any()
    assert np.isfinite(lp.grad.numpy()).all()


def test_float32_concatenated_and_tensor_lengths():
    lp = log_softmax(rng.standard_normal((20, 3, 5))).astype(np.float32)
    tg = rng.integers(1, 5, size=9).astype(np.int32)
    il, tl = np.array([20, 15, 9]), np.array([4, 3, 2])
    got = flambeau.ctc_loss(T(lp), T(tg), T(il), T(tl), reduction=0)
    assert got.dtype == flambeau.float32
    want = ctc_loss_ref(lp.astype(np.float64), tg, il, tl, reduction=0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_large_batch_runs_in_parallel_and_matches():
    lp = log_softmax(rng.standard_normal((40, 64, 6)))
    tg = rng.integers(1, 6, size=(64, 10))
    il, tl = rng.integers(25, 41, size=64), rng.integers(0, 11, size=64)
    got = flambeau.ctc_loss(T(lp), T(tg), list(il), list(tl), reduction=0).numpy()
    np.testing.assert_allclose(got, ctc_loss_ref(lp, tg, il, tl, reduction=0), rtol=1e-10)


def test_unbatched():
    lp = log_softmax(rng.standard_normal((5, 3)))
    got = flambeau.ctc_loss(T(lp), T(np.array([1, 2])), [5], [2], reduction=0)
    assert tuple(got.shape) == ()
    assert got.item() == pytest.approx(ctc_loss_ref(lp, np.array([1, 2]), [5], [2], reduction=0))


def _lp(*shape):
    return T(log_softmax(rng.standard_normal(shape)))


TG = T(np.array([[1, 2, 1], [2, 1, 0]]))


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: flambeau.ctc_loss(_lp(1, 5, 2, 4), TG, [5, 4], [3, 2]), RuntimeError, "3 dims"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [6, 4], [3, 2]), RuntimeError,
         "input_lengths to have value at most"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [5, 4], [3, 4]), RuntimeError,
         "expected padded targets with at least"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [5, 4, 3], [3, 2]), RuntimeError,
         "input_lengths must be of size batch_size"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [5, 4], [3]), RuntimeError,
         "target_lengths must be of size"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [5, 4], [3, 2], blank=4), RuntimeError,
         "blank must be in label range"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [-1, 4], [3, 2]), RuntimeError,
         "at least 0"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG.reshape(-1), [5, 4], [3, 2]), RuntimeError,
         "expected concatenated targets of size"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG.unsqueeze(0), [5, 4], [3, 2]), RuntimeError,
         "expected targets of"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG.float(), [5, 4], [3, 2]), RuntimeError,
         "integer dtype"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, [5, 4], [3, 2], reduction=3), ValueError,
         "invalid reduction"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4).int(), TG, [5, 4], [3, 2]), NotImplementedError,
         "float32 or float64"),
        (lambda: flambeau.ctc_loss(_lp(0, 2, 4), TG, [0, 0], [0, 0]), RuntimeError,
         "must not be empty"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), T(np.array([[1, 7, 1], [2, 1, 0]])), [5, 4],
                                   [3, 2]), RuntimeError, "target value"),
        (lambda: flambeau.ctc_loss(_lp(5, 2, 4), TG, T(np.array([5.0, 4.0])), T(np.array([3, 2]))),
         RuntimeError, "input_lengths must be integral"),
    ],
)  # fmt: skip
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
