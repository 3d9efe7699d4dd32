"""Streams and events, as ``torch.cuda.Stream`` and ``torch.cuda.Event``.

Streams come from a per-device pool (32 per priority, created on first use and never
destroyed, as PyTorch's); each thread has a current stream per device, the default
(legacy) stream until set. Kernels and copies run on the current stream.
"""

from __future__ import annotations

import flambeau
from flambeau_cuda._devices import _get_device_index, current_device
from flambeau_cuda._init_state import _C, _lazy_init


class Stream:
    """A CUDA stream: an in-order queue of work on one device.

    ``priority``: lower numbers are more urgent (see ``priority_range``); it is clamped
    to the device's range.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     s = flambeau.cuda.Stream()
    ...     with flambeau.cuda.stream(s):
    ...         y = flambeau.ones(4, device="cuda") * 2
    ...     s.synchronize()
    """

    def __init__(self, device=None, priority: int = 0, **kwargs):
        _lazy_init()
        stream_id = kwargs.get("stream_id")
        self.device_index = _get_device_index(device, optional=True)
        if stream_id is not None:  # wrapping an existing handle (current_stream, ...)
            self.cuda_stream = int(stream_id)
        else:
            self.cuda_stream = int(_C._stream_create(self.device_index, int(priority)))

    @classmethod
    def _wrap(cls, device_index: int, handle: int) -> Stream:
        s = cls.__new__(cls)
        s.device_index, s.cuda_stream = device_index, handle
        return s

    @staticmethod
    def priority_range() -> tuple[int, int]:
        """(least urgent, most urgent) priorities of the current device."""
        return tuple(_C._stream_priority_range())

    @property
    def device(self) -> flambeau.device:
        return flambeau.device("cuda", self.device_index)

    @property
    def device_type(self) -> str:
        return "cuda"

    @property
    def priority(self) -> int:
        return int(_C._stream_priority(self.cuda_stream))

    def query(self) -> bool:
        """Whether all work queued on the stream has completed."""
        return bool(_C._stream_query(self.cuda_stream))

    def synchronize(self) -> None:
        """Waits for all work queued on the stream."""
        _C._stream_synchronize(self.cuda_stream)

    def wait_event(self, event: Event) -> None:
        """Makes later work on this stream wait for ``event``."""
        if event.cuda_event:
            _C._stream_wait_event(self.cuda_stream, event.cuda_event)

    def wait_stream(self, stream: Stream) -> None:
        """Makes later work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Records ``event`` (a new one by default) on this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self):
        self._context = stream(self)
        self._context.__enter__()
        return self

    def __exit__(self, *exc):
        self._context.__exit__(*exc)
        return False

    def __eq__(self, other):
        return (
            isinstance(other, Stream)
            and self.cuda_stream == other.cuda_stream
            and self.device_index == other.device_index
        )

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<flambeau.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream, to wait on or to time work between two.

    Created on its first ``record`` on the device of that stream.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     start = flambeau.cuda.Event(enable_timing=True)
    ...     end = flambeau.cuda.Event(enable_timing=True)
    ...     start.record()
    ...     y = flambeau.ones(1024, device="cuda") + 1
    ...     end.record()
    ...     end.synchronize()
    ...     assert start.elapsed_time(end) >= 0
    """

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self.cuda_event = 0
        self._device_index = -1

    def _create(self, device_index: int) -> None:
        self.cuda_event = int(
            _C._event_create(device_index, self.enable_timing, self.blocking, self.interprocess)
        )
        self._device_index = device_index

    @property
    def device(self):
        return None if self._device_index < 0 else flambeau.device("cuda", self._device_index)

    def record(self, stream: Stream | None = None) -> None:
        """Records the event on ``stream`` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        if not self.cuda_event:
            self._create(stream.device_index)
        elif stream.device_index != self._device_index:
            raise RuntimeError(
                f"Event device {self._device_index} does not match recording stream's device "
                f"{stream.device_index}."
            )
        _C._event_record(self.cuda_event, stream.cuda_stream)

    def wait(self, stream: Stream | None = None) -> None:
        """Makes later work on ``stream`` (default: the current stream) wait for the event."""
        if stream is None:
            stream = current_stream()
        stream.wait_event(self)

    def query(self) -> bool:
        """Whether the work before the event has completed (True if never recorded)."""
        return True if not self.cuda_event else bool(_C._event_query(self.cuda_event))

    def synchronize(self) -> None:
        """Waits for the work before the event."""
        if self.cuda_event:
            _C._event_synchronize(self.cuda_event)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, timing on)."""
        if not self.cuda_event or not end_event.cuda_event:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return float(_C._event_elapsed_time(self.cuda_event, end_event.cuda_event))

    def __del__(self):
        if getattr(self, "cuda_event", 0):
            try:
                _C._event_destroy(self.cuda_event)
            except Exception:  # interpreter shutdown
                pass

    def __repr__(self):
        handle = f"{self.cuda_event:#x}" if self.cuda_event else "uninitialized"
        return f"<flambeau.cuda.Event {handle}>"


def current_stream(device=None) -> Stream:
    """The current stream of a device (default: the current device) for this thread.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     assert flambeau.cuda.current_stream() == flambeau.cuda.default_stream()
    """
    _lazy_init()
    index = _get_device_index(device, optional=True)
    return Stream._wrap(index, int(_C._current_stream(index)))


def default_stream(device=None) -> Stream:
    """The default (legacy) stream of a device.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     assert flambeau.cuda.default_stream().cuda_stream == 0
    """
    _lazy_init()
    return Stream._wrap(_get_device_index(device, optional=True), 0)


def set_stream(stream: Stream) -> None:
    """Makes ``stream`` the current stream of its device for this thread (None: no change).

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     flambeau.cuda.set_stream(flambeau.cuda.default_stream())
    """
    if stream is None:
        return
    _C._set_current_stream(stream.device_index, stream.cuda_stream)


class StreamContext:
    """Context manager that makes ``stream`` current (and its device, if another one).

    >>> import flambeau
    >>> with flambeau.cuda.StreamContext(None):  # None: changes nothing
    ...     pass
    """

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self.idx = -1 if stream is None else stream.device_index
        self.src_prev_stream = None
        self.dst_prev_stream = None

    def __enter__(self):
        if self.stream is None:
            return
        cur = current_device()
        self.src_prev_stream = current_stream(cur)
        if cur != self.idx:  # the stream's device becomes current too
            from flambeau_cuda._devices import device

            self._device = device(self.idx)
            self._device.__enter__()
            self.dst_prev_stream = current_stream(self.idx)
        set_stream(self.stream)

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        if self.dst_prev_stream is not None:
            set_stream(self.dst_prev_stream)
            self._device.__exit__(*exc)
        set_stream(self.src_prev_stream)
        return False


def stream(stream: Stream | None) -> StreamContext:
    """Context manager selecting ``stream`` for the kernels and copies inside it.

    >>> import flambeau
    >>> with flambeau.cuda.stream(None):  # None: changes nothing
    ...     pass
    """
    return StreamContext(stream)
