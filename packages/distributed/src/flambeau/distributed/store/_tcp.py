"""TCPStore: a store served over TCP by the master process (is_master=True) to the
clients of every other process, as torch.distributed.TCPStore.

Every call is one request and one reply on the store's connection (see _wire.py).
Waiting (get, wait, multi_get, a blocking queue_pop) happens in the server, which
answers ``timeout`` at the deadline the client sent; the client's socket has a guard
timeout beyond that, so a server that stops answering raises DistNetworkError rather
than hanging. A lost connection raises DistNetworkError and is opened again (once,
without retrying) by the next call.
"""

from __future__ import annotations

import socket
import threading
import time
import weakref
from datetime import timedelta

from ..errors import DistNetworkError, DistStoreError, QueueEmptyError
from . import _wire
from ._base import (
    DEFAULT_TIMEOUT,
    Store,
    as_amount,
    as_key,
    as_keys,
    as_timeout,
    as_value,
    milliseconds,
    seconds,
    timeout_error,
)
from ._tcp_server import TCPServer

__all__ = ["TCPStore"]

_USER = "/"  # prefix of the users' keys on the server
_INIT_KEY = "init/"  # counts the stores that joined, for wait_for_workers
_GUARD = 10.0  # seconds a reply may take beyond the wait the request asked for
_MIN_CALL_GUARD = 10.0  # the least a request that does not wait may take


