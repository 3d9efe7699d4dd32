"""Focused tests of scaled dot-product attention: errors naming the shapes,
dropout's determinism and statistics, and gradients (the fused backward kernel
against the differentiable composite, double backward, mask gradients, fully
masked rows)."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
from flambeau_testing.optable.nn_attention import attention_ref, philox_keep

sdpa = F.scaled_dot_product_attention


def t(a, dtype=np.float64, grad=False):
    x = F.from_numpy(np.ascontiguousarray(a, dtype=dtype))
    return x.requires_grad_(True) if grad else x


def qkv(rng, q=(2, 3, 5, 4), k=(2, 3, 6, 4), v=(2, 3, 6, 3), dtype=np.float64, grad=False):
    return tuple(t(rng.uniform(-1, 1, s), dtype, grad) for s in (q, k, v))


# ---- errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes, kwargs, match",
    [
        (((4,), (5, 4), (5, 3)), {}, r"at least 2 dimensional.*\(4,\)"),
        (((3, 4), (5, 3), (5, 3)), {}, r"same embedding size.*\(3, 4\).*\(5, 3\)"),
        (((3, 4), (5, 4), (6, 3)), {}, r"same sequence length.*\(5, 4\).*\(6, 3\)"),
        (((2, 3, 4), (3, 5, 4), (3, 5, 3)), {}, r"\(2, 3, 4\).*\(3, 5, 4\).*do not broadcast"),
        (((1, 4, 3, 2), (1, 3, 5, 2), (1, 3, 5, 2)), {"enable_gqa": True}, r"must divide"),
        (((3, 4), (5, 4), (5, 3)), {"dropout_p": 1.5}, r"between 0 and 1.*1.5"),
    ],
)
def test_shape_errors_name_the_shapes(shapes, kwargs, match):
    rng = np.random.default_rng(0)
    args = [t(rng.standard_normal(s)) for s in shapes]
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention"):
        sdpa(*args, **kwargs)
    with pytest.raises(RuntimeError, match=match):
        sdpa(*args, **kwargs)


def test_mask_errors():
    q, k, v = qkv(np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="is_causal"):
        sdpa(q, k, v, F.ones((5, 6), dtype=F.bool), is_causal=True)
    with pytest.raises(RuntimeError, match=r"not broadcastable|\(4, 6\)"):
        sdpa(q, k, v, F.ones((4, 6), dtype=F.bool))
    with pytest.raises(RuntimeError, match=r"attn_mask dtype.*int32"):
        sdpa(q, k, v, F.ones((5, 6), dtype=F.int32))
    with pytest.raises(RuntimeError, match=r"attn_mask dtype.*float16"):
        sdpa(q, k, v, F.ones((5, 6), dtype=F.float16))
    # float32 masks go with any query dtype, as in PyTorch
    out = sdpa(q, k, v, F.zeros((5, 6), dtype=F.float32))
    np.testing.assert_allclose(out.numpy(), sdpa(q, k, v).numpy())


def test_dtype_errors():
    q, k, v = qkv(np.random.default_rng(0))
    with pytest.raises(RuntimeError, match=r"same dtype.*float64.*float32"):
        sdpa(q, k, v.float())
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention"):
        sdpa(q.long(), k.long(), v.long())


def test_scale_and_gqa_are_keyword_only():
    q, k, v = qkv(np.random.default_rng(0))
    with pytest.raises(TypeError):
        sdpa(q, k, v, None, 0.0, False, 0.5)


# ---- dropout ------------------------------------------------------------------------


def test_dropout_same_seed_same_output():
    q, k, v = qkv(np.random.default_rng(1), dtype=np.float32)
    F.manual_seed(5)
    a = sdpa(q, k, v, dropout_p=0.3)
    b = sdpa(q, k, v, dropout_p=0.3)
    F.manual_seed(5)
    c = sdpa(q, k, v, dropout_p=0.3)
    assert np.array_equal(a.numpy(), c.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())


def test_dropout_mask_is_bernoulli_stream():
    """The keep mask is what bernoulli_(1 - p) draws from the generator's state."""
    q, k, v = qkv(np.random.default_rng(2), q=(2, 3, 4), k=(2, 7, 4), v=(2, 7, 7))
    eye = t(np.broadcast_to(np.eye(7), (2, 7, 7)))
    F.manual_seed(11)
    state = F.default_generator.get_state()
    out = sdpa(q, k, eye, dropout_p=0.5)  # value = identity: the dropped weights themselves
    gen = F.Generator()
    gen.set_state(state)
    keep = F.empty((2, 3, 7)).bernoulli_(0.5, generator=gen).numpy().astype(bool)
    assert np.array_equal(out.numpy() != 0, keep)
    assert np.array_equal(keep, philox_keep(11, 0, (2, 3, 7), 0.5))


def test_dropout_statistics_preserve_the_mean():
    rng = np.random.default_rng(3)
    q, k, v = qkv(rng, q=(4, 4, 64, 8), k=(4, 4, 64, 8), v=(4, 4, 64, 8), dtype=np.float32)
    plain = sdpa(q, k, v).numpy()
    F.manual_seed(0)
    runs = np.stack([sdpa(q, k, v, dropout_p=0.5).numpy() for _ in range(8)])
    assert abs(runs.mean() - plain.mean()) < 0.02 * np.abs(plain).mean() + 1e-3
    # each weight kept with probability one half: E[out] = plain elementwise
    np.testing.assert_allclose(runs.mean(0).mean(-1), plain.mean(-1), atol=0.1)


