"""``flambeau.amp.GradScaler``: loss scaling for mixed-precision training.

Small gradients underflow in float16; multiplying the loss by a large scale before
``backward`` keeps them representable. The scaler then divides the gradients by the
scale before the optimizer step, skips the step when a gradient overflowed to inf or
NaN, and adapts the scale: it backs off after an overflow and grows after
``growth_interval`` steps without one. The semantics are PyTorch 2.13's.
"""

from __future__ import annotations

import numbers
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

import flambeau

from ._scale_ops import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    """Where an optimizer is in the current iteration: nothing yet, unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _PerDevice:
    """One tensor, copied to each device that asks for it (once per device)."""

    def __init__(self, tensor):
        self.master = tensor
        self.copies: dict = {}

    def get(self, device):
        if device not in self.copies:
            self.copies[device] = self.master.to(device=device, copy=True)
        return self.copies[device]


class GradScaler:
    """Scales losses and unscales gradients so that low-precision training does not
    underflow.

    Usage::

        scaler = flambeau.amp.GradScaler("cpu")
        for input, target in data:
            optimizer.zero_grad()
            with flambeau.autocast("cpu"):
                loss = loss_fn(model(input), target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)   # unscales, skips the step on inf/NaN gradients
            scaler.update()          # backs off or grows the scale

    Args:
        device (str): the device type of the gradients ("cuda" by default; without a
            CUDA backend a "cuda" scaler warns and disables itself).
        init_scale (float): the initial scale. Default 2**16.
        growth_factor (float): multiplies the scale after ``growth_interval`` steps in a
            row without inf/NaN gradients. Must be > 1. Default 2.
        backoff_factor (float): multiplies the scale after a step with inf/NaN gradients.
            Must be < 1. Default 0.5.
        growth_interval (int): the number of such steps. Default 2000.
        enabled (bool): False makes ``step`` call ``optimizer.step()`` and every other
            method a no-op. Default True.

    >>> model = flambeau.nn.Linear(2, 1)
    >>> opt = flambeau.optim.SGD(model.parameters(), lr=0.1)
    >>> scaler = flambeau.amp.GradScaler("cpu", init_scale=1024.0)
    >>> scaler.scale(model(flambeau.ones(1, 2)).sum()).backward()
    >>> model.weight.grad  # scaled
    tensor([[1024., 1024.]])
    >>> scaler.step(opt)  # unscales the gradients, then steps
    >>> scaler.update()
    >>> scaler.get_scale()
    1024.0
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not flambeau.cuda.is_available():
            warnings.warn(
                "flambeau.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        # The scale and the count of unskipped steps live on the device of the first
        # tensor scaled, created then.
        self._scale = None
        self._growth_tracker = None
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    # ---- the scale tensors ---------------------------------------------------------------

    def _check_scale_growth_tracker(self, funcname: str):
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, device) -> None:
        self._scale = flambeau.full((), self._init_scale, dtype=flambeau.float32, device=device)
        self._growth_tracker = flambeau.full(
            (), self._init_growth_tracker, dtype=flambeau.int32, device=device
        )

    def _get_scale_async(self):
        return self._scale

    # ---- one iteration -------------------------------------------------------------------

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them, nested) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, flambeau.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        scales = []  # one _PerDevice, made at the first tensor met

        def apply(value):
            if isinstance(value, flambeau.Tensor):
                if not scales:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(value.device)
                    scales.append(_PerDevice(self._scale))
                return value * scales[0].get(value.device)
            if isinstance(value, abc.Iterable):
                mapped = map(apply, value)
                return type(value)(mapped) if isinstance(value, (list, tuple)) else mapped
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16: bool):
        """Unscales the optimizer's gradients, grouped by device and dtype; returns the
        found_inf flag of each device."""
        inv_scales, found_infs = _PerDevice(inv_scale), _PerDevice(found_inf)
        groups = defaultdict(lambda: defaultdict(list))
        with flambeau.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, flambeau.Tensor):
                        raise AssertionError(
                            f"expected param to be flambeau.Tensor, got {type(param).__name__}"
                        )
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == flambeau.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    groups[grad.device][grad.dtype].append(grad)
            for device, by_dtype in groups.items():
                for grads in by_dtype.values():
                    _amp_foreach_non_finite_check_and_unscale_(
                        grads, found_infs.get(device), inv_scales.get(device)
                    )
        return found_infs.copies

    def unscale_(self, optimizer) -> None:
        """Divides the optimizer's gradients by the scale, in place, and records whether
        any is inf or NaN. Optional: ``step`` does it when it was not called. Call it
        at most once per optimizer between ``update`` calls, after the gradients are
        complete (for instance to clip them)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in float64 then rounded, so 1/scale is as exact as float32 allows.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = flambeau.full((), 0.0, dtype=flambeau.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless ``unscale_`` did) and calls
        ``optimizer.step(*args, **kwargs)`` unless some gradient is inf or NaN. Returns
        what ``optimizer.step`` returned, or None when the step was skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Updates the scale for the next iteration: times ``backoff_factor`` if a step
        of this iteration was skipped, times ``growth_factor`` after ``growth_interval``
        unskipped iterations in a row. ``new_scale`` (a float, or a 1-element tensor)
        sets it instead. Call it once per iteration, after every ``step``."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, numbers.Real) and not isinstance(new_scale, bool):
                scale.fill_(float(new_scale))
            else:
                reason = (
                    "new_scale should be a float or a 1-element flambeau.FloatTensor with "
                    "requires_grad=False."
                )
                if not isinstance(new_scale, flambeau.Tensor):
                    raise AssertionError(reason)
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [
                found_inf.to(device=scale.device)
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for other in found_infs[1:]:
                found_inf_combined += other
            _amp_update_scale_(
                scale,
                growth_tracker,
                found_inf_combined,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    # ---- settings and state --------------------------------------------------------------

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        """The scale growth factor."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Sets the scale growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The scale backoff factor."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Sets the scale backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """The number of unskipped iterations after which the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Sets the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        """Whether this scaler scales."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale, the factors, the interval and the count of unskipped iterations
        (``_growth_tracker``); an empty dict when disabled. Take it after ``update``."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores what ``state_dict`` returned (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            # The tensors are rebuilt on first use from these numbers.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _check_inf_per_device(self, optimizer):
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = flambeau.full((), 1.0, dtype=flambeau.float32, device=scale.device)
        found_inf = flambeau.full((), 0.0, dtype=flambeau.float32, device=scale.device)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True
        )
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
