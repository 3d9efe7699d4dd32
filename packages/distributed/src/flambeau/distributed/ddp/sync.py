"""Broadcasting a list of tensors from one rank in few collectives (parameters and
buffers at DDP's construction, buffers before each forward)."""

from __future__ import annotations

import numpy as np

import flambeau

from .. import collectives
from .._buffers import as_bytes, nbytes

_CHUNK_BYTES = 64 << 20


def broadcast_coalesced(tensors, src: int, pg) -> None:
    """Make `tensors` on every rank equal to those of rank `src` (a global rank)."""
    tensors = [t for t in tensors if t.numel()]
    chunk: list = []
    size = 0
    for t in tensors:
        chunk.append(t)
        size += nbytes(t)
        if size >= _CHUNK_BYTES:
            _broadcast_chunk(chunk, src, pg)
            chunk, size = [], 0
    if chunk:
        _broadcast_chunk(chunk, src, pg)


def _broadcast_chunk(tensors, src: int, pg) -> None:
    flat = np.concatenate([as_bytes(t.detach().contiguous()) for t in tensors])
    carrier = flambeau.from_numpy(flat)
    collectives.broadcast(carrier, src, group=pg)
    if pg.global_rank_of_self == src:
        return
    offset = 0
    with flambeau.no_grad():
        for t in tensors:
            n = nbytes(t)
            t.copy_(carrier[offset : offset + n].view(t.dtype).reshape(tuple(t.shape)))
            offset += n
