"""Rows for the losses (ops/nn_loss.yaml), against NumPy references in float64.
reduction: 0 none, 1 mean, 2 sum."""

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, make

FLOAT_ALL = ("float16", "bfloat16", "float32", "float64")


def f64(a):
    return None if a is None else np.asarray(a, dtype=np.float64)


def reduce(loss, reduction):
    return loss if reduction == 0 else (loss.mean() if reduction == 1 else loss.sum())


def in_dtype(fn):
    def run(*args, **kw):
        dt = next(a.dtype for a in args if isinstance(a, np.ndarray))
        return np.asarray(fn(*args, **kw)).astype(dt)

    return run


# ---- nll / cross entropy ---------------------------------------------------------


def log_softmax(x, axis):
    x = f64(x)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def nll_ref(x, target, weight=None, reduction=1, ignore_index=-100):
    """Returns (loss, total_weight)."""
    x64 = f64(x)
    if x.ndim == 1:
        x64, target = x64[None], np.asarray(target)[None]
    c = x64.shape[1]
    xm = np.moveaxis(x64, 1, -1).reshape(-1, c)
    t = np.asarray(target).reshape(-1)
    w = f64(weight) if weight is not None else np.ones(c)
    losses, tw = np.zeros(t.shape), 0.0
    for i, k in enumerate(t):
        if k == ignore_index:
            continue
        losses[i] = -w[k] * xm[i, k]
        tw += w[k]
    if reduction == 0:
        out = losses.reshape(np.asarray(target).shape)
        if x.ndim == 1:
            out = out.reshape(())
    elif reduction == 1:
        out = np.asarray(losses.sum() / tw)
    else:
        out = np.asarray(losses.sum())
    return out.astype(x.dtype), np.asarray(tw).astype(x.dtype)


def nll_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    t = np.array([0, 2, 1, 2])
    for red in (0, 1, 2):
        yield Sample((m((4, 3)), t, None, red, -100))
    yield Sample((m((4, 3)), t, m((3,), low=0.5, high=2), 1, -100), note="weight")
    yield Sample((m((4, 3), noncontig=True), t, None, 1, 2), note="ignore_index")
    yield Sample((m((3,)), np.array(1), None, 0, -100), note="1-d input")
    yield Sample(
        (m((2, 3, 2, 2)), rng.integers(0, 3, (2, 2, 2)), m((3,), low=0.5, high=2), 1, 0),
        note="N-d, weight, ignore",
    )
    yield Sample((m((2, 3, 4)), rng.integers(0, 3, (2, 4)), None, 0, -100), note="N-d none")


def nll_backward_ref(go, x, target, weight, reduction, ignore_index, total_weight):
    x64 = f64(x)
    squeeze = x.ndim == 1
    if squeeze:
        x64, target, go = x64[None], np.asarray(target)[None], np.asarray(go)
        go = go[None] if reduction == 0 else go
    gi = np.zeros_like(x64)
    c = x64.shape[1]
    w = f64(weight) if weight is not None else np.ones(c)
    g = f64(go)
    for idx in np.ndindex(*np.asarray(target).shape):
        k = np.asarray(target)[idx]
        if k == ignore_index:
            continue
        gv = g[idx] if reduction == 0 else (g / f64(total_weight) if reduction == 1 else g)
        gi[(idx[0], k) + idx[1:]] = -w[k] * gv
    return (gi[0] if squeeze else gi).astype(x.dtype)


def nll_backward_samples(d, rng):
    for s in nll_samples(d, rng):
        x, t, w, red, ign = s.args
        _, tw = nll_ref(x, t, w, red, ign)
        shape = np.asarray(t).shape if red == 0 else ()
        go = make(shape, d, rng).reshape(shape)  # (make gives 16-bit 0-dim arrays one dim)
        yield Sample((go, x, t, w, red, ign, tw), note=s.note)


