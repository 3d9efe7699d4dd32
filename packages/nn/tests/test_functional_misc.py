"""F.one_hot, F.gumbel_softmax, F.pdist, F.native_channel_shuffle, F.conv_tbc, F.grouped_mm,
F.linear_cross_entropy and the deprecated upsample aliases: NumPy/SciPy references, gradcheck,
a chi-square test of Gumbel-softmax sampling, errors."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import f64, np_of, randn64
from scipy import stats
from scipy.spatial import distance
from scipy.special import log_softmax

import flambeau
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F

# ---- one_hot --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "indices, num_classes", [([0, 2, 1], -1), ([[1, 0], [3, 3]], 5), (2, -1), (0, 1)]
)
def test_one_hot_matches_eye_rows(indices, num_classes):
    idx = np.asarray(indices)
    classes = idx.max() + 1 if num_classes == -1 else num_classes
    out = F.one_hot(flambeau.tensor(idx), num_classes)
    assert out.dtype == flambeau.int64
    np.testing.assert_array_equal(out.numpy(), np.eye(classes, dtype=np.int64)[idx])


def test_one_hot_empty_and_errors():
    empty = flambeau.tensor(np.zeros((0, 2), dtype=np.int64))
    assert tuple(F.one_hot(empty, 3).shape) == (0, 2, 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(empty)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(flambeau.tensor([0, 1], dtype=flambeau.int32))
    with pytest.raises(RuntimeError, match="only applicable to index tensor"):
        F.one_hot(flambeau.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(flambeau.tensor([0, -1]))
    for num_classes in (3, 0, -2):
        with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
            F.one_hot(flambeau.tensor([0, 3]), num_classes)
    with pytest.raises(TypeError, match="'num_classes' \\(position 2\\) must be int, not float"):
        F.one_hot(flambeau.tensor([0]), 3.0)
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        F.one_hot([0, 1])


# ---- gumbel_softmax -------------------------------------------------------------------------


def test_gumbel_softmax_hard_samples_follow_the_softmax():
    """argmax of logits + Gumbel noise is a sample of softmax(logits) (the Gumbel-max trick)."""
    flambeau.manual_seed(0)
    logits = np.array([0.5, -1.0, 1.5, 0.0])
    draws = 40_000
    y = F.gumbel_softmax(f64(np.tile(logits, (draws, 1))), tau=0.7, hard=True)
    counts = np_of(y).sum(0)
    assert np_of(y).sum(1).tolist() == [1.0] * draws  # one-hot rows
    expected = np.exp(logits) / np.exp(logits).sum() * draws
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_gumbel_softmax_soft_is_a_distribution_and_sharpens_with_tau():
    flambeau.manual_seed(1)
    logits = f64(np.random.default_rng(0).standard_normal((500, 5)))
    soft = np_of(F.gumbel_softmax(logits, tau=2.0, dim=1))
    np.testing.assert_allclose(soft.sum(1), 1.0)
    cold = np_of(F.gumbel_softmax(logits, tau=0.05))
    assert soft.max(1).mean() < 0.8 < cold.max(1).mean()
    column = np_of(F.gumbel_softmax(logits, dim=0))
    np.testing.assert_allclose(column.sum(0), 1.0)


def test_gumbel_softmax_straight_through_gradient():
    """hard=True returns the one-hot forward with the soft sample's gradient."""
    logits = randn64(3, 4)
    weights = f64(np.random.default_rng(1).standard_normal((3, 4)))
    flambeau.manual_seed(5)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    (g_hard,) = flambeau.autograd.grad((hard * weights).sum(), logits)
    flambeau.manual_seed(5)
    soft = F.gumbel_softmax(logits, tau=0.5)
    (g_soft,) = flambeau.autograd.grad((soft * weights).sum(), logits)
    np.testing.assert_allclose(np_of(g_hard), np_of(g_soft), atol=1e-12)
    np.testing.assert_array_equal(np_of(hard).argmax(1), np_of(soft).argmax(1))


def test_gumbel_softmax_eps_warns_and_int_logits_fail():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(flambeau.randn(3), eps=1e-3)
    with pytest.raises(RuntimeError):
        F.gumbel_softmax(flambeau.ones(3, dtype=flambeau.int64))


