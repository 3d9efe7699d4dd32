"""Store: the key-value store interface of torch.distributed, and what every store shares.

Keys are str; values are bytes (a str value is stored UTF-8 encoded, as PyTorch's
stores do). A subclass implements the primitives (set, get, add, compare_set, check,
wait, delete_key, num_keys); the rest (multi_get, multi_set, append, barrier) is built
on them here, so a store written in Python needs only those.
"""

from __future__ import annotations

import operator
from datetime import timedelta

from ..errors import DistStoreError

__all__ = ["Store"]

DEFAULT_TIMEOUT = timedelta(seconds=300)  # PyTorch's store default
NO_TIMEOUT = timedelta(0)  # PyTorch's kNoTimeout: wait for as long as it takes


def as_key(key, method: str) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, (bytes, bytearray)):
        return bytes(key).decode("utf-8")
    raise TypeError(f"{method}(): a key must be a str, got {type(key).__name__}")


def as_keys(keys, method: str) -> list[str]:
    if isinstance(keys, (str, bytes)) or not hasattr(keys, "__iter__"):
        raise TypeError(f"{method}(): keys must be a list of str, got {type(keys).__name__}")
    return [as_key(k, method) for k in keys]


def as_value(value, method: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{method}(): a value must be a str or bytes, got {type(value).__name__}")


def as_amount(amount) -> int:
    try:
        return operator.index(amount)
    except TypeError:
        raise TypeError(f"add(): the amount must be an int, got {type(amount).__name__}") from None


def as_timeout(timeout, method: str) -> timedelta:
    if not isinstance(timeout, timedelta):
        raise TypeError(
            f"{method}(): timeout must be a datetime.timedelta, got {type(timeout).__name__}"
        )
    return timeout


def seconds(timeout: timedelta) -> float | None:
    """The timeout in seconds, or None for PyTorch's "no timeout" (zero)."""
    s = timeout.total_seconds()
    return None if s <= 0 else s


def milliseconds(timeout: timedelta) -> int:
    return int(round(timeout.total_seconds() * 1000))


def timeout_error(keys, timeout: timedelta) -> DistStoreError:
    return DistStoreError(f"wait timeout after {milliseconds(timeout)}ms, keys: {', '.join(keys)}")


def parse_counter(key: str, current: bytes | None, amount: int) -> int:
    """The value of the counter `key` after adding `amount` (PyTorch's add: a missing
    key counts from 0; a value that is not an integer raises ValueError)."""
    if current is None:
        return amount
    try:
        return int(current.decode("ascii")) + amount
    except (UnicodeDecodeError, ValueError):
        raise ValueError(
            f"add(): the value of key {key!r} is not an integer: {current[:40]!r}"
        ) from None


class Store:
    """The base class of the key-value stores (:class:`HashStore`, :class:`FileStore`,
    :class:`TCPStore`, :class:`PrefixStore`), as ``torch.distributed.Store``.

    A store of one's own subclasses it and implements what it needs of ``set``,
    ``get``, ``add``, ``compare_set``, ``check``, ``wait``, ``delete_key`` and
    ``num_keys``; ``multi_get``, ``multi_set``, ``append`` and ``barrier`` then work
    through them, and :class:`PrefixStore` can wrap it. Methods not implemented raise
    NotImplementedError (a RuntimeError, as PyTorch raises). Values are bytes; a str
    value is stored UTF-8 encoded.

    >>> import flambeau.distributed as dist
    >>> class DictStore(dist.Store):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.data = {}
    ...     def set(self, key, value):
    ...         self.data[key] = value.encode() if isinstance(value, str) else value
    ...     def get(self, key):
    ...         return self.data[key]
    >>> store = DictStore()
    >>> store.multi_set(["a", "b"], ["1", b"2"])
    >>> store.multi_get(["a", "b"]), store.timeout
    ([b'1', b'2'], datetime.timedelta(seconds=300))
    """

    def __init__(self) -> None:
        self._timeout = DEFAULT_TIMEOUT

    # -- the timeout used by get, wait and the like
    @property
    def timeout(self) -> timedelta:
        """The store's default timeout (5 minutes unless set otherwise)."""
        return getattr(self, "_timeout", DEFAULT_TIMEOUT)

    def set_timeout(self, timeout: timedelta) -> None:
        """Set the default timeout of :meth:`get`, :meth:`wait` and the like; a zero
        timedelta waits for as long as it takes."""
        self._timeout = as_timeout(timeout, "set_timeout")

    # -- primitives: a subclass implements them
    def _missing(self, method: str):
        return NotImplementedError(f"{type(self).__name__} does not implement {method}()")

    def set(self, key: str, value) -> None:
        """Store `value` (str or bytes) under `key`, replacing what was there."""
        raise self._missing("set")

    def get(self, key: str) -> bytes:
        """The value of `key`, waiting up to the store's timeout for it to be set
        (DistStoreError then)."""
        raise self._missing("get")

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the counter `key` (created at 0) atomically; returns the new
        value. ValueError when `key` holds something that is not an integer."""
        raise self._missing("add")

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is missing and
        `expected_value` is empty); returns the value `key` has afterwards (for a missing
        key and a non-empty `expected_value`, `expected_value`)."""
        raise self._missing("compare_set")

    def check(self, keys) -> bool:
        """Whether every key of `keys` is set (a queue counts while not empty), without
        waiting."""
        raise self._missing("check")

    def wait(self, keys, timeout: timedelta | None = None) -> None:
        """Wait until every key of `keys` is set; DistStoreError after `timeout` (the
        store's timeout when None)."""
        raise self._missing("wait")

    def delete_key(self, key: str) -> bool:
        """Remove `key`; returns whether it was there."""
        raise self._missing("delete_key")

    def num_keys(self) -> int:
        """The number of keys, counting the store's own bookkeeping key where it has one
        (FileStore, TCPStore), as PyTorch's stores count it."""
        raise self._missing("num_keys")

    def list_keys(self) -> list[str]:
        """The keys set in the store (not its own bookkeeping keys)."""
        raise self._missing("list_keys")

    def clone(self) -> Store:
        """A store over the same data, to use from another thread."""
        raise self._missing("clone")

    def has_extended_api(self) -> bool:
        """Whether the store implements the extended operations natively (``append``,
        ``multi_get``, ``multi_set``, queues); they work either way."""
        return False

    def queue_push(self, key: str, value) -> None:
        """Push `value` at the end of the queue `key` (HashStore, TCPStore)."""
        raise NotImplementedError("queue support is not implemented.")

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        """Pop the first value of the queue `key`, waiting up to the store's timeout for
        one when `block`; with ``block=False`` an empty queue raises QueueEmptyError."""
        raise NotImplementedError("queue support is not implemented.")

    def queue_len(self, key: str) -> int:
        """The length of the queue `key` (0 when it does not exist)."""
        raise NotImplementedError("queue support is not implemented.")

    # -- built on the primitives
    def multi_get(self, keys) -> list[bytes]:
        """The values of `keys`, waiting for each as :meth:`get` does."""
        return [self.get(k) for k in as_keys(keys, "multi_get")]

    def multi_set(self, keys, values) -> None:
        """Set each key of `keys` to the value at the same place in `values`."""
        keys = as_keys(keys, "multi_set")
        values = list(values)
        if len(keys) != len(values):
            raise DistStoreError("multiSet keys and values vectors must be of same size")
        for k, v in zip(keys, values):
            self.set(k, v)

    def append(self, key: str, value) -> None:
        """Append `value` to the value of `key` (creating it) atomically."""
        key, value = as_key(key, "append"), as_value(value, "append")
        current = self.get(key) if self.check([key]) else b""
        while True:  # compare_set until no one else changed the value in between
            desired = current + value
            got = self.compare_set(key, current, desired)
            if got == desired:
                return
            current = got if self.check([key]) else b""

    def barrier(self, key: str, world_size: int, timeout: timedelta | None = None) -> None:
        """Wait until `world_size` users of the store have called barrier with `key`
        (DistStoreError after `timeout`, the store's timeout when None)."""
        key = as_key(key, "barrier")
        arrived = self.add(f"{key}/num_members", 1)
        last = f"{key}/last_member"
        if arrived == world_size:
            self.set(last, "1")
        self.wait([last], self.timeout if timeout is None else timeout)
