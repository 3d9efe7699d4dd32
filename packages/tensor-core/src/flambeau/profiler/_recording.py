"""One run of the recorder (start to stop) and the ranges a program marks in it."""

from __future__ import annotations

import contextlib

from flambeau import _C
from flambeau.profiler._events import EventList, build_events

__all__ = ["Recording", "record_function"]


class Recording:
    """Starts the recorder with a profile's options and, when stopped, turns what it
    recorded into an EventList (times in microseconds from the start)."""

    def __init__(self, *, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False):  # fmt: skip
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.start_ns = 0

    def start(self) -> None:
        # Counting flops reads the input shapes, so with_flops records them too.
        _C._profiler_start(
            record_shapes=self.record_shapes or self.with_flops,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
        )
        self.start_ns = _C._profiler_now_ns()

    def stop(self) -> EventList:
        _C._profiler_stop()
        events = build_events(_C._profiler_collect(), with_flops=self.with_flops,
                              start_ns=self.start_ns)  # fmt: skip
        if not self.record_shapes:
            for e in events:
                e.input_shapes, e.concrete_inputs = [], []
        return EventList(events, profile_memory=self.profile_memory, with_flops=self.with_flops)

    def discard(self) -> None:
        _C._profiler_stop()
        _C._profiler_collect()


class record_function(contextlib.ContextDecorator):
    """Marks a range of the program with a name, as a context manager or a decorator; in
    an active profile it becomes an event enclosing the operators run inside it. Outside
    a profile it costs next to nothing.

    >>> import flambeau.profiler as profiler
    >>> with profiler.profile() as prof:
    ...     with profiler.record_function("forward"):
    ...         y = flambeau.ones(2) * 3
    >>> [e.name for e in prof.events()]
    ['forward', 'aten::ones', 'aten::mul']
    """

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._handles: list[int] = []  # one per entry: a decorated function may recurse

    def __enter__(self):
        self._handles.append(_C._profiler_range_begin(self.name))
        return self

    def __exit__(self, *exc) -> bool:
        _C._profiler_range_end(self._handles.pop())
        return False

    def _call_end_callbacks_on_future(self, fut):
        """Ends the range when fut completes (PyTorch's hook for asynchronous work);
        returns a future with fut's value."""
        if not self._handles:
            raise RuntimeError("_call_end_callbacks_on_future: the range has not been entered")
        handle, self._handles[-1] = self._handles[-1], 0  # __exit__ then ends nothing

        def finish(done):
            _C._profiler_range_end(handle)
            return done.value()

        return fut.then(finish)
