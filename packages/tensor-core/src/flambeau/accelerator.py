"""flambeau.accelerator: the device of an installed backend plugin, as ``torch.accelerator``.

flambeau's accelerators are backend plugins (see :mod:`flambeau.backends`). The
accelerator is the installed plugin that may load (``cuda`` first, then ``mps``,
``xpu``, ``mtia``, ``hpu``, then the others by name) and loads without error; a plugin
that fails to load is passed over with a RuntimeWarning. With none, as on a CPU-only
install, :func:`is_available` is False, :func:`current_accelerator` None,
:func:`device_count` 0, and every function that needs a device raises RuntimeError, as
PyTorch does without an accelerator.

Device counts, the current device, synchronization and the allocator's statistics go
through the plugin ABI. Streams, graphs, device capabilities and free-memory queries
are not part of that ABI: they come from the plugin's module where it offers them
(``current_stream``, ``set_stream``, ``Graph``, ``get_device_capability``,
``mem_get_info``), and raise RuntimeError otherwise.
"""

from __future__ import annotations

import collections
import warnings

from flambeau import _C
from flambeau import backends as _backends

__all__ = [
    "Graph",
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]

_PREFERRED = ("cuda", "mps", "xpu", "mtia", "hpu")
_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def _loaded_module(name: str):
    """The plugin's module, loading it if allowed; None if it cannot load (warned)."""
    if name not in _backends._installed() or not _backends._allowed(name):
        return None
    if name not in _backends._modules and not _backends._autoload():
        return None  # loading on first use is off and nobody loaded it
    try:
        return _backends.module(name)
    except RuntimeError as e:
        warnings.warn(f"accelerator backend {name!r} unavailable: {e}", RuntimeWarning, 3)
        return None


def _accelerator() -> str | None:
    """The device type of the accelerator, or None."""
    rank = {name: i for i, name in enumerate(_PREFERRED)}
    names = sorted(_backends._installed(), key=lambda n: (rank.get(n, len(rank)), n))
    for name in names:
        if _loaded_module(name) is not None:
            return name
    return None


def _device_count_of(name: str) -> int:
    """Devices the plugin for device type ``name`` sees (0 when it is absent or broken)."""
    if _loaded_module(name) is None:
        return 0
    return int(_C._device_count(name))


def _require() -> str:
    name = _accelerator()
    if name is None or _C._device_count(name) == 0:
        raise RuntimeError(_NONE_AVAILABLE)
    return name


def _device_index(device) -> tuple[str, int]:
    """(accelerator, index) for a device argument; index -1 means the current device."""
    if isinstance(device, (str, _C.device)):
        dev = device if isinstance(device, _C.device) else _C.device(device)
        if dev.type != _accelerator():
            raise RuntimeError(f"Accelerator expected, but got a device of type {dev.type!r}")
        return _require(), -1 if dev.index is None else dev.index
    name = _require()
    if device is None:
        return name, -1
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(
            f"Expected a flambeau.device, a str or an int as the device, but got {type(device)}"
        )
    return name, device


def _plugin_function(name: str, function: str):
    fn = getattr(_backends.module(name), function, None)
    if fn is None:
        raise RuntimeError(f"the {name!r} backend plugin does not provide {function}()")
    return fn


def is_available() -> bool:
    """Whether an accelerator is installed and sees at least one device.

    >>> flambeau.accelerator.is_available()  # a CPU-only install, as here
    False
    """
    name = _accelerator()
    return name is not None and _C._device_count(name) > 0


def current_accelerator(check_available: bool = False):
    """The accelerator's device (without an index), or None; with ``check_available``,
    None too when it sees no device.

    >>> print(flambeau.accelerator.current_accelerator())  # a CPU-only install, as here
    None
    >>> acc = flambeau.accelerator.current_accelerator()
    >>> flambeau.ones(2, device=acc or "cpu").device
    device(type='cpu')
    """
    name = _accelerator()
    if name is None or (check_available and not is_available()):
        return None
    return _C.device(name)


def device_count() -> int:
    """The number of accelerator devices (0 without an accelerator).

    >>> flambeau.accelerator.device_count()  # a CPU-only install, as here
    0
    """
    name = _accelerator()
    return 0 if name is None else int(_C._device_count(name))


