"""The values a summary accepts, as NumPy arrays (``torch.utils.tensorboard``'s ``make_np``)."""

from __future__ import annotations

import numpy as np

import flambeau


def make_np(x) -> np.ndarray:
    """``x`` as a NumPy array: an array as it is, a number as a one-element array, a
    flambeau tensor detached and copied to the CPU (bfloat16 through float16, which
    NumPy has). Anything else raises ``NotImplementedError``, as in PyTorch."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, flambeau.Tensor):
        if x.dtype == flambeau.bfloat16:
            x = x.to(flambeau.float16)
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or flambeau tensor are expected.")


def as_array(x) -> np.ndarray:
    """``x`` as NumPy holds it, for the raw precision-recall counts and the mesh tensors
    that PyTorch stacks or wraps as given: a flambeau tensor at full precision (bfloat16
    as float32), anything else through ``np.asarray``."""
    if isinstance(x, flambeau.Tensor):
        if x.dtype == flambeau.bfloat16:
            x = x.float()
        return x.detach().cpu().numpy()
    return np.asarray(x)
