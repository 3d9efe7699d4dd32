"""The events of a profile, as PyTorch's torch.autograd.profiler_util presents them.

The recorder (csrc/python/profiler.cpp) hands over flat records; ``build_events`` turns
them into ``FunctionEvent`` objects nested by time on each thread (an event's parent is
the innermost event on its thread that encloses it), which gives every event its self
time and self memory. ``EventList.key_averages`` groups them into ``FunctionEventAvg``
rows; ``EventList.table`` and ``export_chrome_trace`` present them (_table.py, _trace.py).
Times are in microseconds, as in PyTorch.
"""

from __future__ import annotations

from collections import defaultdict

from flambeau.profiler._flops import flops_of
from flambeau.profiler._types import DeviceType

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]

# The recorder's kinds (profiler.h EventKind).
_OPERATOR, _USER_RANGE, _BACKWARD_NODE = 0, 1, 2


class Interval:
    """A span of time in microseconds.

    >>> from flambeau.profiler._events import Interval
    >>> Interval(2.0, 5.0).elapsed_us()
    3.0
    """

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        """end - start.

        >>> from flambeau.profiler._events import Interval
        >>> Interval(0.0, 1.5).elapsed_us()
        1.5
        """
        return self.end - self.start


class _Times:
    """The derived times and memory shared by an event and an average of events."""

    @property
    def cpu_time(self) -> float:
        """The average total time per call, in microseconds."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        """The average device time per call: 0 (the profiler records the CPU)."""
        return 0.0

    @property
    def device_time_total(self) -> float:
        return 0.0

    @property
    def self_device_time_total(self) -> float:
        return 0.0

    cuda_time = device_time
    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total
    device_memory_usage = 0
    self_device_memory_usage = 0
    cuda_memory_usage = 0
    self_cuda_memory_usage = 0


class FunctionEvent(_Times):
    """One recorded operator call, autograd node or ``record_function`` range.

    >>> import flambeau.profiler as profiler
    >>> with profiler.profile() as prof:
    ...     y = flambeau.ones(3).add(1)
    >>> event = next(e for e in prof.events() if e.name == "aten::add")
    >>> event.count, event.cpu_time_total >= 0
    (1, True)
    """

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        *,
        input_shapes=None,
        concrete_inputs=None,
        stack=None,
        cpu_memory_usage: int = 0,
        is_user_annotation: bool = False,
        flops: int = 0,
    ):
        self.id = id
        self.node_id = -1
        self.name = name
        self.trace_name = name
        self.overload_name = ""
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.concrete_inputs = concrete_inputs if concrete_inputs is not None else []
        self.kwinputs = {}
        self.stack = stack if stack is not None else []
        self.scope = 0
        self.cpu_memory_usage = cpu_memory_usage
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.kernels: list = []
        self.count = 1
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.sequence_nr = -1
        self.use_device = None
        self.device_type = DeviceType.CPU
        self.device_index = 0
        self.device_resource_id = thread
        self.is_user_annotation = is_user_annotation
        self.flops = flops
        self.metadata_json = None
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    @property
    def key(self) -> str:
        """The name the averages group by."""
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """Wall time from start to end, in microseconds."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        """Time not spent in child events, in microseconds."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        """Bytes allocated (net) outside child events."""
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def append_cpu_child(self, child: FunctionEvent) -> None:
        """Adds a nested event."""
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        """Sets the enclosing event."""
        self.cpu_parent = parent

    def append_kernel(self, name, device, duration) -> None:
        """Device kernels: none are recorded on the CPU."""
        self.kernels.append((name, device, duration))

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={self.cpu_time_total:.3f}us self_cpu_time={self.self_cpu_time_total:.3f}us "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>"
        )


class FunctionEventAvg(_Times):
    """The sum of several events with the same key (``EventList.key_averages``).

    >>> import flambeau.profiler as profiler
    >>> with profiler.profile() as prof:
    ...     for _ in range(3):
    ...         y = flambeau.ones(2) * 2
    >>> row = next(r for r in prof.key_averages() if r.key == "aten::mul")
    >>> row.count
    3
    """

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other) -> FunctionEventAvg:
        """Adds an event (or an average) to this one; returns self.

        >>> flambeau.profiler.FunctionEventAvg().count
        0
        """
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_user_annotation = other.is_user_annotation
        elif other.key != self.key:
            raise ValueError(f"cannot add an event of key {other.key!r} to {self.key!r}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
            f"cpu_time={self.cpu_time_total:.3f}us input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


class EventList(list):
    """A list of events (or of averages), with PyTorch's summaries and exports.

    >>> import flambeau.profiler as profiler
    >>> with profiler.profile() as prof:
    ...     y = flambeau.ones(4).sum()
    >>> isinstance(prof.events(), profiler.EventList)
    True
    """

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self time, in microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ) -> str:
        """The events as a text table, sorted by an attribute (descending), e.g.
        ``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"cpu_memory_usage"``.

        >>> import flambeau.profiler as profiler
        >>> with profiler.profile() as prof:
        ...     y = flambeau.ones(4).sum()
        >>> "aten::sum" in prof.key_averages().table(sort_by="cpu_time_total")
        True
        """
        from flambeau.profiler._table import format_table

        return format_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )

    def export_chrome_trace(self, path) -> None:
        """Writes the events as a Chrome trace (chrome://tracing, Perfetto) to path.

        >>> import os, tempfile, flambeau.profiler as profiler
        >>> with profiler.profile() as prof:
        ...     y = flambeau.ones(4) + 1
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> prof.events().export_chrome_trace(path)
        >>> os.path.getsize(path) > 0
        True
        """
        from flambeau.profiler._trace import write_chrome_trace

        write_chrome_trace(self, path)

    def supported_export_stacks_metrics(self) -> list[str]:
        """The metrics ``export_stacks`` can write.

        >>> flambeau.profiler.EventList().supported_export_stacks_metrics()
        ['self_cpu_time_total']
        """
        return ["self_cpu_time_total"]

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Writes each event's Python stack with its self time, one line per stack in the
        folded format that flame-graph tools read (needs ``with_stack=True``).

        >>> import os, tempfile, flambeau.profiler as profiler
        >>> with profiler.profile(with_stack=True) as prof:
        ...     y = flambeau.ones(4) + 1
        >>> path = os.path.join(tempfile.mkdtemp(), "stacks.txt")
        >>> prof.export_stacks(path)
        >>> os.path.exists(path)
        True
        """
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError(
                f"export_stacks: metric {metric!r} is not one of "
                f"{self.supported_export_stacks_metrics()}"
            )
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    folded = ";".join(reversed([s.replace(";", ",") for s in e.stack]))
                    f.write(f"{folded};{e.name} {int(getattr(e, metric))}\n")

    def key_averages(
        self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False
    ) -> EventList:
        """The events grouped by name (and input shapes, the top stack frames or the
        overload), each group summed into a ``FunctionEventAvg``.

        >>> import flambeau.profiler as profiler
        >>> with profiler.profile(record_shapes=True) as prof:
        ...     a = flambeau.ones(2) + 1
        ...     b = flambeau.ones(3) + 1
        >>> len([r for r in prof.key_averages(group_by_input_shape=True)
        ...      if r.key == "aten::add"])
        2
        """
        groups: dict[tuple, FunctionEventAvg] = defaultdict(FunctionEventAvg)
        for e in self:
            key = (e.key, e.node_id, e.device_type, e.is_legacy, e.is_user_annotation)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            if group_by_overload_name:
                key += (e.overload_name,)
            groups[key].add(e)
        # As in PyTorch, a row shows shapes or a stack only when they are part of its key.
        for row in groups.values():
            if not group_by_input_shapes:
                row.input_shapes = None
            if group_by_stack_n == 0:
                row.stack = None
        return EventList(
            groups.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one row, keyed "Total".

        >>> flambeau.profiler.EventList().total_average().key
        'Total'
        """
        total = FunctionEventAvg()
        for e in self:
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.self_cpu_memory_usage += e.self_cpu_memory_usage
            total.count += e.count
            total.flops += e.flops
        total.key = "Total"
        return total


def _shown_frame(frame: str) -> bool:
    """Frames of the profiler's own Python code are left out of stacks."""
    return "/flambeau/profiler/" not in frame


def build_events(records, *, with_flops: bool = False, start_ns: int = 0) -> EventList:
    """FunctionEvents from the recorder's records, nested per thread and sorted by start.

    A record is (name, kind, thread, start_ns, end_ns, memory_delta, shapes, concrete,
    stack); times become microseconds from start_ns.
    """
    events = []
    for i, (name, kind, thread, t0, t1, memory, shapes, concrete, stack) in enumerate(records):
        event = FunctionEvent(
            i + 1,
            name,
            thread,
            (t0 - start_ns) / 1000.0,
            (t1 - start_ns) / 1000.0,
            input_shapes=[list(s) for s in shapes],
            concrete_inputs=list(concrete),
            stack=[f for f in stack if _shown_frame(f)],
            cpu_memory_usage=memory,
            is_user_annotation=kind == _USER_RANGE,
            flops=flops_of(name, shapes, concrete) if with_flops and kind == _OPERATOR else 0,
        )
        events.append(event)
    # Parents enclose their children: sorted by start (the longer first on a tie), the
    # open events of a thread form a stack.
    events.sort(key=lambda e: (e.thread, e.time_range.start, -e.time_range.end))
    open_events: list[FunctionEvent] = []
    current_thread = None
    for e in events:
        if e.thread != current_thread:
            open_events, current_thread = [], e.thread
        while open_events and open_events[-1].time_range.end <= e.time_range.start:
            open_events.pop()
        if open_events and e.time_range.end <= open_events[-1].time_range.end:
            e.set_cpu_parent(open_events[-1])
            open_events[-1].append_cpu_child(e)
        open_events.append(e)
    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    for n, e in enumerate(events):
        e.id = n + 1
    return events
