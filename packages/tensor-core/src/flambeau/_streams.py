"""``flambeau.Stream`` and ``flambeau.Event``: PyTorch's device-generic streams and events.

The CPU runs every operation to completion before it returns, so a CPU stream is always
idle and a CPU event always complete: ``query()`` is True and the waits return at once.
As in PyTorch, a CPU event cannot be recorded (``record``, ``Stream.record_event`` and
``Stream.wait_stream``, which records one, raise RuntimeError), so ``elapsed_time`` has
nothing to measure.

Streams and events of other device types belong to the backend plugin providing the
device: ``flambeau.Stream("mydev")`` returns the plugin module's ``Stream(device,
priority=...)`` (``Event(device, enable_timing=..., ...)`` likewise). Without a device
argument the accelerator's is used, or the CPU's when there is none.
"""

from __future__ import annotations

import builtins

from flambeau import _C

__all__ = ["Event", "Stream"]

_NO_CPU_EVENTS = "cpu backend doesn't support events."


def _resolve_device(fn: str, device) -> _C.device:
    """The device a stream or event is for; an int is an index of the accelerator."""
    from flambeau import accelerator

    if device is None:
        found = accelerator.current_accelerator()
        return found if found is not None else _C.device("cpu")
    if isinstance(device, _C.device):
        return device
    if isinstance(device, str):
        return _C.device(device)
    if isinstance(device, builtins.int) and not isinstance(device, bool):
        found = accelerator.current_accelerator()
        if found is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return _C.device(found.type, device)
    raise TypeError(
        f"{fn}(): argument 'device' (position 1) must be flambeau.device, not "
        f"{type(device).__name__}"
    )


def _plugin_class(device: _C.device, name: str):
    """The backend plugin's ``Stream`` or ``Event`` class for a non-CPU device."""
    from flambeau import backends

    if device.type not in backends._installed():
        raise RuntimeError(
            f"flambeau has no backend for {device.type!r} devices: install a backend plugin "
            "that provides it"
        )
    cls = getattr(backends.module(device.type), name, None)
    if cls is None:
        raise RuntimeError(f"the {device.type!r} backend plugin does not provide {name}")
    return cls


def _check_int(fn: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, builtins.int):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(value).__name__}")


class Stream:
    """An in-order queue of work on a device. On the CPU, work runs as it is issued, so the
    stream is always idle; ``with stream:`` is accepted and changes nothing.

    >>> s = flambeau.Stream()
    >>> with s:
    ...     y = flambeau.ones(2) + 1
    >>> s.device_type, s.query()
    ('cpu', True)
    """

    __slots__ = ("_device",)

    def __new__(cls, device=None, *, priority: int = 0):
        _check_int("Stream", "priority", priority)
        dev = _resolve_device("Stream", device)
        if dev.type != "cpu":
            return _plugin_class(dev, "Stream")(dev, priority=priority)
        self = super().__new__(cls)
        self._device = _C.device("cpu")
        return self

    device_type = property(lambda self: self._device.type, doc="The device type, 'cpu'.")
    device_index = property(lambda self: -1, doc="-1: the CPU has no device index.")
    stream_id = property(lambda self: 0, doc="0: the CPU has only its default stream.")
    device = property(lambda self: self._device, doc="The stream's device.")

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def query(self) -> bool:
        """True: all work submitted to the stream has completed."""
        return True

    def synchronize(self) -> None:
        """Waits for the stream's work: on the CPU it is already done."""

    def wait_event(self, event) -> None:
        """Makes later work wait for the event: a CPU event is always complete."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event(): expected a flambeau.Event, got {type(event).__name__}")

    def wait_stream(self, stream) -> None:
        """Would record an event on ``stream``; the CPU has none (as PyTorch, RuntimeError)."""
        raise RuntimeError(_NO_CPU_EVENTS)

    def record_event(self, event=None):
        """Would record an event on this stream; the CPU has none (RuntimeError)."""
        raise RuntimeError(_NO_CPU_EVENTS)

    def is_capturing(self) -> bool:
        """False: no graph capture on the CPU."""
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("flambeau.Stream", self._device.type, -1, 0))

    def __repr__(self) -> str:
        return f"flambeau.Stream device_type={self.device_type}, device_index=-1, stream_id=0"


class Event:
    """A marker in a stream's work. A CPU event is always complete (``query()`` is True);
    recording one raises RuntimeError, as in PyTorch.

    >>> e = flambeau.Event()
    >>> e.device, e.query()
    (device(type='cpu'), True)
    >>> e.synchronize()
    """

    __slots__ = ("_device", "_enable_timing")

    def __new__(cls, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        dev = _resolve_device("Event", device)
        if dev.type != "cpu":
            return _plugin_class(dev, "Event")(
                dev, enable_timing=enable_timing, blocking=blocking, interprocess=interprocess
            )
        self = super().__new__(cls)
        self._device = _C.device("cpu")
        self._enable_timing = bool(enable_timing)
        return self

    device = property(lambda self: self._device, doc="The event's device.")
    event_id = property(lambda self: 0, doc="0: a CPU event has no native handle.")

    def record(self, stream=None) -> None:
        """Would record the event on ``stream``: CPU events cannot be recorded."""
        if stream is not None:
            if not isinstance(stream, Stream):
                raise TypeError(f"record(): expected a flambeau.Stream, got {type(stream)}")
            if stream.device_type != "cpu":
                raise RuntimeError(
                    "Event device type CPU does not match recording stream's device type "
                    f"{stream.device_type.upper()}."
                )
        raise RuntimeError(_NO_CPU_EVENTS)

    def query(self) -> bool:
        """True: the work the event marks has completed."""
        return True

    def synchronize(self) -> None:
        """Waits for the event: a CPU event is already complete."""

    def wait(self, stream=None) -> None:
        """Makes ``stream``'s later work wait for the event: nothing to wait for on the CPU."""

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between two recorded timing events; CPU events are never recorded."""
        if not (self._enable_timing and getattr(end_event, "_enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def __repr__(self) -> str:
        return (
            f"flambeau.Event device_type=cpu, device_index=-1, "
            f"event_flag={int(self._enable_timing)}, event_id=0"
        )
