"""HashStore: a store in this process's memory, safe to share between threads."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from ..errors import QueueEmptyError
from ._base import (
    Store,
    as_amount,
    as_key,
    as_keys,
    as_timeout,
    as_value,
    seconds,
    timeout_error,
)
from ._table import KeyValueTable

__all__ = ["HashStore"]


class HashStore(Store):
    """A thread-safe key-value store in this process's memory, as
    ``torch.distributed.HashStore``: threads of one process share it (a :meth:`get`
    waits for another thread's :meth:`set`); other processes cannot see it.

    >>> import threading
    >>> import flambeau.distributed as dist
    >>> store = dist.HashStore()
    >>> threading.Thread(target=store.set, args=("ready", "yes")).start()
    >>> store.get("ready")  # waits for the other thread's set
    b'yes'
    >>> store.add("count", 2), store.add("count", 3)
    (2, 5)
    """

    def __init__(self) -> None:
        super().__init__()
        self._table = KeyValueTable()
        self._changed = threading.Condition()

    def _wait_for(self, ready, keys, timeout: timedelta) -> None:
        """Wait (holding the condition's lock on return) until ready() is true."""
        limit = seconds(timeout)
        if limit is None:
            self._changed.wait_for(ready)
            return
        deadline = time.monotonic() + limit
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                raise timeout_error(keys, timeout)
            self._changed.wait(left)

    def set(self, key: str, value) -> None:
        """Store `value` (str or bytes) under `key`.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("key", "value")
        >>> store.get("key")
        b'value'
        """
        key, value = as_key(key, "set"), as_value(value, "set")
        with self._changed:
            self._table.set(key, value)
            self._changed.notify_all()

    def get(self, key: str) -> bytes:
        """The value of `key`, waiting up to the store's timeout for another thread to
        set it (then DistStoreError).

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("key", b"\\x00\\x01")
        >>> store.get("key")
        b'\\x00\\x01'
        """
        key = as_key(key, "get")
        with self._changed:
            self._wait_for(lambda: self._table.has_values([key]), [key], self.timeout)
            return self._table.values[key]

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the counter `key` (from 0); returns the new value.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.add("n", 1), store.add("n", 6), store.get("n")
        (1, 7, b'7')
        """
        key, amount = as_key(key, "add"), as_amount(amount)
        with self._changed:
            total = self._table.add(key, amount)
            self._changed.notify_all()
            return total

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is missing and
        `expected_value` is empty); returns the value it has afterwards.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.compare_set("k", "", "first")  # missing, expected empty: set
        b'first'
        >>> store.compare_set("k", "other", "second")  # no match: unchanged
        b'first'
        """
        key = as_key(key, "compare_set")
        expected = as_value(expected_value, "compare_set")
        desired = as_value(desired_value, "compare_set")
        with self._changed:
            result = self._table.compare_set(key, expected, desired)
            self._changed.notify_all()
            return result

    def append(self, key: str, value) -> None:
        """Append `value` to the value of `key` (creating it).

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.append("word", "po"); store.append("word", "tato")
        >>> store.get("word")
        b'potato'
        """
        key, value = as_key(key, "append"), as_value(value, "append")
        with self._changed:
            self._table.append(key, value)
            self._changed.notify_all()

    def multi_set(self, keys, values) -> None:
        """Set each key of `keys` to the value at the same place in `values`, at once.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.multi_set(["a", "b"], ["1", "2"])
        >>> store.multi_get(["b", "a"])
        [b'2', b'1']
        """
        keys = as_keys(keys, "multi_set")
        values = [as_value(v, "multi_set") for v in values]
        if len(keys) != len(values):
            from ..errors import DistStoreError

            raise DistStoreError("multiSet keys and values vectors must be of same size")
        with self._changed:
            for k, v in zip(keys, values):
                self._table.set(k, v)
            self._changed.notify_all()

    def multi_get(self, keys) -> list[bytes]:
        """The values of `keys`, waiting up to the store's timeout for all of them.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("a", "1")
        >>> store.multi_get(["a"])
        [b'1']
        """
        keys = as_keys(keys, "multi_get")
        with self._changed:
            self._wait_for(lambda: self._table.has_values(keys), keys, self.timeout)
            return [self._table.values[k] for k in keys]

    def check(self, keys) -> bool:
        """Whether every key of `keys` is set, without waiting.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("a", "1")
        >>> store.check(["a"]), store.check(["a", "b"])
        (True, False)
        """
        keys = as_keys(keys, "check")
        with self._changed:
            return self._table.has_all(keys)

    def wait(self, keys, timeout: timedelta | None = None) -> None:
        """Wait until every key of `keys` is set; DistStoreError after `timeout` (the
        store's timeout when None).

        >>> import flambeau.distributed as dist
        >>> from datetime import timedelta
        >>> store = dist.HashStore()
        >>> store.set("a", "1")
        >>> store.wait(["a"], timedelta(seconds=1))  # already there
        """
        keys = as_keys(keys, "wait")
        timeout = self.timeout if timeout is None else as_timeout(timeout, "wait")
        with self._changed:
            self._wait_for(lambda: self._table.has_all(keys), keys, timeout)

    def delete_key(self, key: str) -> bool:
        """Remove `key`; returns whether it was there.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("a", "1")
        >>> store.delete_key("a"), store.delete_key("a")
        (True, False)
        """
        key = as_key(key, "delete_key")
        with self._changed:
            return self._table.delete(key)

    def num_keys(self) -> int:
        """The number of keys set.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("a", "1"); store.add("b", 1)
        1
        >>> store.num_keys()
        2
        """
        with self._changed:
            return self._table.num_keys()

    def list_keys(self) -> list[str]:
        """The keys set, in the order they were first set.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.set("a", "1"); store.set("b", "2")
        >>> store.list_keys()
        ['a', 'b']
        """
        with self._changed:
            return self._table.keys()

    def clone(self) -> HashStore:
        """This store itself: it is already safe to share between threads.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.clone() is store
        True
        """
        return self

    def has_extended_api(self) -> bool:
        """True: appends, multi_get/multi_set and queues are native here.

        >>> import flambeau.distributed as dist
        >>> dist.HashStore().has_extended_api()
        True
        """
        return True

    def queue_push(self, key: str, value) -> None:
        """Push `value` at the end of the queue `key`; a waiting :meth:`queue_pop` or
        :meth:`wait` on `key` wakes.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.queue_push("jobs", "a"); store.queue_push("jobs", "b")
        >>> store.queue_len("jobs"), store.queue_pop("jobs"), store.queue_pop("jobs")
        (2, b'a', b'b')
        """
        key, value = as_key(key, "queue_push"), as_value(value, "queue_push")
        with self._changed:
            self._table.queue_push(key, value)
            self._changed.notify_all()

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        """Pop the first value of the queue `key`. With `block`, wait up to the store's
        timeout for one (DistStoreError); otherwise an empty queue raises
        QueueEmptyError.

        >>> import flambeau.distributed as dist
        >>> store = dist.HashStore()
        >>> store.queue_push("jobs", "a")
        >>> store.queue_pop("jobs", block=False)
        b'a'
        """
        key = as_key(key, "queue_pop")
        with self._changed:
            if block:
                self._wait_for(lambda: self._table.queue_len(key) > 0, [key], self.timeout)
            value = self._table.queue_pop(key)
            if value is None:
                raise QueueEmptyError("queue is empty")
            return value

    def queue_len(self, key: str) -> int:
        """The length of the queue `key` (0 when it does not exist).

        >>> import flambeau.distributed as dist
        >>> dist.HashStore().queue_len("jobs")
        0
        """
        key = as_key(key, "queue_len")
        with self._changed:
            return self._table.queue_len(key)