def test_dropout_one_gives_zeros():
    q, k, v = qkv(np.random.default_rng(4), dtype=np.float32)
    assert not sdpa(q, k, v, dropout_p=1.0).numpy().any()


# ---- numerics -----------------------------------------------------------------------


def test_fully_masked_rows_give_zero_and_zero_gradient():
    rng = np.random.default_rng(5)
    q, k, v = qkv(rng, grad=True)
    mask = np.ones((5, 6), bool)
    mask[2] = False
    out = sdpa(q, k, v, t(mask, bool))
    assert not out[:, :, 2].detach().numpy().any()
    out.sum().backward()
    for x in (q, k, v):
        assert np.isfinite(x.grad.numpy()).all()
    assert not q.grad[:, :, 2].numpy().any()


def test_large_scores_are_stable():
    rng = np.random.default_rng(6)
    q, k, v = (rng.uniform(-1, 1, s) * 300 for s in ((1, 2, 9, 4), (1, 2, 9, 4), (1, 2, 9, 3)))
    out = sdpa(t(q, np.float32), t(k, np.float32), t(v, np.float32)).numpy()
    np.testing.assert_allclose(out, attention_ref(q, k, v)[0], rtol=1e-4, atol=1e-3)


def test_threads_give_the_same_result():
    rng = np.random.default_rng(7)
    q, k, v = qkv(rng, q=(3, 2, 150, 16), k=(3, 2, 90, 16), v=(3, 2, 90, 8), dtype=np.float32)
    n = F.get_num_threads()
    try:
        F.set_num_threads(1)
        one = sdpa(q, k, v, is_causal=True).numpy()
    finally:
        F.set_num_threads(n)
    np.testing.assert_array_equal(one, sdpa(q, k, v, is_causal=True).numpy())


# ---- gradients ----------------------------------------------------------------------


def _grads(fn, *xs):
    out = fn(*xs)
    gout = F.from_numpy(np.random.default_rng(8).uniform(-1, 1, tuple(out.shape)))
    return F.autograd.grad(out, xs, gout)


def _composite(q, k, v, mask=None, is_causal=False, enable_gqa=False):
    """The attention from matmul/softmax, as the math reference of autograd."""
    if enable_gqa and k.shape[-3] != q.shape[-3]:
        r = q.shape[-3] // k.shape[-3]
        k, v = (x.unsqueeze(-3).expand(*x.shape[:-2], r, *x.shape[-2:]) for x in (k, v))
        k, v = (x.reshape(*q.shape[:-2], *x.shape[-2:]) for x in (k, v))
    s = F.matmul(q, k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    if is_causal:
        s = s.masked_fill(~F.ones((q.shape[-2], k.shape[-2]), dtype=F.bool).tril(), -np.inf)
    if mask is not None:
        s = s + mask
    return F.matmul(F.softmax(s, -1), v)


@pytest.mark.parametrize(
    "shapes, kw",
    [
        (((2, 3, 70, 8), (2, 3, 50, 8), (2, 3, 50, 5)), {}),
        (((2, 3, 70, 8), (2, 3, 90, 8), (2, 3, 90, 5)), {"is_causal": True}),
        (((2, 4, 9, 8), (2, 2, 7, 8), (2, 2, 7, 3)), {"enable_gqa": True}),
        (((2, 1, 9, 8), (3, 7, 8), (7, 3)), {}),
    ],
)
def test_kernel_backward_matches_composite(shapes, kw):
    rng = np.random.default_rng(9)
    xs = [t(rng.uniform(-1, 1, s), grad=True) for s in shapes]
    got = _grads(lambda *a: sdpa(*a, **kw), *xs)
    want = _grads(lambda *a: _composite(*a, **kw), *xs)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-10)


def test_float_mask_gradient():
    rng = np.random.default_rng(10)
    q, k, v = qkv(rng, grad=True)
    mask = t(rng.uniform(-1, 1, (3, 1, 6)), grad=True)
    got = _grads(lambda *a: sdpa(*a), q, k, v, mask)
    want = _grads(lambda *a: _composite(*a), q, k, v, mask)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-10)


def test_double_backward():
    rng = np.random.default_rng(11)
    q, k, v = qkv(rng, q=(1, 2, 3, 4), k=(1, 2, 5, 4), v=(1, 2, 5, 3), grad=True)

    def second(fn):
        gq, gk, gv = F.autograd.grad(fn(q, k, v).pow(2).sum(), (q, k, v), create_graph=True)
        return F.autograd.grad((gq.sin().sum() + (gk * gv.sum()).sum()), (q, k, v))

    for g, w in zip(second(sdpa), second(_composite)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-8, atol=1e-10)


def test_dropout_gradcheck():
    rng = np.random.default_rng(12)
    xs = qkv(rng, q=(1, 2, 3, 4), k=(1, 2, 5, 4), v=(1, 2, 5, 3), grad=True)

    def fn(*a):
        F.manual_seed(3)
        return sdpa(*a, dropout_p=0.4)

    assert F.autograd.gradcheck(fn, xs)
    assert F.autograd.gradgradcheck(fn, xs)


def test_logsumexp_gradient():
    rng = np.random.default_rng(13)
    q, k, v = qkv(rng, q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 2), grad=True)
    lse = F._scaled_dot_product_attention_forward(q, k, v)[1]
    gq, gk = F.autograd.grad(lse.sum(), (q, k))
    s = F.matmul(q, k.transpose(-2, -1)) / 2.0
    wq, wk = F.autograd.grad(F.logsumexp(s, -1).sum(), (q, k))
    np.testing.assert_allclose(gq.numpy(), wq.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gk.numpy(), wk.numpy(), rtol=1e-10)
