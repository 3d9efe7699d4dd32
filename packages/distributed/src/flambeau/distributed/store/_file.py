"""FileStore: a store in a file that the processes of one machine (or of a shared file
system with working flock) open by name.

The file is an append-only log of records, each a key and a value, both length-prefixed
(4-byte little-endian lengths), the layout PyTorch's FileStore writes: user keys start
with "/", a deletion is a record whose key is "-" and the deleted key, and two counters
of its own (``refcount/``: users that opened the file and have not finished;
``cleanup/``: users that finished) tell the last of ``world_size`` users to remove
the file. Every operation takes flock on the file (shared to read, exclusive to
write), reads the records it has not seen yet into a cache, and appends what it
changes. A file removed and created anew (its inode changes) is read from the start.
"""

from __future__ import annotations

import errno
import os
import struct
import threading
import time
import weakref
from datetime import timedelta

from ..errors import DistStoreError
from ._base import (
    Store,
    as_amount,
    as_key,
    as_keys,
    as_timeout,
    as_value,
    parse_counter,
    seconds,
    timeout_error,
)

try:
    import fcntl
except ImportError:  # not POSIX: FileStore raises when made, the other stores work
    fcntl = None

__all__ = ["FileStore"]

_LENGTH = struct.Struct("<I")
_USER = "/"  # prefix of the users' keys in the file
_DELETED = "-"  # prefix of a deletion record's key
_REFCOUNT = "refcount/"
_CLEANUP = "cleanup/"
_LOCK_POLL = 0.001  # seconds between tries to take a busy lock


def _record(key: str, value: bytes) -> bytes:
    k = key.encode("utf-8")
    return _LENGTH.pack(len(k)) + k + _LENGTH.pack(len(value)) + value


