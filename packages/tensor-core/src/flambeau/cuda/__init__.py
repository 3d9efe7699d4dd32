"""``flambeau.cuda``: CUDA devices come from a backend plugin distribution.

The CUDA backend is a plugin like any other (device type ``"cuda"``, entry point
group ``flambeau.backends``). With one installed, every attribute comes from its
module, loaded on first use. Without one, the module has the names PyTorch's CPU
build has: seeding, freeing the cache and the memory counters answer as without a
GPU; ``Stream``, ``Event`` and ``CUDAGraph`` are classes that refuse construction;
``device(None)``, ``stream(None)`` and ``device_of`` a CPU tensor change nothing;
calls that need a device (``synchronize``, ``current_device``, ...) raise
AssertionError, as PyTorch's "not compiled with CUDA".
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