def ce_ref(x, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    logp = log_softmax(x, cdim)
    wshape = [1] * x.ndim
    wshape[cdim] = c
    wb = f64(weight).reshape(wshape) if weight is not None else np.ones(wshape)
    if np.issubdtype(np.asarray(target).dtype, np.floating):
        tp = f64(target) * (1 - label_smoothing) + label_smoothing / c
        loss = -(logp * tp * wb).sum(axis=cdim)
        if reduction == 0:
            return loss.astype(x.dtype)
        tot = loss.sum()
        return np.asarray(tot if reduction == 2 else tot / (x.size / c)).astype(x.dtype)
    nll, tw = nll_ref(logp, target, weight, reduction, ignore_index)
    nll = f64(nll)
    if label_smoothing == 0:
        return nll.astype(x.dtype)
    smooth = -(logp * wb).sum(axis=cdim)
    smooth = np.where(np.asarray(target) == ignore_index, 0.0, smooth)
    if reduction == 2:
        smooth = smooth.sum()
    elif reduction == 1:
        smooth = smooth.sum() / f64(tw)
    return ((1 - label_smoothing) * nll + label_smoothing / c * smooth).astype(x.dtype)


def ce_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    t = np.array([0, 2, 1, 2])
    w = m((3,), low=0.5, high=2)
    for red in (0, 1, 2):
        yield Sample((m((4, 3)), t), {"reduction": red})
        yield Sample(
            (m((4, 3)), t, w, red),  # arrays are converted only when positional
            {"label_smoothing": 0.2, "ignore_index": 1},
            "smoothing, weight, ignore",
        )
    yield Sample((m((4, 3), noncontig=True), t), {"label_smoothing": 0.1}, "strided, smoothing")
    yield Sample((m((3,)), np.array(2)), {}, "1-d")
    yield Sample(
        (m((2, 3, 2, 2)), rng.integers(0, 3, (2, 2, 2))),
        {"label_smoothing": 0.3, "ignore_index": 0},
        "N-d smoothing",
    )
    probs = rng.random((4, 3))
    probs = (probs / probs.sum(1, keepdims=True)).astype(np.float32 if d == "bfloat16" else d)
    for red in (0, 1, 2):
        yield Sample((m((4, 3)), probs, w, red), {}, "probabilities")
    yield Sample((m((4, 3)), probs), {"label_smoothing": 0.25}, "probabilities, smoothing")
    yield Sample(
        (
            m((2, 3, 5)),
            np.moveaxis(rng.dirichlet(np.ones(3), (2, 5)), -1, 1).astype(
                np.float32 if d == "bfloat16" else d
            ),
        ),
        {},
        "N-d probabilities",
    )


# ---- pointwise losses -----------------------------------------------------------


def pair_samples(
    low=-3.0, high=3.0, target_low=None, target_high=None, kwargs=({},), same_shape=False
):
    tl = low if target_low is None else target_low
    th = high if target_high is None else target_high

    def samples(d, rng):
        m = lambda shape, lo=low, hi=high, **kw: make(shape, d, rng, low=lo, high=hi, **kw)  # noqa: E731
        for kw in kwargs:
            for red in (0, 1, 2):
                yield Sample((m((4, 5)), m((4, 5), tl, th)), {**kw, "reduction": red})
            yield Sample((m((3, 4), noncontig=True), m((4, 3), tl, th).T), dict(kw), "strided")
            yield Sample((m(()), m((), tl, th)), dict(kw), "0-dim")
            yield Sample((m((0, 2)), m((0, 2), tl, th)), {**kw, "reduction": 2}, "empty")
            if not same_shape:
                yield Sample((m((2, 3)), m((3,), tl, th)), dict(kw), "broadcast")

    return samples


def grad_triple_samples(low=-3.0, high=3.0, target_low=None, target_high=None, extra=()):
    tl = low if target_low is None else target_low
    th = high if target_high is None else target_high

    def samples(d, rng):
        m = lambda shape, lo=low, hi=high, **kw: make(shape, d, rng, low=lo, high=hi, **kw)  # noqa: E731
        yield Sample((m((4, 5)), m((4, 5)), m((4, 5), tl, th), 0, *extra))
        yield Sample((m(()), m((3, 4), noncontig=True), m((3, 4), tl, th), 1, *extra), note="mean")
        yield Sample((m(()), m((3, 4)), m((4,), tl, th), 2, *extra), note="sum, broadcast")

    return samples


def mse(x, t, reduction=1):
    return reduce((f64(x) - f64(t)) ** 2, reduction)


def norm(x, t, reduction):
    return (
        1.0 / np.broadcast(np.empty(np.shape(x)), np.empty(np.shape(t))).size
        if reduction == 1
        else 1.0
    )


def mse_backward(g, x, t, reduction):
    return f64(g) * 2 * (f64(x) - f64(t)) * norm(x, t, reduction)


def smooth_l1(x, t, reduction=1, beta=1.0):
    d = np.abs(f64(x) - f64(t))
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return reduce(loss, reduction)


def smooth_l1_backward(g, x, t, reduction, beta):
    d = f64(x) - f64(t)
    return f64(g) * np.clip(d / beta, -1, 1) * norm(x, t, reduction)


def huber(x, t, reduction=1, delta=1.0):
    d = np.abs(f64(x) - f64(t))
    return reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def huber_backward(g, x, t, reduction, delta):
    d = f64(x) - f64(t)
    return f64(g) * np.clip(d, -delta, delta) * norm(x, t, reduction)


def bce(x, t, weight=None, reduction=1):
    x64, t64 = f64(x), f64(t)
    with np.errstate(divide="ignore"):
        loss = -(t64 * np.maximum(np.log(x64), -100) + (1 - t64) * np.maximum(np.log1p(-x64), -100))
    if weight is not None:
        loss = loss * f64(weight)
    return reduce(loss, reduction)


def bce_backward(g, x, t, weight=None, reduction=1):
    x64, t64 = f64(x), f64(t)
    r = f64(g) * (x64 - t64) / np.maximum((1 - x64) * x64, 1e-12) * norm(x, t, reduction)
    return r * f64(weight) if weight is not None else r


def bce_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, low=0.05, high=0.95, **kw)  # noqa: E731
    for red in (0, 1, 2):
        yield Sample((m((4, 3)), m((4, 3))), {"reduction": red})
    yield Sample((m((3, 4), noncontig=True), m((3, 4)), m((4,))), {}, "weight broadcast")
    if d != "float64":  # the gradient is infinite there (gradcheck runs float64 rows)
        yield Sample(
            (
                np.array([0.0, 1.0, 0.5], dtype=np.float32 if d == "bfloat16" else d),
                np.array([1.0, 0.0, 0.5], dtype=np.float32 if d == "bfloat16" else d),
            ),
            {},
            "log clamped at -100",
        )


