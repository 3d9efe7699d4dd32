"""The two in-place steps of gradient scaling, as PyTorch's ``torch._amp_*`` functions.

``_amp_foreach_non_finite_check_and_unscale_`` multiplies gradients by the inverse
scale and flags infs and NaNs; ``_amp_update_scale_`` grows or backs off the scale.
GradScaler calls them; programs written against PyTorch may call them directly.
Both work through the foreach and pointwise operators, on the tensors' device.
"""

from __future__ import annotations

import flambeau

_FLOATING = (flambeau.float16, flambeau.bfloat16, flambeau.float32, flambeau.float64)


def _check_one_element(t, name: str, dtype, kind: str) -> None:
    if not isinstance(t, flambeau.Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(t).__name__}")
    if t.numel() != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")
    if t.dtype != dtype:
        raise RuntimeError(f"{name} must be {kind} tensor.")


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale) -> None:
    """Multiplies each tensor of ``self`` by ``inv_scale`` in place and sets ``found_inf``
    to 1.0 if any of them held an inf or a NaN (it is left as it was otherwise).

    ``found_inf`` and ``inv_scale`` are 1-element float32 tensors.
    """
    _check_one_element(found_inf, "found_inf", flambeau.float32, "a float")
    _check_one_element(inv_scale, "inv_scale", flambeau.float32, "a float")
    tensors = list(self)
    for t in tensors:
        if not isinstance(t, flambeau.Tensor):
            raise TypeError(f"expected a list of Tensors, got {type(t).__name__}")
        if t.dtype not in _FLOATING:
            raise NotImplementedError(
                f'"_amp_foreach_non_finite_check_and_unscale_" not implemented for {t.dtype}'
            )
    if not tensors:
        return
    with flambeau.no_grad():
        nonfinite = flambeau.stack([flambeau.isfinite(t).all().logical_not() for t in tensors])
        found_inf.copy_(flambeau.where(nonfinite.any(), 1.0, found_inf))
        flambeau._foreach_mul_(tensors, inv_scale)


def _amp_update_scale_(
    self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, growth_interval
):
    """Updates the scale ``self`` and the count of unskipped steps ``growth_tracker`` in place.

    With ``found_inf`` nonzero the scale is multiplied by ``scale_backoff_factor`` and the
    count restarts at 0. Otherwise the count goes up by one; when it reaches
    ``growth_interval`` the scale is multiplied by ``scale_growth_factor`` (unless that
    overflows to inf) and the count restarts at 0. Returns ``self``.
    """
    _check_one_element(self, "current_scale", flambeau.float32, "a float")
    _check_one_element(growth_tracker, "growth_tracker", flambeau.int32, "an int")
    _check_one_element(found_inf, "found_inf", flambeau.float32, "a float")
    with flambeau.no_grad():
        if found_inf.item():
            self.mul_(scale_backoff_factor)
            growth_tracker.fill_(0)
            return self
        successful = int(growth_tracker.item()) + 1
        if successful == growth_interval:
            grown = self * scale_growth_factor
            if bool(flambeau.isfinite(grown).all()):
                self.copy_(grown)
            growth_tracker.fill_(0)
        else:
            growth_tracker.fill_(successful)
    return self
