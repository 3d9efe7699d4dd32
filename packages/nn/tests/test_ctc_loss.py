"""F.ctc_loss and nn.CTCLoss: forward against a NumPy alpha recursion (itself checked against
a brute-force sum over alignments), every reduction, gradcheck in float64, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F


def np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def np_ctc_nll(lp, labels, blank=0):
    """-log p(labels | lp (T, C)) by the alpha recursion over blank-interleaved labels."""
    ext = [blank]
    for v in labels:
        ext += [v, blank]
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = lp[0, ext[0]]
    if len(ext) > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, lp.shape[0]):
        prev = alpha.copy()
        for s in range(len(ext)):
            terms = [prev[s]] + ([prev[s - 1]] if s > 0 else [])
            if s > 1 and ext[s] != ext[s - 2]:
                terms.append(prev[s - 2])
            alpha[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
    return -np.logaddexp.reduce(alpha[-2:] if len(ext) > 1 else alpha)


def brute_force_nll(lp, labels, blank=0):
    total = -np.inf
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        out = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if out == list(labels):
            total = np.logaddexp(total, sum(lp[t, c] for t, c in enumerate(path)))
    return -total


def np_ctc_loss(lp, targets, il, tl, blank=0, reduction="mean", zero_infinity=False):
    nll = []
    for b in range(lp.shape[1]):
        if targets.ndim == 2:
            labels = targets[b, : tl[b]]
        else:
            labels = targets[sum(tl[:b]) : sum(tl[:b]) + tl[b]]
        nll.append(np_ctc_nll(lp[: il[b], b], list(labels), blank))
    nll = np.array(nll)
    if zero_infinity:
        nll = np.where(np.isinf(nll), 0.0, nll)
    if reduction == "mean":
        return np.mean(nll / np.maximum(np.array(tl), 1))
    return nll.sum() if reduction == "sum" else nll


def test_reference_matches_brute_force():
    rng = np.random.default_rng(0)
    for labels in ([1, 2], [2, 2], [1], []):
        lp = np_log_softmax(rng.standard_normal((4, 3)))
        assert np_ctc_nll(lp, labels) == pytest.approx(brute_force_nll(lp, labels), rel=1e-12)


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    x = randn64(6, 3, 5, seed=seed)
    targets = rng.integers(1, 5, size=(3, 4))
    return x, targets, [6, 5, 4], [4, 2, 0]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_forward_and_gradcheck(reduction):
    x, targets, il, tl = _problem()
    lp = F.log_softmax(x, 2)
    out = F.ctc_loss(lp, flambeau.tensor(targets), il, tl, reduction=reduction)
    ref = np_ctc_loss(np_of(lp), targets, il, tl, reduction=reduction)
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12)
    module = nn.CTCLoss(reduction=reduction)
    np.testing.assert_allclose(
        np_of(module(lp, flambeau.tensor(targets), flambeau.tensor(il), flambeau.tensor(tl))),
        ref,
        rtol=1e-12,
    )
    xs = randn64(4, 2, 3, seed=1)
    tgs = flambeau.tensor([[1, 2], [2, 0]])
    assert gradcheck(
        lambda a: F.ctc_loss(F.log_softmax(a, 2), tgs, (4, 3), (2, 1), reduction=reduction), (xs,)
    )


def test_concatenated_targets_blank_and_unbatched():
    x, targets, il, tl = _problem(2)
    flat = np.concatenate([targets[b, : tl[b]] for b in range(3)]) - 1  # labels 0..3
    lp = F.log_softmax(x, 2)
    out = nn.CTCLoss(blank=4, reduction="sum")(lp, flambeau.tensor(flat), il, tl)
    ref = np_ctc_loss(np_of(lp), flat, il, tl, blank=4, reduction="sum")
    assert out.item() == pytest.approx(ref, rel=1e-12)
    one = F.ctc_loss(lp[:, 0], flambeau.tensor(targets[0]), (6,), (4,), reduction="none")
    assert one.shape == ()
    assert one.item() == pytest.approx(np_ctc_loss(np_of(lp)[:, :1], targets[:1], [6], [4],
                                                   reduction="none")[0])  # fmt: skip


def test_zero_infinity():
    x = randn64(3, 2, 3, seed=3)
    targets = flambeau.tensor([[1, 1, 1], [2, 0, 0]])  # sample 0 needs 5 frames, not 3
    lp = F.log_softmax(x, 2)
    inf = F.ctc_loss(lp, targets, (3, 3), (3, 1), reduction="none")
    assert np.isinf(np_of(inf)[0])
    loss = nn.CTCLoss(zero_infinity=True, reduction="sum")(lp, targets, (3, 3), (3, 1))
    assert loss.item() == pytest.approx(np_of(inf)[1])
    loss.backward()
    assert not np_of(x.grad)[:, 0].any() and np.isfinite(np_of(x.grad)).all()
    assert gradcheck(lambda a: F.ctc_loss(F.log_softmax(a, 2), targets, (3, 3), (3, 1),
                                          zero_infinity=True), (x,))  # fmt: skip


def test_float32():
    x, targets, il, tl = _problem(4)
    lp = F.log_softmax(x.detach().float(), 2)
    out = F.ctc_loss(lp, flambeau.tensor(targets, dtype=flambeau.int32), il, tl)
    assert out.dtype == flambeau.float32
    ref = np_ctc_loss(np_of(lp).astype(np.float64), targets, il, tl)
    assert out.item() == pytest.approx(ref, rel=1e-5)


def test_errors():
    x, targets, il, tl = _problem()
    lp, tg = F.log_softmax(x, 2), flambeau.tensor(targets)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.ctc_loss(lp, tg, il, tl, reduction="avg")
    with pytest.raises(RuntimeError, match="input_lengths to have value at most"):
        F.ctc_loss(lp, tg, [7, 5, 4], tl)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, il, tl, blank=5)
    with pytest.raises(RuntimeError, match="expected padded targets with at least"):
        F.ctc_loss(lp, tg, il, [5, 2, 0])
    with pytest.raises(RuntimeError, match="3 dims"):
        F.ctc_loss(lp.unsqueeze(0), tg, il, tl)
    with pytest.raises(TypeError):
        F.ctc_loss(lp, tg, 6, 4)
