"""``flambeau.cpu.amp``: PyTorch's deprecated CPU spellings of ``flambeau.amp``."""

from __future__ import annotations

import warnings

import flambeau
from flambeau import amp as _amp

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):
    """Deprecated: ``flambeau.amp.autocast("cpu", ...)``."""

    def __init__(
        self,
        enabled: bool = True,
        dtype: flambeau.dtype = flambeau.bfloat16,
        cache_enabled: bool = True,
    ):
        warnings.warn(
            "`flambeau.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`flambeau.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """Deprecated: ``flambeau.amp.GradScaler("cpu", ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`flambeau.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`flambeau.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