class _FileLog:
    """The file and what this process has read of it. Shared by a FileStore and the
    finalizer that ends its use of the file (which must not keep the store alive)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.cache: dict[str, bytes] = {}
        self.position = 0  # the end of the last whole record read
        self.size = 0  # the file's size when last read
        self.identity: tuple[int, int] | None = None
        self.lock = threading.Lock()  # threads of this process: one operation at a time

    def _read_new_records(self, fd: int) -> None:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self.identity or st.st_size < self.position:
            self.cache, self.position, self.identity = {}, 0, (st.st_dev, st.st_ino)
        self.size = st.st_size
        if st.st_size == self.position:
            return
        data = os.pread(fd, st.st_size - self.position, self.position)
        offset = 0
        while offset + 4 <= len(data):
            (klen,) = _LENGTH.unpack_from(data, offset)
            vstart = offset + 4 + klen
            if vstart + 4 > len(data):
                break
            (vlen,) = _LENGTH.unpack_from(data, vstart)
            end = vstart + 4 + vlen
            if end > len(data):
                break  # a record still being written (or torn by a crash)
            key = data[offset + 4 : vstart].decode("utf-8", "replace")
            self._apply(key, data[vstart + 4 : end])
            offset = end
        self.position += offset

    def _apply(self, key: str, value: bytes) -> None:
        if key.startswith(_DELETED):
            self.cache.pop(key[len(_DELETED) :], None)
        else:
            self.cache[key] = value

    def append(self, fd: int, key: str, value: bytes) -> None:
        record = _record(key, value)
        if self.size > self.position:  # a record torn by a writer that died: drop it
            os.ftruncate(fd, self.position)
        os.pwrite(fd, record, self.position)
        self.position += len(record)
        self.size = self.position
        self._apply(key, value)

    def transact(self, work, *, write: bool, timeout: timedelta):
        """Run work(fd) with the file locked and the cache up to date; returns its result."""
        with self.lock:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise DistStoreError(f"FileStore: cannot open {self.path!r}: {e.strerror}") from e
            try:
                self._lock_file(fd, fcntl.LOCK_EX if write else fcntl.LOCK_SH, timeout)
                try:
                    self._read_new_records(fd)
                    return work(fd)
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def _lock_file(self, fd: int, how: int, timeout: timedelta) -> None:
        limit = seconds(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        while True:
            try:
                fcntl.flock(fd, how | fcntl.LOCK_NB)
                return
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            if deadline is not None and time.monotonic() > deadline:
                raise DistStoreError(
                    f"FileStore: timed out after {timeout} waiting for the lock on {self.path!r}"
                )
            time.sleep(_LOCK_POLL)

    def add(self, fd: int, key: str, amount: int) -> int:
        total = parse_counter(key.removeprefix(_USER), self.cache.get(key), amount)
        self.append(fd, key, str(total).encode("ascii"))
        return total


def _finish_using(log: _FileLog, world_size: int) -> None:
    """One user is done: count it, and the last of `world_size` users removes the file
    (as PyTorch's FileStore does when destroyed). Runs when the store is collected or
    at exit."""
    if not os.path.exists(log.path):
        return

    def finish(fd):
        finished = log.add(fd, _CLEANUP, 1)
        users = log.add(fd, _REFCOUNT, -1)
        if world_size > 0 and users == 0 and finished >= world_size:
            try:
                os.remove(log.path)
            except OSError:
                pass

    try:
        log.transact(finish, write=True, timeout=timedelta(seconds=30))
    except Exception:
        pass  # best effort, as PyTorch's


class FileStore(Store):
    """A key-value store in the file `file_name`, shared by the processes that open it
    (on one machine, or on a shared file system whose flock works), as
    ``torch.distributed.FileStore``.

    With ``world_size`` > 0, the file is removed once that many users have opened it and
    every one of them is done (its store garbage-collected or the process exiting); with
    the default -1 the file stays. Queues are not supported (NotImplementedError), as in
    PyTorch.

    >>> import os, tempfile
    >>> import flambeau.distributed as dist
    >>> path = os.path.join(tempfile.mkdtemp(), "store")
    >>> store1 = dist.FileStore(path, 2)
    >>> store2 = dist.FileStore(path, 2)  # in another process, usually
    >>> store1.set("first_key", "first_value")
    >>> store2.get("first_key")
    b'first_value'
    >>> store2.add("counter", 5), store1.add("counter", 1)
    (5, 6)
    >>> del store1, store2  # both users done: the file is removed
    >>> os.path.exists(path)
    False
    """

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        if fcntl is None:
            raise RuntimeError("FileStore needs flock (fcntl), which this platform lacks")
        if not isinstance(file_name, (str, os.PathLike)):
            raise TypeError(f"FileStore(): file_name must be a str, got {type(file_name)}")
        self._log = _FileLog(os.fspath(file_name))
        self._world_size = int(world_size)
        self._log.transact(
            lambda fd: self._log.add(fd, _REFCOUNT, 1), write=True, timeout=self.timeout
        )
        self._finalizer = weakref.finalize(self, _finish_using, self._log, self._world_size)

    @property
    def path(self) -> str:
        """The path of the file.

        >>> import os, tempfile
        >>> import flambeau.distributed as dist
        >>> path = os.path.join(tempfile.mkdtemp(), "store")
        >>> dist.FileStore(path, 1).path == path
        True
        """
        return self._log.path

    def __repr__(self) -> str:
        return f"FileStore(path={self.path!r}, world_size={self._world_size})"

    def _read(self, work):
        return self._log.transact(lambda fd: work(), write=False, timeout=self.timeout)

    def _write(self, work):
        return self._log.transact(work, write=True, timeout=self.timeout)

    def _poll(self, ready, keys, timeout: timedelta):
        """Read the file until ready() returns something other than None, or time out."""
        limit = seconds(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        pause = 0.001
        while True:
            found = self._read(ready)
            if found is not None:
                return found
            if deadline is not None and time.monotonic() >= deadline:
                raise timeout_error(keys, timeout)
            left = pause if deadline is None else deadline - time.monotonic()
            time.sleep(max(min(pause, left), 0.0))
            pause = min(pause * 2, 0.02)

    def set(self, key: str, value) -> None:
        """Store `value` (str or bytes) under `key`."""
        key, value = as_key(key, "set"), as_value(value, "set")
        self._write(lambda fd: self._log.append(fd, _USER + key, value))

    def get(self, key: str) -> bytes:
        """The value of `key`, waiting up to the store's timeout for it (DistStoreError)."""
        key = as_key(key, "get")
        return self._poll(lambda: self._log.cache.get(_USER + key), [key], self.timeout)

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the counter `key` (from 0) atomically; returns the new value."""
        key, amount = as_key(key, "add"), as_amount(amount)
        return self._write(lambda fd: self._log.add(fd, _USER + key, amount))

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is missing and
        `expected_value` is empty); returns the value it has afterwards."""
        key = _USER + as_key(key, "compare_set")
        expected = as_value(expected_value, "compare_set")
        desired = as_value(desired_value, "compare_set")

        def swap(fd):
            current = self._log.cache.get(key)
            if current is None and expected:
                return expected
            if current is not None and current != expected:
                return current
            self._log.append(fd, key, desired)
            return desired

        return self._write(swap)

    def append(self, key: str, value) -> None:
        """Append `value` to the value of `key` (creating it) atomically."""
        key, value = _USER + as_key(key, "append"), as_value(value, "append")
        self._write(lambda fd: self._log.append(fd, key, self._log.cache.get(key, b"") + value))

    def check(self, keys) -> bool:
        """Whether every key of `keys` is set, without waiting."""
        keys = [_USER + k for k in as_keys(keys, "check")]
        return self._read(lambda: all(k in self._log.cache for k in keys))

    def wait(self, keys, timeout: timedelta | None = None) -> None:
        """Wait until every key of `keys` is set; DistStoreError after `timeout` (the
        store's timeout when None)."""
        keys = as_keys(keys, "wait")
        timeout = self.timeout if timeout is None else as_timeout(timeout, "wait")
        full = [_USER + k for k in keys]
        self._poll(lambda: all(k in self._log.cache for k in full) or None, keys, timeout)

    def delete_key(self, key: str) -> bool:
        """Remove `key`; returns whether it was there."""
        key = _USER + as_key(key, "delete_key")

        def delete(fd):
            if key not in self._log.cache:
                return False
            self._log.append(fd, _DELETED + key, b"")
            return True

        return self._write(delete)

    def num_keys(self) -> int:
        """The number of keys in the file, its ``refcount/`` (and, once a user has
        finished, ``cleanup/``) counters included, as PyTorch counts them."""
        return self._read(lambda: len(self._log.cache))

    def list_keys(self) -> list[str]:
        """The keys set by the users of the file."""
        return self._read(lambda: [k[1:] for k in self._log.cache if k.startswith(_USER)])

    def clone(self) -> FileStore:
        """Another user of the same file (it counts among `world_size`'s users).

        >>> import os, tempfile
        >>> import flambeau.distributed as dist
        >>> store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"))
        >>> store.set("k", "v")
        >>> store.clone().get("k")
        b'v'
        """
        return FileStore(self.path, self._world_size)
