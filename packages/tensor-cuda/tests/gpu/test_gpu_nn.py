"""Neural-network kernels on CUDA against flambeau's CPU kernels: the _foreach_*
operators (every ForeachOp the optimizers use), layer norm and group norm forward and
backward (16-bit floats with float statistics), batch norm in evaluation and training
mode (composed by the core), max/avg pooling and their adaptive forms with indices and
gradients (ceil_mode, padding, dilation, count_include_pad, divisor_override),
max_unpool, the pointwise losses, nll_loss (weight, ignore_index, every reduction,
(N, C, d1, d2) inputs) with their gradients; a bad target raises RuntimeError with
the CPU's message. The CTC loss: _ctc_loss's nll and log_alpha, _ctc_loss_backward,
ctc_loss for every reduction with zero_infinity (padded and concatenated targets, int32
and int64 lengths, a blank other than 0, empty targets, no frames, an infinite loss),
its autograd gradient, and sequences longer than a block."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, assert_close, sample

import flambeau
import flambeau.nn.functional as F

COMPUTE = [flambeau.float32, flambeau.float64]


def _grads(fn, *inputs):
    """fn(*inputs) and the gradients of its sum with respect to every input."""
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return [out.detach()] + [x.grad for x in leaves]


def _compare(fn, *inputs, rtol=None, atol=None):
    want = _grads(fn, *inputs)
    got = _grads(fn, *[x.to(DEVICE) for x in inputs])
    for g, w in zip(got, want):
        assert_close(g, w, rtol, atol)


# ---- _foreach ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPUTE)
def test_foreach_ops_match_the_cpu(dtype):
    xs = [sample(dtype, s, seed=k) for k, s in enumerate([(7,), (3, 5), (300,)])]
    ys = [sample(dtype, x.shape, seed=10 + k) for k, x in enumerate(xs)]
    zs = [sample(dtype, x.shape, seed=20 + k).abs() + 0.5 for k, x in enumerate(xs)]
    ws = [sample(dtype, x.shape, seed=30 + k).sigmoid() for k, x in enumerate(xs)]

    def dev(ts):
        return [t.to(DEVICE) for t in ts]

    cases = [
        lambda a, b, c, w: flambeau._foreach_add(a, 1.5),
        lambda a, b, c, w: flambeau._foreach_add(a, b, alpha=-0.5),
        lambda a, b, c, w: flambeau._foreach_sub(a, 2.0),
        lambda a, b, c, w: flambeau._foreach_mul(a, b),
        lambda a, b, c, w: flambeau._foreach_mul(a, 3.0),
        lambda a, b, c, w: flambeau._foreach_div(a, c),
        lambda a, b, c, w: flambeau._foreach_div(a, 7.0),
        lambda a, b, c, w: flambeau._foreach_maximum(a, b),
        lambda a, b, c, w: flambeau._foreach_minimum(a, 0.25),
        lambda a, b, c, w: flambeau._foreach_pow(c, 2),
        lambda a, b, c, w: flambeau._foreach_pow(c, b),
        lambda a, b, c, w: flambeau._foreach_pow(2.0, a),
        lambda a, b, c, w: flambeau._foreach_lerp(a, b, 0.25),
        lambda a, b, c, w: flambeau._foreach_lerp(a, b, 0.75),
        lambda a, b, c, w: flambeau._foreach_lerp(a, b, w),
        lambda a, b, c, w: flambeau._foreach_addcmul(a, b, c, value=0.5),
        lambda a, b, c, w: flambeau._foreach_addcdiv(a, b, c, value=-2.0),
        lambda a, b, c, w: flambeau._foreach_sqrt(c),
        lambda a, b, c, w: flambeau._foreach_neg(a),
        lambda a, b, c, w: flambeau._foreach_abs(a),
        lambda a, b, c, w: flambeau._foreach_exp(a),
        lambda a, b, c, w: flambeau._foreach_sign(a),
        lambda a, b, c, w: flambeau._foreach_reciprocal(c),
    ]
    for case in cases:
        want = case(xs, ys, zs, ws)
        got = case(dev(xs), dev(ys), dev(zs), dev(ws))
        for g, w in zip(got, want):
            assert_close(g, w)


def test_foreach_in_place_adam_like_step():
    params = [sample(flambeau.float32, s, seed=k) for k, s in enumerate([(5, 4), (9,)])]
    grads = [sample(flambeau.float32, p.shape, seed=5 + k) for k, p in enumerate(params)]

    def step(ps, gs):
        ps = [p.clone() for p in ps]
        m = [flambeau.zeros_like(p) for p in ps]
        v = [flambeau.zeros_like(p) for p in ps]
        flambeau._foreach_lerp_(m, gs, 0.1)
        flambeau._foreach_mul_(v, 0.999)
        flambeau._foreach_addcmul_(v, gs, gs, value=0.001)
        denom = flambeau._foreach_sqrt(v)
        flambeau._foreach_add_(denom, 1e-8)
        flambeau._foreach_addcdiv_(ps, m, denom, value=-1e-3)
        return ps

    want = step(params, grads)
    got = step([p.to(DEVICE) for p in params], [g.to(DEVICE) for g in grads])
    for g, w in zip(got, want):
        assert_close(g, w)


# ---- normalization ----------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 33, 1000])
@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_forward_and_backward(dtype, n):
    x = sample(dtype, (6, n)) + 3
    w, b = sample(dtype, (n,), seed=2), sample(dtype, (n,), seed=3)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == flambeau.float32 else {}
    _compare(lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), x, w, b, **tol)
    _compare(lambda x: F.layer_norm(x, (n,)), x, **tol)
    got = flambeau.native_layer_norm(x.to(DEVICE), [n], None, None, 1e-5)
    want = flambeau.native_layer_norm(x, [n], None, None, 1e-5)
    for g, ww in zip(got, want):  # mean and rstd in x's dtype
        assert_close(g, ww, **tol)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64, flambeau.bfloat16])
def test_group_norm_forward_and_backward(dtype):
    x = sample(dtype, (3, 6, 4, 5))
    w, b = sample(dtype, (6,), seed=2), sample(dtype, (6,), seed=3)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == flambeau.float32 else {}
    _compare(lambda x, w, b: F.group_norm(x, 3, w, b), x, w, b, **tol)


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_batch_norm_forward_and_backward(dtype, training):
    x = sample(dtype, (4, 3, 5, 2))
    w, b = sample(dtype, (3,), seed=2), sample(dtype, (3,), seed=3)
    rm, rv = sample(dtype, (3,), seed=4), sample(dtype, (3,), seed=5).abs() + 1
    rm_d, rv_d = rm.to(DEVICE), rv.to(DEVICE)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == flambeau.float32 else {}
    want = _grads(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training), x, w, b)
    got = _grads(
        lambda x, w, b: F.batch_norm(x, rm_d, rv_d, w, b, training),
        *[t.to(DEVICE) for t in (x, w, b)],
    )
    for g, ww in zip(got, want):
        assert_close(g, ww, **tol)
    assert_close(rm_d, rm, **tol)
    assert_close(rv_d, rv, **tol)


# ---- pooling ----------------------------------------------------------------------


def _with_nan_and_ties(x):
    flat = x.reshape(-1).clone()
    flat[::7] = flat[0]
    flat[5] = float("nan")
    return flat.reshape(x.shape)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": 3, "stride": 2, "ceil_mode": True},
        {"kernel_size": 2, "dilation": 2, "padding": 1},
    ],
)
@pytest.mark.parametrize("dtype", COMPUTE + [flambeau.float16])
def test_max_pool2d_values_indices_and_gradient(dtype, kwargs):
    x = sample(dtype, (2, 3, 9, 8))
    got_v, got_i = F.max_pool2d(x.to(DEVICE), return_indices=True, **kwargs)
    want_v, want_i = F.max_pool2d(x, return_indices=True, **kwargs)
    assert_close(got_v, want_v)
    assert_close(got_i, want_i)
    _compare(lambda x: F.max_pool2d(x, **kwargs), x)
    xn = _with_nan_and_ties(x)
    got_v, got_i = F.max_pool2d(xn.to(DEVICE), return_indices=True, **kwargs)
    want_v, want_i = F.max_pool2d(xn, return_indices=True, **kwargs)
    assert_close(got_v, want_v)
    assert_close(got_i, want_i)


@pytest.mark.parametrize("dtype", COMPUTE)
def test_max_pool_1d_3d_and_unpool(dtype):
    x1, x3 = sample(dtype, (2, 3, 11)), sample(dtype, (1, 2, 5, 6, 7))
    _compare(lambda x: F.max_pool1d(x, 3, stride=2), x1)
    _compare(lambda x: F.max_pool3d(x, 2, stride=(1, 2, 2), padding=1), x3)
    v, i = F.max_pool2d(sample(dtype, (2, 3, 8, 8)), 2, return_indices=True)
    assert_close(
        F.max_unpool2d(v.to(DEVICE), i.to(DEVICE), 2, output_size=(8, 8)),
        F.max_unpool2d(v, i, 2, output_size=(8, 8)),
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {"kernel_size": 3, "stride": 2, "ceil_mode": True},
        {"kernel_size": 3, "padding": 1, "divisor_override": 4},
    ],
)
@pytest.mark.parametrize("dtype", COMPUTE + [flambeau.bfloat16])
def test_avg_pool2d_and_gradient(dtype, kwargs):
    _compare(lambda x: F.avg_pool2d(x, **kwargs), sample(dtype, (2, 3, 9, 8)))


@pytest.mark.parametrize("out", [(1, 1), (3, 4), (7, 5), (12, 10)])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_adaptive_pools_and_gradients(dtype, out):
    x = sample(dtype, (2, 3, 9, 8))
    _compare(lambda x: F.adaptive_avg_pool2d(x, out), x)
    _compare(lambda x: F.adaptive_max_pool2d(x, out), x)
    got_v, got_i = F.adaptive_max_pool2d(x.to(DEVICE), out, return_indices=True)
    want_v, want_i = F.adaptive_max_pool2d(x, out, return_indices=True)
    assert_close(got_v, want_v)
    assert_close(got_i, want_i)
    _compare(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), sample(dtype, (1, 2, 5, 6, 4)))


# ---- losses -----------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_pointwise_losses_and_gradients(dtype, reduction):
    x, t = sample(dtype, (6, 5)), sample(dtype, (6, 5), seed=2)
    p, q = x.sigmoid(), t.sigmoid()
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == flambeau.float32 else {}
    _compare(lambda x, t: F.mse_loss(x, t, reduction=reduction), x, t, **tol)
    _compare(lambda x, t: F.l1_loss(x, t, reduction=reduction), x, t, **tol)
    _compare(lambda x: F.smooth_l1_loss(x, t, reduction=reduction, beta=0.5), x, **tol)
    _compare(lambda x: F.huber_loss(x, t, reduction=reduction, delta=2.0), x, **tol)
    _compare(lambda p: F.binary_cross_entropy(p, q, reduction=reduction), p, **tol)
    pw = sample(dtype, (5,), seed=3).abs()
    _compare(
        lambda x: F.binary_cross_entropy_with_logits(x, q, reduction=reduction, pos_weight=pw),
        x,
        **tol,
    )
    _compare(lambda x: F.kl_div(x, q, reduction=reduction), x, **tol)
    _compare(lambda x: F.kl_div(x, t, reduction=reduction, log_target=True), x, **tol)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_nll_loss_with_weight_ignore_index_and_spatial_dims(dtype, reduction):
    logp = F.log_softmax(sample(flambeau.float32, (6, 4)), dim=1).to(dtype)
    target = flambeau.tensor([0, 3, 1, -100, 2, 3])
    weight = sample(dtype, (4,), seed=4).abs() + 0.1
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == flambeau.float32 else {}
    _compare(lambda x: F.nll_loss(x, target, reduction=reduction), logp, **tol)
    tg = target.to(DEVICE)
    want = _grads(lambda x: F.nll_loss(x, target, weight, reduction=reduction), logp)
    wd = weight.to(DEVICE)
    got = _grads(lambda x: F.nll_loss(x, tg, wd, reduction=reduction), logp.to(DEVICE))
    for g, w in zip(got, want):
        assert_close(g, w, **tol)
    spatial = F.log_softmax(sample(flambeau.float32, (2, 4, 3, 5)), dim=1).to(dtype)
    st = flambeau.randint(0, 4, (2, 3, 5), generator=flambeau.Generator().manual_seed(1))
    st[0, 1, 2] = 1  # ignored below
    std = st.to(DEVICE)
    want = _grads(lambda x: F.nll_loss(x, st, reduction=reduction, ignore_index=1), spatial)
    got = _grads(
        lambda x: F.nll_loss(x, std, reduction=reduction, ignore_index=1), spatial.to(DEVICE)
    )
    for g, w in zip(got, want):
        assert_close(g, w, **tol)


def test_cross_entropy_trains_like_the_cpu():
    x, t = sample(flambeau.float32, (8, 5)), flambeau.tensor([0, 1, 2, 3, 4, 0, 1, 2])
    td = t.to(DEVICE)
    want = _grads(lambda x: F.cross_entropy(x, t, label_smoothing=0.1), x)
    got = _grads(lambda x: F.cross_entropy(x, td, label_smoothing=0.1), x.to(DEVICE))
    for g, w in zip(got, want):
        assert_close(g, w, 1e-5, 1e-5)


def test_nll_loss_bad_target_raises_the_cpu_message():
    logp = flambeau.zeros(3, 4, device=DEVICE)
    with pytest.raises(RuntimeError, match=r"Target 7 is out of bounds \(4 classes\)"):
        F.nll_loss(logp, flambeau.tensor([0, 7, 9]).to(DEVICE))
    assert_close(logp + 1, flambeau.ones(3, 4))  # the device is still usable


# ---- CTC loss ---------------------------------------------------------------------


def _ctc_problem(dtype, padded, blank, T=30, C=7, seed=5):
    """log_probs (T, 5, C) and targets (padded (5, S) or concatenated) with repeated
    labels, an empty target, a sample with no frames and one whose labels cannot fit its
    frames (an infinite loss); the lengths as lists."""
    g = flambeau.Generator().manual_seed(seed)
    lp = F.log_softmax(flambeau.randn((T, 5, C), generator=g), dim=2).to(dtype)
    il, tl = [T, T - 5, 12, 4, 0], [8, 0, 5, 6, 0]
    others = [c for c in range(C) if c != blank]
    labels = [[others[(3 * b + i // 2) % len(others)] for i in range(n)] for b, n in enumerate(tl)]
    if padded:
        S = max(tl) + 1
        tg = flambeau.tensor([lab + [blank] * (S - len(lab)) for lab in labels])
    else:
        tg = flambeau.tensor([v for lab in labels for v in lab], dtype=flambeau.int64)
    return lp, tg, il, tl


@pytest.mark.parametrize("padded, blank", [(True, 0), (False, 3)])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_ctc_loss_forward_and_kernels_match_the_cpu(dtype, padded, blank):
    lp, tg, il, tl = _ctc_problem(dtype, padded, blank)
    lpd, tgd = lp.to(DEVICE), tg.to(DEVICE)
    nll, alpha = flambeau._ctc_loss(lp, tg, il, tl, blank)
    got_nll, got_alpha = flambeau._ctc_loss(lpd, tgd, il, tl, blank)
    assert_close(got_nll, nll)
    assert_close(got_alpha, alpha)
    assert got_nll[3].item() == float("inf") and got_nll[4].item() == 0
    w = sample(dtype, (5,), seed=6)
    for zero_infinity in (False, True):
        want = flambeau._ctc_loss_backward(w, lp, tg, il, tl, nll, alpha, blank, zero_infinity)
        got = flambeau._ctc_loss_backward(
            w.to(DEVICE), lpd, tgd, il, tl, got_nll, got_alpha, blank, zero_infinity
        )
        assert_close(got, want)
    i32 = (flambeau.tensor(il, dtype=flambeau.int32), flambeau.tensor(tl, dtype=flambeau.int32))
    # Lengths as lists, host int32 tensors and device int64 tensors; targets on the host too.
    for lengths, targets in (
        ((il, tl), tgd),
        (i32, tgd),
        (tuple(x.long().to(DEVICE) for x in i32), tg),
    ):
        for reduction in ("none", "mean", "sum"):
            for zero_infinity in (False, True):
                kw = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
                want = F.ctc_loss(lp, tg, il, tl, **kw)
                assert_close(F.ctc_loss(lpd, targets, *lengths, **kw), want)
    # Every target empty: padded (5, 0) targets.
    empty, none = flambeau.zeros((5, 0), dtype=flambeau.int64), [0] * 5
    want = F.ctc_loss(lp, empty, il, none, blank=blank, reduction="none")
    assert_close(F.ctc_loss(lpd, empty.to(DEVICE), il, none, blank=blank, reduction="none"), want)


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize(
    "padded, blank, index", [(True, 0, flambeau.int64), (False, 3, flambeau.int32)]
)
@pytest.mark.parametrize("dtype", COMPUTE)
def test_ctc_loss_gradient_matches_the_cpu(dtype, padded, blank, index, reduction, zero_infinity):
    # The lengths as tensors on the loss's device (see the list case below).
    lp, tg, il, tl = _ctc_problem(dtype, padded, blank)
    ilt, tlt = flambeau.tensor(il, dtype=index), flambeau.tensor(tl, dtype=index)
    kw = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    want = _grads(lambda x: F.ctc_loss(x, tg, ilt, tlt, **kw), lp)
    ild, tld, tgd = ilt.to(DEVICE), tlt.to(DEVICE), tg.to(DEVICE)
    got = _grads(lambda x: F.ctc_loss(x, tgd, ild, tld, **kw), lp.to(DEVICE))
    for g, w in zip(got, want):
        assert_close(g, w)


@pytest.mark.parametrize("dtype", COMPUTE)
def test_ctc_loss_mean_gradient_with_list_lengths(dtype):
    lp, tg, il, tl = _ctc_problem(dtype, True, 0)
    _compare(lambda x: F.ctc_loss(x, tg, il, tl, zero_infinity=True), lp)


@pytest.mark.parametrize("dtype", COMPUTE)
def test_ctc_loss_long_sequences_match_the_cpu(dtype):
    # More states (601) and classes (300) than a block has threads.
    g = flambeau.Generator().manual_seed(9)
    T, C = 700, 300
    lp = F.log_softmax(flambeau.randn((T, 2, C), generator=g), dim=2).to(dtype)
    tg = flambeau.randint(1, C, (2, 300), generator=g)
    il, tl = [700, 500], [300, 120]
    _compare(lambda x: F.ctc_loss(x, tg, il, tl, reduction="sum"), lp)
    _compare(lambda x: F.ctc_loss(x, tg, il, tl, reduction="none"), lp)
