"""``flambeau.cuda``: CUDA devices come from a backend plugin distribution.

The CUDA backend is a plugin like any other (device type ``"cuda"``, entry point
group ``flambeau.backends``). Without one installed no CUDA device is available;
with one, these functions and any other attribute come from its module, loaded
on first use.
"""

from flambeau import _device_facade
from flambeau._errors import AcceleratorError, OutOfMemoryError  # noqa: F401 - as torch.cuda's
from flambeau.cuda import _no_backend

# Without a backend, what PyTorch's CPU build has: a program that seeds or frees CUDA
# unconditionally, or names its classes, runs on CPU; calls that need a device raise.
_facade = _device_facade.DeviceFacade(
    "cuda", "CUDA", _no_backend.ANSWERS, refused=_no_backend.REFUSED
)

is_available = _facade.is_available
device_count = _facade.device_count


def __getattr__(name):
    if name in ("amp", "nvtx"):  # the core's own submodules, with or without a backend
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return _facade.module_getattr(name)
