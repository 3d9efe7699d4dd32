"""What ``flambeau.cuda`` has without a CUDA backend, as PyTorch's CPU build has it.

PyTorch built without CUDA still defines every name of ``torch.cuda``: classes exist
(so ``isinstance`` checks and annotations work) and refuse to be constructed; context
managers that name no device do nothing; calls that need a device assert that CUDA
was built. A program that only mentions CUDA behind ``is_available()`` therefore runs.
"""

from __future__ import annotations

import collections

from flambeau import _device_facade as _f

NO_BACKEND = "no CUDA backend is installed (install flambeau-tensor-cuda)"


def _refusing_class(name: str, message: str) -> type:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"flambeau.cuda.{name} {message}: {NO_BACKEND}")

    return type(name, (), {"__init__": __init__, "__module__": __name__.rsplit(".", 1)[0]})


Stream = _refusing_class("Stream", "requires CUDA support")
ExternalStream = _refusing_class("ExternalStream", "requires CUDA support")
Event = _refusing_class("Event", "requires CUDA support")
CUDAGraph = _refusing_class("CUDAGraph", "requires CUDA support")


def _index(device) -> int:
    """A device's index, -1 for None; a device of another type is a ValueError."""
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    import flambeau

    device = flambeau.device(device)
    if device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return -1 if device.index is None else device.index


def _needs_cuda(what: str) -> RuntimeError:
    return RuntimeError(f"{what} needs a CUDA device: {NO_BACKEND}")


def set_device(device) -> None:
    """Without a backend: a negative index (or None) does nothing; any device raises."""
    if _index(device) >= 0:
        raise _needs_cuda("flambeau.cuda.set_device()")


class device:
    """Without a backend: a context that changes nothing for None or a negative index,
    and raises entering any CUDA device."""

    def __init__(self, device):
        self.idx = _index(device)

    def __enter__(self):
        if self.idx >= 0:
            raise _needs_cuda(f"flambeau.cuda.device({self.idx})")

    def __exit__(self, *exc):
        return False


class device_of(device):
    """Without a backend: the device of a CPU tensor changes nothing."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class StreamContext:
    """Without a backend: ``stream(None)`` changes nothing; no stream can exist."""

    def __init__(self, stream):
        if stream is not None:
            raise _needs_cuda("flambeau.cuda.StreamContext")
        self.stream = None

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream) -> StreamContext:
    """Without a backend: ``with flambeau.cuda.stream(None):`` changes nothing."""
    return StreamContext(stream)


class graph:
    """Without a backend: capturing a CUDA graph needs a device."""

    def __init__(self, cuda_graph, *args, **kwargs):
        raise _needs_cuda("flambeau.cuda.graph")


def set_stream(stream) -> None:
    """Without a backend: there is no stream to make current; does nothing."""


def no_memory_summary(device=None, abbreviated: bool = False) -> str:
    """Without a backend: no CUDA memory to report."""
    return "No CUDA memory is in use: no CUDA backend is installed.\n"


def no_snapshot(*args, **kwargs) -> list:
    """Without a backend: no segments."""
    return []


def no_gencode_flags() -> str:
    """Without a backend: no architectures were compiled for."""
    return ""


def nothing_for(device=None) -> None:
    """Without a backend: no counters to reset."""


def no_nested_stats(device=None) -> dict:
    """Without a backend: no allocator statistics."""
    return {}


def no_host_stats() -> collections.OrderedDict:
    """Without a backend: no pinned host memory."""
    return collections.OrderedDict()


# Names a CPU program may touch unconditionally: they answer as PyTorch's CPU build does
# (or, where it fails by accident of a missing internal, as a build without a device
# reasonably would: counters to reset do nothing, a summary says nothing is in use).
ANSWERS = {
    **_f.CUDA_LIKE,
    "Stream": Stream,
    "ExternalStream": ExternalStream,
    "Event": Event,
    "CUDAGraph": CUDAGraph,
    "StreamContext": StreamContext,
    "device": device,
    "device_of": device_of,
    "graph": graph,
    "set_device": set_device,
    "set_stream": set_stream,
    "stream": stream,
    "is_current_stream_capturing": _f.false,
    "memory_summary": no_memory_summary,
    "memory_snapshot": no_snapshot,
    "memory_stats_as_nested_dict": no_nested_stats,
    "host_memory_stats": no_host_stats,
    "get_gencode_flags": no_gencode_flags,
    "reset_peak_memory_stats": nothing_for,
    "reset_max_memory_allocated": nothing_for,
    "reset_max_memory_cached": nothing_for,
    "reset_accumulated_memory_stats": nothing_for,
    "memory_cached": _f.no_bytes,
    "max_memory_cached": _f.no_bytes,
}

# PyTorch's CPU build asserts it was compiled with CUDA before these.
REFUSED = _f.refusals(
    AssertionError,
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "can_device_access_peer",
    "current_blas_handle",
    "current_device",
    "current_stream",
    "default_stream",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_per_process_memory_fraction",
    "get_rng_state",
    "get_sync_debug_mode",
    "init",
    "initial_seed",
    "ipc_collect",
    "mem_get_info",
    "set_per_process_memory_fraction",
    "set_sync_debug_mode",
    "synchronize",
)
