"""torch.profiler.profile: the profiler a training loop drives step by step."""

from __future__ import annotations

import os
import time
import warnings

from flambeau.profiler._recording import Recording, record_function
from flambeau.profiler._results import ProfileResults, warn_unrecorded
from flambeau.profiler._schedule import ProfilerAction, _always_record
from flambeau.profiler._steps import KinetoStepTracker
from flambeau.profiler._types import ProfilerActivity

__all__ = ["profile", "supported_activities", "tensorboard_trace_handler"]

_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities() -> set:
    """The activities the profiler records: the CPU's operators.

    >>> flambeau.profiler.supported_activities()
    {<ProfilerActivity.CPU: 0>}
    """
    return {ProfilerActivity.CPU}


class profile(ProfileResults):
    """Records the operators a program runs, with their times (and on request input
    shapes, memory, Python stacks and flop counts), for tables and Chrome traces.

    Used as a context manager, or with ``start()``/``stop()``; with a ``schedule``, call
    ``step()`` once per iteration and ``on_trace_ready(prof)`` runs at the end of each
    recorded cycle. Only CPU activity is recorded.

    >>> import flambeau.profiler as profiler
    >>> with profiler.profile(record_shapes=True) as prof:
    ...     y = flambeau.ones(8, 8) @ flambeau.ones(8, 8)
    >>> row = next(r for r in prof.key_averages() if r.key == "aten::matmul")
    >>> row.count
    1
    """

    _not_recorded = (
        "nothing has been recorded yet: the profile must stop (or its schedule save a cycle) first"
    )

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback=None,
        post_processing_timeout_s: float | None = None,
    ):
        requested = set(activities) if activities else supported_activities()
        unrecorded = {a for a in requested if a not in supported_activities()}
        if use_cuda:
            unrecorded.add(ProfilerActivity.CUDA)
        warn_unrecorded(
            ", ".join(sorted(getattr(a, "name", str(a)) for a in unrecorded)),
            use_cuda=use_cuda is not None,
        )
        self.activities = requested
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None  # ProfilerStep#N ranges, as PyTorch
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._recording: Recording | None = None
        self._step_range: record_function | None = None
        self._metadata: dict[str, str] = {}

    # ---- running -------------------------------------------------------------------

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Begins profiling (at step 0 of the schedule)."""
        self._enter_action(None, self.current_action)
        self._begin_step_range()

    def stop(self) -> None:
        """Ends profiling; a recording in progress is saved (``on_trace_ready`` runs)."""
        self._end_step_range()
        self._enter_action(self.current_action, None)

    def step(self) -> None:
        """Marks the end of one iteration: the schedule moves on to the next step.

        >>> import flambeau.profiler as profiler
        >>> saved = []
        >>> s = profiler.schedule(wait=0, warmup=1, active=1, repeat=1)
        >>> with profiler.profile(schedule=s, on_trace_ready=saved.append) as prof:
        ...     for _ in range(3):
        ...         y = flambeau.ones(2) + 1
        ...         prof.step()
        >>> len(saved)
        1
        """
        self._end_step_range()
        previous = self.current_action
        KinetoStepTracker.increment_step("ProfilerStep")
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._enter_action(previous, self.current_action)
        self._begin_step_range()

    def _enter_action(self, previous, current) -> None:
        """Moves the recorder from one scheduled action to the next (None: not running).
        A warm-up step records and discards, so its first-call costs stay out of the
        recorded steps."""
        if previous in _RECORDING:
            if previous is ProfilerAction.RECORD and current in _RECORDING:
                return  # the same recording goes on
            if previous is ProfilerAction.RECORD and current is not None:
                warnings.warn(
                    f"Incorrect schedule: RECORD followed by {current.name}", stacklevel=3
                )
            self._save()
        elif previous is ProfilerAction.WARMUP:
            if current is ProfilerAction.WARMUP:
                return
            if current is ProfilerAction.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
            self._recording.discard()
            self._recording = None
        if current in (ProfilerAction.WARMUP, *_RECORDING):
            self._recording = Recording(
                record_shapes=self.record_shapes,
                profile_memory=self.profile_memory,
                with_stack=self.with_stack,
                with_flops=self.with_flops,
            )
            self._recording.start()

    def _save(self) -> None:
        self._events = self._recording.stop()
        self._start_ns = self._recording.start_ns
        self._recording = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _begin_step_range(self) -> None:
        if self.record_steps and self._recording is not None:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _end_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    # ---- results -------------------------------------------------------------------

    def add_metadata(self, key: str, value: str) -> None:
        """Adds a string to the trace's metadata."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """Adds a JSON value (given as text) to the trace's metadata."""
        import json

        self._metadata[key] = json.loads(value)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False):  # fmt: skip
    """An ``on_trace_ready`` that writes each saved recording into dir_name as
    ``<worker_name>.<time_ns>.pt.trace.json[.gz]``, where TensorBoard's profiler plugin
    finds it; worker_name defaults to ``<host>_<pid>``.

    >>> import os, tempfile, flambeau.profiler as profiler
    >>> folder = tempfile.mkdtemp()
    >>> with profiler.profile(on_trace_ready=profiler.tensorboard_trace_handler(folder)):
    ...     y = flambeau.ones(2) + 1
    >>> [f.endswith(".pt.trace.json") for f in os.listdir(folder)]
    [True]
    """

    def handler(prof) -> None:
        import socket

        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler
