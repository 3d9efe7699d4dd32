"""The functions ``torch.cpu`` offers for device-agnostic code, which
``flambeau.get_device_module("cpu")`` returns as it does ``flambeau.cuda`` for CUDA.

There is one CPU device, always available and initialized; its work runs as it is
issued, so streams are placeholders and events are always complete (as in PyTorch,
these ``Stream`` and ``Event`` classes are not ``flambeau.Stream`` and ``flambeau.Event``:
recording a ``flambeau.cpu.Event`` succeeds and does nothing).
"""

from __future__ import annotations

import functools
import platform
from contextlib import AbstractContextManager
from types import MappingProxyType

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "device_count",
    "get_capabilities",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]


def is_available() -> bool:
    """True: the CPU is always available.

    >>> flambeau.cpu.is_available()
    True
    """
    return True


def is_initialized() -> bool:
    """True: the CPU needs no initialization.

    >>> flambeau.cpu.is_initialized()
    True
    """
    return True


def device_count() -> int:
    """1: the CPU is one device (however many cores it has).

    >>> flambeau.cpu.device_count()
    1
    """
    return 1


def current_device() -> str:
    """'cpu'.

    >>> flambeau.cpu.current_device()
    'cpu'
    """
    return "cpu"


def set_device(device) -> None:
    """Does nothing: there is only one CPU device.

    >>> flambeau.cpu.set_device(0)
    >>> flambeau.cpu.current_device()
    'cpu'
    """


def synchronize(device=None) -> None:
    """Returns at once: CPU work has completed when the call that issued it returns.

    >>> y = flambeau.ones(3) * 2
    >>> flambeau.cpu.synchronize()  # y is already computed
    """


class Stream:
    """The CPU's stand-in for a stream: work on the CPU is never queued.

    >>> s = flambeau.cpu.Stream()
    >>> with flambeau.cpu.stream(s):
    ...     print(flambeau.cpu.current_stream() is s)
    True
    """

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        """Nothing to wait for."""

    def record_event(self) -> None:
        """Nothing to record."""

    def wait_event(self, event) -> None:
        """Nothing to wait for."""


class Event:
    """The CPU's stand-in for an event: always complete.

    >>> e = flambeau.cpu.Event()
    >>> e.record()
    >>> e.query()
    True
    """

    def query(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        """Nothing to record."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream=None) -> None:
        """Nothing to wait for."""


_default_stream = Stream()
_current = [_default_stream]  # the stream StreamContext selected, innermost last


def current_stream(device=None) -> Stream:
    """The stream selected by the innermost ``stream(...)`` context, else the default one.

    >>> s = flambeau.cpu.Stream()
    >>> with flambeau.cpu.stream(s):
    ...     print(flambeau.cpu.current_stream() is s)
    True
    >>> flambeau.cpu.current_stream() is s
    False
    """
    return _current[-1]


class StreamContext(AbstractContextManager):
    """Selects ``stream`` (None: leaves the selection alone) while the block runs.

    >>> s = flambeau.cpu.Stream()
    >>> with flambeau.cpu.StreamContext(s):
    ...     print(flambeau.cpu.current_stream() is s)
    True
    """

    def __init__(self, stream) -> None:
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _current.append(self.stream)

    def __exit__(self, *exc) -> None:
        if self.stream is not None:
            _current.pop()


def stream(stream) -> StreamContext:
    """A context that selects ``stream`` while its block runs.

    >>> s = flambeau.cpu.Stream()
    >>> with flambeau.cpu.stream(s):
    ...     y = flambeau.ones(2) + 1
    ...     print(flambeau.cpu.current_stream() is s)
    True
    """
    return StreamContext(stream)


# /proc/cpuinfo's flag names for the instruction sets PyTorch reports under other names.
_FLAG_NAMES = {
    "sse": "sse",
    "sse2": "sse2",
    "pni": "sse3",
    "ssse3": "ssse3",
    "sse4_1": "sse4_1",
    "sse4_2": "sse4_2",
    "sse4a": "sse4a",
    "avx": "avx",
    "avx2": "avx2",
    "avx_vnni": "avx_vnni",
    "avx512f": "avx512_f",
    "avx512cd": "avx512_cd",
    "avx512dq": "avx512_dq",
    "avx512bw": "avx512_bw",
    "avx512vl": "avx512_vl",
    "avx512ifma": "avx512_ifma",
    "avx512vbmi": "avx512_vbmi",
    "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg",
    "avx512_vpopcntdq": "avx512_vpopcntdq",
    "avx512_vnni": "avx512_vnni",
    "avx512_bf16": "avx512_bf16",
    "avx512_fp16": "avx512_fp16",
    "amx_bf16": "amx_bf16",
    "amx_tile": "amx_tile",
    "amx_int8": "amx_int8",
    "fma": "fma3",
    "f16c": "f16c",
    "bmi1": "bmi",
    "bmi2": "bmi2",
    "popcnt": "popcnt",
    "abm": "lzcnt",
    "aes": "aes",
    "sha_ni": "sha",
    "clflush": "clflush",
    "clflushopt": "clflushopt",
    "clwb": "clwb",
}


def _cpuinfo_flags() -> set[str] | None:
    """The first processor's flags in /proc/cpuinfo (Linux on x86), else None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return None


@functools.cache
def get_capabilities():
    """A read-only mapping of what this CPU supports: ``architecture``, and on Linux x86
    the instruction sets (``avx2``, ``avx512_f``, ...) as booleans, read from
    /proc/cpuinfo.

    >>> import platform
    >>> caps = flambeau.cpu.get_capabilities()
    >>> caps["architecture"] == platform.machine()
    True
    """
    caps: dict = {"architecture": platform.machine()}
    flags = _cpuinfo_flags()
    if flags is not None:
        for flag, name in _FLAG_NAMES.items():
            caps[name] = flag in flags
    return MappingProxyType(caps)
