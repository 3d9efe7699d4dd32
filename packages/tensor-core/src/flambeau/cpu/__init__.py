"""``flambeau.cpu``: the CPU as PyTorch's ``torch.cpu`` names it: the device functions of
device-agnostic code (see ``flambeau.cpu._device``) and ``flambeau.cpu.amp``, the
deprecated spellings of ``flambeau.amp`` for the CPU."""

from flambeau.cpu import _device, amp
from flambeau.cpu._device import *  # noqa: F403

__all__ = ["amp", *_device.__all__]
