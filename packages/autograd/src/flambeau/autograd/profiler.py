"""torch.autograd.profiler: the profiler's older interface, over flambeau.profiler's
recorder (the same events, tables and traces).

>>> with flambeau.autograd.profiler.profile() as prof:
...     y = flambeau.ones(3) * 2
>>> [e.name for e in prof.function_events]
['aten::ones', 'aten::mul']
"""

from __future__ import annotations

import flambeau
from flambeau.futures import Future
from flambeau.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from flambeau.profiler._recording import Recording, record_function
from flambeau.profiler._results import ProfileResults, warn_unrecorded
from flambeau.profiler._steps import KinetoStepTracker
from flambeau.profiler._types import DeviceType, ProfilerActivity, ProfilerState, kineto_available

__all__ = [
    "DeviceType",
    "EnforceUnique",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "Future",
    "KinetoStepTracker",
    "ProfilerActivity",
    "ProfilerState",
    "emit_itt",
    "emit_nvtx",
    "kineto_available",
    "profile",
    "record_function",
]


class profile(ProfileResults):
    """Records the operators run inside it (PyTorch's legacy autograd profiler); read
    the results from ``function_events``, ``key_averages()`` or ``table()`` after it
    exits. Only CPU activity is recorded.

    >>> with flambeau.autograd.profiler.profile(record_shapes=True) as prof:
    ...     y = flambeau.ones(2, 3).sum()
    >>> prof.function_events[-1].input_shapes[0]
    [2, 3]
    """

    _not_recorded = "Profiler didn't finish running"

    @property
    def function_events(self) -> EventList | None:
        """The recorded events (None until the profile exits)."""
        return self._events

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device=None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config=None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
        activity_filters=None,
    ):
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            use_device = "cuda"
        warn_unrecorded(use_device or "", use_cuda=use_cuda)
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        self.use_cpu = use_cpu
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.entered = False
        self._recording: Recording | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self.use_cpu:
            self._recording = Recording(
                record_shapes=self.record_shapes,
                profile_memory=self.profile_memory,
                with_stack=self.with_stack,
                with_flops=self.with_flops,
            )
            self._recording.start()
        return self

    def __exit__(self, *exc) -> bool:
        if not self.enabled:
            return False
        if self._recording is not None:
            self._events = self._recording.stop()
            self._start_ns = self._recording.start_ns
            self._recording = None
        else:
            self._events = EventList(profile_memory=self.profile_memory)
        return False

    def table(self, *args, **kwargs) -> str:
        """The events as a text table; the arguments are ``EventList.table``'s."""
        return self.events().table(*args, **kwargs)

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one row."""
        return self.events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the events' self times, in microseconds."""
        return self.events().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()


class emit_nvtx:
    """PyTorch's NVTX ranges for Nsight: they need CUDA, which flambeau's profiler does
    not drive; entering raises an error saying so.

    >>> with flambeau.autograd.profiler.emit_nvtx(enabled=False):
    ...     pass
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            if not flambeau.cuda.is_available():
                raise AssertionError("Torch not compiled with CUDA enabled")
            raise RuntimeError(
                "emit_nvtx: flambeau's profiler records CPU events only and cannot emit NVTX "
                "ranges; use flambeau.profiler.profile"
            )
        return self

    def __exit__(self, *exc) -> bool:
        return False


class emit_itt:
    """PyTorch's ITT ranges for Intel VTune: flambeau is not built with ITT; entering
    raises an error saying so.

    >>> with flambeau.autograd.profiler.emit_itt(enabled=False):
    ...     pass
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise RuntimeError(
                "emit_itt: flambeau is not built with ITT (Intel VTune) support; use "
                "flambeau.profiler.profile"
            )
        return self

    def __exit__(self, *exc) -> bool:
        return False


class EnforceUnique:
    """Raises if the same key is seen twice.

    >>> seen = flambeau.autograd.profiler.EnforceUnique()
    >>> seen.see("a", 1)
    >>> seen.see("a", 1)
    Traceback (most recent call last):
    ...
    RuntimeError: duplicate key: ('a', 1)
    """

    def __init__(self):
        self.seen = set()

    def see(self, *key) -> None:
        """Records key; RuntimeError if it was seen before."""
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)
