"""EventList.table: events or averages as the text table PyTorch's profiler prints."""

from __future__ import annotations

__all__ = ["format_table"]

_KB, _MB, _GB = 1024, 1024**2, 1024**3

# sort_by names PyTorch accepts for the device columns: all zero on the CPU.
_DEVICE_SORT_KEYS = {
    "cuda_time": "device_time",
    "cuda_time_total": "device_time_total",
    "self_cuda_time_total": "self_device_time_total",
    "cuda_memory_usage": "device_memory_usage",
    "self_cuda_memory_usage": "self_device_memory_usage",
}


def format_time(us: float, unit: str | None = None) -> str:
    """Microseconds as PyTorch prints them: 1.500ms, 12.000us, 2.100s."""
    if unit == "s" or (unit is None and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """Bytes in B, KB, MB or GB (powers of 1024)."""
    for size, unit in ((_GB, "GB"), (_MB, "MB"), (_KB, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _flops_scale(events) -> tuple[float, str]:
    """The unit that keeps the largest count readable."""
    top = max((e.flops for e in events), default=0)
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if top >= scale:
            return scale, prefix
    return 1.0, ""


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def format_table(
    events,
    *,
    sort_by=None,
    row_limit=100,
    max_src_column_width=75,
    max_name_column_width=55,
    max_shapes_column_width=80,
    header=None,
    top_level_events_only=False,
    time_unit=None,
    profile_memory=False,
    with_flops=False,
) -> str:
    rows = list(events)
    if not rows:
        return ""
    if top_level_events_only:
        rows = [e for e in rows if e.cpu_parent is None]
    if sort_by is not None:
        attribute = _DEVICE_SORT_KEYS.get(sort_by, sort_by)
        if not hasattr(rows[0], attribute):
            raise AttributeError(f"table(): cannot sort by {sort_by!r}: events have no such field")
        rows.sort(key=lambda e: getattr(e, attribute), reverse=True)
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    # Percentages are of the whole profile, whatever the rows shown.
    self_total = sum(e.self_cpu_time_total for e in events) or 1.0
    shapes = any(e.input_shapes for e in rows)
    stacks = any(e.stack for e in rows)
    flops = with_flops and any(e.flops for e in rows)

    name_width = min(max(len(str(e.key)) for e in rows) + 4, max_name_column_width)
    columns: list[tuple[str, int, callable]] = [
        ("Name", name_width, lambda e: _truncate(str(e.key), name_width)),
        ("Self CPU %", 12, lambda e: f"{e.self_cpu_time_total / self_total * 100:.2f}%"),
        ("Self CPU", 12, lambda e: format_time(e.self_cpu_time_total, time_unit)),
        ("CPU total %", 12, lambda e: f"{e.cpu_time_total / self_total * 100:.2f}%"),
        ("CPU total", 12, lambda e: format_time(e.cpu_time_total, time_unit)),
        ("CPU time avg", 12, lambda e: format_time(e.cpu_time, time_unit)),
    ]
    if profile_memory:
        columns += [
            ("CPU Mem", 12, lambda e: format_memory(e.cpu_memory_usage)),
            ("Self CPU Mem", 12, lambda e: format_memory(e.self_cpu_memory_usage)),
        ]
    columns.append(("# of Calls", 12, lambda e: str(e.count)))
    if shapes:
        shape_width = min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes_column_width)
        columns.append(
            ("Input Shapes", shape_width, lambda e: _truncate(str(e.input_shapes), shape_width))
        )
    if flops:
        scale, prefix = _flops_scale(rows)
        columns.append(
            (
                f"Total {prefix}FLOPs",
                12,
                lambda e: f"{e.flops / scale:.3f}" if e.flops else "--",
            )
        )
    if stacks:
        columns.append(
            (
                "Source Location",
                max_src_column_width,
                lambda e: _truncate(e.stack[0] if e.stack else "", max_src_column_width),
            )
        )

    widths = [max(w, len(title)) for title, w, _ in columns]
    rule = "  ".join("-" * w for w in widths) + "  "
    lines = []
    if header is not None:
        lines += ["=" * len(rule), header]
    lines.append(rule)
    lines.append("  ".join(t.rjust(w) for (t, _, _), w in zip(columns, widths)) + "  ")
    lines.append(rule)
    for e in rows:
        lines.append("  ".join(f(e).rjust(w) for (_, _, f), w in zip(columns, widths)) + "  ")
    lines.append(rule)
    lines.append(f"Self CPU time total: {format_time(self_total, time_unit)}")
    return "\n".join(lines) + "\n"
