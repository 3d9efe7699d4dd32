"""The hooks the core calls on the CUDA plugin's module for host-side tensors and streams:
``Tensor.pin_memory()`` (a copy in page-locked memory from the caching host allocator, so
that copies to the device with ``non_blocking=True`` run asynchronously),
``Tensor.is_pinned()`` and ``Tensor.record_stream(stream)`` (the caching allocator keeps a
block used on another stream until that stream's queued work is done)."""

from __future__ import annotations

import numpy as np

import flambeau
from flambeau_cuda._init_state import _C


def pin_memory(tensor):
    """A contiguous copy of the CPU tensor `tensor` in page-locked host memory."""
    nbytes = tensor.numel() * tensor.element_size()
    if nbytes == 0:
        return flambeau.empty(tuple(tensor.shape), dtype=tensor.dtype)
    # The tensor holds the buffer, which gives the block back when the last view dies.
    raw = np.frombuffer(_C._pinned_buffer(nbytes), dtype=np.uint8)
    out = flambeau.from_numpy(raw).view(tensor.dtype).view(tuple(tensor.shape))
    return out.copy_(tensor)


def is_pinned(tensor) -> bool:
    """Whether the CPU tensor's memory is inside a live block of the pinned allocator."""
    return tensor.numel() > 0 and bool(_C._is_pinned(tensor.data_ptr()))


def record_stream(tensor, stream) -> None:
    """Keeps `tensor`'s device block from reuse until `stream`'s queued work is done."""
    if tensor.numel() == 0:
        return
    _C._record_stream(tensor.untyped_storage().data_ptr(), int(stream.cuda_stream))