def bce_backward_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, low=0.05, high=0.95, **kw)  # noqa: E731
    yield Sample((m((4, 3)), m((4, 3)), m((4, 3)), None, 0))
    yield Sample((m(()), m((3, 4), noncontig=True), m((3, 4)), m((4,)), 1), note="weight, mean")
    yield Sample((m(()), m((2, 2)), m((2, 2)), None, 2), note="sum")


def bce_logits(x, t, weight=None, pos_weight=None, reduction=1):
    x64, t64 = f64(x), f64(t)
    lw = 1 + (f64(pos_weight) - 1) * t64 if pos_weight is not None else 1.0
    loss = (1 - t64) * x64 + lw * np.logaddexp(0, -x64)
    if weight is not None:
        loss = loss * f64(weight)
    return reduce(loss, reduction)


def bce_logits_samples(d, rng):
    m = lambda shape, lo=-3.0, hi=3.0, **kw: make(shape, d, rng, low=lo, high=hi, **kw)  # noqa: E731
    for red in (0, 1, 2):
        yield Sample((m((4, 3)), m((4, 3), 0, 1)), {"reduction": red})
    yield Sample(
        (m((4, 3), noncontig=True), m((4, 3), 0, 1), m((3,), 0.5, 2), m((3,), 0.5, 3)),
        {},
        "weights",
    )
    yield Sample((m((5,)) * 30, m((5,), 0, 1), None, m((5,), 1, 2)), {}, "large logits")


