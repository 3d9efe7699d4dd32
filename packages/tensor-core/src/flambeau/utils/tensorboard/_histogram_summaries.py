"""Histograms as summaries (``add_histogram``, ``add_histogram_raw``)."""

from __future__ import annotations

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto

from flambeau.utils.tensorboard._protos import one_value
from flambeau.utils.tensorboard._to_numpy import make_np


def tensorflow_bins() -> list[float]:
    """The bucket edges ``bins="tensorflow"`` stands for, TensorFlow's: +-1e-12 growing
    by a factor 1.1 up to 1e20 on either side of 0."""
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-edge for edge in reversed(positive)] + [0] + positive


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002
    """A ``Summary`` holding a histogram given by its statistics and buckets:
    ``bucket_limits[i]`` is the right edge of the bucket that holds ``bucket_counts[i]``
    values.

    >>> from flambeau.utils.tensorboard.summary import histogram_raw
    >>> histo = histogram_raw("h", 0.0, 2.0, 3, 3.0, 5.0, [1.0, 2.0], [1, 2]).value[0].histo
    >>> list(histo.bucket_limit), list(histo.bucket), histo.num
    ([1.0, 2.0], [1.0, 2.0], 3.0)
    """
    histo = HistogramProto(
        min=min,
        max=max,
        num=num,
        sum=sum,
        sum_squares=sum_squares,
        bucket_limit=bucket_limits,
        bucket=bucket_counts,
    )
    return one_value(name, histo=histo)


def histogram(name, values, bins, max_bins=None):
    """A ``Summary`` holding the histogram of ``values`` (a tensor, array or number, any
    shape), bucketed by ``numpy.histogram(values, bins)``: ``bins`` is a count, a
    sequence of edges or a NumPy rule (``"auto"``, ``"fd"``...). See ``make_histogram``.

    >>> from flambeau.utils.tensorboard.summary import histogram
    >>> histo = histogram("h", flambeau.tensor([0.5, 1.5, 1.5]), bins=[0, 1, 2]).value[0].histo
    >>> list(histo.bucket_limit), list(histo.bucket)
    ([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])
    """
    histo = make_histogram(make_np(values).astype(float), bins, max_bins)
    return one_value(name, histo=histo)


def _merge_neighbours(counts, edges, max_bins):
    """At most about ``max_bins`` buckets: runs of ``len(counts) // max_bins`` neighbours
    summed (the last run padded with empty buckets), their outer edges kept."""
    run = len(counts) // max_bins
    counts = np.pad(counts, (0, -len(counts) % run)).reshape(-1, run).sum(axis=-1)
    return counts, np.append(edges[:-1:run], edges[-1])


def make_histogram(values, bins, max_bins=None):
    """A ``HistogramProto`` of the NumPy array ``values``, as TensorFlow's histogram.cc
    reports one: ``numpy.histogram(values, bins)``, neighbouring buckets merged down to
    about ``max_bins``, then cut to the buckets from the first to the last non-empty one,
    plus an empty bucket on the left whose right edge is the histogram's left edge (a
    ``HistogramProto`` keeps right edges only). An empty ``values`` raises ``ValueError``.

    >>> import numpy as np
    >>> from flambeau.utils.tensorboard.summary import make_histogram
    >>> histo = make_histogram(np.array([1.0, 2.0, 2.0]), bins=4)
    >>> list(histo.bucket_limit), list(histo.bucket)
    ([1.0, 1.25, 1.5, 1.75, 2.0], [0.0, 1.0, 0.0, 0.0, 2.0])
    """
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, edges = _merge_neighbours(counts, edges, max_bins)
    filled = np.flatnonzero(counts)
    first = int(filled[0]) if filled.size else len(counts)
    end = int(filled[-1]) + 1 if filled.size else 1
    if first > 0:  # the bucket left of the first filled one is empty: its right edge serves
        counts = counts[first - 1 : end]
    else:
        counts = np.concatenate([[0], counts[:end]])
    edges = edges[first : end + 1]
    if counts.size == 0 or edges.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=edges.tolist(),
        bucket=counts.tolist(),
    )
