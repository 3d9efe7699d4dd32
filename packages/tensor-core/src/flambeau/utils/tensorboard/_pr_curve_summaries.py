"""Precision-recall curves as summaries (``add_pr_curve``, ``add_pr_curve_raw``)."""

from __future__ import annotations

import numpy as np
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

from flambeau.utils.tensorboard._protos import float_tensor, one_value, plugin_metadata
from flambeau.utils.tensorboard._to_numpy import as_array

_MAX_THRESHOLDS = 127  # PyTorch's cap: more thresholds than this break the plugin
_MINIMUM_COUNT = 1e-7  # the denominator's floor: precision and recall of nothing are 0


def _curve_summary(tag, rows, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    return one_value(
        tag,
        metadata=plugin_metadata("pr_curves", content),
        tensor=float_tensor(rows.reshape(-1).tolist(), rows.shape),
    )


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A ``Summary`` holding a precision-recall curve given by its six rows of counts
    and ratios, one column per threshold. ``num_thresholds`` (at most 127) is recorded
    in the plugin's metadata; ``weights`` is accepted and ignored, as in PyTorch.

    >>> from flambeau.utils.tensorboard.summary import pr_curve_raw
    >>> curve = pr_curve_raw("pr", [2, 1], [2, 0], [0, 2], [0, 1], [0.5, 1.0], [1.0, 0.5],
    ...                      num_thresholds=2).value[0].tensor
    >>> [d.size for d in curve.tensor_shape.dim]
    [6, 2]
    """
    num_thresholds = min(num_thresholds, _MAX_THRESHOLDS)
    rows = np.stack([as_array(row) for row in (tp, fp, tn, fn, precision, recall)])
    return _curve_summary(tag, rows, num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A ``Summary`` holding the precision-recall curve of binary ``labels`` against
    ``predictions`` in [0, 1] (NumPy arrays), at ``num_thresholds`` (at most 127)
    evenly spaced thresholds. See ``compute_curve``.

    >>> import numpy as np
    >>> from flambeau.utils.tensorboard.summary import pr_curve
    >>> curve = pr_curve("pr", np.array([1, 0]), np.array([0.9, 0.2]), num_thresholds=3)
    >>> [d.size for d in curve.value[0].tensor.tensor_shape.dim]
    [6, 3]
    """
    num_thresholds = min(num_thresholds, _MAX_THRESHOLDS)
    rows = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _curve_summary(tag, rows, num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """The ``(6, num_thresholds)`` rows TensorBoard's PR curve plugin reads: true and
    false positives, true and false negatives, precision and recall when everything
    predicted at or above threshold ``i / (num_thresholds - 1)`` counts as positive.
    ``weights`` (a number or an array like ``labels``) weighs each example.

    >>> import numpy as np
    >>> from flambeau.utils.tensorboard.summary import compute_curve
    >>> rows = compute_curve(np.array([1, 0, 1]), np.array([0.9, 0.6, 0.2]), num_thresholds=3)
    >>> rows[0].tolist(), rows[1].tolist()  # true positives, false positives
    ([2.0, 1.0, 0.0], [1.0, 1.0, 0.0])
    """
    if weights is None:
        weights = 1.0
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)

    def per_bucket(weight):
        counts, _ = np.histogram(
            buckets, bins=num_thresholds, range=(0, num_thresholds - 1), weights=weight
        )
        return counts

    # At or above each threshold: the sums of the buckets from there up.
    tp = np.cumsum(per_bucket(positive * weights)[::-1])[::-1]
    fp = np.cumsum(per_bucket((1.0 - positive) * weights)[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))
