"""Which gradients travel together: DDP's bucket assignment.

Parameters go into buckets in reverse registration order, which approximates the order
backward produces their gradients, so the first bucket fills (and its all-reduce starts)
while backward still computes the earlier layers. After the first iteration the reducer
rebuilds the buckets once in the order the gradients really became ready. The first
bucket is kept small (1 MiB, PyTorch's _DEFAULT_FIRST_BUCKET_BYTES) so that
communication starts early; the others hold up to bucket_cap_mb. A bucket holds one
dtype.

A bucket may reduce its large gradients in place (`direct_min_bytes`, chosen by the
reducer): each is all-reduced on its own, with no copy into the flat buffer and back,
and only the smaller ones are packed into the flat buffer. The assignment of parameters
to buckets does not depend on it.
"""

from __future__ import annotations

import flambeau

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25


class Bucket:
    """Gradients of some parameters reduced together: one flat tensor holding the packed
    ones, and their views into it; the direct ones (at least `direct_min_bytes` each)
    are reduced where they are."""

    def __init__(
        self, index: int, members: list[tuple[int, object]], direct_min_bytes: int | None = None
    ):
        self.index = index
        self.members = members  # (parameter index, parameter)
        self.direct = [
            (i, p)
            for i, p in members
            if direct_min_bytes is not None and p.numel() * p.element_size() >= direct_min_bytes
        ]
        directs = {i for i, _ in self.direct}
        self.packed = [(i, p) for i, p in members if i not in directs]
        dtype = members[0][1].dtype
        self.shared = None  # (SharedBuffers, index) when the flat lives in node memory
        self.place(flambeau.zeros(sum(p.numel() for _, p in self.packed), dtype=dtype))
        self.nbytes = sum(p.numel() for _, p in members) * self.flat.element_size()
        self.reset()

    def place(self, flat) -> None:
        """Hold the packed gradients in `flat` (of this bucket's size and dtype)."""
        self.flat = flat
        self.views = {}
        offset = 0
        for i, p in self.packed:
            n = p.numel()
            self.views[i] = flat[offset : offset + n].view(tuple(p.shape))
            offset += n

    def reset(self) -> None:
        self.pending = len(self.members)
        self.launched = False
        self.work = None  # the flat buffer's reduction (None without packed members)
        self.direct_work: list = []  # (parameter index, Work, temporary or None)
        self.launched_at = None


def assign(
    params, bucket_cap_bytes: int, first_bucket_bytes: int, order=None, direct_min_bytes=None
) -> list[Bucket]:
    """Buckets over `params` (indexed in registration order), filled in `order` (indices;
    by default from the last parameter to the first); gradients of at least
    `direct_min_bytes` (None: none) are reduced in place."""
    buckets: list[Bucket] = []
    open_by_dtype: dict = {}  # dtype -> (members, bytes)
    closed: list = []  # closed member lists, in the order they filled

    def limit() -> int:
        return first_bucket_bytes if not closed else bucket_cap_bytes

    for i in reversed(range(len(params))) if order is None else order:
        p = params[i]
        members, size = open_by_dtype.get(p.dtype, ([], 0))
        members.append((i, p))
        size += p.numel() * p.element_size()
        if size >= limit():
            closed.append(members)
            open_by_dtype.pop(p.dtype, None)
        else:
            open_by_dtype[p.dtype] = (members, size)
    closed.extend(members for members, _ in open_by_dtype.values())
    for index, members in enumerate(closed):
        buckets.append(Bucket(index, members, direct_min_bytes))
    return buckets
