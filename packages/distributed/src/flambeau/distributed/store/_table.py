"""The data of an in-memory store (HashStore, and TCPStore's server): values, counters
and queues. No locking and no waiting: the owner does both."""

from __future__ import annotations

from collections import deque

from ._base import parse_counter


class KeyValueTable:
    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}
        self.queues: dict[str, deque[bytes]] = {}

    def set(self, key: str, value: bytes) -> None:
        self.values[key] = value

    def add(self, key: str, amount: int) -> int:
        total = parse_counter(key, self.values.get(key), amount)
        self.values[key] = str(total).encode("ascii")
        return total

    def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        current = self.values.get(key)
        if current is None:
            if expected:
                return expected
        elif current != expected:
            return current
        self.values[key] = desired
        return desired

    def append(self, key: str, value: bytes) -> None:
        self.values[key] = self.values.get(key, b"") + value

    def delete(self, key: str) -> bool:
        found = self.values.pop(key, None) is not None
        return (self.queues.pop(key, None) is not None) or found

    def has(self, key: str) -> bool:
        """Set, or a queue with something in it (what check and wait look for)."""
        return key in self.values or bool(self.queues.get(key))

    def has_all(self, keys) -> bool:
        return all(self.has(k) for k in keys)

    def has_values(self, keys) -> bool:
        return all(k in self.values for k in keys)

    def num_keys(self) -> int:
        return len(self.values)

    def keys(self) -> list[str]:
        return list(self.values)

    def queue_push(self, key: str, value: bytes) -> None:
        self.queues.setdefault(key, deque()).append(value)

    def queue_pop(self, key: str) -> bytes | None:
        queue = self.queues.get(key)
        if not queue:
            return None
        value = queue.popleft()
        if not queue:
            del self.queues[key]
        return value

    def queue_len(self, key: str) -> int:
        return len(self.queues.get(key, ()))
