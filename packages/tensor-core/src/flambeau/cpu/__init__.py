"""``flambeau.cpu``: the CPU as PyTorch's ``torch.cpu`` names it; holds ``flambeau.cpu.amp``,
the deprecated spellings of ``flambeau.amp`` for the CPU."""

from flambeau.cpu import amp

__all__ = ["amp"]
