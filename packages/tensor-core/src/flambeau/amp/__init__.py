"""``flambeau.amp``: automatic mixed precision.

``autocast`` runs regions of a program in a lower-precision dtype (bfloat16 on the CPU
by default) for the operators PyTorch's autocast lists name; ``GradScaler`` scales the
loss so that low-precision gradients do not underflow. See docs/design/autocast.rst.
"""

from flambeau.amp.autocast_mode import (
    _enter_autocast,
    _exit_autocast,
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from flambeau.amp.grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "is_autocast_available",
    "_enter_autocast",
    "_exit_autocast",
]
