"""The DeprecationWarning PyTorch 2.5+ gives for each TorchScript entry point."""

from __future__ import annotations

import warnings


def warn_deprecated(name: str, instead: str = "`flambeau.compile`") -> None:
    """Warns as ``torch.jit.<name>`` does; stacklevel 3 points at the user's call."""
    warnings.warn(
        f"`flambeau.jit.{name}` is deprecated, as `torch.jit.{name}` is (flambeau runs it "
        f"eagerly). Please switch to {instead}.",
        DeprecationWarning,
        stacklevel=3,
    )
