"""Rows for scaled dot-product attention, its fused forward and its backward,
against NumPy statements of the attention and of its gradient (worked out by
hand), with the dropout mask drawn by a NumPy Philox-4x32-10."""

import math

import numpy as np

import flambeau

from . import OpTest, Sample, make

DTYPES = ("float16", "bfloat16", "float32", "float64")


# ---- NumPy references -------------------------------------------------------------


def philox_keep(seed, offset, shape, p):
    """The dropout keep mask: lane i of the Philox stream (seed, offset) below 1 - p,
    lanes in row-major order over shape (as bernoulli_ draws them)."""
    n = int(np.prod(shape))
    m32 = np.uint64(0xFFFFFFFF)
    ctr = np.uint64(offset) + np.arange((n + 3) // 4, dtype=np.uint64)
    c0, c1 = ctr & m32, ctr >> np.uint64(32)
    c2, c3 = np.zeros_like(c0), np.zeros_like(c0)
    k0, k1 = np.uint64(seed) & m32, np.uint64(seed) >> np.uint64(32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ k1
        c0, c1, c2, c3 = n0, p1 & m32, n2, p0 & m32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m32, (k1 + np.uint64(0xBB67AE85)) & m32
    lanes = np.stack([c0, c1, c2, c3], axis=1).reshape(-1)[:n]
    return (lanes.astype(np.float64) * 2.0**-32 < 1 - p).reshape(shape)


def _repeat_heads(q, t, gqa):
    if not gqa or q.ndim < 3 or t.ndim < 3 or t.shape[-3] in (q.shape[-3], 0, 1):
        return t
    return np.repeat(t, q.shape[-3] // t.shape[-3], axis=-3)


def _scores(q, k, mask, is_causal, scale):
    """Masked scores (float64) and the rows with nothing left to attend."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = np.matmul(q.astype(np.float64), np.swapaxes(k.astype(np.float64), -1, -2)) * scale
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    elif mask is not None and mask.dtype == np.bool_:
        s = np.where(mask, s, -np.inf)
    elif mask is not None:
        s = s + mask.astype(np.float64)
    dead = np.all(s == -np.inf, axis=-1, keepdims=True)
    return s, dead


def _lse_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def attention_ref(q, k, v, mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                  enable_gqa=False, seed=None):  # fmt: skip
    """(output, logsumexp); seed: the Philox seed of a dropout draw at offset 0."""
    k, v = _repeat_heads(q, k, enable_gqa), _repeat_heads(q, v, enable_gqa)
    s, dead = _scores(q, k, mask, is_causal, scale)
    live = np.where(dead, 0.0, s)
    mx = live.max(-1, keepdims=True) if live.shape[-1] else np.zeros(live.shape[:-1] + (1,))
    e = np.exp(live - mx)
    with np.errstate(divide="ignore"):  # S = 0: log(0) = -inf
        lse = mx + np.log(e.sum(-1, keepdims=True))
    w = np.where(dead, 0.0, e / e.sum(-1, keepdims=True))
    if dropout_p > 0:
        keep = philox_keep(seed, 0, w.shape, dropout_p)
        w = w * keep * (0.0 if dropout_p == 1 else 1 / (1 - dropout_p))
    out = np.matmul(w, v.astype(np.float64))
    lse = np.where(dead, -np.inf, lse)[..., 0]
    return out.astype(q.dtype), lse.astype(_lse_dtype(q.dtype))


def _fold(g, x, gqa, q):
    """Sums a gradient of the broadcast, head-repeated input back to x's shape."""
    if gqa and q.ndim >= 3 and x.ndim >= 3 and x.shape[-3] not in (q.shape[-3], 0, 1):
        r = q.shape[-3] // x.shape[-3]
        g = g.reshape(g.shape[:-3] + (x.shape[-3], r) + g.shape[-2:]).sum(-3)
    while g.ndim > x.ndim:
        g = g.sum(0)
    for d, n in enumerate(x.shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdims=True)
    return g.astype(x.dtype)


def attention_backward_ref(go, q, k, v, out, lse, seed, offset, mask, dropout_p, is_causal, *,
                           scale=None, enable_gqa=False):  # fmt: skip
    kr, vr = _repeat_heads(q, k, enable_gqa), _repeat_heads(q, v, enable_gqa)
    s, _ = _scores(q, kr, mask, is_causal, scale)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    lse = lse.astype(np.float64)[..., None]
    dead = lse == -np.inf
    w = np.where(dead, 0.0, np.exp(s - np.where(dead, 0.0, lse)))
    go, out, vr = go.astype(np.float64), out.astype(np.float64), vr.astype(np.float64)
    f = 1.0
    if dropout_p > 0:
        keep = philox_keep(int(seed), int(offset), w.shape, dropout_p)
        f = keep * (0.0 if dropout_p == 1 else 1 / (1 - dropout_p))
    dw = np.matmul(go, np.swapaxes(vr, -1, -2)) * f
    gv = np.matmul(np.swapaxes(w * f, -1, -2), go)
    d = (go * out).sum(-1, keepdims=True)
    ds = w * (dw - d) * scale
    gq = np.matmul(ds, kr.astype(np.float64))
    gk = np.matmul(np.swapaxes(ds, -1, -2), q.astype(np.float64))
    gq = np.broadcast_to(gq, np.broadcast_shapes(gq.shape, q.shape))
    return _fold(gq, q, False, q), _fold(gk, k, enable_gqa, q), _fold(gv, v, enable_gqa, q)


# ---- samples ----------------------------------------------------------------------


def attention_samples(dtype, rng):
    m = lambda *shape, s=False: make(shape, dtype, rng, low=-1.5, high=1.5, noncontig=s)  # noqa: E731
    yield Sample((m(1, 2, 3, 4), m(1, 2, 5, 4), m(1, 2, 5, 3)), note="L != S, Ev != E")
    yield Sample((m(3, 4), m(5, 4), m(5, 2)), {"scale": 0.7}, note="2-d, scale")
    bool_mask = rng.random((3, 5)) > 0.3
    bool_mask[:, 0] = True
    yield Sample((m(1, 2, 3, 4), m(1, 2, 5, 4), m(1, 2, 5, 3), bool_mask), note="bool mask")
    yield Sample((m(2, 3, 4), m(2, 5, 4), m(2, 5, 3), m(2, 1, 5)), note="float mask, broadcast")
    yield Sample((m(1, 2, 4, 3), m(1, 2, 3, 3), m(1, 2, 3, 2), None, 0.0, True), note="causal L>S")
    yield Sample((m(2, 3, 4), m(2, 5, 4), m(2, 5, 2), None, 0.0, True), note="causal L<S")
    yield Sample((m(2, 1, 3, 4), m(2, 5, 4), m(5, 3)), note="broadcast batch")
    yield Sample((m(1, 4, 2, 3), m(1, 2, 3, 3), m(1, 2, 3, 2)), {"enable_gqa": True}, note="gqa")
    t = lambda *shape: m(*shape).transpose(0, 2, 1, 3)  # noqa: E731  (N, L, H, E) -> (N, H, L, E)
    yield Sample((t(1, 3, 2, 4), t(1, 5, 2, 4), m(1, 2, 5, 3, s=True)), note="non-contiguous")
    dead = np.ones((3, 5), bool)
    dead[1] = False
    yield Sample((m(2, 3, 4), m(2, 5, 4), m(2, 5, 3), dead), note="fully masked row")
    yield Sample((m(1, 0, 4), m(1, 5, 4), m(1, 5, 3)), note="L = 0")
    yield Sample((m(1, 3, 4), m(1, 0, 4), m(1, 0, 3)), note="S = 0")
    yield Sample((m(2, 2, 70, 8), m(2, 2, 67, 8), m(2, 2, 67, 5), None, 0.0, True), note="blocks")
    yield Sample((m(1, 3, 130, 8), m(1, 3, 40, 8), m(1, 3, 40, 8), m(130, 40)), note="blocks mask")


def dropout_samples(dtype, rng):
    m = lambda *shape: make(shape, dtype, rng, low=-1.5, high=1.5)  # noqa: E731
    yield Sample((m(1, 2, 3, 4), m(1, 2, 5, 4), m(1, 2, 5, 3), None, 0.4), {"seed": 7})
    yield Sample((m(2, 70, 8), m(2, 33, 8), m(2, 33, 4), None, 0.25, True), {"seed": 123})


def forward_samples(dtype, rng):
    for s in attention_samples(dtype, rng):
        if s.args[0].size < 100:
            yield s


# Forward samples the backward row leaves out (covered by the others; its gradgradcheck
# is a third derivative, so every sample costs).
BACKWARD_SKIPS = {"2-d, scale", "causal L<S", "L = 0", "L != S, Ev != E", "bool mask"}


def backward_samples(dtype, rng):
    """Samples of the backward: the inputs, the reference forward's output and
    logsumexp, a grad_out, and the Philox state (a dropout draw for some)."""
    for s in list(attention_samples(dtype, rng)) + list(dropout_samples(dtype, rng)):
        if s.note in BACKWARD_SKIPS:
            continue
        q, k, v, *rest = s.args
        mask, p, causal = (rest + [None, 0.0, False][len(rest) :])[:3]
        kw = dict(s.kwargs)
        seed = kw.pop("seed", 0)
        out, lse = attention_ref(q, k, v, mask, p, causal, seed=seed, **kw)
        go = make(out.shape, dtype, rng, low=-1, high=1)
        seed_arr, offset_arr = np.array(seed, np.int64), np.array(0, np.int64)
        args = (go, q, k, v, out, lse, seed_arr, offset_arr, mask, p, causal)
        yield Sample(args, kw, note=s.note)


def seeded(fn):
    """Runs fn after reseeding the default generator (dropout rows)."""

    def call(*args, seed=0, **kwargs):
        flambeau.manual_seed(seed)
        return fn(*args, **kwargs)

    return call


def backward_call(go, q, k, v, out, lse, seed, offset, mask, p, causal, **kw):
    return flambeau._scaled_dot_product_attention_backward(
        go, q, k, v, out, lse, seed, offset, p, causal, attn_mask=mask, **kw
    )


TESTS = [
    OpTest(
        "scaled_dot_product_attention",
        flambeau.scaled_dot_product_attention,
        lambda *a, **kw: attention_ref(*a, **kw)[0],
        attention_samples,
        dtypes=DTYPES,
    ),
    OpTest(
        "scaled_dot_product_attention",
        seeded(flambeau.scaled_dot_product_attention),
        lambda *a, **kw: attention_ref(*a, **kw)[0],
        dropout_samples,
        dtypes=DTYPES,
        id="scaled_dot_product_attention_dropout",
    ),
    OpTest(
        "_scaled_dot_product_attention_forward",
        lambda *a, **kw: flambeau._scaled_dot_product_attention_forward(*a, **kw)[:2],
        attention_ref,
        forward_samples,
        dtypes=DTYPES,
    ),
    OpTest(
        "_scaled_dot_product_attention_backward",
        backward_call,
        attention_backward_ref,
        backward_samples,
        dtypes=DTYPES,
    ),
]
