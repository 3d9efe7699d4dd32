"""Chrome trace export: the events as complete ("X") events of the Trace Event Format,
which chrome://tracing, Perfetto and TensorBoard's profiler plugin read."""

from __future__ import annotations

import json
import os
import threading

__all__ = ["write_chrome_trace"]


def _category(event) -> str:
    return "user_annotation" if event.is_user_annotation else "cpu_op"


def trace_document(events, base_time_ns: int = 0, metadata=None) -> dict:
    """The trace as a JSON-ready dict; event times are microseconds from the profile's
    start, placed at base_time_ns on the steady clock."""
    import socket

    pid = os.getpid()
    threads = sorted({e.thread for e in events})
    trace = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    main = threading.main_thread().native_id
    for tid in threads:
        label = "python" if tid == main else "worker"
        trace.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"thread {tid} ({label})"},
            }
        )
    for e in events:
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if any(e.concrete_inputs):
            args["Concrete Inputs"] = e.concrete_inputs
        if e.cpu_memory_usage:
            args["CPU Memory Usage"] = e.cpu_memory_usage
        if e.flops:
            args["flops"] = e.flops
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        trace.append(
            {
                "ph": "X",
                "cat": _category(e),
                "name": e.name,
                "pid": pid,
                "tid": e.thread,
                "ts": e.time_range.start + base_time_ns / 1000.0,
                "dur": e.time_range.elapsed_us(),
                "args": args,
            }
        )
    return {
        **(metadata or {}),
        "schemaVersion": 1,
        "deviceProperties": [],
        "host_name": socket.gethostname(),
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base_time_ns,
        "traceEvents": trace,
        "traceName": "flambeau.profiler",
    }


def write_chrome_trace(events, path, base_time_ns: int = 0, metadata=None) -> None:
    """Writes the trace to path (gzip-compressed when path ends in .gz)."""
    text = json.dumps(trace_document(events, base_time_ns, metadata))
    path = os.fspath(path)
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)
