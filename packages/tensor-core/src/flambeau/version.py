"""What this flambeau is and what it was built for (torch.version).

``__version__`` names the PyTorch release whose API flambeau follows, with flambeau's own
release as its local label (``2.13.0+flambeau.0.1.0``); ``flambeau`` is that release alone.

``cuda`` is the CUDA release the CUDA plugin (flambeau-tensor-cuda) runs on, from the
NVIDIA runtime wheel it depends on, or None without the plugin; flambeau has no ROCm or
XPU build, so ``hip``, ``rocm`` and ``xpu`` are None.

>>> flambeau.version.__version__ == flambeau.__version__
True
>>> flambeau.version.hip is None
True
"""

from __future__ import annotations

from importlib import metadata

from flambeau import _RELEASE as flambeau
from flambeau import __version__

__all__ = ["__version__", "cuda", "debug", "flambeau", "hip", "rocm", "xpu"]

debug = False
hip = None
rocm = None
xpu = None


def _cuda_release() -> str | None:
    """The CUDA release ("13.0") of the runtime wheel beside an installed CUDA plugin, or None."""
    try:
        metadata.version("flambeau-tensor-cuda")
        runtime = metadata.version("nvidia-cuda-runtime")
    except metadata.PackageNotFoundError:
        return None
    return ".".join(runtime.split(".")[:2])


cuda = _cuda_release()
