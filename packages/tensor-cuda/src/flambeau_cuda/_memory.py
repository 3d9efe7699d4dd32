"""The caching allocator's counters and controls, as ``torch.cuda``'s memory functions.

Before CUDA is initialized there is nothing to report: the counters are 0 and the
statistics empty, without touching a driver.
"""

from __future__ import annotations

import collections

from flambeau_cuda._devices import _get_device_index
from flambeau_cuda._init_state import _C, _lazy_init, is_initialized


def _index(device) -> int:
    return _get_device_index(device, optional=True)


def memory_stats(device=None) -> collections.OrderedDict:
    """The caching allocator's statistics for a device, as PyTorch names them
    (``"allocated_bytes.all.current"``, ``"reserved_bytes.large_pool.peak"``,
    ``"num_ooms"``, ...), sorted by name; empty before CUDA is initialized.

    >>> import flambeau
    >>> stats = flambeau.cuda.memory_stats()
    >>> len(stats) == 0 or "allocated_bytes.all.current" in stats
    True
    """
    if not is_initialized():
        return collections.OrderedDict()
    stats = _C._memory_stats(_index(device))
    return collections.OrderedDict(sorted(stats.items()))


def _stat(device, key: str) -> int:
    return int(memory_stats(device).get(key, 0))


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on a device (blocks rounded as the allocator rounds them).

    >>> import flambeau
    >>> flambeau.cuda.memory_allocated() >= 0
    True
    """
    return _stat(device, "allocated_bytes.all.current")


def max_memory_allocated(device=None) -> int:
    """The peak of ``memory_allocated`` since the start or ``reset_peak_memory_stats``.

    >>> import flambeau
    >>> flambeau.cuda.max_memory_allocated() >= flambeau.cuda.memory_allocated()
    True
    """
    return _stat(device, "allocated_bytes.all.peak")


def memory_reserved(device=None) -> int:
    """Bytes the caching allocator holds from the device (live and cached blocks).

    >>> import flambeau
    >>> flambeau.cuda.memory_reserved() >= flambeau.cuda.memory_allocated()
    True
    """
    return _stat(device, "reserved_bytes.all.current")


def max_memory_reserved(device=None) -> int:
    """The peak of ``memory_reserved`` since the start or ``reset_peak_memory_stats``.

    >>> import flambeau
    >>> flambeau.cuda.max_memory_reserved() >= flambeau.cuda.memory_reserved()
    True
    """
    return _stat(device, "reserved_bytes.all.peak")


def reset_peak_memory_stats(device=None) -> None:
    """Resets the peaks of the allocator's statistics to their current values.

    >>> import flambeau
    >>> flambeau.cuda.reset_peak_memory_stats()
    """
    if is_initialized():
        _C._reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device=None) -> None:
    """Resets the allocator's accumulated counts (allocated/freed totals, retries, OOMs).

    >>> import flambeau
    >>> flambeau.cuda.reset_accumulated_memory_stats()
    """
    if is_initialized():
        _C._reset_accumulated_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns every cached, unused block to the device (and cached pinned host memory).

    >>> import flambeau
    >>> flambeau.cuda.empty_cache()
    """
    if is_initialized():
        _C._empty_cache()


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    """Caps what the allocator reserves on a device at ``fraction`` of its memory.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     flambeau.cuda.set_per_process_memory_fraction(1.0)
    """
    _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._set_memory_fraction(fraction, _index(device))


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of a device as the driver reports them (cudaMemGetInfo).

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     free, total = flambeau.cuda.mem_get_info()
    ...     assert 0 <= free <= total
    """
    _lazy_init()
    return tuple(_C._mem_get_info(_index(device)))


def memory_snapshot() -> list:
    """Every segment the allocator holds, on every device, with its blocks: dicts with
    ``device``, ``address``, ``total_size``, ``allocated_size``, ``active_size``,
    ``requested_size``, ``stream``, ``segment_type``, ``is_expandable`` and ``blocks``
    (``address``, ``size``, ``requested_size``, ``state``).

    >>> import flambeau
    >>> isinstance(flambeau.cuda.memory_snapshot(), list)
    True
    """
    return list(_C._memory_snapshot()) if is_initialized() else []


def _format_size(n: int) -> str:
    for unit in ("B  ", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:6d} {unit}" if unit == "B  " else f"{n:6.2f} {unit}"
        n /= 1024
    return str(n)


_SUMMARY_ROWS = [
    ("Allocated memory", "allocated_bytes", True),
    ("Active memory", "active_bytes", True),
    ("Requested memory", "requested_bytes", True),
    ("Reserved memory", "reserved_bytes", True),
    ("Non-releasable memory", "inactive_split_bytes", True),
    ("Allocations", "allocation", False),
    ("Active allocs", "active", False),
    ("Reserved segments", "segment", False),
    ("Non-releasable allocs", "inactive_split", False),
]


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A printable table of the allocator's statistics for a device.

    Each row gives the current value, the peak, and the totals allocated and freed;
    unless ``abbreviated``, split by pool (small blocks under 1 MiB, large ones).

    >>> import flambeau
    >>> "Allocated memory" in flambeau.cuda.memory_summary()
    True
    """
    stats = memory_stats(device)
    index = _index(device) if is_initialized() else 0
    pools = ["all"] if abbreviated else ["all", "large_pool", "small_pool"]
    width = 75
    lines = [
        "=" * width,
        f" flambeau CUDA memory summary, device ID {index:<3d}| "
        f"OOMs: {stats.get('num_ooms', 0):<5d}| retries: {stats.get('num_alloc_retries', 0)}",
        "-" * width,
        f" {'Metric':<24s}| {'Cur Usage':>11s} | {'Peak Usage':>11s} | "
        f"{'Tot Alloc':>11s} | {'Tot Freed':>11s}",
        "-" * width,
    ]
    for title, key, is_bytes in _SUMMARY_ROWS:
        for pool in pools:
            label = title if pool == "all" else f"  from {pool.replace('_pool', '')} pool"
            values = [
                stats.get(f"{key}.{pool}.{f}", 0) for f in ("current", "peak", "allocated", "freed")
            ]
            cells = [_format_size(v) if is_bytes else f"{v:>10d}" for v in values]
            lines.append(f" {label:<24s}| " + " | ".join(f"{c:>11s}" for c in cells))
        lines.append("-" * width)
    lines.append(
        f" Oversize allocations: {stats.get('oversize_allocations.current', 0)}   "
        f"Oversize segments: {stats.get('oversize_segments.current', 0)}"
    )
    lines.append("=" * width)
    return "\n".join(lines) + "\n"
