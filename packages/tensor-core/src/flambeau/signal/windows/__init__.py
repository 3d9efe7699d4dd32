"""flambeau.signal.windows: PyTorch's ``torch.signal.windows`` window functions.

Each function returns a 1-D window of ``M`` points, symmetric (``sym=True``, for
filter design) or periodic (``sym=False``, for spectral analysis), as
``scipy.signal.windows`` defines them. Only float32 and float64 strided windows exist,
as in PyTorch.

>>> flambeau.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""

import flambeau  # noqa: F401  (the examples' namespace when doctest runs this module)
from flambeau.signal.windows.windows import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]