# ---- pdist ----------------------------------------------------------------------------------


def _scipy_pdist(x, p):
    if p == 0:
        return distance.pdist(x, "hamming") * x.shape[1]
    if p == float("inf"):
        return distance.pdist(x, "chebyshev")
    return distance.pdist(x, "minkowski", p=p)


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist_matches_scipy_and_gradcheck(p):
    x = np.random.default_rng(2).standard_normal((5, 3))
    np.testing.assert_allclose(np_of(F.pdist(f64(x), p)), _scipy_pdist(x, p), rtol=1e-12)
    t = f64(x, requires_grad=True)
    if p not in (0, float("inf")):  # p=0 is piecewise constant; inf tested on ties below
        assert gradcheck(lambda a: F.pdist(a, p), (t,))


def test_pdist_gradient_is_zero_at_coincident_rows():
    x = f64([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]], requires_grad=True)
    F.pdist(x, 2).sum().backward()
    # Only the pairs with the third row contribute: d/dx of |x_i - x_3| is a unit vector.
    unit = np.array([1.0, -1.0]) / np.sqrt(2)
    np.testing.assert_allclose(np_of(x.grad), [unit, unit, -2 * unit], atol=1e-15)
    y = f64([[1.0, 2.0], [1.0, 5.0]], requires_grad=True)
    F.pdist(y, 0.5).sum().backward()  # a zero component of the difference gets gradient 0
    assert np.isfinite(np_of(y.grad)).all() and np_of(y.grad)[:, 0].tolist() == [0.0, 0.0]


