"""PrefixStore: a view of another store whose keys all start with ``prefix/``."""

from __future__ import annotations

from datetime import timedelta

from ._base import Store, as_key, as_keys

__all__ = ["PrefixStore"]


class PrefixStore(Store):
    """A store that puts ``prefix + "/"`` before every key and passes each call to
    `store`, as ``torch.distributed.PrefixStore``: users of different prefixes share one
    store without seeing each other's keys. The timeout, :meth:`num_keys` (a count of
    the whole store) and ``has_extended_api`` are the underlying store's.

    >>> import flambeau.distributed as dist
    >>> base = dist.HashStore()
    >>> trainer = dist.PrefixStore("trainer", base)
    >>> trainer.set("step", "10")
    >>> base.get("trainer/step"), trainer.get("step")
    (b'10', b'10')
    >>> dist.PrefixStore("eval", base).check(["step"])  # another prefix sees nothing
    False
    """

    def __init__(self, prefix: str, store: Store) -> None:
        if store is None:
            raise ValueError("store argument cannot be None")
        if not isinstance(prefix, str):
            raise TypeError(f"PrefixStore(): prefix must be a str, got {type(prefix).__name__}")
        if not isinstance(store, Store):
            raise TypeError(f"PrefixStore(): store must be a Store, got {type(store).__name__}")
        self._prefix = prefix
        self._store = store

    def _key(self, key) -> str:
        return f"{self._prefix}/{as_key(key, 'PrefixStore')}"

    def _keys(self, keys) -> list[str]:
        return [self._key(k) for k in as_keys(keys, "PrefixStore")]

    @property
    def underlying_store(self) -> Store:
        """The store this one wraps.

        >>> import flambeau.distributed as dist
        >>> base = dist.HashStore()
        >>> dist.PrefixStore("a", base).underlying_store is base
        True
        """
        return self._store

    @property
    def _underlying_non_prefix_store(self) -> Store:
        store = self._store
        while isinstance(store, PrefixStore):
            store = store._store
        return store

    @property
    def timeout(self) -> timedelta:
        return self._store.timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._store.set_timeout(timeout)

    def set(self, key: str, value) -> None:
        self._store.set(self._key(key), value)

    def get(self, key: str) -> bytes:
        return self._store.get(self._key(key))

    def add(self, key: str, amount: int) -> int:
        return self._store.add(self._key(key), amount)

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        return self._store.compare_set(self._key(key), expected_value, desired_value)

    def append(self, key: str, value) -> None:
        self._store.append(self._key(key), value)

    def multi_get(self, keys) -> list[bytes]:
        return self._store.multi_get(self._keys(keys))

    def multi_set(self, keys, values) -> None:
        self._store.multi_set(self._keys(keys), values)

    def check(self, keys) -> bool:
        return self._store.check(self._keys(keys))

    def wait(self, keys, timeout: timedelta | None = None) -> None:
        if timeout is None:
            self._store.wait(self._keys(keys))
        else:
            self._store.wait(self._keys(keys), timeout)

    def delete_key(self, key: str) -> bool:
        return self._store.delete_key(self._key(key))

    def num_keys(self) -> int:
        return self._store.num_keys()

    def list_keys(self) -> list[str]:
        start = self._prefix + "/"
        return [k[len(start) :] for k in self._store.list_keys() if k.startswith(start)]

    def barrier(self, key: str, world_size: int, timeout: timedelta | None = None) -> None:
        self._store.barrier(self._key(key), world_size, timeout)

    def has_extended_api(self) -> bool:
        return self._store.has_extended_api()

    def queue_push(self, key: str, value) -> None:
        self._store.queue_push(self._key(key), value)

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        return self._store.queue_pop(self._key(key), block)

    def queue_len(self, key: str) -> int:
        return self._store.queue_len(self._key(key))

    def clone(self) -> PrefixStore:
        return PrefixStore(self._prefix, self._store.clone())
