"""Between the table's NumPy samples and flambeau tensors, as test_ops.py and the device
driver both convert them."""

from __future__ import annotations

import numpy as np

import flambeau


def to_flambeau(x, dtype: str):
    """A sample argument as a row's callable takes it: arrays (and lists or tuples of
    arrays) become CPU tensors sharing their memory, float32 arrays becoming bfloat16 in
    the bfloat16 rows (NumPy has no bfloat16); anything else is returned unchanged.

    >>> to_flambeau(np.arange(3.0), "float64")
    tensor([0., 1., 2.], dtype=flambeau.float64)
    >>> to_flambeau(np.ones(2, np.float32), "bfloat16").dtype
    flambeau.bfloat16
    >>> to_flambeau((2, 3), "float32")
    (2, 3)
    """
    if isinstance(x, np.ndarray):
        t = flambeau.from_numpy(x)
        if dtype == "bfloat16" and x.dtype == np.float32:
            t = t.to(flambeau.bfloat16)
        return t
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], np.ndarray):
        return type(x)(to_flambeau(v, dtype) for v in x)
    return x


def to_numpy(x):
    """A row's result as NumPy values: tensors (on any device) become arrays, bfloat16
    as float32; lists and tuples (named tuples as plain tuples) are converted elementwise.

    >>> to_numpy(flambeau.ones(2, dtype=flambeau.bfloat16))
    array([1., 1.], dtype=float32)
    >>> to_numpy((flambeau.zeros(1), 3))
    (array([0.], dtype=float32), 3)
    """
    if isinstance(x, flambeau.Tensor):
        if x.device.type != "cpu":
            x = x.cpu()
        if x.dtype == flambeau.bfloat16:
            x = x.to(flambeau.float32)
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return (
            type(x)(to_numpy(v) for v in x)
            if not hasattr(x, "_fields")
            else tuple(to_numpy(v) for v in x)
        )
    return x
