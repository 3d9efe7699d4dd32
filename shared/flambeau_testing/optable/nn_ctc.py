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


def _lengths(*v):
    # Arrays for both overloads: the int[] rows' functions pass them on as lists.
    return tuple(np.array(x, dtype=np.int64) for x in v)


def forward_samples():
    """(logits (T, N, C), targets, input_lengths, target_lengths), kwargs. All but the
    longest are small enough for finite differences (log_alpha, N x T x (2 S + 1), too)."""

    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        tg = _targets(rng, 2, 3, 4, 0)
        yield Sample((m((4, 2, 4)), tg, *_lengths([4, 3], [2, 1])), note="padded")
        yield Sample((m((4, 2, 3)), tg[:, :2] % 3, *_lengths([4, 3], [2, 0])), note="empty target")
        yield Sample((m((4, 2, 4)), tg.ravel()[:3], *_lengths([4, 4], [2, 1])), note="concatenated")
        rep = np.array([[1, 1], [2, 1]], dtype=np.int64)
        yield Sample((m((4, 2, 3)), rep, *_lengths([4, 3], [2, 2])), {"blank": 0}, note="repeats")
        rep = np.array([[1, 1, 2]], dtype=np.int64)
        yield Sample((m((6, 1, 3)), rep, *_lengths([6], [3])), note="repeats, 3 labels")
        yield Sample((m((4, 1, 3)), np.array([[0, 1]]), *_lengths([4], [2])), {"blank": 2})
        yield Sample((m((4, 2, 4), noncontig=True), tg, *_lengths([3, 4], [2, 1])), note="strided")
        yield Sample((m((5, 1, 3)), tg[:1], *_lengths([0], [0])), note="zero input length")
        yield Sample(
            (m((30, 3, 6)), _targets(rng, 3, 8, 6, 0), *_lengths([30, 25, 12], [8, 5, 4])),
            note="longer",
        )

    return samples


def loss_samples(tensor_lengths):
    def samples(dtype, rng):
        # One reduction per shape, in turn (each runs a double backward in the autograd tests).
        for i, s in enumerate(forward_samples()(dtype, rng)):
            yield Sample(s.args, dict(s.kwargs, reduction=i % 3), note=s.note)
            if i == 0:
                zi = dict(s.kwargs, zero_infinity=True)
                yield Sample(s.args, zi, note=s.note + ", zero_inf")
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        imp = (m((3, 2, 3)), IMPOSSIBLE, *_lengths([3, 3], [3, 1]))
        for red in (0, 1, 2):
            yield Sample(imp, dict(reduction=red, zero_infinity=True), note="impossible, zeroed")
        lens = (np.array(5), np.array(2)) if tensor_lengths else _lengths([5], [2])
        tg = np.array([1, 2], dtype=np.int64)
        yield Sample((m((5, 3)), tg, *lens), dict(reduction=0), note="unbatched")
        yield Sample((m((5, 3)), tg, *lens), note="unbatched mean")

    return samples


def backward_samples(dtype, rng):
    """Few and small (the autograd tests run a double backward through each): a padded
    batch with repeats, concatenated targets with an empty one, another blank, no input,
    an impossible alignment (zeroed) beside a possible one, and a long one."""
    m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
    padded = np.array([[1, 1, 0], [2, 0, 0]], dtype=np.int64)
    cases = [
        ((m((3, 2, 3)), padded, *_lengths([3, 2], [2, 1])), {}, "padded, repeats"),
        ((m((3, 2, 3)), np.array([2, 1]), *_lengths([3, 3], [2, 0])), {}, "concatenated"),
        (
            (
                m((3, 2, 3)),
                np.array([[0, 1]]).repeat(2, 0),
                *_lengths([2, 3], [1, 2]),
            ),
            {"blank": 2},
            "blank 2, strided",
        ),
        ((m((2, 1, 2)), np.zeros((1, 1), np.int64), *_lengths([0], [0])), {}, "no input"),
        (
            (m((3, 2, 3)), IMPOSSIBLE, *_lengths([3, 3], [3, 1])),
            {"zero_infinity": True},
            "impossible, zeroed",
        ),
        (
            (m((30, 3, 6)), _targets(rng, 3, 8, 6, 0), *_lengths([30, 25, 12], [8, 5, 4])),
            {},
            "longer",
        ),
    ]
    for (x, tg, il, tl), kw, note in cases:
        blank = kw.get("blank", 0)
        lp = log_softmax(x).astype(x.dtype)
        if note.endswith("strided"):  # every other column of a wider array
            wide = np.zeros(lp.shape[:-1] + (2 * lp.shape[-1],), lp.dtype)
            wide[..., ::2] = lp
            lp = wide[..., ::2]
        nll, alpha = ctc_forward_ref(lp, tg, il, tl, blank)
        args = (m(nll.shape), lp, tg, il, tl, nll.astype(x.dtype), alpha.astype(x.dtype))
        yield Sample(args, dict(kw, blank=blank), note=note)


def _ctc_fn(x, tg, il, tl, **kw):
    return flambeau._ctc_loss(flambeau.log_softmax(x, -1), tg, il, tl, **kw)[0]


def _ctc_ref(x, tg, il, tl, blank=0, zero_infinity=False):
    return ctc_forward_ref(log_softmax(x), tg, il, tl, blank)[0]


def _loss_fn(x, tg, il, tl, **kw):
    return flambeau.ctc_loss(flambeau.log_softmax(x, -1), tg, il, tl, **kw)


def _loss_ref(x, tg, il, tl, **kw):
    return ctc_loss_ref(log_softmax(x), tg, il, tl, **kw)


def _backward_fn(g, lp, tg, il, tl, *rest, **kw):
    return flambeau._ctc_loss_backward(g, lp, tg, il, tl, *rest, **kw)


def _backward_ref(g, lp, tg, il, tl, nll, alpha, blank=0, zero_infinity=False):
    return ctc_grad_ref(g, lp, tg, il, tl, nll.astype(np.float64), blank, zero_infinity)


def _int_lists(fn, at):
    """fn passing its lengths (the arrays at positions at, at + 1) as lists: the samples
    hold arrays, which the int[] overloads take as lists."""

    def call(*args, **kw):
        lists = tuple(v.reshape(-1).tolist() for v in args[at : at + 2])
        return fn(*args[:at], *lists, *args[at + 2 :], **kw)

    return call


TESTS = []
for _suffix, _tensor in (("", False), (".Tensor", True)):
    _wrap = (lambda f, at=2: f) if _tensor else _int_lists
    TESTS += [
        OpTest("_ctc_loss" + _suffix, _wrap(_ctc_fn, 2), _ctc_ref, forward_samples(), FLOATS),
        OpTest("ctc_loss" + _suffix, _wrap(_loss_fn, 2), _loss_ref, loss_samples(_tensor), FLOATS),
        OpTest(
            "_ctc_loss_backward" + _suffix,
            _wrap(_backward_fn, 3),
            _backward_ref,
            backward_samples,
            FLOATS,
        ),
    ]
