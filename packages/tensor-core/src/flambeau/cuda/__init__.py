"""``flambeau.cuda``: CUDA devices come from a backend plugin distribution.

The CUDA backend is a plugin like any other (device type ``"cuda"``, entry point
group ``flambeau.backends``). Without one installed no CUDA device is available;
with one, these functions and any other attribute come from its module, loaded
on first use.
"""

import warnings

from flambeau import backends as _backends


def _plugin():
    """The CUDA backend's module; None when none is installed or it failed to load."""
    if "cuda" not in _backends._installed():
        return None
    try:
        return _backends.module("cuda")
    except RuntimeError as e:
        warnings.warn(f"CUDA backend unavailable: {e}", RuntimeWarning, stacklevel=3)
        return None


def is_available() -> bool:
    """True if a CUDA backend is installed and sees at least one device."""
    plugin = _plugin()
    return bool(plugin is not None and plugin.is_available())


def device_count() -> int:
    """The number of CUDA devices a backend sees (0 without a backend)."""
    plugin = _plugin()
    return int(plugin.device_count()) if plugin is not None else 0


def __getattr__(name):
    # Everything else (synchronize, memory_allocated, Stream, ...) is the plugin's.
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "amp":  # the core's own submodule (deprecated spellings of flambeau.amp)
        import importlib

        return importlib.import_module(f"{__name__}.amp")
    if "cuda" not in _backends._installed():
        raise AttributeError(
            f"flambeau.cuda.{name} needs a CUDA backend: install a distribution that "
            f"provides the 'cuda' entry point of group {_backends.GROUP!r}"
        )
    return getattr(_backends.load("cuda"), name)
