"""flambeau.signal: PyTorch's ``torch.signal``, signal-processing helpers.

Its one submodule, :mod:`flambeau.signal.windows`, computes window functions
(Hann, Hamming, Kaiser, ...) as tensors, following ``scipy.signal.windows``.

>>> flambeau.signal.windows.hann(4, sym=False)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""

import flambeau  # noqa: F401  (the examples' namespace when doctest runs this module)
from flambeau.signal import windows

__all__ = ["windows"]
