"""Rows for the CTC loss (ops/nn_ctc.yaml) against a NumPy alpha/beta recursion (in
tests/test_nn_ctc.py that recursion is checked against a brute-force sum over all
alignments). The loss rows feed log_softmax(x) so that gradcheck sees PyTorch's gradient,
which is the gradient through a log_softmax's logits."""

from __future__ import annotations

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, make


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _lse(v):
    v = np.asarray(v, dtype=np.float64)
    m = v.max() if v.size else -np.inf
    return m + np.log(np.exp(v - m).sum()) if np.isfinite(m) else m


def _labels(targets, tl, b):
    if targets.ndim == 2:
        return [int(v) for v in targets[b, : tl[b]]]
    start = int(np.sum(tl[:b]))
    return [int(v) for v in targets[start : start + tl[b]]]


def _extended(labels, blank):
    ext = [blank]
    for v in labels:
        ext += [v, blank]
    return ext


def ctc_alpha(lp, ext, length):
    """log alpha (length x len(ext)) of one sample's log_probs lp (T, C)."""
    n = len(ext)
    la = np.full((max(length, 1), n), -np.inf)
    if length == 0:
        return la
    la[0, 0] = lp[0, ext[0]]
    if n > 1:
        la[0, 1] = lp[0, ext[1]]
    for t in range(1, length):
        for s in range(n):
            prev = [la[t - 1, s]]
            if s > 0:
                prev.append(la[t - 1, s - 1])
            if s > 1 and ext[s] != ext[s - 2]:
                prev.append(la[t - 1, s - 2])
            la[t, s] = _lse(prev) + lp[t, ext[s]]
    return la


def ctc_beta(lp, ext, length):
    n = len(ext)
    lb = np.full((max(length, 1), n), -np.inf)
    if length == 0:
        return lb
    lb[length - 1, n - 1] = lp[length - 1, ext[n - 1]]
    if n > 1:
        lb[length - 1, n - 2] = lp[length - 1, ext[n - 2]]
    for t in range(length - 2, -1, -1):
        for s in range(n):
            nxt = [lb[t + 1, s]]
            if s + 1 < n:
                nxt.append(lb[t + 1, s + 1])
            if s + 2 < n and ext[s + 2] != ext[s]:
                nxt.append(lb[t + 1, s + 2])
            lb[t, s] = _lse(nxt) + lp[t, ext[s]]
    return lb


def ctc_forward_ref(lp, targets, il, tl, blank=0):
    """(nll (N), log_alpha (N, T, 2 max(tl) + 1)) of log_probs lp (T, N, C)."""
    T, N, _ = lp.shape
    il, tl = [int(v) for v in np.ravel(il)], [int(v) for v in np.ravel(tl)]
    S = max(tl) if tl else 0
    nll, alpha = np.zeros(N), np.full((N, T, 2 * S + 1), -np.inf)
    for b in range(N):
        ext = _extended(_labels(targets, tl, b), blank)
        if il[b] == 0:
            nll[b] = 0.0 if tl[b] == 0 else np.inf
            continue
        la = ctc_alpha(lp[:, b].astype(np.float64), ext, il[b])
        alpha[b, : il[b], : len(ext)] = la
        nll[b] = -_lse(la[il[b] - 1, -2:] if len(ext) > 1 else la[il[b] - 1, :1])
    return nll, alpha


def ctc_grad_ref(grad, lp, targets, il, tl, nll, blank=0, zero_infinity=False):
    """PyTorch's gradient, exp(lp) - exp(log(sum of alpha beta over c's states) + nll - lp)."""
    T, N, C = lp.shape
    il, tl = [int(v) for v in np.ravel(il)], [int(v) for v in np.ravel(tl)]
    lp = lp.astype(np.float64)
    g = np.zeros((T, N, C))
    grad = np.broadcast_to(np.asarray(grad, dtype=np.float64).reshape(-1), (N,))
    for b in range(N):
        if il[b] == 0 or (zero_infinity and np.isinf(nll[b])):
            continue
        ext = _extended(_labels(targets, tl, b), blank)
        ab = ctc_alpha(lp[:, b], ext, il[b]) + ctc_beta(lp[:, b], ext, il[b])
        for t in range(il[b]):
            for c in range(C):
                post = _lse([ab[t, s] for s in range(len(ext)) if ext[s] == c])
                g[t, b, c] = (np.exp(lp[t, b, c]) - np.exp(post + nll[b] - lp[t, b, c])) * grad[b]
    return g


def ctc_loss_ref(lp, targets, il, tl, blank=0, reduction=1, zero_infinity=False):
    batched = lp.ndim == 3
    if not batched:
        lp, targets = lp[:, None], targets[None]
    nll = ctc_forward_ref(lp, targets, il, tl, blank)[0]
    if zero_infinity:
        nll = np.where(np.isinf(nll), 0.0, nll)
    if reduction == 1:
        return np.mean(nll / np.maximum(np.ravel(tl), 1))
    if reduction == 2:
        return nll.sum()
    return nll if batched else nll[0]


def _targets(rng, n, s, c, blank):
    labels = [v for v in range(c) if v != blank]
    return rng.choice(labels, size=(n, s)).astype(np.int64)


# The first sample's labels need 5 frames: its loss is infinite in 3.
IMPOSSIBLE = np.array([[1, 1, 1], [2, 0, 0]], dtype=np.int64)


