"""What ``flambeau.cuda``, ``flambeau.xpu``, ``flambeau.mps`` and ``flambeau.mtia`` share.

Each of those modules stands for a device type whose backend is a plugin (entry point
group ``flambeau.backends``). With the plugin installed, every attribute comes from the
plugin's module, loaded on first use. Without it the module answers as PyTorch's does
on a machine without that device: the calls a CPU program makes unconditionally
(seeding, freeing the cache, memory counters) are "answers" that return what PyTorch
returns, the calls that need a device are "refusals" that raise PyTorch's exception
type, and any other name is an AttributeError that says which plugin to install.
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable

from flambeau import backends as _backends


def refusals(exc_type: type, *names: str) -> dict[str, type]:
    """The table entries for functions that raise ``exc_type`` without the device."""
    return dict.fromkeys(names, exc_type)


class DeviceFacade:
    """The behaviour of the module ``flambeau.<device_type>``.

    ``answers`` maps a function name to what stands in for it without a backend;
    ``refused`` maps a function name to the exception type PyTorch raises calling it
    without the device.
    """

    def __init__(self, device_type: str, title: str, answers: dict, refused: dict):
        self.device_type = device_type
        self.title = title  # "CUDA", "XPU", ...
        # "an XPU", "an MPS": letters whose names start with a vowel sound take "an".
        self.a_title = f"{'an' if title[0] in 'AEFHILMNORSX' else 'a'} {title}"
        self.answers = answers
        self.refused = refused

    def _installed(self) -> bool:
        return self.device_type in _backends._installed()

    def _install_hint(self) -> str:
        return (
            f"install a distribution that provides the {self.device_type!r} entry point of "
            f"group {_backends.GROUP!r}"
        )

    def plugin(self):
        """The backend's module; None when none is installed or it failed to load."""
        if not self._installed():
            return None
        try:
            return _backends.module(self.device_type)
        except RuntimeError as e:
            warnings.warn(f"{self.title} backend unavailable: {e}", RuntimeWarning, stacklevel=4)
            return None

    def is_available(self) -> bool:
        """True if a backend for this device type is installed and sees at least one device.

        >>> device = "cuda" if flambeau.cuda.is_available() else "cpu"
        >>> flambeau.ones(2, device=device).device.type == device
        True
        """
        plugin = self.plugin()
        return bool(plugin is not None and plugin.is_available())

    def device_count(self) -> int:
        """The number of devices the backend sees (0 without a backend).

        >>> n = flambeau.cuda.device_count()  # 0 without a CUDA backend plugin
        >>> n == 0 or flambeau.cuda.is_available()
        True
        """
        plugin = self.plugin()
        return int(plugin.device_count()) if plugin is not None else 0

    def _refusal(self, name: str, exc_type: type) -> Callable:
        message = (
            f"flambeau.{self.device_type}.{name}() needs {self.a_title} device, and no "
            f"{self.title} backend is installed: {self._install_hint()}"
        )

        def refuse(*args, **kwargs):
            raise exc_type(message)

        refuse.__name__ = refuse.__qualname__ = name
        refuse.__doc__ = f"Raises {exc_type.__name__}: no {self.title} backend is installed."
        return refuse

    def module_getattr(self, name: str):
        """The module's ``__getattr__``: the plugin's attribute, or the table's stand-in."""
        if name.startswith("__"):
            raise AttributeError(name)
        if self._installed():
            return getattr(_backends.load(self.device_type), name)
        if name in self.answers:
            return self.answers[name]
        if name in self.refused:
            return self._refusal(name, self.refused[name])
        raise AttributeError(
            f"flambeau.{self.device_type}.{name} needs {self.a_title} backend: "
            f"{self._install_hint()}"
        )


# The stand-ins PyTorch's device modules share. Seeding is deferred until the device
# initializes, which without it never happens; there is no memory and no generator.


def check_seed(seed) -> None:
    """Without the device: converts the seed to int (as PyTorch does first), nothing else."""
    int(seed)


def nothing() -> None:
    """Without the device: does nothing."""


def false() -> bool:
    """Without the device: False."""
    return False


def no_bytes(device=None) -> int:
    """Without the device: no memory is held, 0 bytes."""
    return 0


def no_states() -> list:
    """Without the device: no generators, so no states."""
    return []


def ignore_states(new_states) -> None:
    """Without the device: no generators to set."""


def ignore_state(new_state, device=None) -> None:
    """Without the device: no generator to set."""


def no_memory_stats(device=None) -> collections.OrderedDict:
    """Without the device: no allocator statistics."""
    return collections.OrderedDict()


def no_archs() -> list:
    """Without the device: no architectures were compiled for."""
    return []


def no_bf16(including_emulation: bool = True) -> bool:
    """Without the device: bfloat16 is not supported."""
    return False


SEEDING = {
    "manual_seed": check_seed,
    "manual_seed_all": check_seed,
    "seed": nothing,
    "seed_all": nothing,
}
RNG_STATES = {"get_rng_state_all": no_states, "set_rng_state_all": ignore_states}
# What CUDA and XPU (whose modules follow CUDA's) both answer.
CUDA_LIKE = {
    **SEEDING,
    **RNG_STATES,
    "is_initialized": false,
    "empty_cache": nothing,
    "memory_allocated": no_bytes,
    "max_memory_allocated": no_bytes,
    "memory_reserved": no_bytes,
    "max_memory_reserved": no_bytes,
    "is_bf16_supported": no_bf16,
    "is_tf32_supported": false,
    "set_rng_state": ignore_state,
    "memory_stats": no_memory_stats,
    "get_arch_list": no_archs,
}
