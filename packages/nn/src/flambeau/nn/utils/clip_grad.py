"""Gradient clipping: by total norm and by value."""

from __future__ import annotations

import math
import warnings

import flambeau
from flambeau import no_grad


def _as_list(tensors):
    return [tensors] if isinstance(tensors, flambeau.Tensor) else list(tensors)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None):  # fmt: skip
    """The norm of the norms of `tensors` (as if concatenated into one vector).

    >>> import flambeau.nn as nn
    >>> grads = [flambeau.tensor([3.0]), flambeau.tensor([4.0])]
    >>> nn.utils.get_total_norm(grads)
    tensor(5.)
    >>> nn.utils.get_total_norm(grads, norm_type=float("inf"))
    tensor(4.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return flambeau.tensor(0.0)
    with no_grad():
        if math.isinf(norm_type):
            norms = [t.detach().abs().max() for t in tensors]
            total = norms[0] if len(norms) == 1 else flambeau.stack(norms).max()
        else:
            norms = [t.detach().norm(norm_type) for t in tensors]
            total = flambeau.stack(norms).norm(norm_type)
    if error_if_nonfinite and not bool(flambeau.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scales the gradients by min(1, max_norm / (total_norm + 1e-6)), in place.

    >>> import flambeau.nn as nn
    >>> a, b = nn.Parameter(flambeau.zeros(1)), nn.Parameter(flambeau.zeros(1))
    >>> a.grad, b.grad = flambeau.tensor([3.0]), flambeau.tensor([4.0])
    >>> total = nn.utils.get_total_norm([a.grad, b.grad])
    >>> nn.utils.clip_grads_with_norm_([a, b], max_norm=1.0, total_norm=total)
    >>> a.grad, b.grad
    (tensor([0.6000]), tensor([0.8000]))
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    with no_grad():
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None):  # fmt: skip
    """Clips the gradients so that their total norm is at most max_norm; returns that norm.

    `foreach` is accepted for PyTorch compatibility; the loop over gradients is the same.

    >>> import flambeau.nn as nn
    >>> p = nn.Parameter(flambeau.zeros(2))
    >>> p.grad = flambeau.tensor([3.0, 4.0])
    >>> nn.utils.clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6000, 0.8000])
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None):  # fmt: skip
    """Deprecated alias of clip_grad_norm_ (warns FutureWarning).

    >>> import warnings
    >>> import flambeau.nn as nn
    >>> p = nn.Parameter(flambeau.zeros(2))
    >>> p.grad = flambeau.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     nn.utils.clip_grad_norm([p], max_norm=1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6000, 0.8000])
    """
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps every gradient into [-clip_value, clip_value], in place.

    >>> import flambeau.nn as nn
    >>> p = nn.Parameter(flambeau.zeros(3))
    >>> p.grad = flambeau.tensor([-2.0, 0.5, 3.0])
    >>> nn.utils.clip_grad_value_([p], clip_value=1.0)
    >>> p.grad
    tensor([-1.0000,  0.5000,  1.0000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