def _lengths(tensor_lengths, *v):
    return tuple(np.array(x, dtype=np.int64) for x in v) if tensor_lengths else v


def forward_samples(tensor_lengths):
    """(logits (T, N, C), targets, input_lengths, target_lengths), kwargs."""

    def lengths(*v):
        return _lengths(tensor_lengths, *v)

    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        tg = _targets(rng, 2, 3, 4, 0)
        yield Sample((m((5, 2, 4)), tg, *lengths([5, 4], [3, 2])), note="padded")
        yield Sample((m((4, 2, 3)), tg[:, :2] % 3, *lengths([4, 3], [2, 0])), note="empty target")
        yield Sample((m((4, 2, 4)), tg.ravel()[:4], *lengths([4, 4], [3, 1])), note="concatenated")
        rep = np.array([[1, 1, 2], [2, 2, 2]], dtype=np.int64)
        yield Sample((m((6, 2, 3)), rep, *lengths([6, 6], [3, 3])), {"blank": 0}, note="repeats")
        yield Sample((m((4, 1, 3)), np.array([[0, 1]]), *lengths([4], [2])), {"blank": 2})
        yield Sample((m((5, 2, 4), noncontig=True), tg, *lengths([3, 5], [2, 3])), note="strided")
        yield Sample((m((5, 1, 3)), tg[:1], *lengths([0], [0])), note="zero input length")
        yield Sample(
            (m((30, 3, 6)), _targets(rng, 3, 8, 6, 0), *lengths([30, 25, 12], [8, 5, 4])),
            note="longer",
        )

    return samples


def loss_samples(tensor_lengths):
    def samples(dtype, rng):
        for s in forward_samples(tensor_lengths)(dtype, rng):
            for red in (0, 1, 2):
                yield Sample(s.args, dict(s.kwargs, reduction=red), note=s.note)
            yield Sample(s.args, dict(s.kwargs, zero_infinity=True), note=s.note + ", zero_inf")
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        imp = (m((3, 2, 3)), IMPOSSIBLE, *_lengths(tensor_lengths, [3, 3], [3, 1]))
        for red in (0, 1, 2):
            yield Sample(imp, dict(reduction=red, zero_infinity=True), note="impossible, zeroed")
        lens = (np.array(5), np.array(2)) if tensor_lengths else ((5,), (2,))
        tg = np.array([1, 2], dtype=np.int64)
        yield Sample((m((5, 3)), tg, *lens), dict(reduction=0), note="unbatched")
        yield Sample((m((5, 3)), tg, *lens), note="unbatched mean")

    return samples


def backward_samples(tensor_lengths):
    def samples(dtype, rng):
        for s in forward_samples(tensor_lengths)(dtype, rng):
            x, tg, il, tl = s.args
            lp = log_softmax(x).astype(x.dtype)
            nll, alpha = ctc_forward_ref(lp, tg, il, tl, **s.kwargs)
            g = make(nll.shape, dtype, rng)
            dt = x.dtype
            args = (g, lp, tg, il, tl, nll.astype(dt), alpha.astype(dt))
            yield Sample(args, dict(blank=s.kwargs.get("blank", 0)), note=s.note)
            zi = dict(blank=s.kwargs.get("blank", 0), zero_infinity=True)
            yield Sample(args, zi, note=s.note + ", zero_inf")
        x = make((3, 2, 3), dtype, rng)
        il, tl = _lengths(tensor_lengths, [3, 3], [3, 1])
        lp = log_softmax(x).astype(x.dtype)
        nll, alpha = ctc_forward_ref(lp, IMPOSSIBLE, il, tl)
        args = (make((2,), dtype, rng), lp, IMPOSSIBLE, il, tl, nll.astype(x.dtype))
        yield Sample(args + (alpha.astype(x.dtype),), dict(blank=0, zero_infinity=True))

    return samples


def _ctc_fn(x, tg, il, tl, **kw):
    return flambeau._ctc_loss(flambeau.log_softmax(x, -1), tg, il, tl, **kw)[0]


def _ctc_ref(x, tg, il, tl, blank=0, zero_infinity=False):
    return ctc_forward_ref(log_softmax(x), tg, il, tl, blank)[0]


def _loss_fn(x, tg, il, tl, **kw):
    return flambeau.ctc_loss(flambeau.log_softmax(x, -1), tg, il, tl, **kw)


def _loss_ref(x, tg, il, tl, **kw):
    return ctc_loss_ref(log_softmax(x), tg, il, tl, **kw)


def _backward_ref(g, lp, tg, il, tl, nll, alpha, blank=0, zero_infinity=False):
    return ctc_grad_ref(g, lp, tg, il, tl, nll.astype(np.float64), blank, zero_infinity)


TESTS = []
for _suffix, _tensor in (("", False), (".Tensor", True)):
    TESTS += [
        OpTest("_ctc_loss" + _suffix, _ctc_fn, _ctc_ref, forward_samples(_tensor), FLOATS),
        OpTest("ctc_loss" + _suffix, _loss_fn, _loss_ref, loss_samples(_tensor), FLOATS),
        OpTest(
            "_ctc_loss_backward" + _suffix,
            lambda *a, **kw: flambeau._ctc_loss_backward(*a, **kw),
            _backward_ref,
            backward_samples(_tensor),
            FLOATS,
        ),
    ]