def current_device_index() -> int:
    """The index of the current accelerator device.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.current_device_index()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    return int(_C._current_device(_require()))


def current_device_idx() -> int:
    """Deprecated alias of :func:`current_device_index`.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.current_device_idx()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    """Makes ``device`` (an index, or a device of the accelerator's type) current.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.set_device_index(0)  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    if device is None:
        raise ValueError(
            f"Expected a flambeau.device with a specified index or an integer, but got:{device}"
        )
    name, index = _device_index(device)
    if index != -1:
        _C._set_device(name, index)


def set_device_idx(device, /) -> None:
    """Deprecated alias of :func:`set_device_index`.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.set_device_idx(0)  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:  # noqa: N801 - PyTorch's name
    """Context manager: ``device`` is the current accelerator device inside the block
    (None does nothing, and needs no accelerator).

    >>> with flambeau.accelerator.device_index(None):  # None needs no accelerator
    ...     x = flambeau.ones(2)
    >>> with flambeau.accelerator.device_index(0):  # none here: a CPU-only install
    ...     x = flambeau.ones(2)
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc) -> None:
        if self.idx is not None:
            set_device_index(self.prev_idx)


def synchronize(device=None, /) -> None:
    """Waits for all work queued on the device (the current one by default).

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.synchronize()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    name, index = _device_index(device)
    _C._synchronize(name, index)


def current_stream(device=None, /):
    """The device's current stream, from the plugin's module (``current_stream``).

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.current_stream()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    name, index = _device_index(device)
    return _plugin_function(name, "current_stream")(index)


def set_stream(stream) -> None:
    """Makes ``stream`` current, through the plugin's module (``set_stream``).

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.set_stream(None)  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    _plugin_function(_require(), "set_stream")(stream)


def empty_cache() -> None:
    """Returns the allocator's cached, unused blocks of the current device to the device.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.empty_cache()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    _C._empty_cache(_require(), -1)


def empty_host_cache() -> None:
    """Frees the plugin's cached host memory, where its module keeps any
    (``empty_host_cache``); the core itself caches no host memory.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.empty_host_cache()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    fn = getattr(_backends.module(_require()), "empty_host_cache", None)
    if fn is not None:
        fn()


def get_device_capability(device=None, /) -> dict:
    """The device's capabilities (a dict with ``supported_dtypes``), from the plugin.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.get_device_capability()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    name, index = _device_index(device)
    return _plugin_function(name, "get_device_capability")(index)


def get_memory_info(device_index=None, /) -> tuple[int, int]:
    """(free, total) bytes of the device, from the plugin's ``mem_get_info``.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.get_memory_info()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    name, index = _device_index(device_index)
    free, total = _plugin_function(name, "mem_get_info")(index)
    return int(free), int(total)


def memory_stats(device_index=None, /) -> collections.OrderedDict:
    """The allocator's statistics for the device, in PyTorch's key names: current and
    peak bytes allocated and reserved, and the number of live allocations.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.memory_stats()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    name, index = _device_index(device_index)
    s = _C._memory_stats(name, index)
    stats = {
        "allocated_bytes.all.current": s["allocated_bytes"],
        "allocated_bytes.all.peak": s["peak_allocated_bytes"],
        "reserved_bytes.all.current": s["reserved_bytes"],
        "reserved_bytes.all.peak": s["peak_reserved_bytes"],
        "allocation.all.current": s["allocations"],
    }
    return collections.OrderedDict(sorted(stats.items()))


def memory_allocated(device_index=None, /) -> int:
    """Bytes in live tensors on the device.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.memory_allocated()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    return memory_stats(device_index)["allocated_bytes.all.current"]


def max_memory_allocated(device_index=None, /) -> int:
    """The peak of :func:`memory_allocated` since the last reset.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.max_memory_allocated()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    return memory_stats(device_index)["allocated_bytes.all.peak"]


def memory_reserved(device_index=None, /) -> int:
    """Bytes the allocator holds from the device, cached blocks included.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.memory_reserved()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    return memory_stats(device_index)["reserved_bytes.all.current"]


def max_memory_reserved(device_index=None, /) -> int:
    """The peak of :func:`memory_reserved` since the last reset.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.max_memory_reserved()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    return memory_stats(device_index)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device_index=None, /) -> None:
    """Restarts the peaks from the current values.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.reset_peak_memory_stats()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    name, index = _device_index(device_index)
    _C._reset_peak_memory_stats(name, index)


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    """Resets the accumulated counters: the plugin ABI keeps none (only current and peak
    values), so after checking the device there is nothing to reset.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.reset_accumulated_memory_stats()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """
    _device_index(device_index)


class Graph:
    """A captured sequence of device work (CUDA graphs), from the plugin's ``Graph``;
    RuntimeError without an accelerator or with a plugin that cannot capture.

    >>> flambeau.accelerator.is_available()
    False
    >>> flambeau.accelerator.Graph()  # none here: a CPU-only install
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot access accelerator device when none is available.
    """

    def __new__(cls, keep_graph: bool = False, *, pool=None, capture_error_mode="default"):
        graph = _plugin_function(_require(), "Graph")
        return graph(keep_graph, pool=pool, capture_error_mode=capture_error_mode)
