"""Focused tests of the nn kernels: batch norm's running statistics, dropout's
statistics and determinism, ignore_index and label smoothing, numerics at the
edges, and errors that name the shapes involved."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as F


@pytest.fixture(autouse=True)
def restore_threads():
    n = F.get_num_threads()
    yield
    F.set_num_threads(n)


def t(a, dtype=np.float32):
    return F.from_numpy(np.asarray(a, dtype=dtype))


# ---- batch norm -------------------------------------------------------------------


def test_batch_norm_updates_running_stats_like_pytorch():
    # channel 0 holds 1, 2, 3, 4 (mean 2.5, biased var 1.25, unbiased 5/3); channel 1 is 10s.
    x = t([[1.0, 10.0], [2.0, 10.0], [3.0, 10.0], [4.0, 10.0]])
    rm, rv = t([1.0, 0.0]), t([2.0, 4.0])
    out, save_mean, save_invstd = F.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    np.testing.assert_allclose(rm.numpy(), [0.9 * 1 + 0.1 * 2.5, 0.1 * 10], rtol=1e-6)
    np.testing.assert_allclose(rv.numpy(), [0.9 * 2 + 0.1 * 5 / 3, 0.9 * 4 + 0.1 * 0], rtol=1e-6)
    np.testing.assert_allclose(save_mean.numpy(), [2.5, 10.0], rtol=1e-6)
    np.testing.assert_allclose(
        save_invstd.numpy(), [1 / math.sqrt(1.25 + 1e-5), 1e-5**-0.5], rtol=1e-5
    )
    expect = (np.array([1, 2, 3, 4]) - 2.5) / math.sqrt(1.25 + 1e-5)
    np.testing.assert_allclose(out.numpy()[:, 0], expect, rtol=1e-5)


def test_batch_norm_eval_uses_running_stats_and_leaves_them():
    x = t(np.arange(6).reshape(3, 2))
    rm, rv = t([1.0, 2.0]), t([4.0, 9.0])
    out = F.batch_norm(x, t([2.0, 1.0]), t([0.5, 0.0]), rm, rv, False, 0.1, 0.0, False)
    expect = (np.arange(6).reshape(3, 2) - [1, 2]) / [2, 3] * [2, 1] + [0.5, 0]
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6)
    assert rm.tolist() == [1.0, 2.0] and rv.tolist() == [4.0, 9.0]


def test_batch_norm_half_input_updates_float_running_stats():
    x = t([[1.0], [3.0]]).to(F.float16)
    rm, rv = t([0.0]), t([1.0])
    F.native_batch_norm(x, None, None, rm, rv, True, 0.5, 1e-5)
    assert rm.dtype == F.float32
    np.testing.assert_allclose(rm.numpy(), [1.0], rtol=1e-3)
    np.testing.assert_allclose(rv.numpy(), [0.5 + 0.5 * 2.0], rtol=1e-3)


def test_instance_norm_running_stats_average_over_the_batch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    rm, rv = t(np.zeros(3)), t(np.ones(3))
    F.instance_norm(t(x), None, None, rm, rv, True, 0.1, 1e-5, False)
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.mean(axis=2).mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(
        rv.numpy(), 0.9 + 0.1 * x.var(axis=2, ddof=1).mean(axis=0), rtol=1e-5
    )


# ---- dropout ------------------------------------------------------------------------


def test_dropout_keeps_about_1_minus_p_and_scales():
    F.manual_seed(0)
    x = F.ones(200_000)
    out, mask = F.native_dropout(x, 0.3, True)
    kept = mask.numpy()
    assert abs(kept.mean() - 0.7) < 0.005
    vals = out.numpy()
    np.testing.assert_allclose(vals[kept], 1 / 0.7, rtol=1e-6)
    assert (vals[~kept] == 0).all()
    assert abs(F.dropout(x, 0.5, True).mean().item() - 1.0) < 0.01


def test_dropout_is_deterministic_whatever_the_thread_count():
    x = F.ones(100_000)
    masks = []
    for threads in (1, 2, 4):
        F.set_num_threads(threads)
        F.manual_seed(123)
        masks.append(F.native_dropout(x, 0.5, True)[1].numpy())
    assert (masks[0] == masks[1]).all() and (masks[0] == masks[2]).all()
    F.manual_seed(123)
    assert (F.dropout(x, 0.5, True).numpy() != 0).tolist() == masks[0].tolist()


def test_dropout_eval_and_inplace():
    x = t([1.0, 2.0, 3.0])
    assert F.dropout(x, 0.5, False) is x
    y = x.clone()
    assert y.dropout_(1.0, True) is y and y.tolist() == [0.0, 0.0, 0.0]


def test_feature_dropout_drops_whole_channels():
    F.manual_seed(1)
    out = F.feature_dropout(F.ones(8, 16, 5), 0.5, True).numpy()
    per_channel = out.reshape(8 * 16, 5)
    assert all(len(set(row)) == 1 for row in per_channel.tolist())
    assert {float(v) for v in np.unique(out)} <= {0.0, 2.0}


def test_alpha_dropout_keeps_mean_and_variance():
    F.manual_seed(2)
    x = F.randn(400_000)
    out = F.alpha_dropout(x, 0.2, True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01


def test_dropout_rejects_bad_p():
    with pytest.raises(RuntimeError, match="between 0 and 1, but got 1.5"):
        F.dropout(F.ones(3), 1.5, True)


# ---- softmax ------------------------------------------------------------------------


def test_softmax_handles_large_values_and_minus_inf_rows():
    x = t([[1000.0, 1000.0], [-math.inf, -math.inf], [0.0, -math.inf]])
    out = F.softmax(x, 1).numpy()
    np.testing.assert_allclose(out[0], [0.5, 0.5])
    assert np.isnan(out[1]).all()
    np.testing.assert_allclose(out[2], [1.0, 0.0])
    lo = F.log_softmax(x, 1).numpy()
    np.testing.assert_allclose(lo[0], [-math.log(2)] * 2, rtol=1e-6)
    assert lo[2][0] == 0 and lo[2][1] == -math.inf


def test_softmax_threads_agree():
    rng = np.random.default_rng(0)
    x = t(rng.standard_normal((512, 1000)))
    F.set_num_threads(1)
    one = F.softmax(x, 1).numpy()
    F.set_num_threads(4)
    assert (F.softmax(x, 1).numpy() == one).all()


def test_softmax_rejects_integers_and_bad_dims():
    with pytest.raises(RuntimeError, match="softmax"):
        F.softmax(F.arange(3), 0)
    with pytest.raises(IndexError):
        F.softmax(F.ones(2, 3), 2)


# ---- losses -------------------------------------------------------------------------


def test_nll_loss_ignore_index_counts_only_kept_targets():
    x = t([[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0]])
    target = F.from_numpy(np.array([0, -100, 1]))
    w = t([2.0, 3.0])
    loss, total = F.nll_loss_forward(x, target, w, 1, -100)
    assert total.item() == 5.0
    assert loss.item() == pytest.approx((2 * 1 + 3 * 6) / 5)
    assert F.nll_loss(x, target, None, 0).tolist() == [1.0, 0.0, 6.0]
    all_ignored = F.nll_loss(x, F.from_numpy(np.array([-100] * 3)), None, 1)
    assert math.isnan(all_ignored.item())  # 0 / 0, as PyTorch


def test_cross_entropy_label_smoothing_hand_derived():
    # Two classes, logits (0, 0): log p = log(1/2) for both; target 0, smoothing 0.2:
    # (1 - 0.2) * log 2 + 0.2 / 2 * (2 log 2) = log 2.
    x = t([[0.0, 0.0]])
    loss = F.cross_entropy_loss(x, F.from_numpy(np.array([0])), None, 1, -100, 0.2)
    assert loss.item() == pytest.approx(math.log(2), rel=1e-6)
    # logits (log 3, 0): p = (3/4, 1/4)
    x = t([[math.log(3), 0.0]])
    loss = F.cross_entropy_loss(x, F.from_numpy(np.array([1])), None, 1, -100, 0.5)
    expect = 0.5 * -math.log(0.25) + 0.25 * -(math.log(0.75) + math.log(0.25))
    assert loss.item() == pytest.approx(expect, rel=1e-6)


def test_nll_loss_target_out_of_bounds_is_an_index_error():
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.nll_loss(t([[0.0, 1.0]]), F.from_numpy(np.array([5])))


def test_loss_errors_name_the_shapes():
    with pytest.raises(RuntimeError, match=r"Expected input batch_size \(2\) to match target"):
        F.nll_loss(t(np.zeros((2, 3))), F.from_numpy(np.array([0, 1, 2])))
    with pytest.raises(RuntimeError, match="expected scalar type Long"):
        F.nll_loss(t(np.zeros((2, 3))), t([0.0, 1.0]))
    with pytest.raises(
        RuntimeError, match=r"target size \(3,\) that is different to the input size \(2,\)"
    ):
        F.binary_cross_entropy(t([0.5, 0.5]), t([0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(t([1.0]), t([2.0]), 3)


# ---- normalisation and embedding errors -----------------------------------------------


def test_norm_errors_name_the_shapes():
    want = r"normalized_shape=\(4,\), expected input with shape \(\*, 4\), but got input of size "
    want += r"\(2, 3\)"
    with pytest.raises(RuntimeError, match=want):
        F.layer_norm(t(np.zeros((2, 3))), [4])
    with pytest.raises(RuntimeError, match=r"weight of shape \(2,\) and normalized_shape = \(3,\)"):
        F.layer_norm(t(np.zeros((2, 3))), [3], t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"divisible by num_groups.*\(2, 5\).*num_groups=2"):
        F.group_norm(t(np.zeros((2, 5))), 2)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 2"):
        F.batch_norm(
            t(np.zeros((2, 3))), None, None, t([0.0, 0.0]), t([1, 1, 1]), True, 0.1, 1e-5, False
        )


def test_embedding_errors_and_padding_gradient():
    w = t(np.arange(12).reshape(4, 3))
    with pytest.raises(IndexError, match="index 4 is out of range"):
        F.embedding(w, F.from_numpy(np.array([0, 4])))
    with pytest.raises(RuntimeError, match="'indices'.*Long, Int"):
        F.embedding(w, t([0.0]))
    g = t(np.ones((3, 3)))
    gw = F.embedding_dense_backward(g, F.from_numpy(np.array([1, 2, 1])), 4, 1, False)
    assert gw.tolist() == [[0.0] * 3, [0.0] * 3, [1.0] * 3, [0.0] * 3]


def test_embedding_bag_reports_offsets_problems():
    w = t(np.ones((4, 2)))
    idx = F.from_numpy(np.array([0, 1, 2]))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(w, idx, F.from_numpy(np.array([1, 2])))
    with pytest.raises(RuntimeError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(w, idx, F.from_numpy(np.array([0])), False, 1, False, t([1.0] * 3))
    out, offset2bag, bag_size, _ = F.embedding_bag(w, idx, F.from_numpy(np.array([0, 1, 1])))
    assert bag_size.tolist() == [1, 0, 2] and offset2bag.tolist() == [0, 2, 2]
    assert out.tolist() == [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