class _Connection:
    """The client's socket, one request at a time."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.sock: socket.socket | None = None
        self.lock = threading.Lock()

    def connect(self, timeout: timedelta, retry: bool) -> None:
        limit = seconds(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        pause = 0.01
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            try:
                sock = socket.create_connection((self.host, self.port), timeout=left)
                break
            except OSError as e:
                if not retry:
                    raise DistNetworkError(
                        f"TCPStore: the connection to ({self.host}, {self.port}) was lost and "
                        f"connecting again failed: {e}"
                    ) from None
                if left is not None and left <= pause:
                    raise DistNetworkError(
                        f"The client socket has timed out after {milliseconds(timeout)}ms "
                        f"while trying to connect to ({self.host}, {self.port}): {e}"
                    ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(max(limit or _MIN_CALL_GUARD, _MIN_CALL_GUARD))
        try:
            sock.sendall(_wire.encode([b"validate", _wire.MAGIC]))
            reply = _wire.receive(sock)
        except (OSError, DistNetworkError) as e:
            sock.close()
            raise DistNetworkError(
                f"({self.host}, {self.port}) is not a TCPStore server: {e}"
            ) from None
        if reply[:1] != [_wire.OK]:
            sock.close()
            raise DistNetworkError(f"({self.host}, {self.port}) is not a flambeau TCPStore")
        self.sock = sock

    def request(self, fields, guard: float | None, timeout: timedelta) -> list[bytes]:
        with self.lock:
            if self.sock is None:
                self.connect(timeout, retry=False)
            try:
                self.sock.settimeout(guard)
                self.sock.sendall(_wire.encode(fields))
                return _wire.receive(self.sock)
            except (OSError, DistNetworkError) as e:
                self.close()
                if isinstance(e, DistNetworkError):
                    raise
                if isinstance(e, TimeoutError):
                    raise DistNetworkError(
                        f"TCPStore: no reply from ({self.host}, {self.port}) within {guard}s"
                    ) from None
                raise DistNetworkError(str(e.strerror or e)) from None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


# Servers of multi_tenant masters, by port, with how many stores use each.
_shared_servers: dict[int, list] = {}
_shared_lock = threading.Lock()


def _start_server(port: int, listen_fd, multi_tenant: bool) -> TCPServer:
    if not multi_tenant:
        return TCPServer(port, listen_fd)
    with _shared_lock:
        entry = _shared_servers.get(port) if port else None
        if entry is not None:
            entry[1] += 1
            return entry[0]
        server = TCPServer(port, listen_fd)
        _shared_servers[server.port] = [server, 1]
        return server


def _stop_server(server: TCPServer | None, multi_tenant: bool) -> None:
    if server is None:
        return
    if multi_tenant:
        with _shared_lock:
            entry = _shared_servers.get(server.port)
            if entry is not None and entry[0] is server:
                entry[1] -= 1
                if entry[1] > 0:
                    return
                del _shared_servers[server.port]
    server.close()


def _close(connection: _Connection, server: TCPServer | None, multi_tenant: bool) -> None:
    with connection.lock:
        connection.close()
    _stop_server(server, multi_tenant)


class TCPStore(Store):
    """A key-value store served over TCP, as ``torch.distributed.TCPStore``: the store
    made with ``is_master=True`` runs the server (in a thread of its process) and holds
    the data; the others connect to ``host_name:port`` and every store, the master's
    included, reads and writes the same keys.

    ``port=0`` on the master picks a free port (``.port`` tells which). With a
    ``world_size``, each store counts itself in on creation and the master waits until
    all have (``wait_for_workers``), up to ``timeout``, which is also the default
    timeout of :meth:`get` and :meth:`wait`. A client retries connecting until
    ``timeout`` (then DistNetworkError). ``multi_tenant=True`` masters of one process on
    one port share one server; ``master_listen_fd`` serves on an already bound socket.
    The server stops when the master store is garbage-collected; it listens on every
    address of the machine, as PyTorch's does, and values are never unpickled by it.
    ``use_libuv`` is accepted and reported by ``libuvBackend``; the server is the same.

    >>> import flambeau.distributed as dist
    >>> from datetime import timedelta
    >>> server = dist.TCPStore("127.0.0.1", 0, world_size=2, is_master=True,
    ...                        wait_for_workers=False, timeout=timedelta(seconds=30))
    >>> client = dist.TCPStore("127.0.0.1", server.port, world_size=2)  # another process
    >>> server.set("first_key", "first_value")
    >>> client.get("first_key")
    b'first_value'
    >>> client.add("steps", 3), server.add("steps", 1)
    (3, 4)
    """

    def __init__(
        self,
        host_name: str,
        port: int,
        world_size: int | None = None,
        is_master: bool = False,
        timeout: timedelta = DEFAULT_TIMEOUT,
        wait_for_workers: bool = True,
        multi_tenant: bool = False,
        master_listen_fd: int | None = None,
        use_libuv: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(host_name, str):
            raise TypeError(f"TCPStore(): host_name must be a str, got {type(host_name)}")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise TypeError(f"TCPStore(): port must be an int in [0, 65535], got {port!r}")
        self._timeout = as_timeout(timeout, "TCPStore")
        if world_size is not None:
            world_size = int(world_size)
            if world_size == 0:
                raise ValueError("TCPStore world size cannot be 0")
            if world_size < 0:
                world_size = None
        self._host = host_name
        self._world_size = world_size
        self._is_master = bool(is_master)
        self._libuv = bool(use_libuv)
        server = _start_server(port, master_listen_fd, multi_tenant) if is_master else None
        self._port = server.port if server is not None else port
        self._connection = _Connection(host_name, self._port)
        self._finalizer = weakref.finalize(self, _close, self._connection, server, multi_tenant)
        try:
            self._connection.connect(self._timeout, retry=True)
            if world_size is not None and wait_for_workers:
                self._wait_for_workers()
        except BaseException:
            self._finalizer()
            raise

    def _wait_for_workers(self) -> None:
        joined = int(self._call([b"add", _INIT_KEY.encode(), b"1"])[0])
        if not self._is_master:
            return
        limit = seconds(self._timeout)
        start = time.monotonic()
        while joined < self._world_size:
            if limit is not None and time.monotonic() - start > limit:
                raise DistStoreError(
                    f"Timed out after {self._timeout.total_seconds():g} seconds waiting for "
                    f"clients. {joined}/{self._world_size} clients joined."
                )
            time.sleep(0.01)
            joined = int(self._call([b"add", _INIT_KEY.encode(), b"0"])[0])

    # -- requests
    def _call(self, fields, wait: timedelta | None = None, keys=()) -> list[bytes]:
        """Send one request; returns the reply's fields after its status."""
        if wait is None:
            limit = seconds(self._timeout)
            guard = None if limit is None else max(limit, _MIN_CALL_GUARD)
        else:
            limit = seconds(wait)
            guard = None if limit is None else limit + _GUARD
        reply = self._connection.request(fields, guard, self._timeout)
        status, rest = reply[0], reply[1:]
        if status == _wire.OK:
            return rest
        if status == _wire.TIMEOUT:
            raise timeout_error(keys, wait if wait is not None else self._timeout)
        if status == _wire.VALUE_ERROR:
            raise ValueError(rest[0].decode(errors="replace") if rest else "invalid value")
        if status == _wire.QUEUE_EMPTY:
            raise QueueEmptyError("queue is empty")
        raise DistStoreError(rest[0].decode(errors="replace") if rest else "TCPStore error")

    @staticmethod
    def _wire_key(key: str) -> bytes:
        return (_USER + key).encode("utf-8")

    @staticmethod
    def _wait_field(timeout: timedelta) -> bytes:
        limit = seconds(timeout)
        return b"0" if limit is None else str(max(1, milliseconds(timeout))).encode()

    # -- what the master and clients are
    @property
    def host(self) -> str:
        """The host name the store connects to (the master's)."""
        return self._host

    @property
    def port(self) -> int:
        """The port of the server: the one picked when the master was given port 0.

        >>> import flambeau.distributed as dist
        >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True)
        >>> 0 < store.port < 65536
        True
        """
        return self._port

    @property
    def libuvBackend(self) -> bool:  # noqa: N802 (PyTorch's name)
        """The ``use_libuv`` the store was made with (flambeau's server is the same
        either way)."""
        return self._libuv

    def __repr__(self) -> str:
        role = "master" if self._is_master else "client"
        return f"TCPStore(host={self._host!r}, port={self._port}, {role})"

    # -- the store's operations
    def set(self, key: str, value) -> None:
        """Store `value` (str or bytes) under `key`."""
        key, value = as_key(key, "set"), as_value(value, "set")
        self._call([b"set", self._wire_key(key), value])

    def get(self, key: str) -> bytes:
        """The value of `key`, waiting up to the store's timeout for it (DistStoreError)."""
        key = as_key(key, "get")
        field = self._wait_field(self._timeout)
        return self._call([b"get", field, self._wire_key(key)], self._timeout, [key])[0]

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the counter `key` (from 0) atomically; returns the new value."""
        key, amount = as_key(key, "add"), as_amount(amount)
        try:
            return int(self._call([b"add", self._wire_key(key), str(amount).encode()])[0])
        except ValueError as e:  # the server names the key as it stores it
            raise ValueError(str(e).replace(repr(_USER + key), repr(key), 1)) from None

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is missing and
        `expected_value` is empty); returns the value it has afterwards."""
        key = as_key(key, "compare_set")
        expected = as_value(expected_value, "compare_set")
        desired = as_value(desired_value, "compare_set")
        return self._call([b"compare_set", self._wire_key(key), expected, desired])[0]

    def append(self, key: str, value) -> None:
        """Append `value` to the value of `key` (creating it) atomically."""
        key, value = as_key(key, "append"), as_value(value, "append")
        self._call([b"append", self._wire_key(key), value])

    def multi_get(self, keys) -> list[bytes]:
        """The values of `keys`, waiting up to the store's timeout for all of them."""
        keys = as_keys(keys, "multi_get")
        field = self._wait_field(self._timeout)
        fields = [b"multi_get", field, *(self._wire_key(k) for k in keys)]
        return self._call(fields, self._timeout, keys)

    def multi_set(self, keys, values) -> None:
        """Set each key of `keys` to the value at the same place in `values`, at once."""
        keys = as_keys(keys, "multi_set")
        values = [as_value(v, "multi_set") for v in values]
        if len(keys) != len(values):
            raise DistStoreError("multiSet keys and values vectors must be of same size")
        fields = [b"multi_set"]
        for k, v in zip(keys, values):
            fields += [self._wire_key(k), v]
        self._call(fields)

    def check(self, keys) -> bool:
        """Whether every key of `keys` is set, without waiting."""
        keys = as_keys(keys, "check")
        return self._call([b"check", *(self._wire_key(k) for k in keys)])[0] == b"1"

    def wait(self, keys, timeout: timedelta | None = None) -> None:
        """Wait until every key of `keys` is set; DistStoreError after `timeout` (the
        store's timeout when None)."""
        keys = as_keys(keys, "wait")
        timeout = self._timeout if timeout is None else as_timeout(timeout, "wait")
        fields = [b"wait", self._wait_field(timeout), *(self._wire_key(k) for k in keys)]
        self._call(fields, timeout, keys)

    def delete_key(self, key: str) -> bool:
        """Remove `key`; returns whether it was there."""
        key = as_key(key, "delete_key")
        return self._call([b"delete", self._wire_key(key)])[0] == b"1"

    def num_keys(self) -> int:
        """The number of keys, the ``init/`` counter of ``world_size`` stores included
        (as PyTorch counts it)."""
        return int(self._call([b"num_keys"])[0])

    def list_keys(self) -> list[str]:
        """The keys set by the users of the store."""
        names = (k.decode("utf-8") for k in self._call([b"list_keys"]))
        return [k[len(_USER) :] for k in names if k.startswith(_USER)]

    def has_extended_api(self) -> bool:
        """True: appends, multi_get/multi_set and queues are native here."""
        return True

    def queue_push(self, key: str, value) -> None:
        """Push `value` at the end of the queue `key`; one waiting :meth:`queue_pop`
        takes it.

        >>> import flambeau.distributed as dist
        >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True)
        >>> store.queue_push("jobs", "a"); store.queue_push("jobs", "b")
        >>> store.queue_len("jobs"), store.queue_pop("jobs"), store.queue_pop("jobs", False)
        (2, b'a', b'b')
        """
        key, value = as_key(key, "queue_push"), as_value(value, "queue_push")
        self._call([b"queue_push", self._wire_key(key), value])

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        """Pop the first value of the queue `key`: with `block`, waiting up to the
        store's timeout (DistStoreError); otherwise QueueEmptyError when it is empty."""
        key = as_key(key, "queue_pop")
        fields = [
            b"queue_pop",
            self._wait_field(self._timeout),
            b"1" if block else b"0",
            self._wire_key(key),
        ]
        return self._call(fields, self._timeout if block else None, [key])[0]

    def queue_len(self, key: str) -> int:
        """The length of the queue `key` (0 when it does not exist)."""
        key = as_key(key, "queue_len")
        return int(self._call([b"queue_len", self._wire_key(key)])[0])

    def clone(self) -> TCPStore:
        """A new client of the same server, to use from another thread.

        >>> import flambeau.distributed as dist
        >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True)
        >>> store.set("k", "v")
        >>> store.clone().get("k")
        b'v'
        """
        return TCPStore(self._host, self._port, timeout=self._timeout, use_libuv=self._libuv)
