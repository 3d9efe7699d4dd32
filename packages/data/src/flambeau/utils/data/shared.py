"""``SharedList``: a read-only list whose items live in one shared-memory buffer.

Why: a dataset that holds its samples' metadata as a big Python list (file names,
annotations as dicts) makes every worker's memory grow as it reads it, although a forked
worker shares the parent's pages: reading an object writes its reference count, and the
kernel then copies the page that holds it into the worker (copy-on-write, triggered by
reads: "copy-on-read", PyTorch issue #13246). With N workers the list ends up in memory
N + 1 times.

A SharedList stores each item pickled, one after another, in a single shared storage,
with their offsets in a second one. Reading item i unpickles a fresh object from those
bytes and touches no shared Python object, so a worker's private memory stays flat
however much of the list it reads. It pickles as its two storages (flambeau.multiprocessing
shares them), so spawn and forkserver workers map the same memory instead of copying it.
"""

from __future__ import annotations

import array
import pickle
from collections.abc import Iterable, Sequence

import flambeau

__all__ = ["SharedList"]


def _shared_bytes(data) -> flambeau.UntypedStorage:
    storage = flambeau.UntypedStorage._new_shared(max(len(data), 1))
    if len(data):
        storage._owner().view[: len(data)] = data
    return storage


class SharedList(Sequence):
    """A read-only sequence of picklable items kept as bytes in shared memory.

    ``SharedList(items)`` pickles each item once; ``shared[i]`` unpickles a copy of it (so
    mutating what you read does not change the list). Use it in a dataset in place of a
    large list of Python objects to keep DataLoader workers from copying it page by page.

    >>> from flambeau.utils.data import SharedList
    >>> shared = SharedList([{"id": 0}, {"id": 1, "tags": ["a"]}])
    >>> len(shared), shared[1]
    (2, {'id': 1, 'tags': ['a']})
    """

    def __init__(self, items: Iterable = ()) -> None:
        data = bytearray()
        offsets = array.array("q", [0])
        for item in items:
            data += pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
            offsets.append(len(data))
        self._setup(_shared_bytes(data), _shared_bytes(offsets.tobytes()), len(offsets) - 1)

    def _setup(self, data, offsets, n: int) -> None:
        for s in (data, offsets):
            if not s.is_shared():
                s.share_memory_()
        self._data_storage = data
        self._offsets_storage = offsets
        self._n = n
        self._data = data._owner().view
        self._offsets = offsets._owner().view[: (n + 1) * 8].cast("q")

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        index = int(index) if not isinstance(index, int) else index
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("SharedList index out of range")
        off = self._offsets
        return pickle.loads(self._data[off[index] : off[index + 1]])

    def __iter__(self):
        for i in range(self._n):
            yield self[i]

    def __repr__(self) -> str:
        return f"SharedList(<{self._n} items, {self._offsets[self._n]} bytes>)"

    def nbytes(self) -> int:
        """Bytes the items take in shared memory (offsets included)."""
        return self._offsets[self._n] + 8 * (self._n + 1)

    def __getstate__(self):
        return (self._data_storage, self._offsets_storage, self._n)

    def __setstate__(self, state) -> None:
        self._setup(*state)