def kl(x, t, reduction=1, log_target=False):
    x64, t64 = f64(x), f64(t)
    if log_target:
        loss = np.exp(t64) * (t64 - x64)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(t64 > 0, t64 * (np.log(np.where(t64 > 0, t64, 1)) - x64), 0.0)
    return reduce(loss, reduction)


def kl_samples(d, rng):
    m = lambda shape, lo=-3.0, hi=0.0, **kw: make(shape, d, rng, low=lo, high=hi, **kw)  # noqa: E731
    for red in (0, 1, 2):
        yield Sample((m((4, 3)), m((4, 3), 0, 1)), {"reduction": red})
        yield Sample((m((4, 3)), m((4, 3))), {"reduction": red, "log_target": True}, "log target")
    if d != "float64":  # d/dtarget is infinite at 0 (gradcheck runs float64 rows)
        t = m((3, 4), 0, 1)
        t[0] = 0
        yield Sample((m((4, 3), noncontig=True).T, t), {}, "zeros in target, transposed")


TESTS = [
    OpTest("nll_loss_forward", flambeau.nll_loss_forward, nll_ref, nll_samples, dtypes=FLOAT_ALL),
    OpTest("nll_loss", flambeau.nll_loss, lambda *a: nll_ref(*a)[0], nll_samples, dtypes=FLOATS),
    OpTest(
        "nll_loss_backward",
        flambeau.nll_loss_backward,
        nll_backward_ref,
        nll_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest("cross_entropy_loss", flambeau.cross_entropy_loss, ce_ref, ce_samples, dtypes=FLOAT_ALL),
    OpTest("mse_loss", flambeau.mse_loss, in_dtype(mse), pair_samples(), dtypes=FLOAT_ALL),
    OpTest(
        "mse_loss_backward",
        flambeau.mse_loss_backward,
        in_dtype(mse_backward),
        grad_triple_samples(),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "l1_loss",
        flambeau.l1_loss,
        in_dtype(lambda x, t, reduction=1: reduce(np.abs(f64(x) - f64(t)), reduction)),
        pair_samples(),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "smooth_l1_loss",
        flambeau.smooth_l1_loss,
        in_dtype(smooth_l1),
        pair_samples(kwargs=({}, {"beta": 0.5}, {"beta": 0.0})),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "smooth_l1_loss_backward",
        flambeau.smooth_l1_loss_backward,
        in_dtype(smooth_l1_backward),
        grad_triple_samples(extra=(0.7,)),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "huber_loss",
        flambeau.huber_loss,
        in_dtype(huber),
        pair_samples(kwargs=({}, {"delta": 2.0})),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "huber_loss_backward",
        flambeau.huber_loss_backward,
        in_dtype(huber_backward),
        grad_triple_samples(extra=(1.5,)),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "binary_cross_entropy",
        flambeau.binary_cross_entropy,
        in_dtype(bce),
        bce_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "binary_cross_entropy_backward",
        flambeau.binary_cross_entropy_backward,
        in_dtype(bce_backward),
        bce_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "binary_cross_entropy_with_logits",
        flambeau.binary_cross_entropy_with_logits,
        in_dtype(bce_logits),
        bce_logits_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest("kl_div", flambeau.kl_div, in_dtype(kl), kl_samples, dtypes=FLOAT_ALL),
]
