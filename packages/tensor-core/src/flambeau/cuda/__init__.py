"""``flambeau.cuda``: CUDA devices come from a backend plugin distribution.

The CUDA backend is a plugin like any other (device type ``"cuda"``, entry point
group ``flambeau.backends``). Without one installed no CUDA device is available;
with one, these functions and any other attribute come from its module, loaded
on first use.
"""

from flambeau import _device_facade
from flambeau._errors import AcceleratorError, OutOfMemoryError  # noqa: F401 - as torch.cuda's

# Without a backend, what PyTorch answers without CUDA, so that a program that seeds or
# frees CUDA unconditionally runs on CPU; anything else (synchronize, Stream, ...) is the
# plugin's, and an AttributeError naming it without one.
_facade = _device_facade.DeviceFacade("cuda", "CUDA", _device_facade.CUDA_LIKE, refused={})

is_available = _facade.is_available
device_count = _facade.device_count


def __getattr__(name):
    if name == "amp":  # the core's own submodule (deprecated spellings of flambeau.amp)
        import importlib

        return importlib.import_module(f"{__name__}.amp")
    return _facade.module_getattr(name)