def test_pdist_shapes_and_errors():
    assert tuple(F.pdist(flambeau.zeros(1, 3)).shape) == (0,)
    assert tuple(F.pdist(flambeau.zeros(0, 3)).shape) == (0,)
    np.testing.assert_array_equal(F.pdist(flambeau.zeros(3, 0)).numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(flambeau.zeros(2, 3, 4))
    with pytest.raises(RuntimeError, match="non-negative p values"):
        F.pdist(flambeau.zeros(3, 2), -1)
    with pytest.raises(RuntimeError, match="floating-point dtypes"):
        F.pdist(flambeau.zeros(3, 2, dtype=flambeau.int64))
    with pytest.raises(TypeError, match="'p' \\(position 2\\) must be float, not str"):
        F.pdist(flambeau.zeros(3, 2), "a")


# ---- native_channel_shuffle -----------------------------------------------------------------


def test_native_channel_shuffle_interleaves_groups():
    x = np.random.default_rng(3).standard_normal((2, 6, 3, 2))
    out = np_of(F.native_channel_shuffle(f64(x), 3))
    order = [0, 2, 4, 1, 3, 5]  # groups {0,1}, {2,3}, {4,5} interleaved
    np.testing.assert_array_equal(out, x[:, order])
    assert tuple(F.native_channel_shuffle(flambeau.zeros(2, 0, 3), 2).shape) == (2, 0, 3)
    t = randn64(1, 4, 3)
    assert gradcheck(lambda a: F.native_channel_shuffle(a, 2), (t,))


def test_native_channel_shuffle_errors():
    with pytest.raises(RuntimeError, match="expects input with > 2 dims"):
        F.native_channel_shuffle(flambeau.zeros(2, 4), 2)
    with pytest.raises(RuntimeError, match="must be positive. Value of groups:0"):
        F.native_channel_shuffle(flambeau.zeros(1, 4, 2), 0)
    with pytest.raises(RuntimeError, match="Got 4 channels and 3 groups"):
        F.native_channel_shuffle(flambeau.zeros(1, 4, 2), 3)


# ---- conv_tbc -------------------------------------------------------------------------------


def _conv_tbc_reference(x, w, b, pad):
    if pad >= 0:
        x = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    else:
        x = x[-pad : x.shape[0] + pad]
    width = w.shape[0]
    steps = x.shape[0] - width + 1
    out = np.empty((steps, x.shape[1], w.shape[2]))
    for t in range(steps):
        out[t] = b + sum(x[t + k] @ w[k] for k in range(width))
    return out


def test_conv_tbc_is_the_cores():
    assert F.conv_tbc is flambeau.conv_tbc


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_matches_reference_and_gradcheck(pad):
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((6, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    out = F.conv_tbc(f64(x), f64(w), f64(b), pad)
    np.testing.assert_allclose(np_of(out), _conv_tbc_reference(x, w, b, pad), atol=1e-12)
    tensors = (f64(x, True), f64(w, True), f64(b, True))
    assert gradcheck(lambda a, ww, bb: F.conv_tbc(a, ww, bb, pad), tensors)


def test_conv_tbc_integers_short_inputs_and_errors():
    ones = F.conv_tbc(
        flambeau.ones(5, 2, 3, dtype=flambeau.int64),
        flambeau.ones(2, 3, 4, dtype=flambeau.int64),
        flambeau.ones(4, dtype=flambeau.int64),
    )
    assert ones.dtype == flambeau.int64 and ones.numpy().tolist() == [[[7] * 4] * 2] * 4
    too_short = F.conv_tbc(flambeau.ones(1, 2, 3), flambeau.ones(2, 3, 4), flambeau.ones(4))
    assert tuple(too_short.shape) == (0, 2, 4)
    only_bias = F.conv_tbc(flambeau.ones(5, 2, 3), flambeau.ones(0, 3, 4), flambeau.full((4,), 2.0))
    assert tuple(only_bias.shape) == (6, 2, 4) and (only_bias.numpy() == 2).all()
    x, w, b = flambeau.ones(5, 2, 3), flambeau.ones(2, 3, 4), flambeau.ones(4)
    cases = [
        ((flambeau.ones(5, 2), w, b), "Input must have 3 dims"),
        ((x, flambeau.ones(2, 3), b), "Weight tensor must have 3 dims"),
        ((x, w, flambeau.ones(1, 4)), "Bias must be 1-D"),
        ((x, flambeau.ones(2, 2, 4), b), "Input dim 2 \\(input channels\\)"),
        ((x, w, flambeau.ones(5)), "Bias size must equal dim 2"),
        ((flambeau.ones(1, 2, 3), flambeau.ones(3, 3, 4), b), "kernel width"),
    ]
    for args, message in cases:
        with pytest.raises(RuntimeError, match=message):
            F.conv_tbc(*args)
    with pytest.raises(TypeError, match="'bias' \\(position 3\\) must be Tensor"):
        F.conv_tbc(x, w, None)
    with pytest.raises(TypeError, match="'pad' \\(position 4\\) must be int"):
        F.conv_tbc(x, w, b, 1.0)


# ---- grouped_mm -----------------------------------------------------------------------------


def _groups(ends):
    return list(zip([0, *ends[:-1]], ends))


def test_grouped_mm_layouts_match_per_group_products():
    rng = np.random.default_rng(5)
    ends = [2, 3, 5]
    offs = flambeau.tensor(ends, dtype=flambeau.int32)
    a2, b3 = rng.standard_normal((6, 4)), rng.standard_normal((3, 4, 5))
    expected = np.zeros((6, 5))
    for g, (s, e) in enumerate(_groups(ends)):
        expected[s:e] = a2[s:e] @ b3[g]
    np.testing.assert_allclose(np_of(F.grouped_mm(f64(a2), f64(b3), offs=offs)), expected)
    a3, b2 = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 7))
    expected = np.zeros((2, 7))
    for g, (s, e) in enumerate(_groups(ends)):
        expected[:, s:e] = a3[g] @ b2[:, s:e]
    np.testing.assert_allclose(np_of(F.grouped_mm(f64(a3), f64(b2), offs=offs)), expected)
    a, b = rng.standard_normal((2, 6)), rng.standard_normal((6, 3))
    expected = np.stack([a[:, s:e] @ b[s:e] for s, e in _groups(ends)])
    np.testing.assert_allclose(np_of(F.grouped_mm(f64(a), f64(b), offs=offs)), expected)
    b33 = rng.standard_normal((3, 4, 2))
    np.testing.assert_allclose(np_of(F.grouped_mm(f64(a3), f64(b33))), a3 @ b33)
    bias = rng.standard_normal(2)
    np.testing.assert_allclose(np_of(F.grouped_mm(f64(a3), f64(b33), bias=f64(bias))),
                               a3 @ b33 + bias)  # fmt: skip


def test_grouped_mm_gradcheck_and_out_dtype():
    rng = np.random.default_rng(6)
    offs = flambeau.tensor([1, 3], dtype=flambeau.int32)
    a, b = f64(rng.standard_normal((4, 3)), True), f64(rng.standard_normal((2, 3, 2)), True)
    assert gradcheck(lambda x, y: F.grouped_mm(x, y, offs=offs), (a, b))
    c, d = f64(rng.standard_normal((2, 4)), True), f64(rng.standard_normal((4, 3)), True)
    assert gradcheck(lambda x, y: F.grouped_mm(x, y, offs=offs), (c, d))
    half = F.grouped_mm(flambeau.ones(2, 2, 2, dtype=flambeau.bfloat16),
                        flambeau.ones(2, 2, 2, dtype=flambeau.bfloat16),
                        out_dtype=flambeau.float32)  # fmt: skip
    assert half.dtype == flambeau.float32 and (half.numpy() == 2).all()


def test_grouped_mm_errors():
    a2, b3 = flambeau.ones(6, 4), flambeau.ones(3, 4, 4)
    offs = flambeau.tensor([2, 3, 5], dtype=flambeau.int32)
    cases = [
        (lambda: F.grouped_mm(flambeau.ones(4), b3, offs=offs), "mat_a has to be 2 or 3d"),
        (lambda: F.grouped_mm(a2, b3), "Have to provide offsets"),
        (lambda: F.grouped_mm(b3, b3, offs=offs), "no offset if both matrices are 3d"),
        (lambda: F.grouped_mm(a2, flambeau.ones(3, 5, 4), offs=offs), "contraction dimension"),
        (lambda: F.grouped_mm(b3, flambeau.ones(2, 4, 4)), "batched dimension has to match"),
        (lambda: F.grouped_mm(a2, b3, offs=offs.to(flambeau.int64)), "Offsets have to be int32"),
        (lambda: F.grouped_mm(a2, b3, offs=offs[:2]), "matrix batch sizes have to match"),
        (lambda: F.grouped_mm(a2, b3, offs=offs.reshape(1, 3)), "offs has to be 1D"),
        (
            lambda: F.grouped_mm(a2, b3, offs=flambeau.tensor([3, 2, 5], dtype=flambeau.int32)),
            "non-decreasing",
        ),
        (
            lambda: F.grouped_mm(a2, b3, offs=flambeau.tensor([2, 3, 9], dtype=flambeau.int32)),
            "at most the rows of mat_a",
        ),
        (lambda: F.grouped_mm(a2.to(flambeau.int64), b3, offs=offs), "floating-point"),
        (lambda: F.grouped_mm(b3, b3.double()), "one dtype"),
        (lambda: F.grouped_mm(b3, b3, out_dtype=flambeau.float64), "output dtype must match"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()


# ---- linear_cross_entropy -------------------------------------------------------------------


def _nll_reference(x, w, b, target):
    logits = x @ w.T + (0 if b is None else b)
    return -log_softmax(logits, axis=-1)[np.arange(len(target)), target]


def test_linear_cross_entropy_matches_reference():
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    target = np.array([0, 4, 2, 2])
    per_sample = _nll_reference(x, w, b, target)
    loss = F.linear_cross_entropy(f64(x), f64(w), flambeau.tensor(target), linear_bias=f64(b),
                                  reduction="none")  # fmt: skip
    np.testing.assert_allclose(np_of(loss), per_sample)
    mean = F.linear_cross_entropy(f64(x), f64(w), flambeau.tensor(target))
    np.testing.assert_allclose(np_of(mean), _nll_reference(x, w, None, target).mean())
    ignored = F.linear_cross_entropy(f64(x), f64(w), flambeau.tensor(target), linear_bias=f64(b),
                                     ignore_index=2)  # fmt: skip
    np.testing.assert_allclose(np_of(ignored), per_sample[:2].mean())
    unbatched = F.linear_cross_entropy(f64(x[1]), f64(w), flambeau.tensor(4))
    np.testing.assert_allclose(np_of(unbatched), _nll_reference(x[1:2], w, None, [4])[0])
    probs = rng.dirichlet(np.ones(5), size=4)
    soft = F.linear_cross_entropy(f64(x), f64(w), f64(probs), reduction="sum")
    expected = -(probs * log_softmax(x @ w.T, axis=1)).sum()
    np.testing.assert_allclose(np_of(soft), expected)


def test_linear_cross_entropy_k_dimensional_and_gradcheck():
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((5, 2, 4))
    target = rng.integers(0, 5, (3, 2))
    logits = np.einsum("ni,cdi->ncd", x, w)
    picked = np.take_along_axis(log_softmax(logits, axis=1), target[:, None], 1)[:, 0]
    loss = F.linear_cross_entropy(f64(x), f64(w), flambeau.tensor(target))
    np.testing.assert_allclose(np_of(loss), -picked.mean())
    tensors = (f64(x, True), f64(w, True), f64(rng.standard_normal((5, 2)), True))
    t = flambeau.tensor(target)

    def loss(a, ww, bb):
        return F.linear_cross_entropy(a, ww, t, linear_bias=bb, label_smoothing=0.1)

    assert gradcheck(loss, tensors)


def test_linear_cross_entropy_errors():
    x, w, t = flambeau.zeros(3, 4), flambeau.zeros(5, 4), flambeau.zeros(3, dtype=flambeau.int64)
    cases = [
        ((flambeau.zeros(2, 3, 4), w, t), {}, "dimensionality 1 or 2, got 3"),
        ((x, flambeau.zeros(5), t), {}, "linear_weight with dimensionality at least 2"),
        ((x, flambeau.zeros(5, 3), t), {}, "got 4 and 3, respectively"),
        ((x, w, t), {"linear_bias": flambeau.zeros(4)}, "linear_bias shape \\(5,\\)"),
        ((flambeau.zeros(4), flambeau.zeros(5, 2, 4), t), {}, "requires batched input"),
        ((x, w, flambeau.zeros(3, 5)), {"ignore_index": -100}, "contains probabilities"),
    ]
    for args, kwargs, message in cases:
        with pytest.raises(RuntimeError, match=message):
            F.linear_cross_entropy(*args, **kwargs)


# ---- deprecated resampling aliases ----------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected_mode",
    [("upsample", "nearest"), ("upsample_nearest", "nearest"), ("upsample_bilinear", "bilinear")],
)
def test_deprecated_upsample_aliases_warn_and_interpolate(name, expected_mode):
    x = randn64(1, 1, 3, 3, requires_grad=False)
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated") as record:
        out = getattr(F, name)(x, scale_factor=2)
    assert record[0].filename == __file__
    align = True if expected_mode == "bilinear" else None
    ref = F.interpolate(x, scale_factor=2, mode=expected_mode, align_corners=align)
    np.testing.assert_array_equal(np_of(out), np_of(ref))


@pytest.mark.parametrize(
    "shape, node",
    [((4, 3), "AddmmBackward0"), ((5, 4, 3), "ViewBackward0"), ((4, 5, 3), "AddBackward0")],
)
def test_linear_folds_its_bias_into_the_product_as_pytorch(shape, node):
    # PyTorch's linear: addmm for a matrix, addmm on the rows of a contiguous batch (then
    # a view), matmul + bias otherwise (here a transposed, non-contiguous batch).
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal((2, 3)), rng.standard_normal(2)
    xt = flambeau.tensor(x.tolist(), dtype=flambeau.float64)
    if node == "AddBackward0":
        xt = flambeau.tensor(x.transpose(1, 0, 2).tolist(), dtype=flambeau.float64).transpose(0, 1)
    wt = flambeau.tensor(w.tolist(), dtype=flambeau.float64, requires_grad=True)
    bt = flambeau.tensor(b.tolist(), dtype=flambeau.float64, requires_grad=True)
    out = F.linear(xt, wt, bt)
    assert out.grad_fn.name() == node
    np.testing.assert_allclose(out.detach().numpy(), x @ w.T + b, rtol=1e-12)
    out.sum().backward()
    rows = x.reshape(-1, 3)
    np.testing.assert_allclose(wt.grad.numpy(), np.ones((rows.shape[0], 2)).T @ rows, rtol=1e-12)
    np.testing.assert_allclose(bt.grad.numpy(), np.full(2, rows.shape[0]), rtol=1e-12)
